// The JML runner's class-data-sharing training program (trusted; the harness's own, never a
// sample's): translated and compiled like a checked program, then run by the runner once while
// the archive is dumped (execution/class_sharing.py, Training), so that what every runner JVM
// makes at its start and on its usual paths (the security manager and the policy, a
// quantifier's lambda, a violation's record, a top-level precondition read from the stack, an
// exception's description, captured output) is mapped from the archive instead of made again.
public class SpecbenchTraining {
    private int total;

    //@ requires arr != null;
    //@ requires \forall int j; 0 <= j && j < arr.length; \forall int i; 0 <= i && i < j; arr[i] <= arr[j];
    //@ ensures \result == -1 <==> (\forall int i; 0 <= i && i < arr.length; arr[i] != key);
    //@ ensures 0 <= \result && \result < arr.length ==> arr[\result] == key;
    public static int find(int[] arr, int key) {
        int low = 0;
        int high = arr.length;
        //@ maintaining 0 <= low && low <= high && high <= arr.length;
        //@ decreases high - low;
        while (low < high) {
            int mid = low + (high - low) / 2;
            if (arr[mid] == key) {
                return mid;
            } else if (arr[mid] < key) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return -1;
    }

    //@ requires n >= 0;
    //@ ensures \result == n * (n + 1) / 2;
    public static int sum(int n) {
        int s = 0;
        for (int i = 1; i <= n; i++) {
            s += i;
        }
        System.out.println("sum of " + n + " is " + s);
        return s;
    }

    //@ requires s != null;
    //@ ensures \result.length() == s.length();
    //@ signals (IllegalArgumentException e) s.isEmpty();
    public static String upper(String s) {
        if (s.isEmpty()) {
            throw new IllegalArgumentException("empty");
        }
        return s.toUpperCase();
    }

    //@ ensures total == \old(total) + x;
    public void add(int x) {
        total += x > 100 ? x - 1 : x;
    }

    //@ ensures \result >= 0;
    public static int broken(int x) {
        if (x == 3) {
            throw new IllegalStateException("three");
        }
        return x;
    }
}
