// Drives the Java Kafka client against tools/capture-golden so its request frames can be saved
// as golden files. Build and run (kafka-clients 4.1.0 and its runtime deps from ~/.m2):
//   javac -cp "$CP" -d /tmp/golden-java tools/golden/GoldenCapture.java
//   tools/capture-golden --client java-producer -- java -cp "$CP:/tmp/golden-java" GoldenCapture producer 127.0.0.1:{port}
//   tools/capture-golden --client java-admin -- java -cp "$CP:/tmp/golden-java" GoldenCapture admin 127.0.0.1:{port}
// See tests/golden/README.md for the exact class path.
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class GoldenCapture {
  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String bootstrap = args[1];
    if (mode.equals("producer")) {
      Properties p = new Properties();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(ProducerConfig.CLIENT_ID_CONFIG, "golden-producer");
      p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
      p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
      p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
      p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "10000");
      p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
      p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
        producer.send(new ProducerRecord<>("golden-topic", "key1", "hello golden")).get(15, TimeUnit.SECONDS);
        System.out.println("produced one record");
      }
    } else if (mode.equals("admin")) {
      Properties p = new Properties();
      p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(AdminClientConfig.CLIENT_ID_CONFIG, "golden-admin");
      p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
      p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
      try (Admin admin = Admin.create(p)) {
        System.out.println("topics: " + admin.listTopics().names().get(15, TimeUnit.SECONDS));
      }
    } else {
      throw new IllegalArgumentException("mode must be producer or admin");
    }
  }
}
