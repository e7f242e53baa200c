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

    public static void main(String[] args) {
        countAbove(new int[]{}, 0);
        countAbove(new int[]{1, 2, 3}, 1);
        countAbove(new int[]{5, 5, 5}, 5);
        countAbove(new int[]{-1, 9, 0, 4}, 0);
        countAbove(new int[]{3}, -10);
        countAbove(new int[]{2, 8, 1, 9}, 5);
    }
}
