public class IsSorted {
    //@ ensures \result <==> (\forall int k; 0 <= k && k < a.length - 1; a[k] <= a[k + 1]);
    public static boolean sorted(int[] a) {
        boolean ok = true;
        int i = 0;
        //@ maintaining 0 <= i && (i <= a.length - 1 || a.length == 0);
        //@ maintaining ok <==> (\forall int k; 0 <= k && k < i; a[k] <= a[k + 1]);
        //@ decreases a.length - i;
        while (i + 1 < a.length) {
            if (a[i] > a[i + 1]) {
                ok = false;
            }
            i = i + 1;
        }
        return ok;
    }
}
