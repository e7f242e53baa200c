public class MaxOfTwo {
    public static int max(int x, int y) {
        int bigger = x;
        int other = y;
        if (bigger >= other) {
            return bigger;
        } else {
            return other;
        }
    }
}
