// Runs one stock Kafka command-line tool (its main class, unchanged, named by the first argument,
// e.g. org.apache.kafka.tools.TopicCommand) once per input line inside one JVM, so a scripted
// session of a few dozen commands costs one JVM start instead of one per command. The same
// protocol as GroupCommandShell.java, for any tool:
//
// Input (stdin): one command per line, its arguments separated by TAB.
// Output (stdout), per command:
//   "OUT <n>\n" then n bytes (UTF-8) of what the command printed on stdout,
//   "ERR <n>\n" then n bytes of what it printed on stderr,
//   "EXIT <code>\n"
// Exit.exit ends the command: its code is recorded and whatever the tool printed after it (only
// possible when the tool catches the unwinding exception) is cut off, as for a real process.
// Exit is org.apache.kafka.common.utils.Exit up to Kafka 4.3 and ...utils.internals.Exit from 4.4:
// found by reflection, so one source serves both reference tiers.
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;

public final class ToolShell {
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
        Method toolMain = Class.forName(args[0]).getMethod("main", String[].class);
        PrintStream realOut = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
                StandardCharsets.UTF_8);
        Class<?> exit;
        try {
            exit = Class.forName("org.apache.kafka.common.utils.internals.Exit");
        } catch (ClassNotFoundException e) {
            exit = Class.forName("org.apache.kafka.common.utils.Exit");
        }
        Class<?> procedure = Class.forName(exit.getName() + "$Procedure");
        Object onExit = Proxy.newProxyInstance(procedure.getClassLoader(), new Class<?>[] {procedure}, (proxy, m, a) -> {
            if (!m.getName().equals("execute")) return m.invoke(new Object(), a);
            int code = (Integer) a[0];
            if (exitCode == null) {
                exitCode = code;
                System.out.flush();
                System.err.flush();
                outCut = out.size();
                errCut = err.size();
            }
            throw new ExitCalled(code);
        });
        exit.getMethod("setExitProcedure", procedure).invoke(null, onExit);
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
                toolMain.invoke(null, (Object) argv);
            } catch (InvocationTargetException ite) {
                Throwable t = ite.getCause();
                if (t instanceof ExitCalled) {
                    code = ((ExitCalled) t).code;
                } else {
                    t.printStackTrace();  // an uncaught exception: a process would print it and exit 1
                    code = 1;
                }
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

    static void frame(PrintStream realOut, String tag, byte[] data) {
        realOut.print(tag + " " + data.length + "\n");
        realOut.write(data, 0, data.length);
        realOut.flush();
    }
}
