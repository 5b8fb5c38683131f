// Runs any Kafka tool's main() (unchanged) once per input line inside one JVM, as
// GroupCommandShell does for kafka-consumer-groups: a scripted session of several tools costs one
// JVM start.
//
// Input (stdin): one command per line: the tool's main class, then its arguments, separated by TAB.
// Output (stdout), per command:
//   "OUT <n>\n" then n bytes (UTF-8) of what the command printed on stdout,
//   "ERR <n>\n" then n bytes of what it printed on stderr,
//   "EXIT <code>\n"
// Exit.exit ends the command with that code; what the tool printed after it is cut off (a real
// process would not have printed it).
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.kafka.common.utils.Exit;

public final class RecordsToolShell {
    static final class ExitCalled extends Error {
        final int code;

        ExitCalled(int code) {
            super("Exit.exit(" + code + ")", null, false, false);
            this.code = code;
        }
    }

    static ByteArrayOutputStream out, err;
    static Integer exitCode;
    static int outCut, errCut;

    public static void main(String[] args) throws Exception {
        PrintStream realOut = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
                StandardCharsets.UTF_8);
        Exit.setExitProcedure((code, message) -> {
            if (exitCode == null) {
                exitCode = code;
                System.out.flush();
                System.err.flush();
                outCut = out.size();
                errCut = err.size();
            }
            throw new ExitCalled(code);
        });
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isEmpty()) continue;
            String[] argv = line.split("\t", -1);
            out = new ByteArrayOutputStream();
            err = new ByteArrayOutputStream();
            exitCode = null;
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = 0;
            try {
                Method m = Class.forName(argv[0]).getMethod("main", String[].class);
                m.invoke(null, (Object) Arrays.copyOfRange(argv, 1, argv.length));
            } catch (InvocationTargetException wrapped) {
                Throwable t = wrapped.getCause();
                if (t instanceof ExitCalled) {
                    code = ((ExitCalled) t).code;
                } else {
                    t.printStackTrace();  // an uncaught exception: a process would print it and exit 1
                    code = 1;
                }
            } catch (ExitCalled e) {
                code = e.code;
            }
            System.out.flush();
            System.err.flush();
            byte[] o = out.toByteArray(), e = err.toByteArray();
            if (exitCode != null) {
                code = exitCode;
                o = Arrays.copyOf(o, outCut);
                e = Arrays.copyOf(e, errCut);
            }
            frame(realOut, "OUT", o);
            frame(realOut, "ERR", e);
            realOut.print("EXIT " + code + "\n");
            realOut.flush();
        }
    }

    static void frame(PrintStream to, String tag, byte[] data) {
        to.print(tag + " " + data.length + "\n");
        to.write(data, 0, data.length);
        to.flush();
    }
}
