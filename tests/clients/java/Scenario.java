// Java client (kafka-clients) runner for the client test tier.
//
// Reads the scenario from stdin in a line format written by tests/clients/runners/java.py
// (no JSON library needed):
//   line 1:  BOOTSTRAP TOPIC PARTITION CREATE(0|1) TIMEOUT_MS COUNT
//   then one line per record:
//            CODEC TIMESTAMP|- KEY VALUE NHEADERS (NAME VALUE)*
//   where KEY, VALUE, NAME and header VALUE are "x" + hex bytes ("x" alone = empty) or "-" (null).
// Produces with the client's defaults (idempotence on, acks=all), one producer per codec,
// then consumes with assign + seekToBeginning (no group.id) and prints the result as JSON
// (format in tests/clients/scenario.py).
//
// Arguments:
//   --config FILE   client properties added to the admin client, producer and consumer (the
//                   security settings: security.protocol, sasl.*, ssl.*; tests/clients/runners/
//                   client_security.py writes them)
//   --list-topics   instead of the scenario: list the topics the client is shown (Admin
//                   listTopics, internal ones included) and print
//                   {"client","version","topics":[...]|null,"errors":[...]}; COUNT is 0
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;

public final class Scenario {
    static final class Rec {
        String codec;
        Long timestamp;
        byte[] key;
        byte[] value;
        List<Header> headers = new ArrayList<>();
    }

    static byte[] unhex(String s) {
        if (s.equals("-")) return null;
        String h = s.substring(1);
        byte[] out = new byte[h.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    static String hex(byte[] b) {
        if (b == null) return "null";
        StringBuilder sb = new StringBuilder(b.length * 2 + 2).append('"');
        for (byte x : b) sb.append(Character.forDigit((x >> 4) & 15, 16)).append(Character.forDigit(x & 15, 16));
        return sb.append('"').toString();
    }

    static String str(String s) {
        if (s == null) return "null";
        StringBuilder sb = new StringBuilder().append('"');
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') sb.append('\\').append(c);
            else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
            else sb.append(c);
        }
        return sb.append('"').toString();
    }

    static String err(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof java.util.concurrent.ExecutionException && c.getCause() != null) continue;
            if (sb.length() > 0) sb.append(" <- ");
            sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
        }
        return sb.toString();
    }

    static String jsonList(List<String> items) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < items.size(); i++) sb.append(i > 0 ? "," : "").append(str(items.get(i)));
        return sb.append("]").toString();
    }

    static void print(String json) {
        PrintStream ps = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        ps.println(json);
        ps.flush();
    }

    public static void main(String[] args) throws Exception {
        Properties extra = new Properties();
        boolean listTopics = false;
        for (int a = 0; a < args.length; a++) {
            if (args[a].equals("--config")) {
                try (FileInputStream f = new FileInputStream(args[++a])) {
                    extra.load(f);
                }
            } else if (args[a].equals("--list-topics")) {
                listTopics = true;
            } else {
                throw new IllegalArgumentException("unknown argument " + args[a]);
            }
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String[] head = in.readLine().trim().split(" ");
        String bootstrap = head[0], topic = head[1];
        int partition = Integer.parseInt(head[2]);
        boolean create = head[3].equals("1");
        int timeoutMs = Integer.parseInt(head[4]);
        int count = Integer.parseInt(head[5]);
        int want = head.length > 6 ? Integer.parseInt(head[6]) : count;  // records to read back
        List<Rec> recs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String[] f = in.readLine().trim().split(" ");
            Rec r = new Rec();
            r.codec = f[0];
            r.timestamp = f[1].equals("-") ? null : Long.parseLong(f[1]);
            r.key = unhex(f[2]);
            r.value = unhex(f[3]);
            int n = Integer.parseInt(f[4]);
            for (int h = 0; h < n; h++)
                r.headers.add(new RecordHeader(new String(unhex(f[5 + 2 * h]), StandardCharsets.UTF_8), unhex(f[6 + 2 * h])));
            recs.add(r);
        }

        List<String> errors = new ArrayList<>();
        String version = "{\"client\":\"java\",\"version\":" + str("kafka-clients " + AppInfoParser.getVersion());
        if (listTopics) {
            Properties ap = new Properties();
            ap.putAll(extra);
            ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            ap.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(timeoutMs));
            ap.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, String.valueOf(timeoutMs));
            String topics = "null";
            try (Admin admin = Admin.create(ap)) {
                List<String> names = new ArrayList<>(admin.listTopics(new ListTopicsOptions().listInternal(true))
                        .names().get(timeoutMs, TimeUnit.MILLISECONDS));
                java.util.Collections.sort(names);
                topics = jsonList(names);
            } catch (Exception e) {
                errors.add(err(e));
            }
            print(version + ",\"topics\":" + topics + ",\"errors\":" + jsonList(errors) + "}");
            System.exit(0);
        }
        if (create) {
            Properties ap = new Properties();
            ap.putAll(extra);
            ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (Admin admin = Admin.create(ap)) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                errors.add("createTopics: " + err(e));
            }
        }

        String[] produced = new String[recs.size()];
        int i = 0;
        while (i < recs.size()) {
            int j = i;
            while (j < recs.size() && recs.get(j).codec.equals(recs.get(i).codec)) j++;
            Properties pp = new Properties();
            pp.putAll(extra);
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, recs.get(i).codec);
            pp.put(ProducerConfig.LINGER_MS_CONFIG, "20");
            // delivery.timeout.ms must be >= linger.ms + request.timeout.ms
            pp.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, String.valueOf(Math.min(timeoutMs, 30000)));
            pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(Math.min(timeoutMs, 30000) + 1000));
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
                for (int k = i; k < j; k++) {
                    Rec r = recs.get(k);
                    futures.add(producer.send(new ProducerRecord<>(topic, partition, r.timestamp, r.key, r.value, r.headers)));
                }
                producer.flush();
                for (int k = i; k < j; k++) {
                    try {
                        RecordMetadata md = futures.get(k - i).get(timeoutMs, TimeUnit.MILLISECONDS);
                        produced[k] = "{\"offset\":" + md.offset() + ",\"error\":null}";
                    } catch (Exception e) {
                        produced[k] = "{\"offset\":null,\"error\":" + str(err(e)) + "}";
                    }
                }
            } catch (Exception e) {
                for (int k = i; k < j; k++) if (produced[k] == null) produced[k] = "{\"offset\":null,\"error\":" + str(err(e)) + "}";
            }
            i = j;
        }

        List<String> consumed = new ArrayList<>();
        Properties cp = new Properties();
        cp.putAll(extra);
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp)) {
            TopicPartition tp = new TopicPartition(topic, partition);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (consumed.size() < want && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> m : consumer.poll(Duration.ofMillis(500))) {
                    StringBuilder hs = new StringBuilder("[");
                    for (Header h : m.headers()) {
                        if (hs.length() > 1) hs.append(',');
                        hs.append('[').append(str(h.key())).append(',').append(hex(h.value())).append(']');
                    }
                    hs.append(']');
                    String tt = m.timestampType() == TimestampType.CREATE_TIME ? "\"create\""
                            : m.timestampType() == TimestampType.LOG_APPEND_TIME ? "\"log_append\"" : "null";
                    consumed.add("{\"offset\":" + m.offset() + ",\"key\":" + hex(m.key()) + ",\"value\":" + hex(m.value())
                            + ",\"headers\":" + hs + ",\"timestamp\":" + m.timestamp() + ",\"timestamp_type\":" + tt + "}");
                }
            }
        } catch (Exception e) {
            errors.add("consume: " + err(e));
        }

        StringBuilder out = new StringBuilder(version);
        out.append(",\"produced\":[").append(String.join(",", produced)).append("]");
        out.append(",\"consumed\":[").append(String.join(",", consumed)).append("]");
        out.append(",\"errors\":").append(jsonList(errors)).append("}");
        print(out.toString());
        System.exit(0);
    }
}
