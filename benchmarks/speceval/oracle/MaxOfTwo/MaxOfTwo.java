public class MaxOfTwo {
    //@ ensures \result >= x && \result >= y;
    //@ ensures \result == x || \result == y;
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
