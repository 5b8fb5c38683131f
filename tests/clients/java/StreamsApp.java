// A Kafka Streams 4.1 word count with a persistent (RocksDB) KTable store, for
// tests/clients/test_frameworks.py. One JVM does the whole session:
//
//   1. Admin: creates the input topic (2 partitions) and the output topic (1 partition).
//   2. Produces the phase-1 lines; starts the application; waits until the output topic holds one
//      update per phase-1 word (the record cache is off, so every word yields one update).
//   3. Stops the application (leaving the group) and wipes its local state directory, so the
//      next instance must restore the store from the changelog topic.
//   4. Starts a new instance (same application id), which restores; produces the phase-2 lines;
//      waits for their updates; reads the store through interactive queries; stops.
//   5. Describes what Streams created on the broker: its internal topics (repartition and
//      changelog) with partitions and cleanup.policy, and the repartition topic's log start
//      offsets (Streams purges consumed repartition records with DeleteRecords).
//
//   java StreamsApp BOOTSTRAP TAG STATE_DIR TIMEOUT_MS [GROUP_PROTOCOL] < lines
//
// GROUP_PROTOCOL: Streams' group.protocol, "classic" (the default) or "streams" (KIP-1071, Kafka
// Streams 4.2+: the broker assigns the tasks and creates the internal topics).
//
// stdin: the phase-1 lines, a line "--", the phase-2 lines. The topology: input → split into
// lowercase words → groupBy(word) (through the repartition topic TAG-wc-by-word-repartition) →
// count() in the store "counts" (changelog TAG-wc-counts-changelog, compacted) → output.
//
// stdout: one JSON object: phase1 / final (word → latest count in the output topic after each
// phase), store (the store's content after the restart), restored (records restored into the
// store by the second instance), internal_topics, repartition_log_start, errors (each failing
// step, with the exception's class and message: the session goes on where it can).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

public final class StreamsApp {
    static final PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
            StandardCharsets.UTF_8);
    static final List<String> errors = new ArrayList<>();

    static String bootstrap, input, output, appId, repartition, changelog, groupProtocol = "classic";
    static long deadline;

    static void error(String step, Throwable t) {
        Throwable c = t;
        while ((c instanceof ExecutionException || c instanceof org.apache.kafka.streams.errors.StreamsException)
                && c.getCause() != null && c.getCause() != c) c = c.getCause();
        errors.add(step + ": " + c.getClass().getSimpleName() + ": " + c.getMessage());
    }

    static List<String> words(List<String> lines) {
        List<String> w = new ArrayList<>();
        for (String l : lines)
            for (String s : l.toLowerCase(Locale.ROOT).split("\\W+"))
                if (!s.isEmpty()) w.add(s);
        return w;
    }

    static void produce(List<String> lines) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            for (String l : lines) prod.send(new ProducerRecord<>(input, null, l)).get(30, TimeUnit.SECONDS);
        }
    }

    // Reads the output topic from the start until it holds at least `want` records (or the
    // deadline passes); returns word → latest count.
    static Map<String, Long> readOutput(long want) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        Map<String, Long> latest = new TreeMap<>();
        long seen = 0;
        try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(output, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            while (seen < want && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(200))) {
                    latest.put(r.key(), r.value());
                    seen++;
                }
            }
        }
        if (seen < want) errors.add("output: " + seen + " of " + want + " updates before the deadline");
        return latest;
    }

    // The task directories (SUBTOPOLOGY_PARTITION, holding the stores) under the app's state dir.
    static List<String> taskDirs(Path appDir) throws java.io.IOException {
        if (!Files.isDirectory(appDir)) return List.of();
        try (var s = Files.list(appDir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d+_\\d+")).sorted()
                    .collect(Collectors.toList());
        }
    }

    static KafkaStreams start(Path stateDir, AtomicLong restored) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(v -> words(List.of(v)))
                .groupBy((k, w) -> w, Grouped.with("by-word", Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts")
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");  // one output update per word
        p.put(StreamsConfig.REPARTITION_PURGE_INTERVAL_MS_CONFIG, "0");  // DeleteRecords after every commit
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        p.put("group.protocol", groupProtocol);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "10000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "1000");
        KafkaStreams ks = new KafkaStreams(b.build(), p);
        ks.setGlobalStateRestoreListener(new StateRestoreListener() {
            public void onRestoreStart(TopicPartition tp, String store, long start, long end) {}
            public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long n) {}
            public void onRestoreEnd(TopicPartition tp, String store, long total) {
                restored.addAndGet(total);
            }
        });
        ks.setUncaughtExceptionHandler(e -> {
            error("streams thread", e);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                    .SHUTDOWN_CLIENT;
        });
        ks.start();
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

    static void stop(KafkaStreams ks) {
        ks.close(new KafkaStreams.CloseOptions().leaveGroup(true).timeout(Duration.ofSeconds(20)));
    }

    static Map<String, Object> describeInternal(Admin admin) {
        Map<String, Object> out = new TreeMap<>();
        try {
            Set<String> names = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get()
                    .stream().filter(n -> n.startsWith(appId + "-")).collect(Collectors.toCollection(TreeSet::new));
            Map<String, TopicDescription> d = admin.describeTopics(names).allTopicNames().get();
            for (String n : names) {
                Map<String, Object> t = new TreeMap<>();
                t.put("partitions", d.get(n).partitions().size());
                out.put(n, t);
            }
            try {
                List<ConfigResource> res = names.stream().map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n))
                        .collect(Collectors.toList());
                Map<ConfigResource, Config> cfg = admin.describeConfigs(res).all().get();
                for (ConfigResource r : res) {
                    @SuppressWarnings("unchecked") Map<String, Object> t = (Map<String, Object>) out.get(r.name());
                    ConfigEntry e = cfg.get(r).get("cleanup.policy");
                    t.put("cleanup.policy", e == null ? null : e.value());
                }
            } catch (Exception e) {
                error("describeConfigs(internal topics)", e);
            }
        } catch (Exception e) {
            error("describe internal topics", e);
        }
        return out;
    }

    static List<Long> repartitionLogStart(Admin admin) {
        List<Long> starts = new ArrayList<>();
        try {
            Map<TopicPartition, OffsetSpec> q = new HashMap<>();
            for (int i = 0; i < 2; i++) q.put(new TopicPartition(repartition, i), OffsetSpec.earliest());
            var r = admin.listOffsets(q).all().get();
            for (int i = 0; i < 2; i++) starts.add(r.get(new TopicPartition(repartition, i)).offset());
        } catch (Exception e) {
            error("listOffsets(repartition, earliest)", e);
        }
        return starts;
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
        if (o instanceof Collection<?> c) return c.stream().map(StreamsApp::json).collect(Collectors.joining(",", "[", "]"));
        return json(o.toString());
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        String tag = args[1];
        Path stateDir = Path.of(args[2]);
        deadline = System.currentTimeMillis() + Long.parseLong(args[3]);
        if (args.length > 4) groupProtocol = args[4];
        input = tag + "-input";
        output = tag + "-output";
        appId = tag + "-wc";
        repartition = appId + "-by-word-repartition";
        changelog = appId + "-counts-changelog";
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
        try (Admin admin = Admin.create(ap)) {
            try {
                admin.createTopics(List.of(new NewTopic(input, 2, (short) 1), new NewTopic(output, 1, (short) 1)))
                        .all().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                error("createTopics(input, output)", e);
            }
            produce(phase1);

            AtomicLong restored1 = new AtomicLong();
            KafkaStreams ks = start(stateDir, restored1);
            if (waitRunning(ks, "first start")) result.put("phase1", readOutput(n1));
            stop(ks);
            result.put("task_dirs_before_wipe", taskDirs(stateDir.resolve(appId)));
            ks.cleanUp();  // wipe the local store: the next instance restores from the changelog
            result.put("local_state_wiped", taskDirs(stateDir.resolve(appId)).isEmpty());

            AtomicLong restored2 = new AtomicLong();
            ks = start(stateDir, restored2);
            if (waitRunning(ks, "restart")) {
                result.put("restored", restored2.get());
                produce(phase2);
                result.put("final", readOutput(n1 + n2));
                Map<String, Long> store = new TreeMap<>();
                try {
                    ReadOnlyKeyValueStore<String, Long> s = ks.store(
                            StoreQueryParameters.fromNameAndType("counts", QueryableStoreTypes.keyValueStore()));
                    try (KeyValueIterator<String, Long> it = s.all()) {
                        while (it.hasNext()) {
                            KeyValue<String, Long> kv = it.next();
                            store.put(kv.key, kv.value);
                        }
                    }
                } catch (Exception e) {
                    error("query store", e);
                }
                result.put("store", store);
            }
            stop(ks);
            result.put("internal_topics", describeInternal(admin));
            result.put("repartition_log_start", repartitionLogStart(admin));
        } catch (Exception e) {
            error("session", e);
        }
        result.put("errors", errors);
        out.print(json(result) + "\n");
        out.flush();
        System.exit(0);  // Streams' and the clients' non-daemon threads are closed; do not wait for stragglers
    }
}
