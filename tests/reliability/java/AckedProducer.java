// The idempotent Java producer of the acknowledged-writes checker (tests/reliability/run).
// Compiled by tests/reliability/run into tests/.java/classes-reliability.
//
//   java AckedProducer BOOTSTRAP TOPIC PARTITIONS ID_PREFIX RATE_PER_SECOND MAX_RECORDS
//
// Sends records until a line "stop" (or EOF) arrives on stdin, or MAX_RECORDS were sent; then
// flush() and close(). Record i goes to partition i % PARTITIONS with key null and value
// "ID_PREFIX-i|" followed by padding. acks=all, enable.idempotence=true, retries MAX_VALUE,
// delivery.timeout.ms 30 minutes: every record must end acknowledged or failed by the client.
// Output (stdout, one line each, from the send callbacks):
//   A <id> <partition> <offset>      acknowledged
//   F <id> <exception>               failed (the client gave up)
//   DONE sent=<n> acked=<n> failed=<n>
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.BufferedOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class AckedProducer {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1];
        int partitions = Integer.parseInt(args[2]);
        String prefix = args[3];
        double rate = Double.parseDouble(args[4]);
        long max = Long.parseLong(args[5]);

        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.RETRIES_CONFIG, String.valueOf(Integer.MAX_VALUE));
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "4096");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "1800000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "600000");
        p.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, "50");
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "50");
        p.put(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, "500");
        p.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "5000");
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "kib-acked-producer");

        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                                          false, "UTF-8");
        AtomicBoolean stop = new AtomicBoolean(false);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.trim().equals("stop")) break;
                }
            } catch (Exception e) {
                // EOF or error: stop either way
            }
            stop.set(true);
        });
        reader.setDaemon(true);
        reader.start();

        AtomicLong acked = new AtomicLong(), failed = new AtomicLong();
        StringBuilder pad = new StringBuilder();
        for (int i = 0; i < 64; i++) pad.append('x');
        long sent = 0;
        long t0 = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            while (!stop.get() && sent < max) {
                final String id = prefix + "-" + sent;
                final int partition = (int) (sent % partitions);
                byte[] value = (id + "|" + pad).getBytes(StandardCharsets.UTF_8);
                producer.send(new ProducerRecord<>(topic, partition, null, value), (md, e) -> {
                    synchronized (out) {
                        if (e == null) {
                            acked.incrementAndGet();
                            out.println("A " + id + " " + md.partition() + " " + md.offset());
                        } else {
                            failed.incrementAndGet();
                            out.println("F " + id + " " + String.valueOf(e).replace('\n', ' '));
                        }
                        out.flush();
                    }
                });
                sent++;
                // Pace: record `sent` is due at t0 + sent / rate.
                long due = t0 + (long) (sent * 1e9 / rate);
                long wait = due - System.nanoTime();
                if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
            producer.flush();
        }
        synchronized (out) {
            out.println("DONE sent=" + sent + " acked=" + acked.get() + " failed=" + failed.get());
            out.flush();
        }
    }
}
