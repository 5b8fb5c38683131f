// Producer for tests/system/test_idempotent_retry.py (kafka-clients, compiled by that test into
// tests/.java/classes-system).
//
//   java RetryProducer BOOTSTRAP TOPIC COUNT IDEMPOTENCE(true|false) ACKS(all|1|0) MODE(sync|pipelined)
//
// Sends COUNT records to partition 0 of TOPIC; record i has key null and value "v-<i>".
//   sync:      send(i).get() one after the other: one Produce request in flight at a time.
//   pipelined: every send first, then flush(), with batch.size 100 bytes (a few records per batch):
//              several Produce requests in flight (up to 5), one batch each.
// Retries stay at the client's default (Integer.MAX_VALUE, bounded by delivery.timeout.ms), and
// max.in.flight.requests.per.connection is 5, the default.
// Prints one line per record, "v-<i> <offset>", or "v-<i> ERROR <exception>"; exit status 1 if any
// record failed.
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class RetryProducer {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1];
        int count = Integer.parseInt(args[2]);
        boolean idempotence = Boolean.parseBoolean(args[3]);
        String acks = args[4];
        boolean sync = args[5].equals("sync");

        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, String.valueOf(idempotence));
        p.put(ProducerConfig.ACKS_CONFIG, acks);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        if (!sync) p.put(ProducerConfig.BATCH_SIZE_CONFIG, "100");
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "kib-retry-producer");

        List<Future<RecordMetadata>> futures = new ArrayList<>();
        int failed = 0;
        StringBuilder out = new StringBuilder();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < count; i++) {
                ProducerRecord<byte[], byte[]> r =
                        new ProducerRecord<>(topic, 0, null, ("v-" + i).getBytes(StandardCharsets.UTF_8));
                Future<RecordMetadata> f = producer.send(r);
                futures.add(f);
                if (sync) {
                    try {
                        f.get();
                    } catch (ExecutionException e) {
                        // reported below, with the others
                    }
                }
            }
            producer.flush();
            for (int i = 0; i < count; i++) {
                try {
                    out.append("v-").append(i).append(' ').append(futures.get(i).get().offset()).append('\n');
                } catch (ExecutionException e) {
                    failed++;
                    out.append("v-").append(i).append(" ERROR ").append(e.getCause()).append('\n');
                }
            }
        }
        System.out.print(out);
        System.out.flush();
        System.exit(failed == 0 ? 0 : 1);
    }
}
