public class CountAbove {
    public static int countAbove(int[] a, int limit) {
        int count = 0;
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
