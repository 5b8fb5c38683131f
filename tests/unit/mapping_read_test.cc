// Iggy message -> Kafka record (map_iggy_to_record): provenance by kafka.v, native Iggy messages,
// refusals of malformed gateway messages, and the write/read round trip as a property.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bridge/errors.h"
#include "bridge/mapping/record_mapping.h"
#include "common/bytes.h"
#include "iggy/user_headers.h"
#include "kafka/records/record_batch.h"

using namespace kib;
using iggy::HeaderKind;
using kafka::ErrorCode;

namespace {

constexpr int64_t kCreateTime = 1'700'000'000'123;
constexpr uint64_t kServerUs = 1'800'000'000'456'789;  // the fake append time the reader falls back to
constexpr int64_t kServerMs = 1'800'000'000'456;

ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string str(ByteSpan s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }
std::string str(const std::optional<ByteSpan>& s) { return s ? "'" + str(*s) + "'" : "<null>"; }
const uint8_t kOne = 0x01;
ByteSpan one() { return {&kOne, 1}; }
Bytes int64_le(int64_t v) {
  Bytes b(8);
  for (size_t i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
  return b;
}

// A stored message: owns the payload and header block its view points into.
struct Stored {
  Bytes payload;
  Bytes headers;
  uint64_t origin_us = kCreateTime * 1000ull;
  iggy::MessageView view() const {
    iggy::MessageView m;
    m.offset = 42;
    m.timestamp_us = kServerUs;
    m.origin_timestamp_us = origin_us;
    m.payload = payload;
    m.user_headers = headers;
    return m;
  }
};

Stored stored(std::string_view payload, iggy::UserHeadersBuilder& b) {
  Stored s;
  s.payload.assign(payload.begin(), payload.end());
  s.headers = b.take();
  return s;
}

bridge::KafkaRecordView read_ok(const Stored& s) {
  auto r = bridge::map_iggy_to_record(s.view());
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return std::move(r.value());
}

// Views point into the Stored: it must outlive the record.
bridge::KafkaRecordView read_ok(const Stored&&) = delete;

void require_refused(const Stored& s) {
  auto r = bridge::map_iggy_to_record(s.view());
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((bridge::to_kafka_error(r.error()) == ErrorCode::kUnknownServerError));
  BOOST_TEST(r.error().message.find("offset 42") != std::string::npos);
}

// Envelope payload bytes: flags, key, value, count, then raw trailing bytes.
Bytes envelope(uint8_t flags, uint32_t count, const Bytes& tail = {}) {
  ByteWriter w;
  w.le<uint8_t>(flags);
  w.le<uint32_t>(0);
  w.le<uint32_t>(0);
  w.le<uint32_t>(count);
  w.bytes(tail);
  return w.take();
}

Stored gateway_envelope(Bytes payload, uint8_t layout = 0x01) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add_raw("kafka.envelope", ByteSpan(&layout, 1)).ok());
  BOOST_REQUIRE(b.add_raw("kafka.v", one()).ok());
  Stored s;
  s.payload = std::move(payload);
  s.headers = b.take();
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mapping_read)

BOOST_AUTO_TEST_CASE(native_iggy_message_reads_with_null_key_payload_value_and_every_header) {
  // No kafka.v: written by an Iggy client. Key names of any kind count if they are UTF-8, values
  // arrive as their stored bytes, and kafka.* names carry no meaning.
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add(HeaderKind::kRaw, span_of("raw-key"), HeaderKind::kRaw, span_of("r")).ok());
  BOOST_REQUIRE(b.add(HeaderKind::kString, span_of("count"), HeaderKind::kInt64, int64_le(7)).ok());
  BOOST_REQUIRE(b.add(HeaderKind::kString, span_of("kafka.value"), HeaderKind::kString, span_of("null")).ok());
  BOOST_REQUIRE(b.add(HeaderKind::kString, span_of("source"), HeaderKind::kString, span_of("iggy-cli")).ok());
  BOOST_REQUIRE(b.add(HeaderKind::kString, span_of("\xff\xfe"), HeaderKind::kRaw, span_of("x")).ok());
  const uint8_t int32_name[4] = {'a', 'b', 'c', 'd'};
  BOOST_REQUIRE(b.add(HeaderKind::kInt32, ByteSpan(int32_name, 4), HeaderKind::kBool, one()).ok());
  Stored s = stored(std::string_view("\x00", 1), b);

  auto r = read_ok(s);
  BOOST_TEST(!r.key.has_value());
  BOOST_TEST(str(r.value) == str(std::optional<ByteSpan>(span_of(std::string_view("\x00", 1)))));  // no placeholder magic
  BOOST_TEST(r.timestamp_ms == kCreateTime);
  BOOST_REQUIRE_EQUAL(r.headers.size(), 5u);  // the non-UTF-8 key is skipped
  BOOST_TEST(r.headers[0].key == "raw-key");
  BOOST_TEST(str(r.headers[0].value) == "'r'");
  BOOST_TEST(r.headers[1].key == "count");
  BOOST_TEST((Bytes(r.headers[1].value->begin(), r.headers[1].value->end()) == int64_le(7)));
  BOOST_TEST(r.headers[2].key == "kafka.value");
  BOOST_TEST(str(r.headers[2].value) == "'null'");
  BOOST_TEST(r.headers[3].key == "source");
  BOOST_TEST(r.headers[4].key == "abcd");
  BOOST_TEST(str(r.headers[4].value) == "'\x01'");
}

BOOST_AUTO_TEST_CASE(native_iggy_message_without_headers_or_origin_uses_the_server_timestamp) {
  Stored s;
  s.payload = {'p'};
  s.origin_us = 0;
  auto r = read_ok(s);
  BOOST_TEST(r.timestamp_ms == kServerMs);
  BOOST_TEST(r.headers.empty());
  BOOST_TEST(str(r.value) == "'p'");
}

BOOST_AUTO_TEST_CASE(native_iggy_message_keeps_both_headers_when_two_kinds_share_a_name) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add(HeaderKind::kRaw, span_of("trace"), HeaderKind::kRaw, span_of("1")).ok());
  BOOST_REQUIRE(b.add(HeaderKind::kString, span_of("trace"), HeaderKind::kRaw, span_of("2")).ok());
  const Stored s = stored("v", b);
  auto r = read_ok(s);
  BOOST_REQUIRE_EQUAL(r.headers.size(), 2u);
  BOOST_TEST(str(r.headers[0].value) == "'1'");
  BOOST_TEST(str(r.headers[1].value) == "'2'");
}

BOOST_AUTO_TEST_CASE(envelope_marker_without_kafka_v_is_just_a_header_of_a_native_message) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add_raw("kafka.envelope", one()).ok());
  const Stored s = stored("not an envelope", b);
  auto r = read_ok(s);
  BOOST_TEST(!r.key.has_value());
  BOOST_TEST(str(r.value) == "'not an envelope'");
  BOOST_REQUIRE_EQUAL(r.headers.size(), 1u);
  BOOST_TEST(r.headers[0].key == "kafka.envelope");
}

BOOST_AUTO_TEST_CASE(kafka_v_in_a_raw_kind_key_does_not_claim_the_mapping) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add(HeaderKind::kRaw, span_of("kafka.v"), HeaderKind::kRaw, one()).ok());
  BOOST_REQUIRE(b.add_raw("kafka.key", span_of("k")).ok());
  const Stored s = stored("v", b);
  auto r = read_ok(s);
  BOOST_TEST(!r.key.has_value());
  BOOST_TEST(r.headers.size() == 2u);
}

BOOST_AUTO_TEST_CASE(gateway_message_reads_only_kafka_h_headers_with_the_prefix_stripped) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add_raw("kafka.h.a", span_of("1")).ok());
  BOOST_REQUIRE(b.add_raw("kafka.h.b", span_of("2")).ok());
  BOOST_REQUIRE(b.add_raw("kafka.key", span_of("k")).ok());
  BOOST_REQUIRE(b.add_raw("kafka.other", span_of("dropped")).ok());
  BOOST_REQUIRE(b.add_raw("kafka.v", one()).ok());
  BOOST_REQUIRE(b.add_raw("plain", span_of("dropped")).ok());
  const Stored s = stored("value", b);
  auto r = read_ok(s);
  BOOST_TEST(str(r.key) == "'k'");
  BOOST_TEST(str(r.value) == "'value'");
  BOOST_REQUIRE_EQUAL(r.headers.size(), 2u);
  BOOST_TEST(r.headers[0].key == "a");
  BOOST_TEST(r.headers[1].key == "b");
  BOOST_TEST(str(r.headers[1].value) == "'2'");
}

BOOST_AUTO_TEST_CASE(gateway_message_null_and_empty_markers_discard_the_placeholder) {
  for (std::string_view marker : {"null", "empty"}) {
    iggy::UserHeadersBuilder b;
    BOOST_REQUIRE(b.add_raw("kafka.v", one()).ok());
    BOOST_REQUIRE(b.add_raw("kafka.value", span_of(marker)).ok());
    const Stored s = stored(std::string_view("\x00", 1), b);
    auto r = read_ok(s);
    if (marker == "null") {
      BOOST_TEST(!r.value.has_value());
    } else {
      BOOST_REQUIRE(r.value.has_value());
      BOOST_TEST(r.value->empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(unknown_mapping_version_kafka_v_02_is_refused) {
  iggy::UserHeadersBuilder b;
  const uint8_t two = 0x02;
  BOOST_REQUIRE(b.add_raw("kafka.v", ByteSpan(&two, 1)).ok());
  require_refused(stored("v", b));
}

BOOST_AUTO_TEST_CASE(unknown_value_marker_on_a_gateway_message_is_refused) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add_raw("kafka.v", one()).ok());
  BOOST_REQUIRE(b.add_raw("kafka.value", span_of("neither")).ok());
  require_refused(stored("v", b));
}

BOOST_AUTO_TEST_CASE(kafka_ts_that_is_not_int64_is_refused) {
  // The early "epoch" string form is refused, as upstream's final reader does.
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add_raw("kafka.ts", span_of("epoch")).ok());
  BOOST_REQUIRE(b.add_raw("kafka.v", one()).ok());
  require_refused(stored("v", b));
}

BOOST_AUTO_TEST_CASE(kafka_ts_below_minus_one_is_refused) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add(HeaderKind::kString, span_of("kafka.ts"), HeaderKind::kInt64, int64_le(-2)).ok());
  BOOST_REQUIRE(b.add_raw("kafka.v", one()).ok());
  require_refused(stored("v", b));
}

BOOST_AUTO_TEST_CASE(kafka_ts_wins_over_origin_and_minus_one_means_the_server_timestamp) {
  for (int64_t ts : {int64_t{0}, int64_t{-1}, kCreateTime + 1}) {
    iggy::UserHeadersBuilder b;
    BOOST_REQUIRE(b.add(HeaderKind::kString, span_of("kafka.ts"), HeaderKind::kInt64, int64_le(ts)).ok());
    BOOST_REQUIRE(b.add_raw("kafka.v", one()).ok());
    const Stored s = stored("v", b);
    auto r = read_ok(s);
    BOOST_TEST(r.timestamp_ms == (ts == -1 ? kServerMs : ts));
  }
}

BOOST_AUTO_TEST_CASE(truncated_header_block_is_refused_not_read_as_no_headers) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add_raw("kafka.envelope", one()).ok());
  BOOST_REQUIRE(b.add_raw("kafka.v", one()).ok());
  Stored s = stored("envelope bytes", b);
  s.headers.pop_back();
  require_refused(s);
  s.headers = {'n', 'o', 't', ' ', 'a', ' ', 'b', 'l', 'o', 'c', 'k'};
  require_refused(s);
}

BOOST_AUTO_TEST_CASE(gateway_envelope_that_does_not_parse_is_refused) {
  require_refused(gateway_envelope(Bytes{'n', 'o', 't', ' ', 'a', 'n', ' ', 'e', 'n', 'v'}));
}

BOOST_AUTO_TEST_CASE(envelope_with_unknown_layout_version_is_refused) {
  require_refused(gateway_envelope(envelope(0x02, 0), 0x02));
}

BOOST_AUTO_TEST_CASE(envelope_claiming_more_headers_than_its_bytes_hold_is_refused_before_reserving) {
  require_refused(gateway_envelope(envelope(0x00, 0xFFFFFFFFu)));
  // One header needs at least 9 bytes; 8 are present.
  require_refused(gateway_envelope(envelope(0x00, 1, Bytes(8, 0))));
}

BOOST_AUTO_TEST_CASE(envelope_with_bytes_after_the_last_header_is_refused) {
  require_refused(gateway_envelope(envelope(0x00, 0, Bytes{'j', 'u', 'n', 'k'})));
}

BOOST_AUTO_TEST_CASE(envelope_with_a_field_length_past_the_end_is_refused) {
  Bytes p = envelope(0x01, 0);
  p[1] = 0x10;  // key_len 16, nothing there
  require_refused(gateway_envelope(p));
}

BOOST_AUTO_TEST_CASE(envelope_header_name_that_is_not_utf8_is_refused) {
  ByteWriter h;
  h.le<uint32_t>(2);
  h.bytes(Bytes{0xC3, 0x28});
  h.le<uint8_t>(0);
  h.le<uint32_t>(0);
  require_refused(gateway_envelope(envelope(0x00, 1, h.buffer())));
}

BOOST_AUTO_TEST_CASE(empty_envelope_reads_as_null_key_and_null_value) {
  const Stored s = gateway_envelope(envelope(0x00, 0));
  auto r = read_ok(s);
  BOOST_TEST(!r.key.has_value());
  BOOST_TEST(!r.value.has_value());
  BOOST_TEST(r.headers.empty());
}

BOOST_AUTO_TEST_CASE(two_stored_keys_naming_the_same_kafka_header_are_refused_on_a_gateway_message) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add(HeaderKind::kRaw, span_of("kafka.h.a"), HeaderKind::kRaw, span_of("1")).ok());
  BOOST_REQUIRE(b.add_raw("kafka.h.a", span_of("2")).ok());
  BOOST_REQUIRE(b.add_raw("kafka.v", one()).ok());
  require_refused(stored("v", b));
}

BOOST_AUTO_TEST_SUITE_END()

// ---- round trip -------------------------------------------------------------------------------

namespace {

struct TestHeader {
  std::string name;
  std::optional<std::string> value;
};
struct TestRecord {
  int64_t timestamp = kCreateTime;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<TestHeader> headers;
};

struct Batch {
  Bytes wire;
  std::vector<kafka::DecodedBatch> decoded;
};

std::unique_ptr<Batch> make_batch(const std::vector<TestRecord>& records) {
  std::vector<std::vector<kafka::RecordHeader>> headers(records.size());
  std::vector<kafka::RecordToEncode> encode(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    for (const TestHeader& h : records[i].headers)
      headers[i].push_back({h.name, h.value ? std::optional<ByteSpan>(span_of(*h.value)) : std::nullopt});
    encode[i].timestamp = records[i].timestamp;
    if (records[i].key) encode[i].key = span_of(*records[i].key);
    if (records[i].value) encode[i].value = span_of(*records[i].value);
    encode[i].headers = headers[i];
  }
  ByteWriter w;
  kafka::encode_record_batch(w, {}, encode);
  auto batch = std::make_unique<Batch>();
  batch->wire = w.take();
  kafka::DecompressionBudget budget{64u << 20};
  auto decoded = kafka::decode_record_batches(batch->wire, budget);
  BOOST_REQUIRE_MESSAGE(decoded.ok(), (decoded.ok() ? "" : decoded.error().message));
  batch->decoded = std::move(decoded.value());
  return batch;
}

class RecordGenerator {
 public:
  explicit RecordGenerator(uint32_t seed) : rng_(seed) {}

  TestRecord record(int64_t base_ms) {
    TestRecord r;
    r.timestamp = timestamp(base_ms);
    r.key = field();
    r.value = field();
    static const char* const kNames[] = {"a", "b", "trace", "x-id", "\xc3\xa9t\xc3\xa9", "", "Z"};
    size_t count = pick(4) == 0 ? 0 : pick(6);
    for (size_t i = 0; i < count; ++i) {
      std::string name = pick(20) == 0 ? std::string(240 + pick(20), 'n') : kNames[pick(std::size(kNames))];
      r.headers.push_back({name, field()});
    }
    // Often produce the sorted-unique shape that stays native.
    if (pick(2) == 0) {
      std::sort(r.headers.begin(), r.headers.end(), [](const TestHeader& a, const TestHeader& b) {
        return std::lexicographical_compare(a.name.begin(), a.name.end(), b.name.begin(), b.name.end(),
                                            [](char x, char y) { return static_cast<uint8_t>(x) < static_cast<uint8_t>(y); });
      });
      r.headers.erase(std::unique(r.headers.begin(), r.headers.end(),
                                  [](const TestHeader& a, const TestHeader& b) { return a.name == b.name; }),
                      r.headers.end());
      for (auto& h : r.headers)
        if (!h.value || h.value->empty()) h.value = "x";
    }
    return r;
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  std::optional<std::string> field() {
    switch (pick(8)) {
      case 0: return std::nullopt;
      case 1: return std::string();
      case 2: return bytes(250 + pick(20));  // around the 255-byte field limit
      case 3: return std::string(1, '\0');   // the placeholder byte as real data
      default: return bytes(1 + pick(16));
    }
  }
  std::string bytes(size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(pick(256));
    return s;
  }
  int64_t timestamp(int64_t base_ms) {
    switch (pick(6)) {
      case 0: return -1;
      case 1: return 0;
      case 2: return base_ms + static_cast<int64_t>(pick(3 * 3600 * 1000));  // wider than one send
      default: return base_ms + static_cast<int64_t>(pick(1000));
    }
  }
  std::mt19937 rng_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(mapping_roundtrip)

BOOST_AUTO_TEST_CASE(random_records_read_back_equal_to_what_was_produced) {
  RecordGenerator gen(20260922);
  size_t records_checked = 0, envelopes = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<TestRecord> records(1 + static_cast<size_t>(round % 12));
    for (auto& r : records) r = gen.record(kCreateTime);
    auto batch = make_batch(records);
    for (const kafka::DecodedBatch& decoded : batch->decoded) {
      auto mapped = bridge::map_batch_to_iggy(decoded);
      BOOST_REQUIRE_MESSAGE(mapped.ok(), (mapped.ok() ? "" : mapped.error().message));
      envelopes += mapped->envelopes;
      BOOST_REQUIRE_EQUAL(mapped->messages.size(), decoded.records.size());
      for (size_t i = 0; i < decoded.records.size(); ++i) {
        const kafka::Record& want = decoded.records[i];
        const iggy::OutgoingMessage& out = mapped->messages[i];
        BOOST_REQUIRE(!out.payload.empty());  // Iggy refuses empty payloads
        BOOST_REQUIRE(out.payload.size() <= 64'000'000u);
        BOOST_REQUIRE(out.user_headers.size() <= 100'000u);
        iggy::MessageView view;
        view.offset = i;
        view.timestamp_us = kServerUs;
        view.origin_timestamp_us = out.origin_timestamp_us;
        view.payload = out.payload;
        view.user_headers = out.user_headers;
        auto got = bridge::map_iggy_to_record(view);
        BOOST_REQUIRE_MESSAGE(got.ok(), (got.ok() ? "" : got.error().message));

        int64_t want_ts = decoded.timestamp_of(want);
        BOOST_TEST(got->timestamp_ms == (want_ts == -1 ? kServerMs : want_ts));
        BOOST_TEST(str(got->key) == str(want.key));
        BOOST_TEST(str(got->value) == str(want.value));
        BOOST_REQUIRE_EQUAL(got->headers.size(), want.headers.size());
        for (size_t h = 0; h < want.headers.size(); ++h) {
          BOOST_TEST(got->headers[h].key == want.headers[h].key);
          BOOST_TEST(str(got->headers[h].value) == str(want.headers[h].value));
        }
        ++records_checked;
      }
    }
  }
  BOOST_TEST_MESSAGE(records_checked << " records, " << envelopes << " enveloped");
  // Both forms must have been exercised for the property to mean anything.
  BOOST_TEST(envelopes > 100u);
  BOOST_TEST(envelopes < records_checked - 100);
}

BOOST_AUTO_TEST_CASE(an_aborted_record_placeholder_reads_back_as_its_marker_and_no_data) {
  const bridge::MappedMessages mapped = bridge::map_aborted_placeholders({123456789012, 32766}, 2, 1'700'000'000'000'000);
  BOOST_REQUIRE(mapped.messages.size() == 2u);
  for (const iggy::OutgoingMessage& out : mapped.messages) {
    BOOST_TEST(out.payload.size() == 1u);  // Iggy refuses empty payloads
    iggy::MessageView m;
    m.offset = 9;
    m.origin_timestamp_us = out.origin_timestamp_us;
    m.payload = out.payload;
    m.user_headers = out.user_headers;
    auto r = bridge::map_iggy_to_record(m);
    BOOST_REQUIRE(r.ok());
    BOOST_REQUIRE(r->aborted.has_value());
    BOOST_TEST(r->aborted->producer_id == 123456789012);
    BOOST_TEST(r->aborted->producer_epoch == 32766);
    BOOST_TEST(!r->value.has_value());
    BOOST_TEST(r->headers.empty());
    BOOST_TEST(r->timestamp_ms == 1'700'000'000'000);
    // What a native Iggy consumer sees: the headers in Iggy's order, the marker as text.
    auto parsed = iggy::parse_user_headers(out.user_headers);
    BOOST_REQUIRE(parsed.ok());
    BOOST_REQUIRE(parsed->size() == 3u);
    BOOST_TEST(parsed->at(2).key_string() == "kib.aborted");
    BOOST_TEST(parsed->at(2).value_string() == "123456789012/32766");
  }
}

BOOST_AUTO_TEST_CASE(an_aborted_marker_that_does_not_parse_is_refused) {
  for (std::string_view bad : {"12", "12/", "/3", "x/1", "1/x", "1/2/3", "1/99999"}) {
    iggy::UserHeadersBuilder b;
    BOOST_REQUIRE(b.add_raw("kafka.v", one()).ok());
    BOOST_REQUIRE(b.add(iggy::HeaderKind::kString, span_of("kib.aborted"), iggy::HeaderKind::kString, span_of(bad)).ok());
    require_refused(stored(std::string_view("\0", 1), b));
  }
}

BOOST_AUTO_TEST_CASE(kib_aborted_on_a_native_message_is_just_a_header) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add(iggy::HeaderKind::kString, span_of("kib.aborted"), iggy::HeaderKind::kString, span_of("1/0")).ok());
  const Stored s = stored("payload", b);
  auto r = read_ok(s);
  BOOST_TEST(!r.aborted.has_value());
  BOOST_TEST(str(r.value) == "'payload'");
}

BOOST_AUTO_TEST_SUITE_END()
