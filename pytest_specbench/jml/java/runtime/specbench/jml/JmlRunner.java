package specbench.jml;

import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Paths;

import static specbench.jml.RunnerSupport.*;

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
 *  The driver class has {@code public static Object call(int k) throws Throwable}.
 *  Set-up, confinement, output capture and the record channel: {@link RunnerSupport}. */
public final class JmlRunner {
    private static final class Outcome {
        volatile Object value;
        volatile Throwable thrown;
        volatile String exception = "";  // the thrown exception's class and message, taken on the call's
        volatile String message = "";    // own thread: a hostile getMessage() only costs its own call
        volatile boolean done;
        volatile long cpuNanos;
    }

    public static void main(String[] args) {
        RunnerSupport.main(args, new RunnerSupport.Body() {  // (no lambda: the runners start without invokedynamic)
            @Override public void run(String[] a, PrintStream channel) throws Exception { JmlRunner.run(a, channel); }
        });
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
            emit(channel, "{\"nonce\":" + json(nonce) + ",\"load_error\":" + json(clip(e.toString(), 500)) + "}", true);
            return;
        }
        for (int a = 4; a < args.length; a++) {
            final int k = Integer.parseInt(args[a]);
            final Outcome out = new Outcome();
            ThreadGroup group = new ThreadGroup("specbench-call-" + k);
            final Method m = call;
            Thread th = new Thread(group, new Runnable() { @Override public void run() {
                long t0 = threadCpuNanos();
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
                    long t1 = threadCpuNanos();
                    out.cpuNanos = t0 < 0 || t1 < 0 ? 0 : t1 - t0;
                    out.done = true;
                }
            }}, "specbench-call", 64L << 20);
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
                String stray = outlived(group, "specbench-call", before, th);
                if (stray != null) {
                    r.append(",\"outlived\":true,\"thread\":").append(json(clip(stray, 100)));
                    stop = true;
                }
                r.append(",\"branches\":").append(rec.branches());
            }
            r.append(",\"cpu_ms\":").append(out.cpuNanos / 1_000_000).append(",\"wall_ms\":").append(wallMs);
            r.append(",\"output\":").append(json(clip(captured.take(), 2000)))
             .append(",\"output_dropped\":").append(captured.takeDropped()).append("}");
            emit(channel, r, stop);
        }
        finish(channel, nonce);
    }
}
