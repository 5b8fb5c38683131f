// Record timestamps and offsets are base + delta, both from the client. Kafka adds them as Java
// longs (wrapping); a signed C++ addition would overflow, which is undefined behaviour (UBSan
// aborted the fuzz_record_batch target on tests/fuzz/regressions/record_batch/timestamp-overflow.bin).
#include <boost/test/unit_test.hpp>

#include <limits>
#include <vector>

#include "bridge/mapping/record_mapping.h"
#include "kafka/records/record_batch.h"

using namespace kib;
using namespace kib::kafka;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

ByteSpan bytes_of(const char* s) { return {reinterpret_cast<const uint8_t*>(s), std::char_traits<char>::length(s)}; }

}  // namespace

BOOST_AUTO_TEST_SUITE(records_timestamp_wrap)

BOOST_AUTO_TEST_CASE(extreme_timestamps_encode_and_decode_as_kafka_computes_them) {
  // Base INT64_MAX, then INT64_MIN: the delta is INT64_MIN - INT64_MAX, i.e. 1 once wrapped.
  const std::vector<RecordToEncode> records{{kMax, std::nullopt, bytes_of("a"), {}},
                                            {kMin, std::nullopt, bytes_of("b"), {}}};
  ByteWriter w;
  encode_record_batch(w, BatchSettings{}, records);
  DecompressionBudget budget{1 << 20};
  auto decoded = decode_record_batches(w.buffer(), budget);
  BOOST_TEST_REQUIRE(decoded.ok());
  const DecodedBatch& b = decoded->front();
  BOOST_TEST(b.header.base_timestamp == kMax);
  BOOST_TEST(b.records[1].timestamp_delta == 1);
  BOOST_TEST(b.timestamp_of(b.records[0]) == kMax);
  BOOST_TEST(b.timestamp_of(b.records[1]) == kMin);  // INT64_MAX + 1 as a Java long
}

BOOST_AUTO_TEST_CASE(a_wrapped_timestamp_is_refused_by_the_produce_mapping) {
  const std::vector<RecordToEncode> records{{kMax, std::nullopt, bytes_of("a"), {}},
                                            {kMin, std::nullopt, bytes_of("b"), {}}};
  ByteWriter w;
  encode_record_batch(w, BatchSettings{}, records);
  DecompressionBudget budget{1 << 20};
  auto decoded = decode_record_batches(w.buffer(), budget);
  BOOST_TEST_REQUIRE(decoded.ok());
  auto mapped = bridge::map_batch_to_iggy(decoded->front());
  BOOST_TEST_REQUIRE(!mapped.ok());
  BOOST_TEST(mapped.error().code == 32u);  // INVALID_TIMESTAMP
}

BOOST_AUTO_TEST_CASE(offsets_wrap_too) {
  DecodedBatch b;
  b.header.base_offset = kMax;
  b.header.last_offset_delta = 2;
  Record r;
  r.offset_delta = 1;
  BOOST_TEST(b.header.last_offset() == kMin + 1);
  BOOST_TEST(b.offset_of(r) == kMin);
}

BOOST_AUTO_TEST_SUITE_END()
