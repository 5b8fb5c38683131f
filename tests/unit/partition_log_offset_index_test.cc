// ListOffsets below the handler (bridge/log/offset_index.h) against an in-memory Iggy: latest,
// earliest, max timestamp and the first offset at or after a time, where CreateTime does not
// grow with the offset.
#include <boost/test/unit_test.hpp>

#include "bridge/log/offset_index.h"
#include "log_services_support.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::testing;

namespace {

struct Listing {
  TestLoop loop;
  FakeIggy iggy;
  OffsetsTable offsets{&loop.loop, iggy};
  OffsetIndex index{offsets};

  Listing() {
    iggy.add_topic("t", 1);
    // Offsets 0..4; offset 2 comes from a producer whose clock runs ahead.
    store(iggy, "t", 0, {{"a", "b", "c", "d", "e"}, 0, {1000, 2000, 9000, 3000, 4000}});
    iggy.partition("t", 0).log_start = 1;  // retention removed offset 0
  }
  OffsetLookup list(TimestampMs timestamp) {
    std::optional<OffsetLookup> got;
    index.list_offsets(offsets.at("t", PartitionId(0)), timestamp, [&](OffsetLookup r) { got = r; });
    iggy.serve();
    BOOST_REQUIRE(got.has_value());
    return *got;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(partition_log_offset_index)

BOOST_FIXTURE_TEST_CASE(latest_and_earliest_come_from_the_partition_offsets, Listing) {
  BOOST_TEST(list(kLatestTimestamp).offset() == 5);
  BOOST_TEST(list(kEarliestTimestamp).offset() == 1);
  BOOST_TEST(list(kEarliestLocalTimestamp).offset() == 1);
  BOOST_TEST(list(kLatestTimestamp).timestamp() == -1);
}

BOOST_FIXTURE_TEST_CASE(max_timestamp_and_time_lookups_are_exact_for_unordered_times, Listing) {
  OffsetLookup max = list(kMaxTimestamp);
  BOOST_TEST(max.offset() == 2);
  BOOST_TEST(max.timestamp() == 9000);
  OffsetLookup at = list(TimestampMs(2500));  // the first record at or after 2500 is offset 2 (9000), not 3
  BOOST_TEST(at.offset() == 2);
  BOOST_TEST(at.timestamp() == 9000);
  OffsetLookup early = list(TimestampMs(0));  // offset 0 is gone: the earliest retained
  BOOST_TEST(early.offset() == 1);
  OffsetLookup none = list(TimestampMs(10'000));
  BOOST_TEST(kafka::to_int16(none.error) == 0);
  BOOST_TEST(none.offset() == -1);
  BOOST_TEST(none.timestamp() == -1);
}

BOOST_FIXTURE_TEST_CASE(the_index_is_extended_by_new_records_without_rescanning, Listing) {
  list(kMaxTimestamp);
  const int polls = iggy.polls;
  store(iggy, "t", 0, {{"f"}, 0, {20'000}});
  OffsetLookup max = list(kMaxTimestamp);
  BOOST_TEST(max.offset() == 5);
  BOOST_TEST(max.timestamp() == 20'000);
  // Poll First for the log start, then one poll from offset 5 on.
  BOOST_TEST(iggy.polls == polls + 2);
  BOOST_TEST(iggy.poll_offsets.back() == 5);
}

BOOST_FIXTURE_TEST_CASE(iggy_errors_are_answered_as_errors, Listing) {
  iggy.fail_get_topic = true;
  BOOST_TEST(kafka::to_int16(list(kLatestTimestamp).error) != 0);
  iggy.fail_get_topic = false;
  iggy.fail_polls = true;
  BOOST_TEST(kafka::to_int16(list(kMaxTimestamp).error) != 0);
}

BOOST_AUTO_TEST_SUITE_END()
