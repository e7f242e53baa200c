package specbench.jml;

import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/** Runtime support of translated JML: quantifiers, \old snapshots, the check
 *  calls, and the per-call record of violations the runner reads.
 *
 *  What program code could reach is harmless (issue 25): the only public ways to
 *  record a violation are checks that throw it, and the runner decides a call from the
 *  violation that left it (a recorded one, by identity: the constructor is package-private);
 *  whether a {@code requires} failure is the top-level precondition is read from the
 *  stack (the check's caller must be the method the driver called), not from a counter
 *  the program could move; the per-call state is a private object the runner creates
 *  and reads; no lock is shared with the program (nothing synchronizes on this class). */
public final class JmlRt {
    private JmlRt() {}

    /** One call's record (created, installed and read by the runner only). */
    static final class Call {
        private final Object lock = new Object();
        private final List<JmlViolation> violations = new ArrayList<>();
        private boolean[] branches = new boolean[64];
        private volatile boolean allowedException;
        private int specDepth;  // > 0 while spec code that can run code runs: its probes are not the tests'

        List<JmlViolation> violations() {
            synchronized (lock) { return new ArrayList<>(violations); }
        }

        boolean recorded(Throwable t) {
            synchronized (lock) {
                for (JmlViolation v : violations) if (v == t) return true;
                return false;
            }
        }

        boolean allowedException() { return allowedException; }

        /** The branch probes the call reached (ids in increasing order). */
        String branches() {
            boolean[] seen = branches;
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < seen.length; i++) {
                if (seen[i]) {
                    if (b.length() > 1) b.append(',');
                    b.append(i);
                }
            }
            return b.append(']').toString();
        }

        private void add(JmlViolation v) {
            synchronized (lock) { if (violations.size() < 100) violations.add(v); }
        }
    }

    // Written by the runner before it starts a call's thread, read by that thread (Thread.start
    // orders them); a thread the runner did not start records nothing into another call.
    private static Call active;
    private static String driverClass = "";

    // ------------------------------------------------------------ the runner's side
    /** A fresh record for the next call (or test); {@code driver}: the class whose
     *  {@code call} method calls the checked method (top-level preconditions). */
    static Call begin(String driver) {
        Call c = new Call();
        driverClass = driver == null ? "" : driver;
        active = c;
        return c;
    }

    /** Nothing records between calls. */
    static void end() { active = null; }

    // ------------------------------------------------------------ branch probes
    // Written by the call's thread only and read by the runner after the call: not
    // synchronized, so that probes in hot loops stay cheap.
    private static void reach(int id) {
        Call c = active;
        if (c == null || c.specDepth > 0 || id < 0 || id > 1 << 20) return;
        boolean[] seen = c.branches;
        if (id >= seen.length) {
            seen = java.util.Arrays.copyOf(seen, Math.max(id + 1, seen.length * 2));
            c.branches = seen;
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

    // ------------------------------------------------------------ checks (each throws what it records)
    private static final StackWalker WALKER = StackWalker.getInstance();

    /** Is the generated code that called the runtime in the method the driver called
     *  (the call's top level)?  Frames: JmlRt's own, then the checked method, then the driver. */
    private static boolean topLevel() {
        final String driver = driverClass;
        if (driver.isEmpty()) return false;
        return WALKER.walk(new java.util.function.Function<java.util.stream.Stream<StackWalker.StackFrame>, Boolean>() {
            // (classes, not lambdas: the runners' JVMs start without invokedynamic)
            @Override public Boolean apply(java.util.stream.Stream<StackWalker.StackFrame> frames) {
                java.util.Iterator<StackWalker.StackFrame> it = frames.iterator();
                StackWalker.StackFrame site = null, caller = null;
                while (it.hasNext() && caller == null) {
                    StackWalker.StackFrame f = it.next();
                    if (f.getClassName().equals(JmlRt.class.getName())) continue;
                    if (site == null) site = f; else caller = f;
                }
                if (site == null) return false;
                if (site.getMethodName().startsWith("__jml_") || site.getMethodName().startsWith("lambda$")) return false;
                if (caller == null) return false;
                return caller.getClassName().equals(driver) && caller.getMethodName().equals("call");
            }
        });
    }

    private static JmlViolation record(String kind, int line, String clause, String detail) {
        JmlViolation v = new JmlViolation(kind, line, clause, kind.equals("requires") && topLevel(),
                                          detail == null ? "" : detail);
        Call c = active;
        if (c != null) c.add(v);
        return v;
    }

    /** Throws the violation of ``kind`` (declared to return it so that generated code can
     *  write {@code throw JmlRt.raise(...)} where javac needs a throw). */
    public static RuntimeException raise(String kind, int line, String clause, String detail) {
        throw record(kind, line, clause, detail);
    }

    public static void check(boolean ok, String kind, int line, String clause) {
        if (!ok) throw record(kind, line, clause, "");
    }

    /** For loop conditions: checks and yields true. */
    public static boolean inv(boolean ok, int line, String clause) {
        if (!ok) throw record("maintaining", line, clause, "");
        return true;
    }

    /** A loop variant at the start of an iteration: non-negative, and below its previous value. */
    public static long dec(long previous, long current, int line, String clause) {
        if (current < 0) throw record("decreases", line, clause, "negative: " + current);
        if (previous != Long.MIN_VALUE && current >= previous)
            throw record("decreases", line, clause, "did not decrease: " + previous + " -> " + current);
        return current;
    }

    public static boolean t(long ignored) { return true; }

    public static RuntimeException undefined(String kind, int line, String clause, Throwable cause) {
        if (cause instanceof RangeTooLarge) throw record("unsupported", line, clause, cause.getMessage());
        throw record("undefined", line, clause, kind + " clause raised " + cause.getClass().getName());
    }

    /** An exception escaped a method whose spec case allowed it (signals/signals_only held);
     *  counts only from the method the driver called. */
    public static void allowed() {
        Call c = active;
        if (c != null && topLevel()) c.allowedException = true;
    }

    // ------------------------------------------------------------ quantifiers
    /** The most values one quantifier may range over (issue 42): a wider range is
     *  "unsupported" (a violation of kind {@code unsupported}), never empty and never run
     *  for minutes.  SpecGenBench's widest range on its inputs is a few hundred values. */
    public static final long QUANTIFIER_CAP = 100_000_000L;

    /** A quantifier range beyond {@link #QUANTIFIER_CAP} (only JmlRt creates one). */
    public static final class RangeTooLarge extends RuntimeException {
        RangeTooLarge(String m) { super(m, null, false, false); }
    }

    /** The first and last value of a range given as written (bounds widened to long, strictness
     *  as flags) clamped to the variable's type; null when empty.  No arithmetic here wraps:
     *  {@code k <= Integer.MAX_VALUE} is MAX_VALUE itself, not MAX_VALUE + 1 in int. */
    private static long[] span(long lo, boolean loStrict, long hi, boolean hiIncl, long tmin, long tmax) {
        if (loStrict) { if (lo == Long.MAX_VALUE) return null; lo++; }
        if (!hiIncl) { if (hi == Long.MIN_VALUE) return null; hi--; }
        lo = Math.max(lo, tmin);
        hi = Math.min(hi, tmax);
        if (lo > hi) return null;
        long d = hi - lo;  // in [0, 2^64 - 1]: negative here means it overflowed long
        if (d < 0 || d >= QUANTIFIER_CAP)
            throw new RangeTooLarge("quantifier range [" + lo + ", " + hi + "] has more than " + QUANTIFIER_CAP
                                    + " values (unsupported)");
        return new long[] {lo, hi};
    }

    public static boolean forall(long lo, boolean loStrict, long hi, boolean hiIncl, long tmin, long tmax, LongPredicate p) {
        long[] s = span(lo, loStrict, hi, hiIncl, tmin, tmax);
        if (s == null) return true;
        for (long i = s[0]; ; i++) {
            if (!p.test(i)) return false;
            if (i == s[1]) return true;
        }
    }

    public static boolean exists(long lo, boolean loStrict, long hi, boolean hiIncl, long tmin, long tmax, LongPredicate p) {
        long[] s = span(lo, loStrict, hi, hiIncl, tmin, tmax);
        if (s == null) return false;
        for (long i = s[0]; ; i++) {
            if (p.test(i)) return true;
            if (i == s[1]) return false;
        }
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

    // ------------------------------------------------------------ purity by observation (issue 42)
    /** Most values one purity snapshot records; what lies beyond is not observed. */
    public static final int SNAPSHOT_CAP = 20_000;

    /** What spec code could reach of the program's state before it ran: the roots (its
     *  reference arguments, the receiver, the class for its static fields) and a bounded deep
     *  copy of what they reach (arrays element by element, the fields of the program's objects,
     *  the elements of JDK collections and maps, the text of char sequences). */
    public static final class Snapshot {
        private final Object[] roots;
        private final String[] skip;
        private final List<Object> values;
        Snapshot(Object[] roots, String[] skip, List<Object> values) { this.roots = roots; this.skip = skip; this.values = values; }
    }

    /** A snapshot before spec code runs; {@code skip}: ghost field names (spec state, not the program's). */
    public static Snapshot snap(String[] skip, Object... roots) {
        Snapshot s = new Snapshot(roots, skip, observe(roots, skip));
        Call c = active;
        if (c != null) c.specDepth++;  // the program code spec code calls reaches no branch of the tests
        return s;
    }

    /** Fails the call when the spec code run since {@code s} changed what it observed. */
    public static void same(Snapshot s, String kind, int line, String clause) {
        Call c = active;
        if (c != null && c.specDepth > 0) c.specDepth--;
        List<Object> now = observe(s.roots, s.skip);
        if (!now.equals(s.values))
            throw record("impure", line, clause, "the specification changed the program's state (" + kind + ")");
    }

    private static List<Object> observe(final Object[] roots, final String[] skip) {
        return java.security.AccessController.doPrivileged(new java.security.PrivilegedAction<List<Object>>() {
          @Override public List<Object> run() {
            List<Object> out = new ArrayList<>();
            java.util.IdentityHashMap<Object, Integer> seen = new java.util.IdentityHashMap<>();
            java.util.ArrayDeque<Object> todo = new java.util.ArrayDeque<>();
            for (Object r : roots) { out.add(r instanceof Class ? r : tag(r)); if (r != null) todo.add(r); }
            while (!todo.isEmpty() && out.size() < SNAPSHOT_CAP) {
                Object o = todo.poll();
                if (seen.put(o, seen.size()) != null) continue;
                try {
                    look(o, skip, out, todo);
                } catch (RuntimeException | StackOverflowError e) {
                    // a JDK wrapper around the program's own collection ran its code and that
                    // failed: recorded as unreadable (the same both times), never thrown from here
                    out.add("unreadable");
                }
            }
            return out;
          }
        });
    }

    private static void look(Object o, String[] skip, List<Object> out, java.util.ArrayDeque<Object> todo) {
        Class<?> c = o.getClass();
        if (o instanceof Class) {
            for (java.lang.reflect.Field f : FIELDS.get((Class<?>) o))
                if (java.lang.reflect.Modifier.isStatic(f.getModifiers()) && keep(f, skip)) field(f, null, out, todo);
        } else if (c.isArray() && c.getComponentType().isPrimitive()) {
            out.add(new Copy(o));  // a copy, compared element by element (one memcpy, no boxing)
        } else if (c.isArray()) {
            Object[] a = (Object[]) o;
            out.add(a.length);
            for (int i = 0; i < a.length && out.size() < SNAPSHOT_CAP; i++) value(a[i], out, todo);
        } else if (o instanceof CharSequence && c.getClassLoader() == null) {
            out.add(o.toString());
        } else if (o instanceof java.util.Collection && c.getClassLoader() == null) {
            for (Object e : ((java.util.Collection<?>) o).toArray()) value(e, out, todo);
        } else if (o instanceof java.util.Map && c.getClassLoader() == null) {
            for (Object e : ((java.util.Map<?, ?>) o).entrySet().toArray()) {
                java.util.Map.Entry<?, ?> en = (java.util.Map.Entry<?, ?>) e;
                value(en.getKey(), out, todo);
                value(en.getValue(), out, todo);
            }
        } else if (c.getClassLoader() != null && c.getClassLoader() != JmlRt.class.getClassLoader()) {
            for (Class<?> k = c; k != null && k.getClassLoader() != null; k = k.getSuperclass())
                for (java.lang.reflect.Field f : FIELDS.get(k))
                    if (!java.lang.reflect.Modifier.isStatic(f.getModifiers()) && keep(f, skip)) field(f, o, out, todo);
        }
        // other JDK objects: observed by identity only (their fields are not the program's)
    }

    private static boolean keep(java.lang.reflect.Field f, String[] skip) {
        String n = f.getName();
        if (n.startsWith("__jml") || f.isSynthetic()) return false;
        for (String g : skip) if (g.equals(n)) return false;
        return true;
    }

    /** A class's declared fields, made accessible once (the program's classes only: its own module). */
    private static final ClassValue<java.lang.reflect.Field[]> FIELDS = new ClassValue<java.lang.reflect.Field[]>() {
        @Override protected java.lang.reflect.Field[] computeValue(Class<?> k) {
            java.lang.reflect.Field[] fs = k.getDeclaredFields();
            for (java.lang.reflect.Field f : fs) {
                try { f.setAccessible(true); } catch (RuntimeException e) { /* read as "?" below */ }
            }
            return fs;
        }
    };

    private static void field(java.lang.reflect.Field f, Object o, List<Object> out, java.util.ArrayDeque<Object> todo) {
        try {
            value(f.get(o), out, todo);
        } catch (RuntimeException | IllegalAccessException e) {
            out.add("?");
        }
    }

    /** A primitive array's contents at snapshot time. */
    private static final class Copy {
        private final Object a;
        Copy(Object array) {
            int n = Array.getLength(array);
            Object c = Array.newInstance(array.getClass().getComponentType(), n);
            System.arraycopy(array, 0, c, 0, n);
            this.a = c;
        }
        @Override public boolean equals(Object x) { return x instanceof Copy && java.util.Objects.deepEquals(a, ((Copy) x).a); }
        @Override public int hashCode() { return Array.getLength(a); }
    }

    /** A value as recorded: primitives, strings and other immutable JDK values as themselves, other
     *  objects by identity (and queued, to record what they hold). */
    private static void value(Object v, List<Object> out, java.util.ArrayDeque<Object> todo) {
        if (v == null || v instanceof Number && v.getClass().getClassLoader() == null || v instanceof Boolean
                || v instanceof Character || v instanceof String || v instanceof Enum) {
            out.add(v);
            return;
        }
        out.add(tag(v));
        todo.add(v);
    }

    /** An object's identity as a value (equal only to the same object). */
    private static Object tag(Object o) {
        return o == null ? null : new Ident(o);
    }

    private static final class Ident {
        private final Object o;
        Ident(Object o) { this.o = o; }
        @Override public boolean equals(Object x) { return x instanceof Ident && ((Ident) x).o == o; }
        @Override public int hashCode() { return System.identityHashCode(o); }
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
