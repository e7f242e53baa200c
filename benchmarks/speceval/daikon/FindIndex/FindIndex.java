public class FindIndex {
    public static int find(int[] a, int key) {
        int found = -1;
        int i = 0;
        while (i < a.length) {
            if (a[i] == key) {
                found = i;
                break;
            }
            i = i + 1;
        }
        return found;
    }

    public static void main(String[] args) {
        find(new int[]{}, 1);
        find(new int[]{1}, 1);
        find(new int[]{4, 5, 6}, 6);
        find(new int[]{4, 5, 6}, 7);
        find(new int[]{3, 3, 3}, 3);
        find(new int[]{9, 1, 9}, 9);
        find(new int[]{0, -2, 5, -2}, -2);
    }
}
