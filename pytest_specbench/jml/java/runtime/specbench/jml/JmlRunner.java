package specbench.jml;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.security.CodeSource;
import java.security.Permission;
import java.security.Policy;
import java.security.ProtectionDomain;
import java.util.List;
import java.util.PropertyPermission;

/** Runs calls of a translated program in one JVM and writes one JSON record per
 *  call to the JVM's real stdout, each carrying a nonce the program cannot read.
 *
 *  The program (and the spec compiled into it) is loaded from its own directory
 *  by its own class loader; a Policy grants that code source no permission but
 *  reading a few system properties, and a SecurityManager enforces it: the
 *  program cannot exit the JVM, start threads, open files or file descriptors,
 *  read the environment, replace System.out, or use reflection on the runner.
 *  Its System.out/err go to a capped per-call buffer.  So the record channel
 *  and the nonce are out of its reach.
 *
 *  usage: java -cp RUNTIME specbench.jml.JmlRunner PROGRAM_DIR DRIVER_CLASS TIMEOUT_MS OUTPUT_CAP k1 k2 ...
 *  A file {@code nonce} in the working directory holds the nonce.
 *  The driver class has {@code public static Object call(int k) throws Throwable}. */
public final class JmlRunner {
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

    private static final class Outcome {
        volatile Object value;
        volatile Throwable thrown;
        volatile String exception = "";  // the thrown exception's class and message, taken on the call's
        volatile String message = "";    // own thread: a hostile getMessage() only costs its own call
        volatile boolean done;
        volatile long cpuNanos;
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

    public static void main(String[] args) throws Exception {
        NoPoolThreads.install();
        findRoot();
        final PrintStream channel = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        try {
            run(args, channel);
        } catch (Throwable t) {
            // The runner's own failure (System.err is the program's capture by now): say so on the channel.
            channel.println("{\"runner_error\":" + json(clip(t.toString(), 500)) + "}");
            channel.flush();
            Runtime.getRuntime().halt(2);
        }
    }

    private static void run(String[] args, PrintStream channel) throws Exception {
        String nonce = takeNonce();
        final URL programUrl = Paths.get(args[0]).toAbsolutePath().toUri().toURL();
        String driverName = args[1];
        long timeoutMs = Long.parseLong(args[2]);
        int outputCap = Integer.parseInt(args[3]);

        Capped captured = captureOutput(outputCap);

        confine(java.util.Collections.singleton(programUrl));

        URLClassLoader loader = new URLClassLoader(new URL[] {programUrl}, JmlRunner.class.getClassLoader());
        Method call;
        try {
            call = Class.forName(driverName, false, loader).getMethod("call", int.class);
        } catch (Throwable e) {
            channel.println("{\"nonce\":" + json(nonce) + ",\"load_error\":" + json(clip(e.toString(), 500)) + "}");
            channel.flush();
            Runtime.getRuntime().halt(0);
            return;
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        for (int a = 4; a < args.length; a++) {
            final int k = Integer.parseInt(args[a]);
            final Outcome out = new Outcome();
            ThreadGroup group = new ThreadGroup("specbench-call-" + k);
            final Method m = call;
            Thread th = new Thread(group, () -> {
                long t0 = mx.getCurrentThreadCpuTime();
                try {
                    out.value = m.invoke(null, k);
                } catch (InvocationTargetException e) {
                    out.thrown = e.getCause();
                } catch (Throwable e) {
                    out.thrown = e;
                } finally {
                    Throwable e = out.thrown;
                    if (e != null && !(e instanceof JmlViolation)) {
                        String[] d = describe(e);
                        out.exception = d[0];
                        out.message = d[1];
                    }
                    out.cpuNanos = mx.getCurrentThreadCpuTime() - t0;
                    out.done = true;
                }
            }, "specbench-call", 64L << 20);
            java.util.Set<Thread> before = liveThreads();
            final JmlRt.Call rec = JmlRt.begin(driverName);
            long w0 = System.nanoTime();
            th.start();
            th.join(timeoutMs);
            long wallMs = (System.nanoTime() - w0) / 1_000_000;
            StringBuilder r = new StringBuilder("{\"nonce\":").append(json(nonce)).append(",\"call\":").append(k);
            boolean stop = false;
            if (!out.done) {
                r.append(",\"verdict\":\"timeout\"");
                stop = true;
            } else {
                JmlRt.end();
                // The verdict comes from the violation that left the call (one the runtime recorded:
                // the program cannot make its own); a violation the program caught still fails it.
                Throwable left = out.thrown;
                JmlViolation v = left instanceof JmlViolation && rec.recorded(left) ? (JmlViolation) left : null;
                if (v == null) {
                    for (JmlViolation x : rec.violations()) { v = x; break; }
                }
                if (v != null) {
                    boolean pre = v == left && v.kind.equals("requires") && v.top;
                    r.append(",\"verdict\":").append(json(pre ? "precondition" : "violated"))
                     .append(",\"kind\":").append(json(v.kind)).append(",\"line\":").append(v.line)
                     .append(",\"clause\":").append(json(clip(v.clause, 300)))
                     .append(",\"message\":").append(json(clip(v.getMessage(), 500)));
                } else if (left != null) {
                    boolean allowed = rec.allowedException() && !(left instanceof JmlViolation);
                    r.append(",\"verdict\":").append(json(allowed ? "holds" : "crashed"))
                     .append(",\"exception\":").append(json(left instanceof JmlViolation ? JmlViolation.class.getName() : out.exception))
                     .append(",\"message\":").append(json(out.message));
                } else {
                    r.append(",\"verdict\":\"holds\"");
                }
                String stray = group.activeCount() > 0 ? "specbench-call" : strayThread(before, th);
                if (stray != null) {
                    r.append(",\"outlived\":true,\"thread\":").append(json(clip(stray, 100)));
                    stop = true;
                }
                r.append(",\"branches\":").append(rec.branches());
            }
            r.append(",\"cpu_ms\":").append(out.cpuNanos / 1_000_000).append(",\"wall_ms\":").append(wallMs);
            r.append(",\"output\":").append(json(clip(captured.take(), 2000)))
             .append(",\"output_dropped\":").append(captured.takeDropped()).append("}");
            channel.println(r);
            channel.flush();
            if (stop) {
                Runtime.getRuntime().halt(0);
            }
        }
        channel.println("{\"nonce\":" + json(nonce) + ",\"done\":true}");
        channel.flush();
        Runtime.getRuntime().halt(0);
    }
}
