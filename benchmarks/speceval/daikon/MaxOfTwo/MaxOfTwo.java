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

    public static void main(String[] args) {
        max(1, 2);
        max(2, 1);
        max(-5, -5);
        max(0, -3);
        max(-3, 0);
        max(7, 7);
        max(-100, 100);
    }
}
