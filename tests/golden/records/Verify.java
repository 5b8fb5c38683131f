import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.*;

public class Verify {
  static String s(ByteBuffer b) { if (b == null) return "<null>"; byte[] a = new byte[b.remaining()]; b.duplicate().get(a); String r = new String(a, StandardCharsets.UTF_8); return r.length() > 20 ? r.substring(0, 10) + "...(" + r.length() + ")" : r; }
  public static void main(String[] args) throws Exception {
    for (String f : args) {
      MemoryRecords mr = MemoryRecords.readableRecords(ByteBuffer.wrap(Files.readAllBytes(Paths.get(f))));
      int batches = 0;
      for (MutableRecordBatch b : mr.batches()) {
        b.ensureValid();  // CRC32C + size checks
        batches++;
        System.out.println(f + ": batch base=" + b.baseOffset() + " last=" + b.lastOffset() + " codec=" + b.compressionType() + " count=" + b.countOrNull() + " maxTs=" + b.maxTimestamp());
        for (org.apache.kafka.common.record.Record r : b) {
          r.ensureValid();
          StringBuilder hs = new StringBuilder();
          for (Header h : r.headers()) hs.append(h.key()).append('=').append(h.value() == null ? "<null>" : new String(h.value(), StandardCharsets.UTF_8)).append(' ');
          System.out.println("  off=" + r.offset() + " ts=" + r.timestamp() + " key=" + s(r.key()) + " value=" + s(r.value()) + " headers=" + hs);
        }
      }
      if (batches != 2) throw new RuntimeException("expected 2 batches in " + f);
    }
  }
}
