public class FindIndex {
    //@ ensures -1 <= \result && \result < a.length;
    //@ ensures \result == -1 <==> (\forall int k; 0 <= k && k < a.length; a[k] != key);
    //@ ensures 0 <= \result ==> a[\result] == key;
    //@ ensures 0 <= \result ==> (\forall int k; 0 <= k && k < \result; a[k] != key);
    public static int find(int[] a, int key) {
        int found = -1;
        int i = 0;
        //@ maintaining 0 <= i && i <= a.length;
        //@ maintaining (\forall int k; 0 <= k && k < i; a[k] != key);
        //@ decreases a.length - i;
        while (i < a.length) {
            if (a[i] == key) {
                found = i;
                break;
            }
            i = i + 1;
        }
        return found;
    }
}
