// Kafka Connect 4.1 (connect-runtime, in this JVM) running FileStreamSource → topic →
// FileStreamSink, for tests/clients/test_frameworks.py. For each mode asked for, standalone
// (offsets in a local file) and distributed (a one-worker cluster whose config, offset and
// status topics live on the broker, compacted, replication factor 1):
//
//   1. creates the pipeline topic (1 partition, so the sink sees the source's order);
//   2. writes FIRST lines to WORKDIR/MODE/source.txt, starts a worker, submits both
//      connectors and waits until WORKDIR/MODE/sink.txt holds the same bytes;
//   3. stops the worker, appends MORE lines, starts a new worker (same offsets: file or topic)
//      and waits again: the source resumes after what it sent, the sink after what it committed,
//      so a duplicate or a lost line makes the files differ;
//   4. distributed only: describes the internal topics (partitions, cleanup.policy).
//
//   java ConnectApp BOOTSTRAP TAG WORKDIR TIMEOUT_MS MODE[,MODE]     (TIMEOUT_MS: for each mode)
//
// stdout: one JSON object: MODE → {first_equal, restart_equal, source_lines, sink_lines,
// internal_topics (distributed)}, and errors (each failing step with its exception).
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.connect.cli.ConnectDistributed;
import org.apache.kafka.connect.cli.ConnectStandalone;
import org.apache.kafka.connect.runtime.Connect;
import org.apache.kafka.connect.runtime.Herder;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorInfo;
import org.apache.kafka.connect.util.FutureCallback;

public final class ConnectApp {
    static final PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
            StandardCharsets.UTF_8);
    static final List<String> errors = new ArrayList<>();
    static final int FIRST = 40, MORE = 25;

    static String bootstrap, tag;
    static final java.util.concurrent.atomic.AtomicReference<String> herderExit =
            new java.util.concurrent.atomic.AtomicReference<>();
    static long deadline;

    static void error(String step, Throwable t) {
        Throwable c = t;
        while (c instanceof ExecutionException && c.getCause() != null) c = c.getCause();
        errors.add(step + ": " + c.getClass().getSimpleName() + ": " + c.getMessage());
    }

    static void appendLines(Path f, String mode, int from, int n) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int i = from; i < from + n; i++) b.append(mode).append(" line ").append(i).append(": the quick brown fox ")
                .append("x".repeat(i % 7)).append('\n');
        Files.writeString(f, b.toString(), StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    static boolean sameBytes(Path a, Path b) throws IOException {
        return Files.exists(b) && Arrays.equals(Files.readAllBytes(a), Files.readAllBytes(b));
    }

    static boolean waitEqual(Path source, Path sink, String step) throws Exception {
        while (System.currentTimeMillis() < deadline && herderExit.get() == null) {
            if (sameBytes(source, sink)) return true;
            Thread.sleep(100);
        }
        errors.add(step + ": sink.txt differs from source.txt "
                + (herderExit.get() != null ? "when the herder exited (" + herderExit.get() + ")" : "at the deadline"));
        return false;
    }

    static Map<String, String> worker(String mode, Path dir) {
        Map<String, String> w = new HashMap<>();
        w.put("bootstrap.servers", bootstrap);
        w.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        w.put("value.converter", "org.apache.kafka.connect.storage.StringConverter");
        w.put("offset.flush.interval.ms", "200");
        w.put("listeners", "http://127.0.0.1:0");
        w.put("plugin.discovery", "service_load");  // the FileStream connectors are on the class path
        if (mode.equals("standalone")) {
            w.put("offset.storage.file.filename", dir.resolve("offsets").toString());
        } else {
            w.put("group.id", tag + "-connect");
            w.put("config.storage.topic", tag + "-connect-configs");
            w.put("offset.storage.topic", tag + "-connect-offsets");
            w.put("status.storage.topic", tag + "-connect-status");
            w.put("config.storage.replication.factor", "1");
            w.put("offset.storage.replication.factor", "1");
            w.put("status.storage.replication.factor", "1");
            w.put("offset.storage.partitions", "1");
            w.put("status.storage.partitions", "1");
            w.put("consumer.session.timeout.ms", "10000");
        }
        return w;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static Connect startWorker(String mode, Path dir) {
        Map<String, String> w = worker(mode, dir);
        return mode.equals("standalone") ? new ConnectStandalone().startConnect(w)
                                         : new ConnectDistributed().startConnect(w);
    }

    static void submit(Connect<?> c, String name, Map<String, String> cfg) throws Exception {
        FutureCallback<Herder.Created<ConnectorInfo>> cb = new FutureCallback<>();
        c.herder().putConnectorConfig(name, cfg, true, cb);
        while (true) {
            // A herder that died (it calls Exit.exit, intercepted in main) never answers.
            if (herderExit.get() != null) throw new IllegalStateException("the herder exited: " + herderExit.get());
            try {
                cb.get(200, TimeUnit.MILLISECONDS);
                return;
            } catch (java.util.concurrent.TimeoutException e) {
                if (System.currentTimeMillis() > deadline) throw e;
            }
        }
    }

    static Map<String, Object> describeInternal(Admin admin) {
        Map<String, Object> res = new TreeMap<>();
        List<String> names = List.of(tag + "-connect-configs", tag + "-connect-offsets", tag + "-connect-status");
        try {
            Map<String, TopicDescription> d = admin.describeTopics(names).allTopicNames().get();
            for (String n : names) {
                Map<String, Object> t = new TreeMap<>();
                t.put("partitions", d.get(n).partitions().size());
                res.put(n, t);
            }
            List<ConfigResource> rs = names.stream().map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n))
                    .collect(Collectors.toList());
            Map<ConfigResource, Config> cfg = admin.describeConfigs(rs).all().get();
            for (ConfigResource r : rs) {
                @SuppressWarnings("unchecked") Map<String, Object> t = (Map<String, Object>) res.get(r.name());
                ConfigEntry e = cfg.get(r).get("cleanup.policy");
                t.put("cleanup.policy", e == null ? null : e.value());
            }
        } catch (Exception e) {
            error("describe internal topics", e);
        }
        return res;
    }

    @SuppressWarnings("rawtypes")
    static Map<String, Object> runMode(String mode, Path root, Admin admin) throws Exception {
        Map<String, Object> r = new TreeMap<>();
        Path dir = root.resolve(mode);
        Files.createDirectories(dir);
        Path source = dir.resolve("source.txt"), sink = dir.resolve("sink.txt");
        String topic = tag + "-connect-" + mode;
        try {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            error(mode + ": createTopics", e);
        }
        Map<String, String> src = Map.of("name", tag + "-" + mode + "-source", "connector.class", "FileStreamSource", "tasks.max", "1",
                "file", source.toString(), "topic", topic);
        Map<String, String> snk = Map.of("name", tag + "-" + mode + "-sink", "connector.class", "FileStreamSink", "tasks.max", "1",
                "file", sink.toString(), "topics", topic);
        appendLines(source, mode, 0, FIRST);
        Connect c = null;
        try {
            c = startWorker(mode, dir);
            submit(c, tag + "-" + mode + "-source", src);
            submit(c, tag + "-" + mode + "-sink", snk);
            r.put("first_equal", waitEqual(source, sink, mode + ": first run"));
        } catch (Exception e) {
            error(mode + ": first run", e);
        } finally {
            if (c != null) c.stop();
        }
        appendLines(source, mode, FIRST, MORE);
        c = null;
        if (!Boolean.TRUE.equals(r.get("first_equal"))) {  // nothing to restart: do not spend the time
            r.put("restart_equal", false);
        } else try {
            c = startWorker(mode, dir);
            if (mode.equals("standalone")) {  // standalone keeps connector configs in memory only
                submit(c, tag + "-" + mode + "-source", src);
                submit(c, tag + "-" + mode + "-sink", snk);
            }
            r.put("restart_equal", waitEqual(source, sink, mode + ": after restart"));
        } catch (Exception e) {
            error(mode + ": restart", e);
        } finally {
            if (c != null) c.stop();
        }
        r.put("source_lines", Files.readAllLines(source).size());
        r.put("sink_lines", Files.exists(sink) ? Files.readAllLines(sink).size() : 0);
        if (mode.equals("distributed")) r.put("internal_topics", describeInternal(admin));
        return r;
    }

    static String json(Object o) {
        if (o == null) return "null";
        if (o instanceof String s) {
            StringBuilder b = new StringBuilder("\"");
            for (char ch : s.toCharArray()) {
                if (ch == '"' || ch == '\\') b.append('\\').append(ch);
                else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
                else b.append(ch);
            }
            return b.append('"').toString();
        }
        if (o instanceof Number || o instanceof Boolean) return o.toString();
        if (o instanceof Map<?, ?> m)
            return m.entrySet().stream().map(e -> json(e.getKey().toString()) + ":" + json(e.getValue()))
                    .collect(Collectors.joining(",", "{", "}"));
        if (o instanceof Collection<?> c) return c.stream().map(ConnectApp::json).collect(Collectors.joining(",", "[", "]"));
        return json(o.toString());
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        tag = args[1];
        Path root = Path.of(args[2]);
        long perMode = Long.parseLong(args[3]);
        // Connect's herder thread ends the JVM on a fatal error (Exit.exit(1)); record it instead,
        // so the session goes on with the next mode and prints its result.
        org.apache.kafka.common.utils.Exit.setExitProcedure((code, msg) -> {
            herderExit.compareAndSet(null, "exit " + code + (msg == null ? "" : ": " + msg));
        });
        Map<String, Object> result = new TreeMap<>();
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            for (String mode : args[4].split(",")) {
                deadline = System.currentTimeMillis() + perMode;
                herderExit.set(null);
                try {
                    result.put(mode, runMode(mode, root, admin));
                } catch (Exception e) {
                    error(mode, e);
                }
            }
        }
        result.put("errors", errors);
        out.print(json(result) + "\n");
        out.flush();
        System.exit(0);
    }
}
