// The per-partition time index behind ListOffsets by timestamp and max timestamp
// (bridge/log/time_index.h): exact although CreateTime need not grow with the offset.
#include <boost/test/unit_test.hpp>

#include "bridge/log/time_index.h"

using namespace kib::bridge;

BOOST_AUTO_TEST_SUITE(partition_log_time_index)

BOOST_AUTO_TEST_CASE(an_empty_index_finds_nothing_and_has_no_max) {
  TimeIndex idx;
  idx.reset(5);
  BOOST_TEST(idx.next() == 5);
  BOOST_TEST(!idx.chunk_start_for(0).has_value());
  BOOST_TEST(idx.max_timestamp() == -1);
  BOOST_TEST(idx.max_timestamp_offset() == -1);
}

BOOST_AUTO_TEST_CASE(increasing_timestamps_point_at_the_chunk_holding_the_answer) {
  TimeIndex idx;
  idx.reset(0);
  const auto n = static_cast<int64_t>(3 * TimeIndex::kChunkMessages);
  for (int64_t o = 0; o < n; ++o) idx.add(o, 1000 + o);
  BOOST_TEST(idx.entries() == 3u);
  BOOST_TEST(idx.next() == n);
  BOOST_TEST(*idx.chunk_start_for(0) == 0);
  BOOST_TEST(*idx.chunk_start_for(1000 + 1500) == static_cast<int64_t>(TimeIndex::kChunkMessages));
  BOOST_TEST(*idx.chunk_start_for(1000 + n - 1) == static_cast<int64_t>(2 * TimeIndex::kChunkMessages));
  BOOST_TEST(!idx.chunk_start_for(1000 + n).has_value());
  BOOST_TEST(idx.max_timestamp() == 1000 + n - 1);
  BOOST_TEST(idx.max_timestamp_offset() == n - 1);
}

BOOST_AUTO_TEST_CASE(an_early_record_from_the_future_is_found_first_like_kafka) {
  TimeIndex idx;
  idx.reset(0);
  idx.add(0, 100);
  idx.add(1, 9000);  // producer clock ahead
  for (int64_t o = 2; o < 2500; ++o) idx.add(o, 200 + o);
  // First record with timestamp >= 5000 is offset 1, in chunk 0.
  BOOST_TEST(*idx.chunk_start_for(5000) == 0);
  BOOST_TEST(idx.max_timestamp() == 9000);
  BOOST_TEST(idx.max_timestamp_offset() == 1);
}

BOOST_AUTO_TEST_CASE(the_max_timestamp_keeps_its_first_offset_on_ties) {
  TimeIndex idx;
  idx.reset(10);
  idx.add(10, 50);
  idx.add(11, 70);
  idx.add(12, 70);
  BOOST_TEST(idx.max_timestamp_offset() == 11);
}

BOOST_AUTO_TEST_CASE(extension_is_incremental_and_ignores_rescanned_offsets) {
  TimeIndex idx;
  idx.reset(0);
  idx.add(0, 10);
  idx.add(1, 20);
  idx.add(1, 99);  // overlap: already indexed
  BOOST_TEST(idx.max_timestamp() == 20);
  idx.advance_to(5);  // offsets 2..4 unreadable
  BOOST_TEST(idx.next() == 5);
  idx.add(5, 30);
  BOOST_TEST(idx.next() == 6);
  BOOST_TEST(*idx.chunk_start_for(25) == 0);
  idx.reset(3);
  BOOST_TEST(idx.next() == 3);
  BOOST_TEST(idx.entries() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
