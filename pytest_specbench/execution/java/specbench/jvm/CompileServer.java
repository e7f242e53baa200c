package specbench.jvm;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/** javac kept warm, so that a compilation does not pay a JVM start (about a
 *  second of CPU).  javac only parses and type-checks here (-proc:none): no
 *  compiled code runs.
 *
 *  usage: CompileServer IN OUT   (IN: a file or FIFO to read requests from, "-" for stdin;
 *                                 OUT: where answers go, "-" for stdout, e.g. /dev/fd/3)
 *
 *  A request: a line "ID NFLAGS NCP NFILES", then NFLAGS lines of javac flags,
 *  NCP lines of class path entries, and per source file a line "LENGTH RELPATH"
 *  followed by LENGTH bytes of UTF-8 source.  The sources are compiled in a
 *  fresh folder of the working directory; the answer is one JSON line
 *  {"id":ID,"rc":RC,"diag":"...","classes":{"a/B.class":"base64",...}}. */
public final class CompileServer {
    public static void main(String[] argv) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        InputStream in = new BufferedInputStream(argv.length > 0 && !argv[0].equals("-")
                ? new FileInputStream(argv[0]) : new FileInputStream(FileDescriptor.in));
        OutputStream sink = argv.length > 1 && !argv[1].equals("-")
                ? new FileOutputStream(argv[1]) : new FileOutputStream(FileDescriptor.out);
        PrintStream out = new PrintStream(sink, false, StandardCharsets.UTF_8);
        Path work = Paths.get(System.getProperty("java.io.tmpdir"), "specbench-javac").toAbsolutePath();
        Files.createDirectories(work);
        String head;
        while ((head = line(in)) != null) {
            if (head.isEmpty()) continue;
            String[] h = head.trim().split(" ");
            String id = h[0];
            int nflags = Integer.parseInt(h[1]), ncp = Integer.parseInt(h[2]), nfiles = Integer.parseInt(h[3]);
            List<String> args = new ArrayList<>();
            for (int i = 0; i < nflags; i++) args.add(line(in));
            StringBuilder cp = new StringBuilder();
            for (int i = 0; i < ncp; i++) {
                if (cp.length() > 0) cp.append(java.io.File.pathSeparatorChar);
                cp.append(line(in));
            }
            Path job = Files.createTempDirectory(work, "c");
            Path src = job.resolve("src"), classes = job.resolve("out");
            Files.createDirectories(classes);
            List<String> files = new ArrayList<>();
            for (int i = 0; i < nfiles; i++) {
                String[] f = line(in).split(" ", 2);
                byte[] text = in.readNBytes(Integer.parseInt(f[0]));
                Path p = src.resolve(f[1]).normalize();
                if (!p.startsWith(src)) throw new IOException("source path outside the job: " + f[1]);
                Files.createDirectories(p.getParent());
                Files.write(p, text);
                files.add(p.toString());
            }
            args.add("-d");
            args.add(classes.toString());
            if (cp.length() > 0) {
                args.add("-cp");
                args.add(cp.toString());
            }
            args.addAll(files);
            ByteArrayOutputStream diag = new ByteArrayOutputStream();
            int rc;
            try {
                rc = javac.run(null, diag, diag, args.toArray(new String[0]));
            } catch (Throwable t) {
                rc = 99;
                diag.write(t.toString().getBytes(StandardCharsets.UTF_8));
            }
            StringBuilder r = new StringBuilder("{\"id\":").append(json(id)).append(",\"rc\":").append(rc)
                .append(",\"diag\":").append(json(diag.toString(StandardCharsets.UTF_8).replace(src + "/", "")))
                .append(",\"classes\":{");
            if (rc == 0) {
                boolean first = true;
                try (Stream<Path> walk = Files.walk(classes)) {
                    for (Path c : (Iterable<Path>) walk.filter(Files::isRegularFile)::iterator) {
                        if (!first) r.append(',');
                        first = false;
                        r.append(json(classes.relativize(c).toString())).append(':')
                         .append(json(Base64.getEncoder().encodeToString(Files.readAllBytes(c))));
                    }
                }
            }
            out.print(r.append("}}\n"));
            out.flush();
            try (Stream<Path> walk = Files.walk(job)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** One line of the request stream (UTF-8, without its newline); null at its end. */
    static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1 && c != '\n') b.write(c);
        if (c == -1 && b.size() == 0) return null;
        return b.toString(StandardCharsets.UTF_8);
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
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
