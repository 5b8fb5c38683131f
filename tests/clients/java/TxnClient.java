// Transactions with kafka-clients for tests/clients/test_transactions.py: one JVM runs both
// scenarios against one target and prints one JSON object.
//
//   java TxnClient BOOTSTRAP TAG
//
// "visibility" (topic TAG-java-vis, 1 partition): plain P0; txn A (A0..A2) committed; plain P1;
// txn B (B0, B1) flushed then aborted; plain P2; txn C (C0, C1) committed; plain END. Then a
// read_committed and a read_uncommitted consumer (assign + seekToBeginning, no group) read
// until END. Reports the offsets the producer got for A and C (RecordMetadata) and, per
// consumer, the values and offsets it read.
//
// "fence_commit" / "fence_send" (topic and transactional id TAG-java-fence-commit or
// TAG-java-fence-send, 1 partition): producer 1 begins, sends F0 (acknowledged); producer 2 with the
// same id initialises (fences 1), sends G0 and commits. Then producer 1 commits
// (fence_commit) or first sends F1 and then commits (fence_send); if the commit failed it
// aborts. What each step threw is reported (class, cause class, message); finally a
// read_committed consumer reads until END.
//
// "eos": consume-transform-produce with sendOffsetsToTransaction (see eos()).
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class TxnClient {
    static final PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
            StandardCharsets.UTF_8);
    static String bootstrap;

    static String q(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String list(List<?> xs) {
        List<String> parts = new ArrayList<>();
        for (Object x : xs) parts.add(x instanceof String ? q((String) x) : String.valueOf(x));
        return "[" + String.join(",", parts) + "]";
    }

    static Properties producerProps(String txid) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        if (txid != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txid);
            p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000");
        }
        return p;
    }

    static void createTopic(String topic) throws Exception {
        createTopic(topic, 1);
    }

    static void createTopic(String topic, int partitions) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin a = Admin.create(p)) {
            a.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    // Consume-transform-produce: a group member reads i0..i2 from TAG-java-eos-in, one
    // transaction writes o0..o2 to TAG-java-eos-out (2 partitions: o0, o2 to 0, o1 to 1) and
    // commits the member's offset with sendOffsetsToTransaction(groupMetadata()) (KIP-447:
    // TxnOffsetCommit with generation and member id). Reports the group's committed offset and
    // what read_committed sees in each output partition.
    static String eos(String tag) throws Exception {
        String in = tag + "-java-eos-in", outTopic = tag + "-java-eos-out", group = tag + "-java-eos-group";
        createTopic(in);
        createTopic(outTopic, 2);
        try (KafkaProducer<String, String> plain = new KafkaProducer<>(producerProps(null))) {
            for (int i = 0; i < 3; i++) plain.send(new ProducerRecord<>(in, 0, null, "i" + i)).get();
        }
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        cp.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        long committed = -2;
        int generation = -2;
        TopicPartition itp = new TopicPartition(in, 0);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp);
             KafkaProducer<String, String> tx = new KafkaProducer<>(producerProps(tag + "-java-eos"))) {
            tx.initTransactions();
            c.subscribe(List.of(in));
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 30000;
            while (got.size() < 3 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) got.add(r);
            }
            if (got.size() < 3) throw new IllegalStateException("the group member read " + got.size() + " of 3 records");
            tx.beginTransaction();
            for (ConsumerRecord<String, String> r : got) {
                int i = Integer.parseInt(r.value().substring(1));
                tx.send(new ProducerRecord<>(outTopic, i % 2, null, "o" + i));
            }
            long next = got.get(got.size() - 1).offset() + 1;
            generation = c.groupMetadata().generationId();
            tx.sendOffsetsToTransaction(java.util.Map.of(itp, new org.apache.kafka.clients.consumer.OffsetAndMetadata(next)),
                    c.groupMetadata());
            tx.commitTransaction();
            org.apache.kafka.clients.consumer.OffsetAndMetadata om = c.committed(java.util.Set.of(itp)).get(itp);
            committed = om == null ? -1 : om.offset();
        }
        try (KafkaProducer<String, String> plain = new KafkaProducer<>(producerProps(null))) {
            plain.send(new ProducerRecord<>(outTopic, 0, null, "END")).get();
            plain.send(new ProducerRecord<>(outTopic, 1, null, "END")).get();
        }
        return "{\"generation\":" + generation + ",\"committed\":" + committed + ",\"out0\":"
                + consume(outTopic, 0, "read_committed") + ",\"out1\":" + consume(outTopic, 1, "read_committed") + "}";
    }

    // Values (and offsets) a consumer at this isolation level reads from partition 0 up to END.
    static String consume(String topic, String isolation) {
        return consume(topic, 0, isolation);
    }

    static String consume(String topic, int partition, String isolation) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        String error = null;
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(topic, partition);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + 30000;
            boolean end = false;
            while (!end && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                    offsets.add(r.offset());
                    if ("END".equals(r.value())) end = true;
                }
            }
            if (!end) error = "no END record within 30 s";
        } catch (Exception e) {
            error = e.toString();
        }
        return "{\"values\":" + list(values) + ",\"offsets\":" + list(offsets) + ",\"error\":" + q(error) + "}";
    }

    static String visibility(String tag) throws Exception {
        String topic = tag + "-java-vis";
        createTopic(topic);
        List<Long> txnOffsets = new ArrayList<>();
        try (KafkaProducer<String, String> plain = new KafkaProducer<>(producerProps(null));
             KafkaProducer<String, String> tx = new KafkaProducer<>(producerProps(tag + "-java-vis"))) {
            tx.initTransactions();
            plain.send(new ProducerRecord<>(topic, 0, null, "P0")).get();
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            tx.beginTransaction();
            for (String v : new String[] {"A0", "A1", "A2"}) acks.add(tx.send(new ProducerRecord<>(topic, 0, null, v)));
            tx.commitTransaction();
            plain.send(new ProducerRecord<>(topic, 0, null, "P1")).get();
            tx.beginTransaction();
            tx.send(new ProducerRecord<>(topic, 0, null, "B0"));
            tx.send(new ProducerRecord<>(topic, 0, null, "B1"));
            tx.flush();
            tx.abortTransaction();
            plain.send(new ProducerRecord<>(topic, 0, null, "P2")).get();
            tx.beginTransaction();
            for (String v : new String[] {"C0", "C1"}) acks.add(tx.send(new ProducerRecord<>(topic, 0, null, v)));
            tx.commitTransaction();
            plain.send(new ProducerRecord<>(topic, 0, null, "END")).get();
            for (Future<RecordMetadata> f : acks) txnOffsets.add(f.get().offset());
        }
        return "{\"txn_offsets\":" + list(txnOffsets) + ",\"read_committed\":" + consume(topic, "read_committed")
                + ",\"read_uncommitted\":" + consume(topic, "read_uncommitted") + "}";
    }

    static String err(Throwable t) {
        if (t == null) return "null";
        if (t instanceof ExecutionException && t.getCause() != null) t = t.getCause();
        Throwable c = t.getCause();
        return "{\"class\":" + q(t.getClass().getName()) + ",\"cause\":" + q(c == null ? null : c.getClass().getName())
                + ",\"message\":" + q(t.getMessage()) + "}";
    }

    static String fencing(String tag, boolean sendFirst) throws Exception {
        String name = sendFirst ? "-fence-send" : "-fence-commit";
        String topic = tag + "-java" + name, txid = topic;
        createTopic(topic);
        String send = "null", commit = "null", abort = "null", close = "null";
        KafkaProducer<String, String> p1 = new KafkaProducer<>(producerProps(txid));
        p1.initTransactions();
        p1.beginTransaction();
        p1.send(new ProducerRecord<>(topic, 0, null, "F0")).get();
        try (KafkaProducer<String, String> p2 = new KafkaProducer<>(producerProps(txid))) {
            p2.initTransactions();
            p2.beginTransaction();
            p2.send(new ProducerRecord<>(topic, 0, null, "G0")).get();
            p2.commitTransaction();
        }
        if (sendFirst) {
            try {
                p1.send(new ProducerRecord<>(topic, 0, null, "F1")).get();
            } catch (Exception e) {
                send = err(e);
            }
        }
        boolean committed = false;
        try {
            p1.commitTransaction();
            committed = true;
        } catch (Exception e) {
            commit = err(e);
        }
        if (!committed) {
            try {
                p1.abortTransaction();
            } catch (Exception e) {
                abort = err(e);
            }
        }
        try {
            p1.close(Duration.ofSeconds(5));
        } catch (Exception e) {
            close = err(e);
        }
        try (KafkaProducer<String, String> plain = new KafkaProducer<>(producerProps(null))) {
            plain.send(new ProducerRecord<>(topic, 0, null, "END")).get();
        }
        return "{\"send\":" + send + ",\"commit\":" + commit + ",\"committed\":" + committed + ",\"abort\":" + abort
                + ",\"close\":" + close + ",\"read_committed\":" + consume(topic, "read_committed") + "}";
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        String tag = args[1];
        String vis, fenceCommit, fenceSend;
        try {
            vis = visibility(tag);
        } catch (Exception e) {
            vis = "{\"error\":" + err(e) + "}";
        }
        try {
            fenceCommit = fencing(tag, false);
        } catch (Exception e) {
            fenceCommit = "{\"error\":" + err(e) + "}";
        }
        try {
            fenceSend = fencing(tag, true);
        } catch (Exception e) {
            fenceSend = "{\"error\":" + err(e) + "}";
        }
        String eos;
        try {
            eos = eos(tag);
        } catch (Exception e) {
            eos = "{\"error\":" + err(e) + "}";
        }
        out.print("{\"visibility\":" + vis + ",\"fence_commit\":" + fenceCommit + ",\"fence_send\":" + fenceSend
                + ",\"eos\":" + eos + "}\n");
        out.flush();
        System.exit(0);
    }
}
