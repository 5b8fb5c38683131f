// A Kafka Streams 4.1 word count with processing.guarantee=exactly_once_v2, for
// tests/clients/test_transactions_eos.py. One JVM does the whole session; the test may SIGKILL
// and restart the broker (the bridge) meanwhile, and this program rides it out as any Streams
// application would:
//
//   1. Admin: creates the input topic (2 partitions) and the output topic (1 partition).
//   2. Produces the phase-1 lines (idempotent producer, acks=all); starts the application
//      (EOS v2, commit.interval.ms=100, no record cache: one output update per input word);
//      waits until the output, read with isolation.level=read_committed, holds one update per
//      phase-1 word.
//   3. Produces the phase-2 lines one by one, each acknowledged before the next, printing
//      "EVENT produced I" after line I (the test kills the broker on one of these).
//   4. Waits until the committed output holds one update per word of both phases, reads a
//      little longer (late duplicates would show), closes the application and reads the output
//      to its end.
//   5. Reads the checkpoint files the clean close left in the state directory (changelog
//      partition → offset), starts the application again on the same state directory with a
//      restore listener, waits until it runs and reads the store "counts" through an interactive
//      query: with a checkpoint, the store's restore starts there (or is not needed), not at 0.
//
//   java StreamsEosApp BOOTSTRAP TAG STATE_DIR TIMEOUT_MS [GUARANTEE] < lines
//
// GUARANTEE defaults to exactly_once_v2; at_least_once is a control (its bad_sequences show the
// double counting the injected crash causes). The first update of the word "boom" throws in the
// stream thread once (a crash with a transaction open); the thread is replaced.
//
// stdin: the phase-1 lines, a line "--", the phase-2 lines. The topology: input → split into
// lowercase words → groupBy(word) (repartition topic TAG-wc-by-word-repartition) → count() in
// the store "counts" (changelog TAG-wc-counts-changelog) → output.
//
// stdout: "EVENT ..." lines, then one JSON object: phase1 / final (word → latest committed count
// after each phase), updates (committed output records), bad_sequences (word → its committed
// updates, for each word whose updates are not exactly 1, 2, ..., n: a word counted twice or
// lost), recovered (exceptions that killed a stream thread, which was replaced), states (the
// application's state changes), errors (each failing step), checkpoint ("topic-partition" →
// offset, from the state directory after the clean close), restores (each restore of the second
// start: partition, starting and ending offset, records restored), store (word → count, read
// from the second start's store).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

public final class StreamsEosApp {
    static final PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
            StandardCharsets.UTF_8);
    static final List<String> errors = Collections.synchronizedList(new ArrayList<>());
    static final List<String> recovered = Collections.synchronizedList(new ArrayList<>());
    static final List<String> states = Collections.synchronizedList(new ArrayList<>());

    // The first count update of this word throws in the stream thread (once per JVM): the thread
    // dies with a transaction open, its replacement must restore the store from the changelog
    // and reprocess from the committed offsets (at-least-once would count twice here).
    static final String CRASH_WORD = "boom";
    static final java.util.concurrent.atomic.AtomicBoolean crashed = new java.util.concurrent.atomic.AtomicBoolean();
    static String bootstrap, input, output, appId, guarantee;
    static long deadline;

    static String describe(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null && b.length() < 600; c = c.getCause() == c ? null : c.getCause()) {
            if (b.length() > 0) b.append(" <- ");
            b.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
        }
        return b.toString();
    }

    static void error(String step, Throwable t) {
        Throwable c = t;
        while (c instanceof ExecutionException && c.getCause() != null) c = c.getCause();
        errors.add(step + ": " + describe(c));
    }

    static List<String> words(List<String> lines) {
        List<String> w = new ArrayList<>();
        for (String l : lines)
            for (String s : l.toLowerCase(Locale.ROOT).split("\\W+"))
                if (!s.isEmpty()) w.add(s);
        return w;
    }

    // The committed output so far: word → its updates in offset order.
    static final class Tail implements AutoCloseable {
        final KafkaConsumer<String, Long> c;
        final TopicPartition tp = new TopicPartition(output, 0);
        final Map<String, List<Long>> updates = new TreeMap<>();
        long n = 0;

        Tail() {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            c = new KafkaConsumer<>(p);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
        }

        void poll(long ms) {
            for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(ms))) {
                updates.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
                n++;
            }
        }

        // Polls until `want` updates were read (or the deadline); false if not reached.
        boolean await(long want, String step) {
            while (n < want && System.currentTimeMillis() < deadline) poll(200);
            if (n < want) errors.add(step + ": " + n + " of " + want + " committed updates before the deadline");
            return n >= want;
        }

        // Reads until the position reaches the end offset (the last stable offset at read_committed).
        void drain(String step) {
            try {
                long end = c.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
                while (c.position(tp, Duration.ofSeconds(30)) < end && System.currentTimeMillis() < deadline) poll(200);
                if (c.position(tp) < end) errors.add(step + ": position " + c.position(tp) + " < end " + end);
            } catch (Exception e) {
                error(step, e);
            }
        }

        Map<String, Long> latest() {
            Map<String, Long> m = new TreeMap<>();
            updates.forEach((w, l) -> m.put(w, l.get(l.size() - 1)));
            return m;
        }

        public void close() {
            c.close(Duration.ofSeconds(5));
        }
    }

    static KafkaStreams start(Path stateDir) {
        KafkaStreams ks = build(stateDir);
        ks.start();
        return ks;
    }

    static KafkaStreams build(Path stateDir) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(v -> words(List.of(v)))
                .groupBy((k, w) -> w, Grouped.with("by-word", Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts")
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
                .toStream()
                .peek((w, n) -> {
                    if (w.equals(CRASH_WORD) && !crashed.getAndSet(true))
                        throw new IllegalStateException("injected crash on the word " + w + " (count " + n + ")");
                })
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");  // one output update per word
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "10000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "1000");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG), "10000");
        KafkaStreams ks = new KafkaStreams(b.build(), p);
        ks.setStateListener((now, before) -> states.add(before + "->" + now));
        ks.setUncaughtExceptionHandler(e -> {
            recovered.add(describe(e));
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                    .REPLACE_THREAD;
        });
        return ks;
    }

    static boolean waitRunning(KafkaStreams ks, String step) throws InterruptedException {
        while (System.currentTimeMillis() < deadline) {
            KafkaStreams.State s = ks.state();
            if (s == KafkaStreams.State.RUNNING) return true;
            if (s == KafkaStreams.State.ERROR || s == KafkaStreams.State.PENDING_ERROR
                    || s == KafkaStreams.State.NOT_RUNNING || s == KafkaStreams.State.PENDING_SHUTDOWN) break;
            Thread.sleep(50);
        }
        errors.add(step + ": application " + ks.state() + ", not RUNNING");
        return false;
    }

    // Every task directory's .checkpoint under the application's state directory: Kafka
    // Streams' format (OffsetCheckpoint): a version line, a count line, then "topic partition
    // offset" lines.
    static Map<String, Long> checkpoints(Path appDir) {
        Map<String, Long> m = new TreeMap<>();
        try (var tasks = java.nio.file.Files.list(appDir)) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                Path f = task.resolve(".checkpoint");
                if (!java.nio.file.Files.exists(f)) continue;
                List<String> lines = java.nio.file.Files.readAllLines(f);
                for (String l : lines.subList(Math.min(2, lines.size()), lines.size())) {
                    String[] w = l.trim().split(" ");
                    if (w.length == 3) m.put(w[0] + "-" + w[1], Long.parseLong(w[2]));
                }
            }
        } catch (Exception e) {
            error("read checkpoints in " + appDir, e);
        }
        return m;
    }

    // Step 5: the application again, on the same state directory.
    static void restart(Path stateDir, Map<String, Object> result) throws InterruptedException {
        List<Map<String, Object>> restores = Collections.synchronizedList(new ArrayList<>());
        crashed.set(true);  // the injected crash happened in the first run
        KafkaStreams ks = build(stateDir);
        ks.setGlobalStateRestoreListener(new org.apache.kafka.streams.processor.StateRestoreListener() {
            final Map<TopicPartition, Map<String, Object>> open = new java.util.concurrent.ConcurrentHashMap<>();

            public void onRestoreStart(TopicPartition tp, String store, long start, long end) {
                Map<String, Object> r = new TreeMap<>();
                r.put("partition", tp.toString());
                r.put("start", start);
                r.put("end", end);
                r.put("restored", 0L);
                open.put(tp, r);
                restores.add(r);
            }

            public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long n) {
                open.get(tp).merge("restored", n, (a, b) -> (Long) a + (Long) b);
            }

            public void onRestoreEnd(TopicPartition tp, String store, long total) {
                open.get(tp).put("restored", total);
            }
        });
        ks.start();
        try {
            if (!waitRunning(ks, "second start")) return;
            while (System.currentTimeMillis() < deadline) {
                try {
                    var store = ks.store(org.apache.kafka.streams.StoreQueryParameters.fromNameAndType("counts",
                            org.apache.kafka.streams.state.QueryableStoreTypes.<String, Long>keyValueStore()));
                    Map<String, Long> m = new TreeMap<>();
                    try (var it = store.all()) {
                        it.forEachRemaining(kv -> m.put(kv.key, kv.value));
                    }
                    result.put("store", m);
                    break;
                } catch (org.apache.kafka.streams.errors.InvalidStateStoreException e) {
                    Thread.sleep(100);  // the store is still restoring or migrating
                }
            }
            if (!result.containsKey("store")) errors.add("second start: store \"counts\" not queryable before the deadline");
        } finally {
            ks.close(new KafkaStreams.CloseOptions().leaveGroup(true).timeout(Duration.ofSeconds(20)));
            result.put("restores", new ArrayList<>(restores));
        }
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
        if (o instanceof Collection<?> c)
            return c.stream().map(StreamsEosApp::json).collect(Collectors.joining(",", "[", "]"));
        return json(o.toString());
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        String tag = args[1];
        Path stateDir = Path.of(args[2]);
        deadline = System.currentTimeMillis() + Long.parseLong(args[3]);
        guarantee = args.length > 4 ? args[4] : StreamsConfig.EXACTLY_ONCE_V2;  // at_least_once: a control run
        input = tag + "-input";
        output = tag + "-output";
        appId = tag + "-wc";
        List<String> phase1 = new ArrayList<>(), phase2 = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            List<String> cur = phase1;
            for (String l; (l = r.readLine()) != null; ) {
                if (l.equals("--")) cur = phase2;
                else cur.add(l);
            }
        }
        long n1 = words(phase1).size(), n2 = words(phase2).size();
        Map<String, Object> result = new TreeMap<>();
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        KafkaStreams ks = null;
        try (Admin admin = Admin.create(ap)) {
            try {
                admin.createTopics(List.of(new NewTopic(input, 2, (short) 1), new NewTopic(output, 1, (short) 1)))
                        .all().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                error("createTopics(input, output)", e);
            }
        }
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(pp); Tail tail = new Tail()) {
            for (String l : phase1) prod.send(new ProducerRecord<>(input, null, l)).get(60, TimeUnit.SECONDS);
            ks = start(stateDir);
            if (waitRunning(ks, "start")) {
                out.println("EVENT running");
                tail.await(n1, "phase 1");
                result.put("phase1", tail.latest());
                int i = 0;
                for (String l : phase2) {
                    try {
                        prod.send(new ProducerRecord<>(input, null, l)).get(90, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        error("produce phase-2 line " + (i + 1), e);
                    }
                    out.println("EVENT produced " + (++i));
                    Thread.sleep(50);
                }
                if (tail.await(n1 + n2, "phase 2")) {
                    long until = System.currentTimeMillis() + 1500;  // late (duplicate) updates would show
                    while (System.currentTimeMillis() < until) tail.poll(100);
                }
            }
            ks.close(new KafkaStreams.CloseOptions().leaveGroup(true).timeout(Duration.ofSeconds(20)));
            ks = null;
            tail.drain("read to the end after close");
            result.put("final", tail.latest());
            result.put("updates", tail.n);
            Map<String, Object> bad = new TreeMap<>();
            tail.updates.forEach((w, l) -> {
                for (int k = 0; k < l.size(); k++)
                    if (l.get(k) != k + 1) {
                        bad.put(w, l);
                        break;
                    }
            });
            result.put("bad_sequences", bad);
            result.put("checkpoint", checkpoints(stateDir.resolve(appId)));
            restart(stateDir, result);
        } catch (Exception e) {
            error("session", e);
        } finally {
            if (ks != null) ks.close(Duration.ofSeconds(10));
        }
        result.put("errors", new ArrayList<>(errors));
        result.put("recovered", new ArrayList<>(recovered));
        result.put("states", new ArrayList<>(states));
        out.print(json(result) + "\n");
        out.flush();
        System.exit(0);
    }
}
