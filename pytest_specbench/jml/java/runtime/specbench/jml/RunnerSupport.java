package specbench.jml;

import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.security.CodeSource;
import java.security.Permission;
import java.security.Policy;
import java.security.ProtectionDomain;
import java.util.PropertyPermission;

/** What the two in-JVM runners of the JML service share: {@link JmlRunner} (calls of a
 *  translated program, SpecEval) and {@link JUnitRunner} (a project's JUnit 4 tests,
 *  PostcondBench).  Both start the same way (no pool threads, the root thread group
 *  found, the record channel taken from the real stdout), confine the program's code
 *  source, capture its output, run each call or test on a thread of its own, write one
 *  nonce-tagged JSON record per call or test and stop the JVM after a record that says
 *  the run cannot go on (a timeout, a thread that outlived its call).
 *
 *  Package-private: loaded by the runner's class loader, out of reach of a program
 *  loaded by a child loader (another runtime package). */
final class RunnerSupport {
    private RunnerSupport() {}

    /** One runner's work, once the JVM is set up: read the arguments, write records on {@code channel}. */
    interface Body {
        void run(String[] args, PrintStream channel) throws Exception;
    }

    /** A runner's {@code main}: set-up, then {@code body}; the runner's own failure (System.err is
     *  the program's capture by then) is one {@code runner_error} line on the channel, exit status 2. */
    static void main(String[] args, Body body) {
        try {
            NoPoolThreads.install();
            findRoot();
        } catch (Throwable t) {
            System.out.println("{\"runner_error\":" + json(clip(t.toString(), 500)) + "}");
            System.out.flush();
            Runtime.getRuntime().halt(2);
        }
        final PrintStream channel = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        try {
            body.run(args, channel);
        } catch (Throwable t) {
            channel.println("{\"runner_error\":" + json(clip(t.toString(), 500)) + "}");
            channel.flush();
            Runtime.getRuntime().halt(2);
        }
    }

    /** Writes one record; {@code stop}: the JVM ends here (a call or test still running, or a
     *  thread it left behind, must not run on into the next one). */
    static void emit(PrintStream channel, CharSequence record, boolean stop) {
        channel.println(record);
        channel.flush();
        if (stop) {
            Runtime.getRuntime().halt(0);
        }
    }

    /** The final record (every call or test has its record) and the end of the JVM. */
    static void finish(PrintStream channel, String nonce) {
        channel.println("{\"nonce\":" + json(nonce) + ",\"done\":true}");
        channel.flush();
        Runtime.getRuntime().halt(0);
    }

    /** After a call or test ran on thread {@code own} of {@code group}: the name of a thread it
     *  did not own that is still alive (one of its group, else one started since {@code before}),
     *  or null.  Such a thread (a JDK cleaner, a pool) may run program or spec code later. */
    static String outlived(ThreadGroup group, String groupThread, java.util.Set<Thread> before, Thread own) {
        return group.activeCount() > 0 ? groupThread : strayThread(before, own);
    }

    static final class Capped extends OutputStream {
        final ByteArrayOutputStream buf = new ByteArrayOutputStream();
        final int cap;
        long dropped;
        Capped(int cap) { this.cap = cap; }
        @Override public synchronized void write(int b) { if (buf.size() < cap) buf.write(b); else dropped++; }
        @Override public synchronized void write(byte[] b, int off, int len) {
            int room = Math.max(0, Math.min(len, cap - buf.size()));
            buf.write(b, off, room);
            dropped += len - room;
        }
        synchronized String take() { String s = buf.toString(StandardCharsets.UTF_8); buf.reset(); return s; }
        synchronized long takeDropped() { long d = dropped; dropped = 0; return d; }
    }


    /** The class name and (clipped) message of a sample's exception; called on the sample's
     *  thread, never the runner's: getMessage() is sample code and may loop, throw or exhaust memory. */
    static String[] describe(Throwable e) {
        String cls = e.getClass().getName();
        String msg;
        try {
            msg = clip(String.valueOf(e.getMessage()), 300);
        } catch (Throwable x) {
            msg = "<getMessage() raised " + x.getClass().getName() + ">";
        }
        return new String[] {cls, msg};
    }

    // ------------------------------------------------------------ threads the call did not own
    private static ThreadGroup root;

    static void findRoot() {
        ThreadGroup g = Thread.currentThread().getThreadGroup();
        while (g.getParent() != null) g = g.getParent();
        root = g;
    }

    /** Every live thread of the JVM (JDK pool and cleaner threads included, whatever their group). */
    static java.util.Set<Thread> liveThreads() {
        Thread[] all = new Thread[root.activeCount() + 16];
        int n;
        while ((n = root.enumerate(all, true)) == all.length) all = new Thread[all.length * 2];
        java.util.Set<Thread> out = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (int i = 0; i < n; i++) out.add(all[i]);
        return out;
    }

    // Threads the JVM itself may start late, in its system group (none of them runs sample code).
    private static final java.util.Set<String> JVM_THREADS = java.util.Set.of(
        "Attach Listener", "Signal Dispatcher", "Notification Thread", "Common-Cleaner", "Reference Handler",
        "Finalizer", "process reaper");

    /** A live thread that was not alive before the call (other than the call's own): its name, or null. */
    static String strayThread(java.util.Set<Thread> before, Thread own) {
        for (Thread t : liveThreads()) {
            if (t == own || before.contains(t) || !t.isAlive()) continue;
            ThreadGroup g = t.getThreadGroup();
            if (g != null && g.getParent() == null && JVM_THREADS.contains(t.getName())) continue;
            return t.getName();
        }
        return null;
    }

    /** The CPU time of the calling thread in nanoseconds (Linux: the first field of
     *  {@code /proc/thread-self/schedstat}, the clock {@code ThreadMXBean.getCurrentThreadCpuTime}
     *  reads), or -1 when it cannot be read.  Not through {@code java.lang.management}: its
     *  start-up (the platform beans' service lookup) was ~35 ms of a ~200 ms runner JVM
     *  (docs/timing.md, "Session 19").  Called on a call's or test's thread before and after
     *  the program's code, never while program code is on the stack. */
    static long threadCpuNanos() {
        try (java.io.FileInputStream in = new java.io.FileInputStream("/proc/thread-self/schedstat")) {
            byte[] buf = new byte[64];
            int n = in.read(buf);
            long v = 0;
            int i = 0;
            for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) v = v * 10 + (buf[i] - '0');
            return i > 0 && i < 19 ? v : -1;
        } catch (Throwable e) {
            return -1;
        }
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    // ASCII only: no line or paragraph separator (U+0085, U+2028...) ends a record early
                    if (c < 0x20 || c >= 0x7f) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static String clip(String s, int n) { return s == null ? "" : (s.length() <= n ? s : s.substring(0, n) + "..."); }

    /** The nonce of this run's records, from the file {@code nonce} of the working
     *  directory, read and deleted before any program class loads. */
    static String takeNonce() throws java.io.IOException {
        java.nio.file.Path nonceFile = Paths.get("nonce");
        String nonce = new String(java.nio.file.Files.readAllBytes(nonceFile), StandardCharsets.UTF_8).trim();
        java.nio.file.Files.deleteIfExists(nonceFile);
        if (nonce.isEmpty()) throw new IllegalStateException("empty nonce");
        return nonce;
    }

    /** System.out/err go to a capped buffer (read per call or test), stdin is empty:
     *  the record channel (the real stdout) stays out of the program's reach. */
    static Capped captureOutput(int cap) {
        Capped captured = new Capped(cap);
        PrintStream capture = new PrintStream(captured, true, StandardCharsets.UTF_8);
        System.setOut(capture);
        System.setErr(capture);
        System.setIn(new java.io.ByteArrayInputStream(new byte[0]));
        return captured;
    }

    /** Classes loaded from {@code program} may only read java.* / jdk.* properties
     *  (no exit, threads, files, file descriptors, environment, System.out
     *  replacement, reflection on the runner); a SecurityManager enforces it. */
    static void confine(final java.util.Set<URL> program) {
        Policy.setPolicy(new Policy() {
            @Override public boolean implies(ProtectionDomain domain, Permission permission) {
                CodeSource cs = domain.getCodeSource();
                if (cs != null && program.contains(cs.getLocation())) {
                    return permission instanceof PropertyPermission && "read".equals(permission.getActions())
                        && (permission.getName().startsWith("java.") || permission.getName().startsWith("jdk.")
                            || permission.getName().equals("line.separator"));
                }
                return true;
            }
        });
        System.setSecurityManager(new SecurityManager() {
            @Override public void checkAccess(ThreadGroup g) { checkPermission(new RuntimePermission("modifyThreadGroup")); }
            @Override public void checkAccess(Thread t) { checkPermission(new RuntimePermission("modifyThread")); }
        });
    }
}
