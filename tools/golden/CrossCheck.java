// Cross-checks the generated C++ codecs against Apache Kafka's own generated Java classes:
// every file DIR/<Message>-v<version>-s<seed>.bin (written by the unit tests when
// KIB_PROTOCOL_CORPUS=DIR is set) is parsed with org.apache.kafka.common.message.<Message>Data at
// that version, must be consumed completely, and must re-serialize to the same bytes.
// Versions the Java classes do not know are counted as skipped. Not part of the build; see
// tests/golden/README.md.
import java.lang.reflect.Constructor;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;

public class CrossCheck {
  public static void main(String[] args) throws Exception {
    Pattern name = Pattern.compile("(.+)-v(\\d+)-s(\\d+)\\.bin");
    List<Path> files = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(Paths.get(args[0]), "*.bin")) {
      for (Path p : ds) files.add(p);
    }
    files.sort(null);
    int ok = 0, skipped = 0, failed = 0;
    TreeMap<String, String> failures = new TreeMap<>();
    TreeMap<String, Integer> skippedBy = new TreeMap<>();
    for (Path p : files) {
      Matcher m = name.matcher(p.getFileName().toString());
      if (!m.matches()) continue;
      String msg = m.group(1);
      short version = Short.parseShort(m.group(2));
      Class<?> cls = find(msg);
      if (cls == null) {
        skippedBy.merge(msg + " (no Java class)", 1, Integer::sum);
        skipped++;
        continue;
      }
      Message probe = (Message) cls.getConstructor().newInstance();
      if (version < probe.lowestSupportedVersion() || version > probe.highestSupportedVersion()) {
        skippedBy.merge(msg + " v" + version + " (unknown to Java)", 1, Integer::sum);
        skipped++;
        continue;
      }
      byte[] bytes = Files.readAllBytes(p);
      try {
        Constructor<?> ctor = cls.getConstructor(Readable.class, short.class);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        Message parsed = (Message) ctor.newInstance(new ByteBufferAccessor(in), version);
        if (in.hasRemaining()) throw new IllegalStateException(in.remaining() + " bytes left unread");
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = parsed.size(cache, version);
        ByteBuffer out = ByteBuffer.allocate(size);
        parsed.write(new ByteBufferAccessor(out), cache, version);
        if (!Arrays.equals(out.array(), bytes))
          throw new IllegalStateException("re-serialized " + size + " bytes differ from our " + bytes.length);
        ok++;
      } catch (Throwable t) {
        Throwable c = t.getCause() != null ? t.getCause() : t;
        if (c instanceof UnsupportedVersionException) {
          skippedBy.merge(msg + " v" + version + " (unknown to Java)", 1, Integer::sum);
          skipped++;
          continue;
        }
        failed++;
        failures.putIfAbsent(msg + " v" + version, p.getFileName() + ": " + c);
      }
    }
    for (var e : skippedBy.entrySet()) System.out.println("skipped " + e.getKey() + " x" + e.getValue());
    for (var e : failures.entrySet()) System.out.println("FAILED " + e.getKey() + ": " + e.getValue());
    System.out.println(ok + " passed, " + failed + " failed, " + skipped + " skipped");
    System.exit(failed == 0 ? 0 : 1);
  }

  static Class<?> find(String msg) {
    for (String n : new String[] {msg + "Data", msg}) {
      try {
        Class<?> c = Class.forName("org.apache.kafka.common.message." + n);
        if (Message.class.isAssignableFrom(c)) return c;
      } catch (ClassNotFoundException e) {
        // try the next spelling
      }
    }
    return null;
  }
}
