package specbench.jml;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;

/** The common ForkJoinPool's thread factory in the runners' JVMs (issue 25): it makes no
 *  thread, and the common pool's parallelism is 0, so no JDK pool thread ever runs sample code
 *  outside the call that submitted it, on any machine: parallel streams run in the calling
 *  thread, and CompletableFuture's async methods (which then start a thread per task) are
 *  refused by the security manager like any other thread. */
public final class NoPoolThreads implements ForkJoinPool.ForkJoinWorkerThreadFactory {
    public static final String PROPERTY = "java.util.concurrent.ForkJoinPool.common.threadFactory";

    @Override public ForkJoinWorkerThread newThread(ForkJoinPool pool) { return null; }

    /** Installs the factory; must run before anything touches the common pool. */
    static void install() {
        System.setProperty(PROPERTY, NoPoolThreads.class.getName());
        System.setProperty("java.util.concurrent.ForkJoinPool.common.parallelism", "0");
        if (!(ForkJoinPool.commonPool().getFactory() instanceof NoPoolThreads))
            throw new IllegalStateException("the common pool was created before the runner could confine it");
    }
}
