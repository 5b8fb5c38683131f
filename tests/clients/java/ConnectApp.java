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
//   4. distributed only: describes the internal topics (partitions, cleanup.policy, segment.ms,
//      min.cleanable.dirty.ratio).
//
// Distributed mode also restarts its worker after compaction of the internal topics (issue 35):
// the worker creates them (compacted), then they are altered to roll after 100 ms and to be
// cleaned at any dirty ratio (Kafka never cleans the active segment), and a reader tails them
// from offset 0 (every record written, at its offset). Before the stop, ROUNDS rounds each
// updates the source's config (its batch.size; the sink's once, a property of its own: new
// connector, task and commit records, task restarts and so status records), appends BURST lines
// and waits for them in sink.txt (an offset commit each: offset.flush.interval.ms is 100); one
// more connector is created stopped and deleted (tombstones). After the stop, each internal
// topic is read from its earliest offset until fewer records than its end offset come back
// (compacted) and both lists are reported; only then is the worker started again, which must
// restore both connectors with their latest configs from the compacted config topic, resume
// the source from the compacted offsets topic and report statuses from the status topic.
//
//   java ConnectApp BOOTSTRAP TAG WORKDIR TIMEOUT_MS MODE[,MODE]     (TIMEOUT_MS: for each mode)
//
// stdout: one JSON object: MODE → {first_equal, restart_equal, source_lines, sink_lines,
// internal_topics (distributed), compaction (distributed: topic → {end, written, compacted},
// records as [offset, key, value]), source_bytes_at_stop, submitted_configs, restored_configs,
// restored_task_configs, connectors_after_restart, status_after_restart (distributed),
// millis (each step's duration)}, and errors (each failing step with its exception).
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
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.connect.cli.ConnectDistributed;
import org.apache.kafka.connect.cli.ConnectStandalone;
import org.apache.kafka.connect.runtime.Connect;
import org.apache.kafka.connect.runtime.Herder;
import org.apache.kafka.connect.runtime.TargetState;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.runtime.rest.entities.TaskInfo;
import org.apache.kafka.connect.util.Callback;
import org.apache.kafka.connect.util.FutureCallback;

public final class ConnectApp {
    static final PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
            StandardCharsets.UTF_8);
    static final List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());  // + the tail's
    static final int FIRST = 40, MORE = 25, ROUNDS = 3, BURST = 5;

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
        w.put("offset.flush.interval.ms", mode.equals("standalone") ? "200" : "100");
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

    // A herder call's answer, waited for until the mode's deadline.
    static <T> T await(java.util.function.Consumer<Callback<T>> call) throws Exception {
        FutureCallback<T> cb = new FutureCallback<>();
        call.accept(cb);
        while (true) {
            // A herder that died (it calls Exit.exit, intercepted in main) never answers.
            if (herderExit.get() != null) throw new IllegalStateException("the herder exited: " + herderExit.get());
            try {
                return cb.get(200, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                if (System.currentTimeMillis() > deadline) throw e;
            }
        }
    }

    static void submit(Connect<?> c, String name, Map<String, String> cfg) throws Exception {
        await((Callback<Herder.Created<ConnectorInfo>> cb) -> c.herder().putConnectorConfig(name, cfg, true, cb));
    }

    static List<String> internalTopics() {
        return List.of(tag + "-connect-configs", tag + "-connect-offsets", tag + "-connect-status");
    }

    // Every record of an internal topic (one partition) as [offset, key, value], read from offset 0
    // while the worker runs: what the compacted topic is compared with.
    static final class Tail implements AutoCloseable {
        final Map<String, List<List<Object>>> records = new TreeMap<>();
        final Map<TopicPartition, Long> until = new java.util.concurrent.ConcurrentHashMap<>();
        final java.util.concurrent.CountDownLatch caughtUp = new java.util.concurrent.CountDownLatch(1);
        volatile boolean finish, closed;
        final Thread thread;

        Tail(List<String> topics) {
            for (String t : topics) records.put(t, new ArrayList<>());
            thread = new Thread(() -> {
                try (KafkaConsumer<String, String> c = consumer()) {
                    List<TopicPartition> tps =
                            topics.stream().map(t -> new TopicPartition(t, 0)).collect(Collectors.toList());
                    c.assign(tps);
                    c.seekToBeginning(tps);
                    while (!closed) {
                        for (ConsumerRecord<String, String> r : c.poll(java.time.Duration.ofMillis(100)))
                            synchronized (records) {
                                records.get(r.topic()).add(Arrays.asList(r.offset(), r.key(), r.value()));
                            }
                        if (finish && tps.stream().allMatch(
                                tp -> c.position(tp) >= until.getOrDefault(tp, Long.MAX_VALUE))) {
                            caughtUp.countDown();
                            return;
                        }
                    }
                } catch (Exception e) {
                    error("distributed: tail the internal topics", e);
                    caughtUp.countDown();  // what it read, and the error
                }
            }, "internal-topics-tail");
            thread.setDaemon(true);
            thread.start();
        }

        // Reads on until every topic's end offset now; the records seen.
        Map<String, List<List<Object>>> finish(Admin admin) throws Exception {
            until.putAll(endOffsets(admin, internalTopics()));
            finish = true;
            if (!caughtUp.await(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS))
                throw new java.util.concurrent.TimeoutException("the tail did not reach " + until);
            synchronized (records) {
                return new TreeMap<>(records);
            }
        }

        @Override
        public void close() throws InterruptedException {
            closed = true;
            thread.join(5000);
        }
    }

    static KafkaConsumer<String, String> consumer() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    static Map<TopicPartition, Long> endOffsets(Admin admin, List<String> topics) throws Exception {
        Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> ask = new HashMap<>();
        for (String t : topics) ask.put(new TopicPartition(t, 0), org.apache.kafka.clients.admin.OffsetSpec.latest());
        Map<TopicPartition, Long> out = new HashMap<>();
        admin.listOffsets(ask).all().get(30, TimeUnit.SECONDS).forEach((tp, i) -> out.put(tp, i.offset()));
        return out;
    }

    // Partition 0 of `topic` from its earliest offset to `end`, as [offset, key, value].
    static List<List<Object>> readAll(String topic, long end) {
        List<List<Object>> out = new ArrayList<>();
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> c = consumer()) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            while (c.position(tp) < end) {
                if (System.currentTimeMillis() > deadline)
                    throw new IllegalStateException(topic + ": no end by the deadline");
                for (ConsumerRecord<String, String> r : c.poll(java.time.Duration.ofMillis(100)))
                    if (r.offset() < end) out.add(Arrays.asList(r.offset(), r.key(), r.value()));
            }
        }
        return out;
    }

    // Each internal topic read back from its earliest offset until fewer records than its end
    // offset come back: topic → {end, written (by the tail), compacted}.
    static Map<String, Object> awaitCompacted(Admin admin, Map<String, List<List<Object>>> written) throws Exception {
        Map<String, Object> res = new TreeMap<>();
        Map<TopicPartition, Long> ends = endOffsets(admin, internalTopics());
        for (String t : internalTopics()) {
            long end = ends.get(new TopicPartition(t, 0));
            List<List<Object>> got = readAll(t, end);
            while (got.size() >= end && System.currentTimeMillis() < deadline) {
                Thread.sleep(300);
                got = readAll(t, end);
            }
            if (got.size() >= end)
                errors.add("distributed: " + t + " was not compacted by the deadline (" + end + " records)");
            Map<String, Object> one = new TreeMap<>();
            one.put("end", end);
            one.put("written", written.get(t));
            one.put("compacted", got);
            res.put(t, one);
        }
        return res;
    }

    static Map<String, Object> describeInternal(Admin admin) {
        Map<String, Object> res = new TreeMap<>();
        List<String> names = internalTopics();
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
                for (String k : List.of("cleanup.policy", "segment.ms", "min.cleanable.dirty.ratio")) {
                    ConfigEntry e = cfg.get(r).get(k);
                    t.put(k, e == null ? null : e.value());
                }
            }
        } catch (Exception e) {
            error("describe internal topics", e);
        }
        return res;
    }

    // The worker created its internal topics compacted; roll them after 100 ms and clean them at
    // any dirty ratio, so both targets clean all but their newest records within seconds.
    static void compactSoon(Admin admin) throws Exception {
        Map<ConfigResource, Collection<AlterConfigOp>> ops = new HashMap<>();
        for (String t : internalTopics())
            ops.put(new ConfigResource(ConfigResource.Type.TOPIC, t), List.of(
                    new AlterConfigOp(new ConfigEntry("segment.ms", "100"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("min.cleanable.dirty.ratio", "0.01"), AlterConfigOp.OpType.SET)));
        admin.incrementalAlterConfigs(ops).all().get(30, TimeUnit.SECONDS);
    }

    static Map<String, String> withName(Map<String, String> cfg, String name) {
        Map<String, String> m = new TreeMap<>(cfg);
        m.put("name", name);
        return m;
    }

    @SuppressWarnings("rawtypes")
    static Map<String, Object> runMode(String mode, Path root, Admin admin) throws Exception {
        Map<String, Object> r = new TreeMap<>();
        Map<String, Object> millis = new TreeMap<>();
        r.put("millis", millis);
        long t0 = System.currentTimeMillis();
        boolean distributed = mode.equals("distributed");
        Path dir = root.resolve(mode);
        Files.createDirectories(dir);
        Path source = dir.resolve("source.txt"), sink = dir.resolve("sink.txt");
        String topic = tag + "-connect-" + mode;
        try {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            error(mode + ": createTopics", e);
        }
        String srcName = tag + "-" + mode + "-source", snkName = tag + "-" + mode + "-sink";
        Map<String, String> src = new TreeMap<>(Map.of("name", srcName, "connector.class", "FileStreamSource",
                "tasks.max", "1", "file", source.toString(), "topic", topic));
        Map<String, String> snk = new TreeMap<>(Map.of("name", snkName, "connector.class", "FileStreamSink",
                "tasks.max", "1", "file", sink.toString(), "topics", topic));
        appendLines(source, mode, 0, FIRST);
        int lines = FIRST;
        Connect c = null;
        Tail tail = null;
        Map<String, List<List<Object>>> written = null;
        try {
            c = startWorker(mode, dir);
            millis.put("start", System.currentTimeMillis() - t0);
            submit(c, srcName, src);
            submit(c, snkName, snk);
            if (distributed) {  // the herder answered: it created its topics (not cleaned before this)
                tail = new Tail(internalTopics());
                compactSoon(admin);
            }
            r.put("first_equal", waitEqual(source, sink, mode + ": first run"));
            millis.put("first_run", System.currentTimeMillis() - t0);
            if (distributed && Boolean.TRUE.equals(r.get("first_equal"))) {
                // A connector created stopped and deleted: tombstones in the config topic.
                String gone = tag + "-" + mode + "-deleted";
                Connect cc = c;
                await((Callback<Herder.Created<ConnectorInfo>> cb) ->
                        cc.herder().putConnectorConfig(gone, withName(src, gone), TargetState.STOPPED, false, cb));
                await((Callback<Herder.Created<ConnectorInfo>> cb) -> cc.herder().deleteConnectorConfig(gone, cb));
                for (int round = 1; round <= ROUNDS; round++) {
                    src.put("batch.size", String.valueOf(100 + round));
                    submit(c, srcName, src);
                    if (round == 1) {  // once: each sink restart is a new consumer group generation
                        snk.put("kib.round", String.valueOf(round));
                        submit(c, snkName, snk);
                    }
                    appendLines(source, mode, lines, BURST);
                    lines += BURST;
                    if (!waitEqual(source, sink, mode + ": round " + round)) break;
                }
                millis.put("rounds", System.currentTimeMillis() - t0);
                Thread.sleep(300);  // the last offsets flushed (every 100 ms) while the task runs
            }
        } catch (Exception e) {
            error(mode + ": first run", e);
        } finally {
            if (c != null) c.stop();
        }
        millis.put("stop", System.currentTimeMillis() - t0);
        if (tail != null) {
            try {
                written = tail.finish(admin);
            } catch (Exception e) {
                error(mode + ": tail the internal topics", e);
            } finally {
                tail.close();
            }
        }
        if (written != null) {
            r.put("source_bytes_at_stop", Files.size(source));
            try {
                r.put("compaction", awaitCompacted(admin, written));
            } catch (Exception e) {
                error(mode + ": read the compacted internal topics", e);
            }
            millis.put("compacted", System.currentTimeMillis() - t0);
            Map<String, Object> submitted = new TreeMap<>();
            submitted.put(srcName, new TreeMap<>(src));
            submitted.put(snkName, new TreeMap<>(snk));
            r.put("submitted_configs", submitted);
        }
        appendLines(source, mode, lines, MORE);
        c = null;
        if (!Boolean.TRUE.equals(r.get("first_equal"))) {  // nothing to restart: do not spend the time
            r.put("restart_equal", false);
        } else try {
            c = startWorker(mode, dir);
            millis.put("restart", System.currentTimeMillis() - t0);
            if (!distributed) {  // standalone keeps connector configs in memory only
                submit(c, srcName, src);
                submit(c, snkName, snk);
            } else {
                // Everything below comes from the (compacted) config topic.
                Connect cc = c;
                r.put("connectors_after_restart", new java.util.TreeSet<String>(
                        await((Callback<Collection<String>> cb) -> cc.herder().connectors(cb))));
                Map<String, Object> restored = new TreeMap<>(), tasks = new TreeMap<>();
                for (String n : List.of(srcName, snkName)) {
                    restored.put(n, new TreeMap<>(
                            await((Callback<ConnectorInfo> cb) -> cc.herder().connectorInfo(n, cb)).config()));
                    List<Object> tc = new ArrayList<>();
                    for (TaskInfo ti : await((Callback<List<TaskInfo>> cb) -> cc.herder().taskConfigs(n, cb)))
                        tc.add(new TreeMap<>(ti.config()));
                    tasks.put(n, tc);
                }
                r.put("restored_configs", restored);
                r.put("restored_task_configs", tasks);
            }
            r.put("restart_equal", waitEqual(source, sink, mode + ": after restart"));
            if (distributed) {
                Map<String, Object> status = new TreeMap<>();
                for (String n : List.of(srcName, snkName)) {
                    ConnectorStateInfo si = c.herder().connectorStatus(n);
                    List<String> ts = si.tasks().stream().map(ConnectorStateInfo.AbstractState::state)
                            .collect(Collectors.toList());
                    status.put(n, Map.of("connector", si.connector().state(), "tasks", ts));
                }
                r.put("status_after_restart", status);
            }
            millis.put("restart_run", System.currentTimeMillis() - t0);
        } catch (Exception e) {
            error(mode + ": restart", e);
        } finally {
            if (c != null) c.stop();
        }
        millis.put("end", System.currentTimeMillis() - t0);
        r.put("source_lines", Files.readAllLines(source).size());
        r.put("sink_lines", Files.exists(sink) ? Files.readAllLines(sink).size() : 0);
        if (distributed) r.put("internal_topics", describeInternal(admin));
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
