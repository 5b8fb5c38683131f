// One instance of a Kafka Streams 4.4 word count with group.protocol=streams (KIP-1071) and
// exactly_once_v2, for the multi-instance scenarios of tests/clients/test_streams_groups.py: runs
// until killed or until its stdin closes (then closes, leaving the group).
//
//   java StreamsWorker BOOTSTRAP APP_ID INPUT OUTPUT STATE_DIR [SESSION_TIMEOUT_MS]
//
// SESSION_TIMEOUT_MS: before it starts, the instance gives its group that session timeout and a
// heartbeat interval of 1 s through the group's own configs (IncrementalAlterConfigs on the GROUP
// resource: streams.session.timeout.ms, streams.heartbeat.interval.ms), as an operator would with
// kafka-configs --entity-type groups.
//
// The topology is StreamsApp's: INPUT -> words -> groupBy(word) through APP_ID-by-word-repartition
// -> count() in "counts" (changelog APP_ID-counts-changelog) -> OUTPUT.
//
// Output lines (stdout), WALL = System.currentTimeMillis():
//   S WALL STATE                    every state change of the application (RUNNING, REBALANCING, ...)
//   T WALL t,t,...                  its active tasks ("0_1,1_0"; "-" = none) whenever they changed
//   E WALL MESSAGE                  an uncaught exception of a stream thread (the client shuts down)
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.TreeSet;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

public final class StreamsWorker {
    static final PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
            StandardCharsets.UTF_8);

    static synchronized void line(String s) {
        out.print(s + "\n");
        out.flush();
    }

    static List<String> words(String v) {
        List<String> w = new ArrayList<>();
        for (String s : v.toLowerCase(Locale.ROOT).split("\\W+"))
            if (!s.isEmpty()) w.add(s);
        return w;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], appId = args[1], input = args[2], output = args[3];
        if (args.length > 5) {
            Properties ap = new Properties();
            ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (Admin admin = Admin.create(ap)) {
                ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, appId);
                admin.incrementalAlterConfigs(java.util.Map.of(group, List.of(
                        new AlterConfigOp(new ConfigEntry("streams.session.timeout.ms", args[5]),
                                AlterConfigOp.OpType.SET),
                        new AlterConfigOp(new ConfigEntry("streams.heartbeat.interval.ms", "1000"),
                                AlterConfigOp.OpType.SET)))).all().get();
            }
        }
        StreamsBuilder b = new StreamsBuilder();
        b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(StreamsWorker::words)
                .groupBy((k, w) -> w, Grouped.with("by-word", Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts")
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.STATE_DIR_CONFIG, Path.of(args[4]).toString());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "200");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        p.put("group.protocol", "streams");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.producerPrefix("transaction.timeout.ms"), "10000");
        KafkaStreams ks = new KafkaStreams(b.build(), p);
        ks.setStateListener((now, before) -> line("S " + System.currentTimeMillis() + " " + now));
        ks.setUncaughtExceptionHandler(e -> {
            line("E " + System.currentTimeMillis() + " " + e.getClass().getSimpleName() + ": "
                    + String.valueOf(e.getMessage()).replace('\n', ' '));
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                    .SHUTDOWN_CLIENT;
        });
        ks.start();
        Thread watcher = new Thread(() -> {
            String last = null;
            while (true) {
                try {
                    TreeSet<String> tasks = new TreeSet<>();
                    for (ThreadMetadata t : ks.metadataForLocalThreads())
                        for (TaskMetadata tm : t.activeTasks()) tasks.add(tm.taskId().toString());
                    String now = tasks.isEmpty() ? "-" : String.join(",", tasks);
                    if (!now.equals(last)) line("T " + System.currentTimeMillis() + " " + now);
                    last = now;
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    // metadata while the client is changing state: try again
                }
            }
        });
        watcher.setDaemon(true);
        watcher.start();
        while (System.in.read() != -1) { }
        ks.close(new KafkaStreams.CloseOptions().leaveGroup(true).timeout(java.time.Duration.ofSeconds(20)));
        System.exit(0);
    }
}
