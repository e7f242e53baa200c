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

    public static void main(String[] args) {
        sorted(new int[]{});
        sorted(new int[]{5});
        sorted(new int[]{1, 2, 3});
        sorted(new int[]{3, 2, 1});
        sorted(new int[]{1, 1, 2, 0});
        sorted(new int[]{-4, 0, 0, 7});
        sorted(new int[]{2, 1, 3, 4});
    }
}
