// Runs `kafka-configs` (Kafka's kafka.admin.ConfigCommand.main, unchanged) once per input
// line inside one JVM, so a scripted session of a few dozen commands costs one JVM start
// instead of one per command.
//
// Input (stdin): one command per line, its arguments separated by TAB.
// Output (stdout), per command:
//   "OUT <n>\n" then n bytes (UTF-8) of what the command printed on stdout,
//   "ERR <n>\n" then n bytes of what it printed on stderr,
//   "EXIT <code>\n"
// The tool ends some paths with Exit.exit (usage errors); that is recorded as the command's
// exit code and whatever the tool printed after it (only possible when the tool catches the
// unwinding exception, which a real process would never reach) is cut off, so the transcript
// is the one a separate process would have produced.
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.utils.Exit;

public final class ConfigCommandShell {
    static final class ExitCalled extends Error {
        final int code;

        ExitCalled(int code) {
            super("Exit.exit(" + code + ")", null, false, false);
            this.code = code;
        }
    }

    // The output of one command; frozen at the first Exit.exit.
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
                kafka.admin.ConfigCommand.main(argv);
            } catch (ExitCalled e) {
                code = e.code;
            } catch (Throwable t) {
                t.printStackTrace();  // an uncaught exception: a process would print it and exit 1
                code = 1;
            }
            System.out.flush();
            System.err.flush();
            byte[] o = out.toByteArray(), e = err.toByteArray();
            if (exitCode != null) {
                code = exitCode;
                o = java.util.Arrays.copyOf(o, outCut);
                e = java.util.Arrays.copyOf(e, errCut);
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
