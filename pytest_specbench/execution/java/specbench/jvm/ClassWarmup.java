package specbench.jvm;

import java.io.File;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/** The training run of a class-data-sharing archive (execution/jvm.py, issue 48): loads,
 *  without initialising (no static initialiser runs), every class of the jars on the class
 *  path and of the JDK modules named in the arguments, so that a JVM started with
 *  {@code -XX:ArchiveClassesAtExit} archives them; then, given {@code --run MAIN ARGS...},
 *  runs that trusted main (e.g. the JML runner on a trusted program), so that the JDK classes
 *  and lambda proxies its start-up makes (the security manager's) are archived too.
 *  Trusted code only: it runs no job's code.  Prints the number of classes loaded.
 *
 *  usage: ClassWarmup [MODULE...] [--run MAIN ARG...] */
public final class ClassWarmup {
    public static void main(String[] argv) throws Exception {
        int run = java.util.Arrays.asList(argv).indexOf("--run");
        String[] args = run < 0 ? argv : java.util.Arrays.copyOfRange(argv, 0, run);
        ClassLoader loader = ClassLoader.getSystemClassLoader();
        int loaded = 0;
        for (String part : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!part.endsWith(".jar")) continue;
            try (JarFile jar = new JarFile(part)) {
                for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements();) {
                    loaded += load(e.nextElement().getName(), loader);
                }
            }
        }
        if (args.length > 0) {
            FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
            for (String module : args) {
                Path root = jrt.getPath("/modules", module);
                try (Stream<Path> files = Files.walk(root)) {
                    for (Path f : (Iterable<Path>) files::iterator) loaded += load(root.relativize(f).toString(), loader);
                }
            }
        }
        System.out.println(loaded);
        System.out.flush();
        if (run >= 0) {
            String[] rest = java.util.Arrays.copyOfRange(argv, run + 2, argv.length);
            Class.forName(argv[run + 1], true, loader).getMethod("main", String[].class).invoke(null, (Object) rest);
        }
    }

    private static int load(String entry, ClassLoader loader) {
        if (!entry.endsWith(".class") || entry.endsWith("module-info.class") || entry.startsWith("META-INF/")) return 0;
        try {
            Class.forName(entry.substring(0, entry.length() - 6).replace('/', '.'), false, loader);
            return 1;
        } catch (Throwable t) {  // a class that cannot load here is simply not archived
            return 0;
        }
    }
}
