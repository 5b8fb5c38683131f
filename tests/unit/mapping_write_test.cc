// Kafka record -> Iggy message (map_batch_to_iggy): upstream's worked examples byte for byte, the
// native/envelope decision, null vs empty, timestamps and limits. docs/mapping.md is the contract.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge/errors.h"
#include "bridge/mapping/record_mapping.h"
#include "common/bytes.h"
#include "iggy/user_headers.h"
#include "kafka/records/record_batch.h"

using namespace kib;
using kafka::ErrorCode;

namespace {

constexpr int64_t kCreateTime = 1'700'000'000'123;
constexpr uint64_t kU32Max = 0xFFFFFFFFull;

ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string str(ByteSpan s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }

struct TestHeader {
  std::string name;
  std::optional<std::string> value;
};

struct TestRecord {
  int64_t timestamp = kCreateTime;
  std::optional<std::string> key;
  std::optional<std::string> value = "v";
  std::vector<TestHeader> headers;
};

// Records encoded with RecordBatchBuilder and decoded again, as Produce hands them over. Owns the
// wire bytes the decoded views point into.
struct Batch {
  Bytes wire;
  std::vector<kafka::DecodedBatch> decoded;
  const kafka::DecodedBatch& get() const { return decoded.front(); }
};

std::unique_ptr<Batch> make_batch(const std::vector<TestRecord>& records, kafka::BatchSettings settings = {}) {
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
  kafka::encode_record_batch(w, settings, encode);
  auto batch = std::make_unique<Batch>();
  batch->wire = w.take();
  kafka::DecompressionBudget budget{64u << 20};
  auto decoded = kafka::decode_record_batches(batch->wire, budget);
  BOOST_REQUIRE_MESSAGE(decoded.ok(), (decoded.ok() ? "" : decoded.error().message));
  batch->decoded = std::move(decoded.value());
  BOOST_REQUIRE_EQUAL(batch->decoded.size(), 1u);
  return batch;
}

// Maps and requires success; the batch must outlive the returned spans.
bridge::MappedMessages map_ok(const Batch& batch) {
  auto mapped = bridge::map_batch_to_iggy(batch.get());
  BOOST_REQUIRE_MESSAGE(mapped.ok(), (mapped.ok() ? "" : mapped.error().message));
  return std::move(mapped.value());
}

ErrorCode map_error(const kafka::DecodedBatch& batch) {
  auto mapped = bridge::map_batch_to_iggy(batch);
  BOOST_REQUIRE(!mapped.ok());
  return bridge::to_kafka_error(mapped.error());
}

// One TLV entry written out by hand (not with the builder under test's helper).
void tlv(Bytes& out, uint8_t key_kind, std::string_view key, uint8_t value_kind, ByteSpan value) {
  auto u32 = [&](size_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  out.push_back(key_kind);
  u32(key.size());
  out.insert(out.end(), key.begin(), key.end());
  out.push_back(value_kind);
  u32(value.size());
  out.insert(out.end(), value.begin(), value.end());
}
void raw(Bytes& out, std::string_view key, std::string_view value) { tlv(out, 2, key, 1, span_of(value)); }
void int64_entry(Bytes& out, std::string_view key, int64_t v) {
  uint8_t le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
  tlv(out, 2, key, 7, ByteSpan(le, 8));
}

std::vector<iggy::HeaderEntry> headers_of(const iggy::OutgoingMessage& m) {
  auto parsed = iggy::parse_user_headers(m.user_headers);
  BOOST_REQUIRE(parsed.ok());
  return parsed.value();
}
std::vector<std::string> header_keys(const iggy::OutgoingMessage& m) {
  std::vector<std::string> keys;
  for (const auto& e : headers_of(m)) keys.emplace_back(e.key_string());
  return keys;
}
bool is_envelope(const iggy::OutgoingMessage& m) {
  for (const auto& e : headers_of(m))
    if (e.key_string() == "kafka.envelope") return true;
  return false;
}
std::optional<int64_t> kafka_ts(const iggy::OutgoingMessage& m) {
  for (const auto& e : headers_of(m)) {
    if (e.key_string() != "kafka.ts") continue;
    BOOST_REQUIRE(e.value_kind == iggy::HeaderKind::kInt64);
    BOOST_REQUIRE_EQUAL(e.value.size(), 8u);
    uint64_t u = 0;
    for (size_t i = 0; i < 8; ++i) u |= static_cast<uint64_t>(e.value[i]) << (8 * i);
    return static_cast<int64_t>(u);
  }
  return std::nullopt;
}

bool inside(ByteSpan s, const Bytes& arena) {
  return s.data() >= arena.data() && s.data() + s.size() <= arena.data() + arena.size();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mapping_write)

BOOST_AUTO_TEST_CASE(native_worked_example_is_stored_exactly_as_upstream_documents) {
  // docs/mapping.md, User headers: key order-1, value {…}, header source=kcat, CreateTime ...123.
  auto batch = make_batch({{kCreateTime, "order-1", "{…}", {{"source", "kcat"}}}});
  auto mapped = map_ok(*batch);
  BOOST_REQUIRE_EQUAL(mapped.messages.size(), 1u);
  const auto& m = mapped.messages[0];

  Bytes expected;
  raw(expected, "kafka.h.source", "kcat");
  raw(expected, "kafka.key", "order-1");
  raw(expected, "kafka.v", "\x01");
  BOOST_TEST(Bytes(m.user_headers.begin(), m.user_headers.end()) == expected, boost::test_tools::per_element());
  BOOST_TEST(str(m.payload) == "{…}");
  BOOST_TEST(m.origin_timestamp_us == 1'700'000'000'123'000ull);
  BOOST_TEST(m.id.is_zero());
  BOOST_TEST(mapped.envelopes == 0u);
}

BOOST_AUTO_TEST_CASE(envelope_worked_example_is_the_documented_14_byte_payload) {
  // docs/mapping.md, Envelope payload: key empty, value "v", no headers.
  auto batch = make_batch({{kCreateTime, "", "v", {}}});
  auto mapped = map_ok(*batch);
  const auto& m = mapped.messages[0];

  const Bytes payload = {0x03, 0, 0, 0, 0, 0x01, 0, 0, 0, 0x76, 0, 0, 0, 0};
  BOOST_TEST(Bytes(m.payload.begin(), m.payload.end()) == payload, boost::test_tools::per_element());
  Bytes headers;
  raw(headers, "kafka.envelope", "\x01");
  raw(headers, "kafka.v", "\x01");
  BOOST_TEST(Bytes(m.user_headers.begin(), m.user_headers.end()) == headers, boost::test_tools::per_element());
  BOOST_TEST(m.origin_timestamp_us == 1'700'000'000'123'000ull);
  BOOST_TEST(mapped.envelopes == 1u);
}

BOOST_AUTO_TEST_CASE(value_only_record_carries_exactly_the_kafka_v_header) {
  auto batch = make_batch({{kCreateTime, std::nullopt, "payload", {}}, {kCreateTime + 1, std::nullopt, "p2", {}}});
  auto mapped = map_ok(*batch);
  Bytes expected;
  raw(expected, "kafka.v", "\x01");
  for (const auto& m : mapped.messages) {
    BOOST_TEST(Bytes(m.user_headers.begin(), m.user_headers.end()) == expected, boost::test_tools::per_element());
    BOOST_TEST(m.user_headers.size() == 18u);  // the budget figure from §3.1
  }
  BOOST_TEST(str(mapped.messages[0].payload) == "payload");
  BOOST_TEST(mapped.messages[1].origin_timestamp_us == (kCreateTime + 1) * 1000ull);
}

BOOST_AUTO_TEST_CASE(null_value_is_stored_as_placeholder_byte_with_null_marker) {
  auto batch = make_batch({{kCreateTime, "k", std::nullopt, {}}});
  auto mapped = map_ok(*batch);
  const auto& m = mapped.messages[0];
  BOOST_TEST(!is_envelope(m));  // a tombstone stays native
  BOOST_TEST(Bytes(m.payload.begin(), m.payload.end()) == Bytes{0x00}, boost::test_tools::per_element());
  Bytes expected;
  raw(expected, "kafka.key", "k");
  raw(expected, "kafka.v", "\x01");
  raw(expected, "kafka.value", "null");
  BOOST_TEST(Bytes(m.user_headers.begin(), m.user_headers.end()) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(empty_value_is_stored_as_placeholder_byte_with_empty_marker) {
  auto batch = make_batch({{kCreateTime, std::nullopt, "", {}}});
  auto mapped = map_ok(*batch);
  const auto& m = mapped.messages[0];
  BOOST_TEST(Bytes(m.payload.begin(), m.payload.end()) == Bytes{0x00}, boost::test_tools::per_element());
  Bytes expected;
  raw(expected, "kafka.v", "\x01");
  raw(expected, "kafka.value", "empty");
  BOOST_TEST(Bytes(m.user_headers.begin(), m.user_headers.end()) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(key_of_255_bytes_is_native_and_300_bytes_takes_the_envelope) {
  auto batch = make_batch({{kCreateTime, std::string(255, 'k'), "v", {}}, {kCreateTime, std::string(300, 'k'), "v", {}}});
  auto mapped = map_ok(*batch);
  BOOST_TEST(!is_envelope(mapped.messages[0]));
  BOOST_TEST(header_keys(mapped.messages[0]) == (std::vector<std::string>{"kafka.key", "kafka.v"}),
             boost::test_tools::per_element());
  BOOST_TEST(is_envelope(mapped.messages[1]));
  BOOST_TEST(header_keys(mapped.messages[1]) == (std::vector<std::string>{"kafka.envelope", "kafka.v"}),
             boost::test_tools::per_element());
  BOOST_TEST(mapped.messages[1].payload.size() == 13u + 300u + 1u);
  BOOST_TEST(mapped.envelopes == 1u);
}

BOOST_AUTO_TEST_CASE(null_empty_or_oversized_header_value_takes_the_envelope) {
  auto batch = make_batch({{kCreateTime, "k", "v", {{"flag", std::nullopt}}},
                           {kCreateTime, "k", "v", {{"flag", ""}}},
                           {kCreateTime, "k", "v", {{"flag", std::string(256, 'x')}}},
                           {kCreateTime, "k", "v", {{"flag", std::string(255, 'x')}}}});
  auto mapped = map_ok(*batch);
  BOOST_TEST(is_envelope(mapped.messages[0]));
  BOOST_TEST(is_envelope(mapped.messages[1]));
  BOOST_TEST(is_envelope(mapped.messages[2]));
  BOOST_TEST(!is_envelope(mapped.messages[3]));
  BOOST_TEST(mapped.envelopes == 3u);
}

BOOST_AUTO_TEST_CASE(header_name_of_247_bytes_is_native_and_248_takes_the_envelope) {
  auto batch = make_batch({{kCreateTime, std::nullopt, "v", {{std::string(247, 'n'), "x"}}},
                           {kCreateTime, std::nullopt, "v", {{std::string(248, 'n'), "x"}}}});
  auto mapped = map_ok(*batch);
  BOOST_TEST(!is_envelope(mapped.messages[0]));
  BOOST_TEST(header_keys(mapped.messages[0]).front() == "kafka.h." + std::string(247, 'n'));
  BOOST_TEST(is_envelope(mapped.messages[1]));
}

BOOST_AUTO_TEST_CASE(repeated_header_names_take_the_envelope_in_kafka_order) {
  // Upstream refuses these with INVALID_RECORD; we keep them (docs/mapping.md, deviations).
  auto batch = make_batch({{kCreateTime, "k", "v", {{"a", "1"}, {"a", "2"}}}});
  auto mapped = map_ok(*batch);
  const auto& m = mapped.messages[0];
  BOOST_TEST(is_envelope(m));
  const Bytes payload = {0x03, 1, 0, 0, 0, 'k', 1, 0, 0, 0, 'v', 2, 0, 0, 0,  //
                         1, 0, 0, 0, 'a', 1, 1, 0, 0, 0, '1',                    //
                         1, 0, 0, 0, 'a', 1, 1, 0, 0, 0, '2'};
  BOOST_TEST(Bytes(m.payload.begin(), m.payload.end()) == payload, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(headers_out_of_name_order_take_the_envelope) {
  auto batch = make_batch({{kCreateTime, "k", "v", {{"b", "1"}, {"a", "2"}}}});
  auto mapped = map_ok(*batch);
  BOOST_TEST(is_envelope(mapped.messages[0]));
}

BOOST_AUTO_TEST_CASE(headers_sorted_and_unique_are_stored_natively_in_iggy_map_order) {
  // Byte order, not locale: "Z" (0x5A) < "a" (0x61), and a prefix sorts first.
  auto batch = make_batch({{0, "k", std::nullopt, {{"Z", "1"}, {"a", "2"}, {"ab", "3"}}}});
  auto mapped = map_ok(*batch);
  const auto& m = mapped.messages[0];
  BOOST_TEST(!is_envelope(m));
  BOOST_TEST(header_keys(m) == (std::vector<std::string>{"kafka.h.Z", "kafka.h.a", "kafka.h.ab", "kafka.key",
                                                          "kafka.ts", "kafka.v", "kafka.value"}),
             boost::test_tools::per_element());
  for (const auto& e : headers_of(m)) {
    BOOST_TEST((e.key_kind == iggy::HeaderKind::kString));
    if (e.key_string() != "kafka.ts") BOOST_TEST((e.value_kind == iggy::HeaderKind::kRaw));
  }
}

BOOST_AUTO_TEST_CASE(header_block_over_100000_bytes_takes_the_envelope) {
  // kafka.v (18) + 360 headers "hNNN" with 255-byte values (277 each) + one of 240 = 100,000.
  auto make = [](size_t last_len) {
    TestRecord r{kCreateTime, std::nullopt, "v", {}};
    char name[16];
    for (int i = 0; i <= 360; ++i) {
      std::snprintf(name, sizeof name, "h%03d", i);
      r.headers.push_back({name, std::string(i == 360 ? last_len : 255, 'x')});
    }
    return r;
  };
  auto batch = make_batch({make(240), make(241)});
  auto mapped = map_ok(*batch);
  BOOST_TEST(!is_envelope(mapped.messages[0]));
  BOOST_TEST(mapped.messages[0].user_headers.size() == 100'000u);
  BOOST_TEST(is_envelope(mapped.messages[1]));
}

BOOST_AUTO_TEST_CASE(plain_timestamp_is_stored_in_origin_without_kafka_ts) {
  auto batch = make_batch({{kCreateTime, "k", "v", {}}});
  auto mapped = map_ok(*batch);
  BOOST_TEST(mapped.messages[0].origin_timestamp_us == kCreateTime * 1000ull);
  BOOST_TEST(!kafka_ts(mapped.messages[0]).has_value());
}

BOOST_AUTO_TEST_CASE(timestamp_minus_one_alone_is_origin_zero_without_kafka_ts) {
  auto batch = make_batch({{-1, std::nullopt, "v", {}}});
  auto mapped = map_ok(*batch);
  BOOST_TEST(mapped.messages[0].origin_timestamp_us == 0u);
  BOOST_TEST(!kafka_ts(mapped.messages[0]).has_value());
  BOOST_TEST(mapped.messages[0].user_headers.size() == 18u);
}

BOOST_AUTO_TEST_CASE(timestamp_zero_is_kept_in_kafka_ts_because_origin_zero_means_none) {
  auto batch = make_batch({{0, std::nullopt, "v", {}}});
  auto mapped = map_ok(*batch);
  BOOST_TEST(mapped.messages[0].origin_timestamp_us == 0u);
  BOOST_TEST((kafka_ts(mapped.messages[0]) == std::optional<int64_t>(0)));
  Bytes expected;
  int64_entry(expected, "kafka.ts", 0);
  raw(expected, "kafka.v", "\x01");
  const auto& h = mapped.messages[0].user_headers;
  BOOST_TEST(Bytes(h.begin(), h.end()) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(unstamped_and_epoch_records_among_real_ones_are_clamped_to_the_window_start) {
  auto batch = make_batch({{-1, "k", "v", {}}, {0, "k", "v", {}}, {kCreateTime + 5, "k", "v", {}},
                           {kCreateTime, "k", "v", {}}});
  auto mapped = map_ok(*batch);
  const uint64_t start = kCreateTime * 1000ull;
  BOOST_TEST(mapped.messages[0].origin_timestamp_us == start);
  BOOST_TEST((kafka_ts(mapped.messages[0]) == std::optional<int64_t>(-1)));
  BOOST_TEST(mapped.messages[1].origin_timestamp_us == start);
  BOOST_TEST((kafka_ts(mapped.messages[1]) == std::optional<int64_t>(0)));
  BOOST_TEST(mapped.messages[2].origin_timestamp_us == start + 5000);
  BOOST_TEST(!kafka_ts(mapped.messages[2]).has_value());
  BOOST_TEST(!kafka_ts(mapped.messages[3]).has_value());
}

BOOST_AUTO_TEST_CASE(batch_wider_than_one_send_is_clamped_and_kafka_ts_keeps_the_real_time) {
  const int64_t later = kCreateTime + 72 * 60 * 1000;  // 72 min > u32::MAX µs (~71.6 min)
  auto batch = make_batch({{kCreateTime, "k", "v", {}}, {later, "k", "v", {}}});
  auto mapped = map_ok(*batch);
  BOOST_TEST(mapped.messages[1].origin_timestamp_us - mapped.messages[0].origin_timestamp_us == kU32Max);
  BOOST_TEST((kafka_ts(mapped.messages[1]) == std::optional<int64_t>(later)));
  BOOST_TEST(!kafka_ts(mapped.messages[0]).has_value());
}

BOOST_AUTO_TEST_CASE(clamped_envelope_record_carries_kafka_ts_between_envelope_and_v) {
  const int64_t later = kCreateTime + 72 * 60 * 1000;
  auto batch = make_batch({{kCreateTime, "k", "v", {}}, {later, "", "v", {}}});
  auto mapped = map_ok(*batch);
  BOOST_TEST(header_keys(mapped.messages[1]) == (std::vector<std::string>{"kafka.envelope", "kafka.ts", "kafka.v"}),
             boost::test_tools::per_element());
  BOOST_TEST((kafka_ts(mapped.messages[1]) == std::optional<int64_t>(later)));
}

BOOST_AUTO_TEST_CASE(log_append_time_batch_stores_the_batch_max_timestamp) {
  kafka::BatchSettings settings;
  settings.timestamp_type = kafka::TimestampType::kLogAppendTime;
  settings.log_append_time = kCreateTime + 99;
  auto batch = make_batch({{kCreateTime, "k", "v", {}}, {kCreateTime + 1, "k", "v", {}}}, settings);
  auto mapped = map_ok(*batch);
  for (const auto& m : mapped.messages) BOOST_TEST(m.origin_timestamp_us == (kCreateTime + 99) * 1000ull);
}

BOOST_AUTO_TEST_CASE(timestamp_below_minus_one_is_refused_with_invalid_timestamp) {
  auto batch = make_batch({{kCreateTime, "k", "v", {}}, {-2, "k", "v", {}}});
  BOOST_TEST((map_error(batch->get()) == ErrorCode::kInvalidTimestamp));
}

BOOST_AUTO_TEST_CASE(timestamp_too_large_for_microseconds_is_refused_with_invalid_timestamp) {
  auto batch = make_batch({{INT64_MAX / 1000 + 1, "k", "v", {}}});
  BOOST_TEST((map_error(batch->get()) == ErrorCode::kInvalidTimestamp));
}

BOOST_AUTO_TEST_CASE(header_name_that_is_not_utf8_is_refused_with_invalid_record) {
  auto batch = make_batch({{kCreateTime, "k", "v", {{"bad\xff", "1"}}}});
  BOOST_TEST((map_error(batch->get()) == ErrorCode::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(payload_over_64000000_bytes_is_refused_with_message_too_large) {
  // Built directly rather than encoded: a 64 MB encode + CRC would dominate the unit tier.
  const Bytes big(64'000'001, 'x');
  const std::string empty_key;
  kafka::DecodedBatch batch;
  batch.header.base_timestamp = kCreateTime;
  batch.header.max_timestamp = kCreateTime;

  auto with = [&](std::optional<ByteSpan> key, ByteSpan value) {
    batch.records.assign(1, kafka::Record{});
    batch.records[0].key = key;
    batch.records[0].value = value;
    return bridge::map_batch_to_iggy(batch);
  };
  const ByteSpan at_limit(big.data(), 64'000'000);
  BOOST_TEST(with(std::nullopt, at_limit).ok());
  BOOST_TEST((bridge::to_kafka_error(with(std::nullopt, big).error()) == ErrorCode::kMessageTooLarge));
  // The envelope adds 13 bytes to a value that fit on its own.
  auto wrapped = with(span_of(empty_key), at_limit);
  BOOST_REQUIRE(!wrapped.ok());
  BOOST_TEST((bridge::to_kafka_error(wrapped.error()) == ErrorCode::kMessageTooLarge));
  BOOST_TEST(with(span_of(empty_key), ByteSpan(big.data(), 64'000'000 - 13)).ok());
}

BOOST_AUTO_TEST_CASE(every_span_points_into_the_batch_or_the_arena) {
  auto batch = make_batch({{kCreateTime, std::nullopt, "plain", {}},
                           {kCreateTime, "k", std::nullopt, {{"h", "1"}}},
                           {kCreateTime, "", "enveloped", {{"x", std::nullopt}}},
                           {-1, std::nullopt, "", {}}});
  auto mapped = map_ok(*batch);
  BOOST_REQUIRE_EQUAL(mapped.messages.size(), 4u);
  const Bytes& wire = batch->wire;
  for (const auto& m : mapped.messages) {
    BOOST_TEST(inside(m.user_headers, mapped.arena));
    BOOST_TEST((inside(m.payload, mapped.arena) || inside(m.payload, wire)));
    BOOST_TEST(m.id.is_zero());
  }
  BOOST_TEST(inside(mapped.messages[0].payload, wire));
  BOOST_TEST(inside(mapped.messages[2].payload, mapped.arena));
  BOOST_TEST(mapped.envelopes == 1u);
  // Moving the result keeps every span valid (vector moves do not reallocate).
  bridge::MappedMessages moved = std::move(mapped);
  BOOST_TEST(inside(moved.messages[2].payload, moved.arena));
}

BOOST_AUTO_TEST_CASE(empty_batch_maps_to_no_messages) {
  kafka::DecodedBatch batch;
  auto mapped = bridge::map_batch_to_iggy(batch);
  BOOST_REQUIRE(mapped.ok());
  BOOST_TEST(mapped->messages.empty());
}

BOOST_AUTO_TEST_SUITE_END()
