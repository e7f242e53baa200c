package specbench.jml;

import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.runner.JUnitCore;
import org.junit.runner.Request;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;

import static specbench.jml.RunnerSupport.*;

/** The JML service's JUnit 4 runner (PostcondBench's Java side): runs a project's JUnit 4
 *  tests, one test method at a time, against classes whose target method carries JML ensures translated into checks,
 *  and writes one JSON record per test to the JVM's real stdout.
 *
 *  It lives in package specbench.jml (loaded by the same class loader as JmlRt)
 *  to read the violations JmlRt recorded, whether or not the program caught the
 *  JmlViolation.  The project and its tests are loaded from their class folders by
 *  a class loader of their own; as in JmlRunner (RunnerSupport.confine), a Policy grants those code sources
 *  nothing but reading java.* properties and a SecurityManager enforces it (no exit,
 *  threads, files, file descriptors, environment, System.out replacement).  Each
 *  record carries a nonce read from (and deleted with) the file {@code nonce} before
 *  any project class loads, so lines printed by the project cannot pass for records.
 *
 *  usage: java -cp RUNNER:JMLRT:JUNIT:HAMCREST specbench.jml.JUnitRunner
 *             BUDGET_MS OUTPUT_CAP TARGET_CLASS TARGET_METHOD DIR[:DIR...] Class#method ... */
public final class JUnitRunner {
    private static final class Outcome {
        volatile Result result;
        volatile String thrown;     // JUnit's own failure, described on the test's thread
        volatile String failures = "[]";  // the failures as JSON, built on the test's thread (getMessage is project code)
        volatile boolean done;
    }

    /** JSON of a string that may be null (a failure's message): "" then. */
    private static String jsonText(String s) { return json(s == null ? "" : s); }

    public static void main(String[] args) {
        RunnerSupport.main(args, new RunnerSupport.Body() {  // (no lambda: the runners start without invokedynamic)
            @Override public void run(String[] a, PrintStream channel) throws Exception { JUnitRunner.run(a, channel); }
        });
    }

    /** Where an exception was thrown: did it pass through the target method (or a
     *  generated JML helper of its class)? */
    private static boolean throughTarget(Throwable e, String targetClass, String targetMethod) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            for (StackTraceElement f : t.getStackTrace()) {
                String c = f.getClassName();
                if ((c.equals(targetClass) || c.startsWith(targetClass + "$"))
                        && (f.getMethodName().equals(targetMethod) || f.getMethodName().startsWith("__jml_"))) {
                    return true;
                }
            }
            if (t.getCause() == t) break;
        }
        return false;
    }

    /** The failures of one test as JSON, built on the test's own thread (messages are project code). */
    private static String failures(Result res, String targetClass, String targetMethod) {
        StringBuilder r = new StringBuilder("[");
        int n = 0;
        for (Failure f : res.getFailures()) {
            if (n++ >= 5) break;
            Throwable e = f.getException();
            if (n > 1) r.append(',');
            String[] d = e == null ? new String[] {"", ""} : describe(e);
            boolean through;
            try {
                through = e != null && throughTarget(e, targetClass, targetMethod);
            } catch (Throwable x) {
                through = false;
            }
            r.append("{\"exception\":").append(jsonText(d[0]))
             .append(",\"message\":").append(jsonText(d[1]))
             .append(",\"violation\":").append(e instanceof JmlViolation)
             .append(",\"assertion\":").append(e instanceof AssertionError && !(e instanceof JmlViolation))
             .append(",\"through_target\":").append(through)
             .append('}');
        }
        return r.append(']').toString();
    }

    private static void run(String[] args, PrintStream channel) throws Exception {
        String nonce = takeNonce();
        long budgetMs = Long.parseLong(args[0]);
        int outputCap = Integer.parseInt(args[1]);
        String targetClass = args[2];
        String targetMethod = args[3];
        String[] dirs = args[4].split(java.io.File.pathSeparator);
        final Set<URL> program = new HashSet<>();
        URL[] urls = new URL[dirs.length];
        for (int i = 0; i < dirs.length; i++) {
            urls[i] = Paths.get(dirs[i]).toAbsolutePath().toUri().toURL();
            program.add(urls[i]);
        }
        // JUnit's own classes load before the sandbox closes (they are trusted, on the class path).
        Class.forName("org.junit.runner.JUnitCore");
        Class.forName("org.junit.runner.Request");
        Class.forName("org.junit.internal.requests.FilterRequest");
        Class.forName("org.junit.runner.manipulation.Filter");
        Class.forName("org.junit.runners.BlockJUnit4ClassRunner");

        Capped captured = captureOutput(outputCap);

        confine(program);

        URLClassLoader loader = new URLClassLoader(urls, JUnitRunner.class.getClassLoader());
        long deadline = System.nanoTime() + budgetMs * 1_000_000L;
        for (int a = 5; a < args.length; a++) {
            final String test = args[a];
            int hash = test.indexOf('#');
            String className = hash < 0 ? test : test.substring(0, hash);
            String methodName = hash < 0 ? null : test.substring(hash + 1);
            StringBuilder r = new StringBuilder("{\"nonce\":").append(jsonText(nonce)).append(",\"test\":").append(jsonText(test));
            final Class<?> cls;
            try {
                cls = Class.forName(className, false, loader);
            } catch (Throwable e) {
                r.append(",\"outcome\":\"missing\",\"message\":").append(jsonText(clip(e.toString(), 300))).append("}");
                emit(channel, r, false);
                continue;
            }
            final Request request = methodName == null ? Request.aClass(cls) : Request.method(cls, methodName);
            final Outcome out = new Outcome();
            ThreadGroup group = new ThreadGroup("specbench-test");
            Thread th = new Thread(group, new Runnable() { @Override public void run() {
                try {
                    Result res = new JUnitCore().run(request);
                    out.failures = failures(res, targetClass, targetMethod);
                    out.result = res;
                } catch (Throwable e) {
                    String[] d = describe(e);
                    out.thrown = d[0] + ": " + d[1];
                } finally {
                    out.done = true;
                }
            }}, "specbench-test", 64L << 20);
            java.util.Set<Thread> before = liveThreads();
            final JmlRt.Call rec = JmlRt.begin(null);
            long w0 = System.nanoTime();
            th.start();
            long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
            th.join(left);
            long wallMs = (System.nanoTime() - w0) / 1_000_000;
            List<JmlViolation> vs = rec.violations();
            boolean stop = false;
            if (!out.done) {
                r.append(",\"outcome\":\"timeout\"");
                stop = true;
            } else if (out.thrown != null) {
                JmlRt.end();
                r.append(",\"outcome\":\"error\",\"message\":").append(jsonText(clip(out.thrown, 300)));
            } else {
                JmlRt.end();
                Result res = out.result;
                r.append(",\"outcome\":").append(jsonText(res.wasSuccessful() ? "passed" : "failed"))
                 .append(",\"run\":").append(res.getRunCount())
                 .append(",\"ignored\":").append(res.getIgnoreCount());
                r.append(",\"failures\":").append(out.failures);
            }
            if (out.done) {
                // a thread the test did not own (a JDK cleaner, a pool) may run project or spec code
                // after the test: the run stops there, and the test cannot pass
                String stray = outlived(group, "specbench-test", before, th);
                if (stray != null) {
                    r.append(",\"outlived\":").append(jsonText(clip(stray, 100)));
                    stop = true;
                }
            }
            r.append(",\"violations\":[");
            for (int i = 0; i < vs.size() && i < 5; i++) {
                JmlViolation v = vs.get(i);
                if (i > 0) r.append(',');
                r.append("{\"kind\":").append(jsonText(v.kind)).append(",\"line\":").append(v.line)
                 .append(",\"clause\":").append(jsonText(clip(v.clause, 300)))
                 .append(",\"message\":").append(jsonText(clip(v.getMessage(), 300))).append('}');
            }
            r.append("],\"violation_count\":").append(vs.size());
            r.append(",\"wall_ms\":").append(wallMs);
            r.append(",\"output\":").append(jsonText(clip(captured.take(), 2000)))
             .append(",\"output_dropped\":").append(captured.takeDropped()).append('}');
            emit(channel, r, stop);
        }
        finish(channel, nonce);
    }
}
