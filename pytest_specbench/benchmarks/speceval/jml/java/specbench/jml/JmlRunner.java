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
        volatile boolean done;
        volatile long cpuNanos;
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
                    if (c < 0x20 || (c >= 0xD800 && c <= 0xDFFF)) b.append(String.format("\\u%04x", (int) c));
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
            JmlRt.drain();
            JmlRt.takeAllowedException();
            JmlRt.takeBranches();
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
                    out.cpuNanos = mx.getCurrentThreadCpuTime() - t0;
                    out.done = true;
                }
            }, "specbench-call", 64L << 20);
            long w0 = System.nanoTime();
            th.start();
            th.join(timeoutMs);
            long wallMs = (System.nanoTime() - w0) / 1_000_000;
            StringBuilder r = new StringBuilder("{\"nonce\":").append(json(nonce)).append(",\"call\":").append(k);
            boolean stop = false;
            List<JmlViolation> vs = JmlRt.drain();
            if (!out.done) {
                r.append(",\"verdict\":\"timeout\"");
                stop = true;
            } else if (!vs.isEmpty()) {
                JmlViolation v = vs.get(0);
                boolean pre = v.kind.equals("requires") && v.depth == 1;
                r.append(",\"verdict\":").append(json(pre ? "precondition" : "violated"))
                 .append(",\"kind\":").append(json(v.kind)).append(",\"line\":").append(v.line)
                 .append(",\"clause\":").append(json(clip(v.clause, 300)))
                 .append(",\"message\":").append(json(clip(v.getMessage(), 500)))
                 .append(",\"depth\":").append(v.depth);
            } else if (out.thrown != null) {
                Throwable e = out.thrown;
                boolean allowed = JmlRt.takeAllowedException();
                r.append(",\"verdict\":").append(json(allowed ? "holds" : "crashed"))
                 .append(",\"exception\":").append(json(e.getClass().getName()))
                 .append(",\"message\":").append(json(clip(String.valueOf(e.getMessage()), 300)));
            } else {
                r.append(",\"verdict\":\"holds\"");
            }
            if (out.done && group.activeCount() > 0) {
                r.append(",\"outlived\":true");
                stop = true;
            }
            r.append(",\"branches\":").append(JmlRt.takeBranches());
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
