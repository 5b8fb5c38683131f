// Record batches captured from real producers (tests/golden/records/README.md says how): the
// Java client 4.1 (xerial snappy, Java LZ4 frames) and kcat 1.7.1 / librdkafka 2.0.2 (raw snappy).
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "kafka/records/record_batch.h"

using namespace kib;
using namespace kib::kafka;

namespace {

constexpr size_t kMiB = 1024 * 1024;

std::filesystem::path golden_dir() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates = {fs::path(__FILE__).parent_path() / "../golden/records"};
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    // build/<dir>/unit-tests -> repository root
    candidates.push_back(fs::path(exe).parent_path() / "../../tests/golden/records");
  }
  for (const auto& c : candidates)
    if (fs::exists(c / "java-none.bin")) return c;
  BOOST_FAIL("tests/golden/records not found (run from the repository root)");
  return {};
}

Bytes read_golden(const std::string& name) {
  std::ifstream f(golden_dir() / name, std::ios::binary);
  BOOST_REQUIRE_MESSAGE(f, "cannot open golden file " << name);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string str(const std::optional<ByteSpan>& s) {
  return s ? std::string(reinterpret_cast<const char*>(s->data()), s->size()) : "<null>";
}

constexpr int64_t kAnyTimestamp = INT64_MIN;  // librdkafka stamps records as they are produced

struct Expected {
  std::string key, value;  // "<null>" for null
  int64_t timestamp_delta_from_first;
};

const std::string kBig = [] {
  std::string s;
  for (int i = 0; i < 200; ++i) s += "0123456789";
  return s;
}();

// Capture.java: seven records with explicit timestamps; headers only on the first.
const std::vector<Expected> kJavaRecords = {
    {"k1", "hello", 0}, {"<null>", "no key", 7}, {"k3", "<null>", -5}, {"k1", "hello", 21},
    {"", "", 28},       {"big", kBig, 35},       {"k6", "last", 42},
};
// kcat-input.txt with -K: -Z: an empty key or value is sent as null; every record carries the
// headers given with -H h1=v1 -H h2 -H h1=dup.
const std::vector<Expected> kKcatRecords = {
    {"k1", "hello", 0},         {"<null>", "no key", kAnyTimestamp}, {"k3", "<null>", kAnyTimestamp},
    {"k1", "hello", kAnyTimestamp}, {"big", kBig, kAnyTimestamp},   {"k6", "last", kAnyTimestamp},
};

void check_headers_h1_h2_h1(const Record& r) {
  BOOST_REQUIRE_EQUAL(r.headers.size(), 3u);
  BOOST_TEST(r.headers[0].key == "h1");
  BOOST_TEST(str(r.headers[0].value) == "v1");
  BOOST_TEST(r.headers[1].key == "h2");
  BOOST_TEST(!r.headers[1].value.has_value());
  BOOST_TEST(r.headers[2].key == "h1");
  BOOST_TEST(str(r.headers[2].value) == "dup");
}

const DecodedBatch& only_batch(const Result<std::vector<DecodedBatch>>& r) {
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  BOOST_REQUIRE_EQUAL(r->size(), 1u);
  return r->front();
}

void check_records(const DecodedBatch& b, const std::vector<Expected>& want, bool headers_on_all) {
  BOOST_REQUIRE_EQUAL(b.records.size(), want.size());
  BOOST_TEST(b.header.record_count == static_cast<int32_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    BOOST_TEST_CONTEXT("record " << i) {
      const Record& r = b.records[i];
      BOOST_TEST(str(r.key) == want[i].key);
      BOOST_TEST(str(r.value) == want[i].value);
      if (want[i].timestamp_delta_from_first != kAnyTimestamp)
        BOOST_TEST(r.timestamp_delta == want[i].timestamp_delta_from_first);
      if (headers_on_all || i == 0) check_headers_h1_h2_h1(r);
      else BOOST_TEST(r.headers.empty());
    }
  }
}

// Decodes a capture and encodes its records again with the same settings.
Bytes reencode(const DecodedBatch& b, Compression codec) {
  std::vector<RecordToEncode> recs;
  for (const Record& r : b.records) recs.push_back({b.timestamp_of(r), r.key, r.value, r.headers});
  BatchSettings s;
  s.base_offset = b.header.base_offset;
  s.partition_leader_epoch = b.header.partition_leader_epoch;
  s.compression = codec;
  s.producer_id = b.header.producer_id;
  s.producer_epoch = b.header.producer_epoch;
  s.base_sequence = b.header.base_sequence;
  ByteWriter w;
  encode_record_batch(w, s, recs);
  return w.take();
}

const char* const kCodecNames[] = {"none", "gzip", "snappy", "lz4", "zstd"};

}  // namespace

BOOST_AUTO_TEST_SUITE(records_from_real_producers)

BOOST_AUTO_TEST_CASE(java_client_batches_decode_for_every_codec) {
  for (int id = 0; id <= 4; ++id) {
    BOOST_TEST_CONTEXT("java-" << kCodecNames[id]) {
      Bytes wire = read_golden(std::string("java-") + kCodecNames[id] + ".bin");
      DecompressionBudget budget{64 * kMiB};
      auto r = decode_record_batches(wire, budget);
      const DecodedBatch& b = only_batch(r);
      BOOST_TEST((b.header.compression() == static_cast<Compression>(id)));
      BOOST_TEST(b.header.base_timestamp == 1700000000000);
      BOOST_TEST(b.header.max_timestamp == 1700000000042);
      BOOST_TEST(b.header.producer_id == -1);
      BOOST_TEST(b.header.last_offset_delta == 6);
      check_records(b, kJavaRecords, false);
    }
  }
}

BOOST_AUTO_TEST_CASE(java_snappy_capture_uses_xerial_framing) {
  Bytes wire = read_golden("java-snappy.bin");
  const uint8_t xerial[] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  BOOST_TEST(std::equal(std::begin(xerial), std::end(xerial), wire.begin() + kRecordBatchHeaderSize));
}

BOOST_AUTO_TEST_CASE(kcat_snappy_capture_is_raw_snappy_without_xerial_header) {
  Bytes wire = read_golden("kcat-snappy.bin");
  BOOST_TEST(wire[kRecordBatchHeaderSize] != 0x82);
}

BOOST_AUTO_TEST_CASE(kcat_librdkafka_batches_decode_for_every_codec) {
  for (int id = 0; id <= 4; ++id) {
    BOOST_TEST_CONTEXT("kcat-" << kCodecNames[id]) {
      Bytes wire = read_golden(std::string("kcat-") + kCodecNames[id] + ".bin");
      DecompressionBudget budget{64 * kMiB};
      auto r = decode_record_batches(wire, budget);
      const DecodedBatch& b = only_batch(r);
      BOOST_TEST((b.header.compression() == static_cast<Compression>(id)));
      BOOST_TEST(b.header.last_offset_delta == 5);
      check_records(b, kKcatRecords, true);
    }
  }
}

BOOST_AUTO_TEST_CASE(uncompressed_encoding_is_byte_identical_to_java_and_librdkafka) {
  for (const char* name : {"java-none.bin", "kcat-none.bin"}) {
    BOOST_TEST_CONTEXT(name) {
      Bytes wire = read_golden(name);
      DecompressionBudget budget{64 * kMiB};
      auto r = decode_record_batches(wire, budget);
      const DecodedBatch& b = only_batch(r);
      BOOST_TEST(reencode(b, Compression::kNone) == wire);
    }
  }
}

BOOST_AUTO_TEST_CASE(reencoding_a_capture_with_its_codec_keeps_every_record) {
  for (int id = 1; id <= 4; ++id) {
    BOOST_TEST_CONTEXT("java-" << kCodecNames[id]) {
      Bytes wire = read_golden(std::string("java-") + kCodecNames[id] + ".bin");
      DecompressionBudget budget{64 * kMiB};
      auto r = decode_record_batches(wire, budget);
      const DecodedBatch& b = only_batch(r);
      Bytes again = reencode(b, static_cast<Compression>(id));
      DecompressionBudget budget2{64 * kMiB};
      auto r2 = decode_record_batches(again, budget2);
      check_records(only_batch(r2), kJavaRecords, false);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_capture_with_one_flipped_bit_is_corrupt) {
  Bytes wire = read_golden("java-zstd.bin");
  wire[wire.size() / 2] ^= 0x10;
  DecompressionBudget budget{64 * kMiB};
  auto r = decode_record_batches(wire, budget);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((record_error(r.error()) == RecordError::kCorrupt));
}

BOOST_AUTO_TEST_SUITE_END()
