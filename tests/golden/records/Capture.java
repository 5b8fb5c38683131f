import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

public class Capture {
  static byte[] b(String s) { return s == null ? null : s.getBytes(StandardCharsets.UTF_8); }
  public static void main(String[] a) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", "127.0.0.1:" + a[0]);
    p.put("compression.type", a[1]);
    p.put("acks", "1");
    p.put("enable.idempotence", "false");
    p.put("linger.ms", "500");
    p.put("batch.size", "1048576");
    p.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
    p.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
    long t0 = 1700000000000L;
    String big = "0123456789".repeat(200);
    try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p)) {
      RecordHeaders h = new RecordHeaders();
      h.add("h1", b("v1")); h.add("h2", null); h.add("h1", b("dup"));
      prod.send(new ProducerRecord<>("t", 0, t0, b("k1"), b("hello"), h));
      prod.send(new ProducerRecord<>("t", 0, t0 + 7, null, b("no key")));
      prod.send(new ProducerRecord<>("t", 0, t0 - 5, b("k3"), (byte[]) null));
      prod.send(new ProducerRecord<>("t", 0, t0 + 21, b("k1"), b("hello")));
      prod.send(new ProducerRecord<>("t", 0, t0 + 28, b(""), b("")));
      prod.send(new ProducerRecord<>("t", 0, t0 + 35, b("big"), b(big)));
      prod.send(new ProducerRecord<>("t", 0, t0 + 42, b("k6"), b("last")));
      prod.flush();
    }
  }
}
