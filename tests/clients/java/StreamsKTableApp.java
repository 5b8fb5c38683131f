// A Kafka Streams 4.1 KTable over a topic updated UPDATES times over KEYS keys, its changelog
// compacted by the broker, then restored from it: issue 35's check, for
// tests/clients/test_compaction_streams.py. One JVM does the whole session:
//
//   1. Admin: creates the source topic (PARTITIONS partitions, cleanup.policy=delete). Produces
//      the updates: update i is key k<i mod KEYS>, value <i div KEYS> (the key's own sequence).
//   2. Starts the application: source → groupByKey → aggregate "count,last value" into the
//      persistent (RocksDB) store "latest" (changelog TAG-kt-latest-changelog, compacted). The
//      record cache is off, so every update is one changelog record: the changelog holds UPDATES
//      records before compaction. Its configs come from StreamsConfig's `topic.` prefix:
//      segment.ms SEGMENT_MS and segment.bytes 1 MiB (segments roll, so there is something to
//      clean), min.cleanable.dirty.ratio 0.01.
//   3. Once every update is in the changelog: waits 3 × segment.ms and sends one more record per
//      source partition (key roll-<p>), so the segment holding the last updates is no longer the
//      active one and may be cleaned (the broker never cleans its active segment). Queries the
//      store, stops the application.
//   4. Waits until the changelog is compacted: read from the log start to the end, every
//      partition holds each of its keys once. Then polls DescribeLogDirs until the changelog's
//      size on disk is the same twice in a row (segments deleted after a pass are gone).
//   5. Wipes the local state and starts a new instance (same application id), which restores
//      the store from the compacted changelog: records restored and the time it took
//      (StateRestoreListener: each changelog partition's onRestoreStart to onRestoreEnd, summed;
//      and the first start to the last end, which also holds Streams' own start-up of the next
//      task between partitions), then queries the store.
//
//   java StreamsKTableApp BOOTSTRAP TAG STATE_DIR TIMEOUT_MS UPDATES KEYS [PARTITIONS [SEGMENT_MS [PAD]]]
//
// PAD: bytes of padding in every value (default 0), so records have a realistic size: the source
// value is "<sequence>|<padding>", the store's "<count>,<last sequence>|<padding of the last>".
//
// stdout, the last line: one JSON object: updates, keys, partitions, value_bytes; produce_ms;
// process_ms (start to every update in the changelog); changelog_bytes_processed(_total)
// (DescribeLogDirs then, while the broker may already be cleaning); changelog_end (records written
// to the changelog, per partition); compaction_ms (stop to compacted); compacted (per partition:
// records read from the log start, distinct keys, log start offset, end offset); changelog_bytes
// (DescribeLogDirs, per partition, after compaction) and changelog_bytes_total;
// changelog_bytes_polls (the sizes seen while waiting); source_bytes_total (the source topic's size
// on disk: the same updates, uncompacted); restored, restore_ms, restore_wall_ms, restart_ms
// (start to RUNNING); store_before, store_after (key → "count,last sequence" before the wipe and
// after the restore; a value whose padding is not the one produced is shown whole);
// count_mismatches (keys whose restored count is not their number of updates or whose last
// sequence is not their last one); errors (each failing step, with the exception's class and
// message: the session goes on where it can). stderr: the restore listener's events.
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
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
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

public final class StreamsKTableApp {
    static final PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
            StandardCharsets.UTF_8);
    static final List<String> errors = new ArrayList<>();
    static final String STORE = "latest";

    static String bootstrap, source, appId, changelog;
    static int partitions = 2;
    static long updates, keys, segmentMs = 200, deadline;
    static String pad = "";

    static void error(String step, Throwable t) {
        Throwable c = t;
        while ((c instanceof ExecutionException || c instanceof org.apache.kafka.streams.errors.StreamsException)
                && c.getCause() != null && c.getCause() != c) c = c.getCause();
        errors.add(step + ": " + c.getClass().getSimpleName() + ": " + c.getMessage());
    }

    static String key(long k) {
        return String.format("k%06d", k);
    }

    static KafkaProducer<String, String> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(256 * 1024));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    static void produceUpdates() throws Exception {
        AtomicReference<Exception> failed = new AtomicReference<>();
        try (KafkaProducer<String, String> prod = producer()) {
            for (long i = 0; i < updates && failed.get() == null; i++)
                prod.send(new ProducerRecord<>(source, key(i % keys), (i / keys) + "|" + pad), (m, e) -> {
                    if (e != null) failed.compareAndSet(null, e);
                });
            prod.flush();
        }
        if (failed.get() != null) throw failed.get();
    }

    // One record per source partition, keys outside the updated ones: each rolls its changelog
    // partition's segment (Streams writes a key's update to the changelog partition of its source
    // partition).
    static void produceRolls() throws Exception {
        try (KafkaProducer<String, String> prod = producer()) {
            for (int p = 0; p < partitions; p++)
                prod.send(new ProducerRecord<>(source, p, "roll-" + p, "0|" + pad)).get(30, TimeUnit.SECONDS);
        }
    }

    // What a StateRestoreListener saw: records restored, the first onRestoreStart and the last
    // onRestoreEnd, and the sum over the changelog partitions of their own restore times.
    static final class Restore implements StateRestoreListener {
        final AtomicLong records = new AtomicLong(), firstStart = new AtomicLong(), lastEnd = new AtomicLong(),
                partitionNanos = new AtomicLong();
        final Map<TopicPartition, Long> started = new java.util.concurrent.ConcurrentHashMap<>();

        public void onRestoreStart(TopicPartition tp, String store, long start, long end) {
            long now = System.nanoTime();
            firstStart.compareAndSet(0, now);
            started.put(tp, now);
            System.err.println("restore start " + tp + " " + start + ".." + end + " at " + now / 1_000_000);
        }

        public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long n) {
            System.err.println("restored " + tp + " " + n + " to " + batchEnd + " at " + System.nanoTime() / 1_000_000);
        }

        public void onRestoreEnd(TopicPartition tp, String store, long total) {
            long now = System.nanoTime();
            records.addAndGet(total);
            lastEnd.set(now);
            Long from = started.get(tp);
            if (from != null) partitionNanos.addAndGet(now - from);
            System.err.println("restore end " + tp + " " + total + " at " + now / 1_000_000);
        }
    }

    static KafkaStreams start(Path stateDir, Restore restore) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(source, Consumed.with(Serdes.String(), Serdes.String()))
                .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
                .aggregate(() -> "0,-1|", (k, v, agg) -> {
                    long count = Long.parseLong(agg.substring(0, agg.indexOf(',')));
                    return (count + 1) + "," + v;
                }, Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as(STORE)
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.String()));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "1000");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");  // every update is a changelog record
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        p.put(StreamsConfig.topicPrefix("segment.ms"), Long.toString(segmentMs));
        p.put(StreamsConfig.topicPrefix("segment.bytes"), Integer.toString(1024 * 1024));
        p.put(StreamsConfig.topicPrefix("min.cleanable.dirty.ratio"), "0.01");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), "5000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "10000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "1000");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), "20");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), String.valueOf(256 * 1024));
        KafkaStreams ks = new KafkaStreams(b.build(), p);
        ks.setGlobalStateRestoreListener(restore);
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
            Thread.sleep(20);
        }
        errors.add(step + ": application " + ks.state() + ", not RUNNING");
        return false;
    }

    static void stop(KafkaStreams ks) {
        ks.close(new KafkaStreams.CloseOptions().leaveGroup(true).timeout(Duration.ofSeconds(20)));
    }

    static List<TopicPartition> changelogPartitions() {
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(changelog, i));
        return tps;
    }

    static List<Long> offsets(Admin admin, OffsetSpec spec) throws Exception {
        Map<TopicPartition, OffsetSpec> q = new HashMap<>();
        for (TopicPartition tp : changelogPartitions()) q.put(tp, spec);
        var r = admin.listOffsets(q).all().get(30, TimeUnit.SECONDS);
        List<Long> o = new ArrayList<>();
        for (TopicPartition tp : changelogPartitions()) o.add(r.get(tp).offset());
        return o;
    }

    // Polls the changelog's end offsets until they sum to at least `want` (the deadline at most).
    static List<Long> waitChangelogEnd(Admin admin, long want, String step) throws Exception {
        List<Long> end = List.of();
        while (System.currentTimeMillis() < deadline) {
            try {
                end = offsets(admin, OffsetSpec.latest());
                if (end.stream().mapToLong(Long::longValue).sum() >= want) return end;
            } catch (Exception e) {
                // the changelog may not exist yet
            }
            Thread.sleep(100);
        }
        errors.add(step + ": changelog end " + end + ", not " + want + " records before the deadline");
        return end;
    }

    // key → "count,last sequence"; a value whose padding is not the one produced is kept whole.
    static Map<String, String> queryStore(KafkaStreams ks, String step) {
        Map<String, String> store = new TreeMap<>();
        try {
            ReadOnlyKeyValueStore<String, String> s = ks.store(
                    StoreQueryParameters.fromNameAndType(STORE, QueryableStoreTypes.keyValueStore()));
            try (KeyValueIterator<String, String> it = s.all()) {
                while (it.hasNext()) {
                    KeyValue<String, String> kv = it.next();
                    int bar = kv.value.indexOf('|');
                    boolean padded = bar >= 0 && kv.value.substring(bar + 1).equals(pad);
                    store.put(kv.key, padded ? kv.value.substring(0, bar) : kv.value);
                }
            }
        } catch (Exception e) {
            error(step, e);
        }
        return store;
    }

    // Every record of the changelog from its log start: per partition records, distinct keys and
    // the log start offset.
    static List<Map<String, Object>> readChangelog(Admin admin) throws Exception {
        List<Long> start = offsets(admin, OffsetSpec.earliest()), end = offsets(admin, OffsetSpec.latest());
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        List<Map<String, Object>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            for (TopicPartition tp : changelogPartitions()) {
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                long records = 0;
                Set<String> seen = new HashSet<>();
                long stopAt = end.get(tp.partition());
                while (c.position(tp) < stopAt) {
                    if (System.currentTimeMillis() > deadline)
                        throw new IllegalStateException("read " + tp + ": deadline");
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                        records++;
                        seen.add(new String(r.key(), StandardCharsets.UTF_8));
                    }
                }
                Map<String, Object> m = new TreeMap<>();
                m.put("records", records);
                m.put("keys", (long) seen.size());
                m.put("log_start", start.get(tp.partition()));
                m.put("end", stopAt);
                out.add(m);
            }
        }
        return out;
    }

    static boolean compacted(List<Map<String, Object>> parts) {
        return !parts.isEmpty() && parts.stream().allMatch(m -> m.get("records").equals(m.get("keys")));
    }

    static List<Long> changelogBytes(Admin admin) throws Exception {
        return logBytes(admin, changelog);
    }

    static List<Long> logBytes(Admin admin, String topic) throws Exception {
        List<Integer> brokers = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).stream()
                .map(Node::id).collect(Collectors.toList());
        Map<Integer, Map<String, LogDirDescription>> dirs = admin.describeLogDirs(brokers).allDescriptions()
                .get(30, TimeUnit.SECONDS);
        long[] size = new long[partitions];
        for (Map<String, LogDirDescription> byDir : dirs.values())
            for (LogDirDescription d : byDir.values())
                for (Map.Entry<TopicPartition, ReplicaInfo> e : d.replicaInfos().entrySet())
                    if (e.getKey().topic().equals(topic) && !e.getValue().isFuture())
                        size[e.getKey().partition()] += e.getValue().size();
        List<Long> out = new ArrayList<>();
        for (long s : size) out.add(s);
        return out;
    }

    static long sum(List<Long> l) {
        return l.stream().mapToLong(Long::longValue).sum();
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
            return c.stream().map(StreamsKTableApp::json).collect(Collectors.joining(",", "[", "]"));
        return json(o.toString());
    }

    static long ms(long fromNanos) {
        return (System.nanoTime() - fromNanos) / 1_000_000;
    }

    // Keys of the updates whose "count,last" is not (UPDATES/KEYS, its last sequence produced).
    static List<String> mismatches(Map<String, String> store) {
        List<String> bad = new ArrayList<>();
        for (long k = 0; k < keys; k++) {
            long count = updates / keys + (k < updates % keys ? 1 : 0);
            String want = count + "," + (count - 1);
            String got = store.get(key(k));
            if (!want.equals(got)) bad.add(key(k) + "=" + got + " (want " + want + ")");
        }
        return bad;
    }

    static void session(Admin admin, Path stateDir, Map<String, Object> result) throws Exception {
        try {
            admin.createTopics(List.of(new NewTopic(source, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            error("createTopics(source)", e);
        }
        long t = System.nanoTime();
        produceUpdates();
        result.put("produce_ms", ms(t));

        t = System.nanoTime();
        KafkaStreams ks = start(stateDir, new Restore());
        if (!waitRunning(ks, "first start")) {
            stop(ks);
            return;
        }
        waitChangelogEnd(admin, updates, "process");
        result.put("process_ms", ms(t));
        List<Long> written = changelogBytes(admin);
        result.put("changelog_bytes_processed", written);
        result.put("changelog_bytes_processed_total", sum(written));
        Thread.sleep(3 * segmentMs);
        produceRolls();
        result.put("changelog_end", waitChangelogEnd(admin, updates + partitions, "rolls"));
        result.put("store_before", queryStore(ks, "query store before the wipe"));
        stop(ks);

        t = System.nanoTime();
        List<Map<String, Object>> parts = List.of();
        while (System.currentTimeMillis() < deadline) {
            parts = readChangelog(admin);
            if (compacted(parts)) break;
            Thread.sleep(1000);
        }
        result.put("compacted", parts);
        if (!compacted(parts)) errors.add("compaction: changelog not compacted before the deadline: " + parts);
        result.put("compaction_ms", ms(t));
        List<List<Long>> polls = new ArrayList<>();
        List<Long> bytes = changelogBytes(admin);
        polls.add(bytes);
        while (System.currentTimeMillis() < deadline) {
            Thread.sleep(1000);
            List<Long> again = changelogBytes(admin);
            polls.add(again);
            if (again.equals(bytes)) break;
            bytes = again;
        }
        result.put("changelog_bytes", bytes);
        result.put("changelog_bytes_total", sum(bytes));
        result.put("changelog_bytes_polls", polls);
        result.put("source_bytes_total", sum(logBytes(admin, source)));

        ks.cleanUp();  // wipe the local store: the next instance restores from the changelog
        Restore restore = new Restore();
        t = System.nanoTime();
        ks = start(stateDir, restore);
        if (waitRunning(ks, "restart")) {
            result.put("restart_ms", ms(t));
            result.put("restored", restore.records.get());
            result.put("restore_ms", restore.partitionNanos.get() / 1_000_000);
            result.put("restore_wall_ms", restore.firstStart.get() == 0 ? 0
                    : (restore.lastEnd.get() - restore.firstStart.get()) / 1_000_000);
            Map<String, String> after = queryStore(ks, "query store after the restore");
            result.put("store_after", after);
            result.put("count_mismatches", mismatches(after));
        }
        stop(ks);
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        String tag = args[1];
        Path stateDir = Path.of(args[2]);
        deadline = System.currentTimeMillis() + Long.parseLong(args[3]);
        updates = Long.parseLong(args[4]);
        keys = Long.parseLong(args[5]);
        if (args.length > 6) partitions = Integer.parseInt(args[6]);
        if (args.length > 7) segmentMs = Long.parseLong(args[7]);
        if (args.length > 8) pad = "x".repeat(Integer.parseInt(args[8]));
        source = tag + "-updates";
        appId = tag + "-kt";
        changelog = appId + "-" + STORE + "-changelog";
        Map<String, Object> result = new TreeMap<>();
        result.put("updates", updates);
        result.put("keys", keys);
        result.put("partitions", partitions);
        result.put("value_bytes", pad.length());
        result.put("changelog", changelog);
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            session(admin, stateDir, result);
        } catch (Exception e) {
            error("session", e);
        }
        result.put("errors", errors);
        out.print(json(result) + "\n");
        out.flush();
        System.exit(0);  // Streams' and the clients' non-daemon threads are closed; do not wait for stragglers
    }
}
