// One member of a consumer group (kafka-clients KafkaConsumer, the classic protocol, or the
// consumer protocol of KIP-848 when ASSIGNOR_CLASS is "consumer:uniform" or "consumer:range") for the
// member-kill scenario of tests/clients/test_group_member_kill.py. Subscribes, polls, prints
// what it consumed, then commits exactly that synchronously and prints the commit; runs until
// killed. SIGTERM closes the consumer (it leaves the group, as a rolling restart does) and prints
// a last "A WALL -".
//
//   java GroupMember BOOTSTRAP TOPIC GROUP CLIENT_ID ASSIGNOR_CLASS SESSION_TIMEOUT_MS MAX_POLL_INTERVAL_MS
//
// TOPIC "regex:PATTERN" subscribes by a SubscriptionPattern the coordinator resolves (consumer
// protocol only). R lines do not name the topic: tests make values unique across topics.
//
// Output lines (stdout, flushed after each poll), WALL = System.currentTimeMillis():
//   A WALL p,p,...        the member's whole assignment after every rebalance callback ("-" = none)
//   R WALL PARTITION OFFSET VALUE   one consumed record
//   C WALL PARTITION NEXT_OFFSET    a committed offset, printed after commitSync returned
//   E WALL MESSAGE        a failed commit (the records stay unacknowledged: redelivered later)
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class GroupMember {
    static final PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
            StandardCharsets.UTF_8);

    // What the member owns once the callback returns: revoke and lost callbacks run while the
    // partitions are still in assignment().
    static void assignment(KafkaConsumer<String, String> c, Collection<TopicPartition> leaving) {
        String parts = c.assignment().stream().filter(tp -> !leaving.contains(tp)).map(TopicPartition::partition)
                .sorted().map(String::valueOf).collect(Collectors.joining(","));
        out.print("A " + System.currentTimeMillis() + " " + (parts.isEmpty() ? "-" : parts) + "\n");
        out.flush();
    }

    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1], group = args[2], clientId = args[3], assignor = args[4];
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        if (assignor.startsWith("consumer:")) {
            // KIP-848: the coordinator assigns (group.remote.assignor) and times sessions out.
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
            p.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, assignor.substring("consumer:".length()));
        } else {
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
            p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignor);
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, args[5]);
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        }
        p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, args[6]);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        KafkaConsumer<String, String> c = new KafkaConsumer<>(p);
        ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                assignment(c, partitions);
            }

            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                assignment(c, List.of());
            }

            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                assignment(c, partitions);
            }
        };
        // "regex:PATTERN" subscribes by a SubscriptionPattern (KIP-848: the coordinator resolves
        // it, SubscribedTopicRegex in RE2/J syntax; a java.util.regex.Pattern is resolved by the
        // client against its own metadata instead).
        if (topic.startsWith("regex:"))
            c.subscribe(new org.apache.kafka.clients.consumer.SubscriptionPattern(topic.substring("regex:".length())),
                    listener);
        else
            c.subscribe(List.of(topic), listener);
        java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping.set(true);
            c.wakeup();
            try {
                closed.await(20, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        try {
            consume(c, stopping);
        } catch (org.apache.kafka.common.errors.WakeupException e) {
            // SIGTERM
        }
        c.close(Duration.ofSeconds(10));
        out.print("A " + System.currentTimeMillis() + " -\n");
        out.flush();
        closed.countDown();
    }

    static void consume(KafkaConsumer<String, String> c, java.util.concurrent.atomic.AtomicBoolean stopping) {
        while (!stopping.get()) {
            ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(200));
            if (records.isEmpty()) continue;
            long now = System.currentTimeMillis();
            Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
            StringBuilder sb = new StringBuilder();
            for (ConsumerRecord<String, String> r : records) {
                sb.append("R ").append(now).append(' ').append(r.partition()).append(' ').append(r.offset()).append(' ')
                        .append(r.value()).append('\n');
                next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
            }
            out.print(sb);
            out.flush();
            try {
                c.commitSync(next);
                long done = System.currentTimeMillis();
                for (Map.Entry<TopicPartition, OffsetAndMetadata> e : next.entrySet())
                    out.print("C " + done + " " + e.getKey().partition() + " " + e.getValue().offset() + "\n");
            } catch (org.apache.kafka.common.errors.WakeupException e) {
                throw e;
            } catch (RuntimeException e) {
                out.print("E " + System.currentTimeMillis() + " " + e.getClass().getSimpleName() + "\n");
            }
            out.flush();
        }
    }
}
