// named_type and the ids built on it: values compare, hash and print like their number, and
// nothing converts implicitly — not to the number, not from it, not between ids.
#include <boost/test/unit_test.hpp>

#include <concepts>
#include <cstdint>
#include <functional>
#include <set>
#include <sstream>
#include <type_traits>
#include <unordered_set>

#include <fmt/format.h>

#include "common/ids.h"
#include "common/named_type.h"

using kib::KafkaOffset;
using kib::PartitionId;
using kib::ProducerEpoch;
using kib::ProducerId;
using kib::TimestampMs;
using kib::TimestampUs;

// No implicit conversion between tags, to the number or from it.
static_assert(!std::is_convertible_v<KafkaOffset, PartitionId>);
static_assert(!std::is_convertible_v<PartitionId, KafkaOffset>);
static_assert(!std::is_convertible_v<KafkaOffset, ProducerId>);  // same int64_t, still distinct
static_assert(!std::is_convertible_v<ProducerId, KafkaOffset>);
static_assert(!std::is_convertible_v<TimestampMs, TimestampUs>);
static_assert(!std::is_convertible_v<TimestampUs, TimestampMs>);
static_assert(!std::is_convertible_v<KafkaOffset, int64_t>);
static_assert(!std::is_convertible_v<int64_t, KafkaOffset>);
static_assert(!std::is_convertible_v<int, PartitionId>);
static_assert(!std::is_convertible_v<PartitionId, int32_t>);
static_assert(!std::is_convertible_v<ProducerEpoch, int16_t>);
// Not even explicitly between tags: going from one to another spells out the number.
static_assert(!std::is_constructible_v<PartitionId, KafkaOffset>);
static_assert(!std::is_constructible_v<KafkaOffset, ProducerId>);
static_assert(!std::is_constructible_v<TimestampUs, TimestampMs>);
static_assert(std::is_constructible_v<KafkaOffset, int64_t>);
static_assert(std::is_trivially_copyable_v<KafkaOffset> && sizeof(KafkaOffset) == sizeof(int64_t));
static_assert(sizeof(ProducerEpoch) == sizeof(int16_t));

// Arithmetic only where it means something: an offset moves by a count, two offsets are a count
// apart; partition ids, producer ids and timestamps do not add.
template <typename A, typename B>
concept Addable = requires(A a, B b) { a + b; };
template <typename A, typename B>
concept Subtractable = requires(A a, B b) { a - b; };
static_assert(Addable<KafkaOffset, int64_t>);
static_assert(std::same_as<decltype(KafkaOffset(1) + int64_t{2}), KafkaOffset>);
static_assert(std::same_as<decltype(KafkaOffset(3) - KafkaOffset(1)), int64_t>);
static_assert(!Addable<KafkaOffset, KafkaOffset>);
static_assert(!Addable<KafkaOffset, PartitionId>);
static_assert(!Subtractable<KafkaOffset, PartitionId>);
static_assert(!Addable<PartitionId, int32_t>);
static_assert(!Addable<ProducerId, int64_t>);
static_assert(!Addable<TimestampMs, int64_t>);
static_assert(!Addable<TimestampMs, TimestampUs>);
// Ids of different tags do not compare either.
template <typename A, typename B>
concept EqualityComparable = requires(A a, B b) { a == b; };
static_assert(EqualityComparable<KafkaOffset, KafkaOffset>);
static_assert(!EqualityComparable<KafkaOffset, ProducerId>);
static_assert(!EqualityComparable<KafkaOffset, int64_t>);
static_assert(!std::totally_ordered_with<KafkaOffset, PartitionId>);
static_assert(std::totally_ordered<KafkaOffset>);

// Usable in constant expressions.
static_assert(KafkaOffset(5) + 2 == KafkaOffset(7));
static_assert(KafkaOffset(5) - KafkaOffset(2) == 3);
static_assert(kib::kNoOffset() == -1 && kib::kNoProducerId() == -1 && kib::kNoProducerEpoch() == -1);
static_assert(KafkaOffset{}() == 0);

BOOST_AUTO_TEST_SUITE(common_named_type)

BOOST_AUTO_TEST_CASE(equality_and_ordering_follow_the_number) {
  BOOST_TEST(KafkaOffset(3) == KafkaOffset(3));
  BOOST_TEST(KafkaOffset(3) != KafkaOffset(4));
  BOOST_TEST(KafkaOffset(-1) < KafkaOffset(0));
  BOOST_TEST(PartitionId(2) > PartitionId(1));
  BOOST_TEST(ProducerEpoch(-1) < ProducerEpoch(0));
  BOOST_TEST(TimestampUs(1) <= TimestampUs(1));
  BOOST_TEST((KafkaOffset(1) <=> KafkaOffset(2) == std::strong_ordering::less));
  std::set<PartitionId> ordered{PartitionId(2), PartitionId(0), PartitionId(1)};
  BOOST_TEST(ordered.begin()->value() == 0);
  BOOST_TEST(ordered.rbegin()->value() == 2);
}

BOOST_AUTO_TEST_CASE(access_and_arithmetic) {
  KafkaOffset o(41);
  BOOST_TEST(o() == 41);
  BOOST_TEST(o.value() == 41);
  ++o;
  BOOST_TEST(o() == 42);
  o += 8;
  BOOST_TEST(o() == 50);
  BOOST_TEST((o - 10)() == 40);
  BOOST_TEST(o - KafkaOffset(45) == 5);
}

BOOST_AUTO_TEST_CASE(hash_is_the_numbers_hash) {
  BOOST_TEST(std::hash<KafkaOffset>{}(KafkaOffset(12345)) == std::hash<int64_t>{}(12345));
  BOOST_TEST(std::hash<PartitionId>{}(PartitionId(7)) == std::hash<int32_t>{}(7));
  std::unordered_set<ProducerId> ids{ProducerId(1), ProducerId(2), ProducerId(1)};
  BOOST_TEST(ids.size() == 2u);
  BOOST_TEST(ids.count(ProducerId(2)) == 1u);
}

BOOST_AUTO_TEST_CASE(formats_as_the_number) {
  BOOST_TEST(fmt::format("{}", KafkaOffset(-1)) == "-1");
  BOOST_TEST(fmt::format("{:>5}", PartitionId(3)) == "    3");
  BOOST_TEST(fmt::format("{:x}", ProducerId(255)) == "ff");
  BOOST_TEST(fmt::format("{}", ProducerEpoch(7)) == "7");
  BOOST_TEST(fmt::format("{}/{}", TimestampMs(1700000000000), TimestampUs(5)) == "1700000000000/5");
  std::ostringstream os;
  os << KafkaOffset(9) << ' ' << ProducerEpoch(-1);
  BOOST_TEST(os.str() == "9 -1");
}

BOOST_AUTO_TEST_CASE(ms_and_us_convert_only_by_name) {
  BOOST_TEST(kib::to_iggy_us(TimestampMs(1700000000123))() == 1700000000123000u);
  BOOST_TEST(kib::to_kafka_ms(TimestampUs(1700000000123999))() == 1700000000123);
  BOOST_TEST(kib::to_kafka_ms(kib::to_iggy_us(TimestampMs(0)))() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
