public class CountAbove {
    //@ ensures 0 <= \result && \result <= a.length;
    //@ ensures (\forall int k; 0 <= k && k < a.length; a[k] <= limit) ==> \result == 0;
    //@ ensures (\exists int k; 0 <= k && k < a.length; a[k] > limit) ==> \result > 0;
    public static int countAbove(int[] a, int limit) {
        int count = 0;
        //@ maintaining 0 <= i && i <= a.length;
        //@ maintaining 0 <= count && count <= i;
        //@ maintaining (\forall int k; 0 <= k && k < i; a[k] <= limit) ==> count == 0;
        //@ decreases a.length - i;
        for (int i = 0; i < a.length; i++) {
            if (a[i] > limit) {
                count = count + 1;
            } else {
                count = count + 0;
            }
        }
        return count;
    }
}
