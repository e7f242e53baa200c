package specbench.jml;

import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/** Runtime support of translated JML: quantifiers, \old snapshots, the check
 *  calls, and the per-call record of violations the runner reads.  Program code
 *  can call the public methods (only to fail itself); it cannot read or reset
 *  the record: those methods are package-private and the program is loaded by
 *  another class loader (another runtime package). */
public final class JmlRt {
    private JmlRt() {}

    private static final List<JmlViolation> violations = new ArrayList<>();
    private static int depth;
    private static boolean allowedException;

    // ------------------------------------------------------------ the runner's side
    static synchronized List<JmlViolation> drain() {
        List<JmlViolation> out = new ArrayList<>(violations);
        violations.clear();
        depth = 0;
        return out;
    }

    /** The branch probes a call reached (ids in increasing order), then forgets them. */
    static String takeBranches() {
        boolean[] seen = branches;
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < seen.length; i++) {
            if (seen[i]) {
                if (b.length() > 1) b.append(',');
                b.append(i);
                seen[i] = false;
            }
        }
        return b.append(']').toString();
    }

    static synchronized boolean takeAllowedException() {
        boolean b = allowedException;
        allowedException = false;
        return b;
    }

    // ------------------------------------------------------------ branch probes
    // Written by the call's thread only (the program cannot start threads) and read
    // by the runner after the call: not synchronized, so that probes in hot loops stay cheap.
    private static boolean[] branches = new boolean[64];

    private static void reach(int id) {
        if (id < 0 || id > 1 << 20) return;
        boolean[] seen = branches;
        if (id >= seen.length) {
            seen = java.util.Arrays.copyOf(seen, Math.max(id + 1, seen.length * 2));
            branches = seen;
        }
        seen[id] = true;
    }

    /** A branch point: records ``id`` when ``c`` holds, ``id + 1`` otherwise; yields ``c``. */
    public static boolean br(int id, boolean c) {
        reach(c ? id : id + 1);
        return c;
    }

    /** A branch target (a switch case). */
    public static void hit(int id) { reach(id); }

    // ------------------------------------------------------------ checks
    public static synchronized JmlViolation fail(String kind, int line, String clause, String detail) {
        JmlViolation v = new JmlViolation(kind, line, clause, depth, detail == null ? "" : detail);
        if (violations.size() < 100) violations.add(v);
        return v;
    }

    public static void check(boolean ok, String kind, int line, String clause) {
        if (!ok) throw fail(kind, line, clause, "");
    }

    /** For loop conditions: checks and yields true. */
    public static boolean inv(boolean ok, int line, String clause) {
        if (!ok) throw fail("maintaining", line, clause, "");
        return true;
    }

    /** A loop variant at the start of an iteration: non-negative, and below its previous value. */
    public static long dec(long previous, long current, int line, String clause) {
        if (current < 0) throw fail("decreases", line, clause, "negative: " + current);
        if (previous != Long.MIN_VALUE && current >= previous)
            throw fail("decreases", line, clause, "did not decrease: " + previous + " -> " + current);
        return current;
    }

    public static boolean t(long ignored) { return true; }

    public static RuntimeException undefined(String kind, int line, String clause, Throwable cause) {
        throw fail("undefined", line, clause, kind + " clause raised " + cause.getClass().getName());
    }

    public static void enter() { synchronized (JmlRt.class) { depth++; } }

    public static void exit() { synchronized (JmlRt.class) { if (depth > 0) depth--; } }

    public static synchronized int depth() { return depth; }

    /** An exception escaped a method whose spec case allowed it (signals/signals_only held). */
    public static synchronized void allowed() { if (depth == 1) allowedException = true; }

    // ------------------------------------------------------------ quantifiers
    public static boolean forall(long lo, long hi, LongPredicate p) {
        for (long i = lo; i < hi; i++) if (!p.test(i)) return false;
        return true;
    }

    public static boolean exists(long lo, long hi, LongPredicate p) {
        for (long i = lo; i < hi; i++) if (p.test(i)) return true;
        return false;
    }

    // ------------------------------------------------------------ \old(e) of object state, evaluated at entry
    // (overloads: javac picks the primitive one for a primitive e, so ``var`` gets e's type)
    public static int oldv(java.util.function.IntSupplier e, int line, String clause) {
        try { return e.getAsInt(); } catch (RuntimeException | StackOverflowError x) { throw undefined("ensures", line, clause, x); }
    }

    public static long oldv(java.util.function.LongSupplier e, int line, String clause) {
        try { return e.getAsLong(); } catch (RuntimeException | StackOverflowError x) { throw undefined("ensures", line, clause, x); }
    }

    public static double oldv(java.util.function.DoubleSupplier e, int line, String clause) {
        try { return e.getAsDouble(); } catch (RuntimeException | StackOverflowError x) { throw undefined("ensures", line, clause, x); }
    }

    public static boolean oldv(java.util.function.BooleanSupplier e, int line, String clause) {
        try { return e.getAsBoolean(); } catch (RuntimeException | StackOverflowError x) { throw undefined("ensures", line, clause, x); }
    }

    public static <T> T oldv(java.util.function.Supplier<T> e, int line, String clause) {
        try { return e.get(); } catch (RuntimeException | StackOverflowError x) { throw undefined("ensures", line, clause, x); }
    }

    // ------------------------------------------------------------ \old snapshots (arrays copied deeply)
    public static int old(int x) { return x; }
    public static long old(long x) { return x; }
    public static short old(short x) { return x; }
    public static byte old(byte x) { return x; }
    public static char old(char x) { return x; }
    public static boolean old(boolean x) { return x; }
    public static double old(double x) { return x; }
    public static float old(float x) { return x; }

    @SuppressWarnings("unchecked")
    public static <T> T old(T x) {
        if (x == null || !x.getClass().isArray()) return x;
        int n = Array.getLength(x);
        Object copy = Array.newInstance(x.getClass().getComponentType(), n);
        for (int i = 0; i < n; i++) {
            Object e = Array.get(x, i);
            Array.set(copy, i, e != null && e.getClass().isArray() ? old(e) : e);
        }
        return (T) copy;
    }
}
