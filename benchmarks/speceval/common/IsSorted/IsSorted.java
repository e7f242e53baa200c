public class IsSorted {
    public static boolean sorted(int[] a) {
        boolean ok = true;
        int i = 0;
        while (i + 1 < a.length) {
            if (a[i] > a[i + 1]) {
                ok = false;
            }
            i = i + 1;
        }
        return ok;
    }
}
