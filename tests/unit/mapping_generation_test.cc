// Compaction's generation copies (bridge/mapping/generation_mapping.h): the live message's block
// with kib.offset and kib.horizon in Iggy's key order, read back as the same Kafka record at its
// Kafka offset, for bridge-written and native messages alike.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "bridge/errors.h"
#include "bridge/mapping/generation_mapping.h"
#include "bridge/mapping/record_mapping.h"
#include "iggy/user_headers.h"
#include "kafka/records/record_batch.h"

using namespace kib;
using namespace kib::bridge;
using iggy::HeaderKind;

namespace {

ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string str(ByteSpan s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }

iggy::MessageView view(const Bytes& payload, const Bytes& headers, uint64_t offset) {
  iggy::MessageView m;
  m.offset = offset;
  m.timestamp_us = 1'800'000'000'000'000;
  m.origin_timestamp_us = 1'700'000'000'123'000;
  m.payload = payload;
  m.user_headers = headers;
  return m;
}

std::vector<std::string> keys_of(const Bytes& block) {
  auto parsed = iggy::parse_user_headers(block);
  BOOST_REQUIRE(parsed.ok());
  std::vector<std::string> out;
  for (const auto& e : parsed.value()) out.push_back(str(e.key));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mapping_generation)

BOOST_AUTO_TEST_CASE(a_bridge_record_copied_into_a_generation_reads_back_the_same_at_its_offset) {
  // A keyed record with a header, as Produce maps it.
  const std::string key = "user-7", value = "{\"n\":1}", hv = "kcat";
  const std::vector<kafka::RecordHeader> headers = {{"source", span_of(hv)}};
  std::vector<kafka::RecordToEncode> rs = {{1'700'000'000'123, span_of(key), span_of(value), headers}};
  ByteWriter w;
  kafka::encode_record_batch(w, {}, rs);
  Bytes wire = w.take();
  kafka::DecompressionBudget budget{1u << 20};
  auto decoded = kafka::decode_record_batches(wire, budget);
  BOOST_REQUIRE(decoded.ok());
  auto mapped = map_batch_to_iggy(decoded->front());
  BOOST_REQUIRE(mapped.ok());
  const iggy::OutgoingMessage& live = mapped->messages.front();
  Bytes payload(live.payload.begin(), live.payload.end());

  auto block = generation_header_block(live.user_headers, 123456, std::nullopt);
  BOOST_REQUIRE(block.ok());
  BOOST_TEST((keys_of(*block) == std::vector<std::string>{"kafka.h.source", "kafka.key", "kafka.v", "kib.offset"}));
  auto markers = read_generation_markers(*block);
  BOOST_REQUIRE(markers.ok());
  BOOST_TEST(markers->kafka_offset == 123456);
  BOOST_TEST(markers->delete_horizon_ms == -1);

  auto record = map_iggy_to_record(view(payload, *block, 3));
  BOOST_REQUIRE(record.ok());
  BOOST_TEST(str(*record->key) == key);
  BOOST_TEST(str(*record->value) == value);
  BOOST_REQUIRE(record->headers.size() == 1u);  // kib.* never becomes a Kafka header of a bridge record
  BOOST_TEST(record->headers[0].key == "source");
  BOOST_TEST(record->timestamp_ms == 1'700'000'000'123);
}

BOOST_AUTO_TEST_CASE(a_tombstone_carries_its_horizon_and_a_native_copy_is_stripped) {
  iggy::UserHeadersBuilder native;
  BOOST_REQUIRE(native.add_string("trace", "abc").ok());
  BOOST_REQUIRE(native.add_string("zeta", "z").ok());
  const Bytes live = native.take();
  auto block = generation_header_block(live, 9, 1'000'000);
  BOOST_REQUIRE(block.ok());
  BOOST_TEST((keys_of(*block) == std::vector<std::string>{"kib.horizon", "kib.offset", "trace", "zeta"}));
  auto markers = read_generation_markers(*block);
  BOOST_REQUIRE(markers.ok());
  BOOST_TEST(markers->delete_horizon_ms == 1'000'000);
  const Bytes payload = {'p'};
  auto record = map_iggy_to_record(view(payload, *block, 0));
  BOOST_REQUIRE(record.ok());
  BOOST_TEST(record->headers.size() == 4u);
  strip_generation_headers(*record);
  BOOST_REQUIRE(record->headers.size() == 2u);
  BOOST_TEST(record->headers[0].key == "trace");
  // An empty live block (a native message without headers) takes only the cleaner's.
  auto bare = generation_header_block({}, 0, std::nullopt);
  BOOST_REQUIRE(bare.ok());
  BOOST_TEST((keys_of(*bare) == std::vector<std::string>{"kib.offset"}));
}

BOOST_AUTO_TEST_CASE(blocks_that_cannot_be_copied_or_read_are_errors) {
  iggy::UserHeadersBuilder b;
  BOOST_REQUIRE(b.add_string("kib.offset", "x").ok());
  const Bytes taken = b.take();
  BOOST_TEST(!generation_header_block(taken, 1, std::nullopt).ok());
  const Bytes garbage = {0x02, 0xff, 0xff};
  BOOST_TEST(!generation_header_block(garbage, 1, std::nullopt).ok());
  BOOST_TEST(!read_generation_markers(taken).ok());  // a String, not an Int64
  iggy::UserHeadersBuilder none;
  BOOST_REQUIRE(none.add_string("a", "b").ok());
  const Bytes no_offset = none.take();
  auto missing = read_generation_markers(no_offset);
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST((to_kafka_error(missing.error()) == kafka::ErrorCode::kUnknownServerError));
}

BOOST_AUTO_TEST_SUITE_END()
