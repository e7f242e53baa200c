package specbench.jvm;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/** javac kept warm: each stdin line names a file of javac arguments (one per
 *  line); the answer is "RC LENGTH\n" followed by LENGTH bytes of diagnostics.
 *  Saves a JVM start (about a second of CPU) per compilation.  javac only
 *  parses and type-checks here (-proc:none): no compiled code runs. */
public final class CompileServer {
    public static void main(String[] argv) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            List<String> args = Files.readAllLines(Paths.get(line), StandardCharsets.UTF_8);
            ByteArrayOutputStream diag = new ByteArrayOutputStream();
            int rc;
            try {
                rc = javac.run(null, diag, diag, args.toArray(new String[0]));
            } catch (Throwable t) {
                rc = 99;
                diag.write(t.toString().getBytes(StandardCharsets.UTF_8));
            }
            byte[] d = diag.toByteArray();
            out.print(rc + " " + d.length + "\n");
            out.write(d);
            out.flush();
        }
    }
}
