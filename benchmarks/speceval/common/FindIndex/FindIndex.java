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
}
