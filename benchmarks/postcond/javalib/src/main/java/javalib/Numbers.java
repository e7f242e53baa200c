package javalib;

/** Small integer helpers. */
public final class Numbers {
    private Numbers() {
    }

    /**
     * Limits a value to a closed interval.
     *
     * @param x the value
     * @param lo the lower bound
     * @param hi the upper bound, not below {@code lo}
     * @return {@code x} if it lies in [lo, hi], else the nearer bound
     */
    public static int clamp(int x, int lo, int hi) {
        if (x < lo) {
            return lo;
        }
        if (x > hi) {
            return hi;
        }
        return x;
    }

    /**
     * Tells whether a number is prime.
     *
     * @param n any int
     * @return true iff n is at least 2 and has no divisor between 2 and n - 1
     */
    public static boolean isPrime(int n) {
        if (n < 2) {
            return false;
        }
        for (int d = 2; d * d <= n; d++) {
            if (n % d == 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Sum of the decimal digits of a non-negative number.
     *
     * @param n a number, at least 0
     * @return the sum of its digits
     */
    public static int digitSum(int n) {
        int total = 0;
        while (n > 0) {
            total += n % 10;
            n /= 10;
        }
        return total;
    }
}
