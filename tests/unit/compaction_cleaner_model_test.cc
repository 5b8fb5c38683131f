// The cleaner's decisions without I/O (bridge/compaction/cleaner_model.h), with the cases of
// Kafka's LogCleanerTest / LogCleanerManagerTest / SkimpyOffsetMapTest that apply to them.
#include <boost/test/unit_test.hpp>

#include <array>
#include <map>
#include <string>
#include <vector>

#include "bridge/compaction/cleaner_model.h"

using namespace kib;
using namespace kib::bridge::compaction;

namespace {

ByteSpan span_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

CleanerPolicy compact() {
  CleanerPolicy p;
  p.compact = true;
  return p;
}

// A log of (key, value-or-tombstone) records at offsets 0, 1, 2...; the map built over
// [0, end) as a pass's first read builds it.
struct Log {
  std::vector<std::string> keys;
  std::vector<bool> tombstones;
  void add(const std::string& k, bool tombstone = false) {
    keys.push_back(k);
    tombstones.push_back(tombstone);
  }
  CleanRecord at(size_t i, int64_t ts = 0) const {
    CleanRecord r;
    r.offset = static_cast<int64_t>(i);
    r.timestamp_ms = ts;
    r.key = span_of(keys[i]);
    r.tombstone = tombstones[i];
    return r;
  }
  void map(OffsetMap& m, size_t end) const {
    for (size_t i = 0; i < end; ++i) BOOST_REQUIRE(m.put(span_of(keys[i]), static_cast<int64_t>(i)));
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(compaction_cleaner_model)

BOOST_AUTO_TEST_CASE(only_the_latest_record_of_each_key_is_kept) {
  // LogCleanerTest.testCleanSegments in small: keys 0..2 written three times over.
  Log log;
  for (int round = 0; round < 3; ++round)
    for (int k = 0; k < 3; ++k) log.add("k" + std::to_string(k));
  OffsetMap map(1 << 16);
  log.map(map, log.keys.size());
  PassContext c{&map, 1000, 0, compact()};
  std::vector<int64_t> kept_offsets;
  for (size_t i = 0; i < log.keys.size(); ++i)
    if (kept(verdict(c, log.at(i)))) kept_offsets.push_back(static_cast<int64_t>(i));
  BOOST_TEST(kept_offsets == (std::vector<int64_t>{6, 7, 8}));
  BOOST_TEST((verdict(c, log.at(0)) == Verdict::kSuperseded));
}

BOOST_AUTO_TEST_CASE(records_beyond_the_mapped_range_are_kept_as_they_are) {
  // A full map stops the pass early: what it did not map stays for the next pass.
  Log log;
  for (int i = 0; i < 6; ++i) log.add("same");
  OffsetMap map(1 << 16);
  log.map(map, 3);  // mapped [0, 3)
  PassContext c{&map, 0, 0, compact()};
  BOOST_TEST((verdict(c, log.at(0)) == Verdict::kSuperseded));
  BOOST_TEST((verdict(c, log.at(2)) == Verdict::kKeep));
  BOOST_TEST((verdict(c, log.at(4)) == Verdict::kKeep));
}

BOOST_AUTO_TEST_CASE(tombstones_get_a_horizon_then_go_after_delete_retention) {
  // KIP-534: the first pass keeps a tombstone and sets its delete horizon; a pass after the
  // horizon drops it; one before keeps it.
  Log log;
  log.add("a");
  log.add("a", /*tombstone=*/true);
  OffsetMap map(1 << 16);
  log.map(map, 2);
  CleanerPolicy p = compact();
  p.delete_retention_ms = 100;
  PassContext first{&map, 1000, 0, p};
  BOOST_TEST((verdict(first, log.at(0)) == Verdict::kSuperseded));
  BOOST_TEST((verdict(first, log.at(1)) == Verdict::kKeepNewTombstone));
  CleanRecord t = log.at(1);
  t.delete_horizon_ms = 1000 + p.delete_retention_ms;
  PassContext before{&map, 1099, 0, p};
  BOOST_TEST((verdict(before, t) == Verdict::kKeep));
  PassContext after{&map, 1100, 0, p};
  BOOST_TEST((verdict(after, t) == Verdict::kExpiredTombstone));
}

BOOST_AUTO_TEST_CASE(placeholders_keyless_records_retention_and_the_log_start) {
  OffsetMap map(1 << 16);
  const std::string k = "k";
  map.put(span_of(k), 10);
  CleanerPolicy p = compact();
  PassContext c{&map, 10'000, 3, p};
  CleanRecord r;
  r.offset = 5;
  r.aborted_placeholder = true;
  BOOST_TEST((verdict(c, r) == Verdict::kAborted));
  r.aborted_placeholder = false;
  BOOST_TEST((verdict(c, r) == Verdict::kNoKey));  // written before the topic was compacted
  r.offset = 2;
  r.key = span_of(k);
  BOOST_TEST((verdict(c, r) == Verdict::kRetention));  // below the log start (a DeleteRecords floor)
  // compact,delete: older than retention.ms goes even if it is its key's latest.
  p.del = true;
  p.retention_ms = 1000;
  PassContext cd{&map, 10'000, 0, p};
  r.offset = 10;
  r.timestamp_ms = 8'999;
  BOOST_TEST((verdict(cd, r) == Verdict::kRetention));
  r.timestamp_ms = 9'000;
  BOOST_TEST((verdict(cd, r) == Verdict::kKeep));
}

BOOST_AUTO_TEST_CASE(offset_map_fills_to_its_load_factor_and_then_refuses_new_keys) {
  OffsetMap map(24 * 100);  // 100 slots, 90 entries
  BOOST_TEST(map.capacity() == 90u);
  std::vector<std::string> keys;
  for (int i = 0; i < 100; ++i) keys.push_back("key-" + std::to_string(i));
  for (int i = 0; i < 90; ++i) BOOST_REQUIRE(map.put(span_of(keys[i]), i));
  BOOST_TEST(!map.put(span_of(keys[90]), 90));
  BOOST_TEST(map.put(span_of(keys[3]), 95));  // a known key is updated when full
  BOOST_TEST(map.get(span_of(keys[3])) == 95);
  BOOST_TEST(map.get(span_of(keys[4])) == 4);
  BOOST_TEST(map.get(span_of(keys[99])) == -1);
  BOOST_TEST(map.latest_offset() == 95);
  map.clear();
  BOOST_TEST(map.size() == 0u);
  BOOST_TEST(map.get(span_of(keys[3])) == -1);
}

BOOST_AUTO_TEST_CASE(virtual_active_segment_rolls_as_kafka_rolls) {
  CleanerPolicy p = compact();
  p.segment_bytes = 1000;
  p.segment_ms = 60'000;
  p.max_compaction_lag_ms = 30'000;  // a compacted log rolls by the smaller of the two
  BOOST_TEST(roll_ms(p) == 30'000);
  VirtualSegment s;
  s.on_append(p, 0, 600, 0);
  BOOST_TEST(s.start == 0);
  s.on_append(p, 10, 400, 1);  // exactly full: still fits
  BOOST_TEST(s.start == 0);
  s.on_append(p, 20, 1, 2);  // would not fit: rolls at this append's base offset
  BOOST_TEST(s.start == 20);
  BOOST_TEST(s.bytes == 1u);
  s.on_append(p, 21, 1, 30'002);  // 30,000 ms after its first append: not yet older
  BOOST_TEST(s.start == 20);
  s.on_append(p, 22, 1, 30'003);
  BOOST_TEST(s.start == 22);
}

BOOST_AUTO_TEST_CASE(eligibility_by_dirty_ratio_max_lag_and_the_active_segment) {
  CleanerPolicy p = compact();
  PartitionCleanState s;
  s.cleaner_point = 100;
  s.high_watermark = 300;
  s.active.start = 250;
  s.clean_bytes = 600;
  s.dirty_bytes = 400;
  BOOST_TEST((eligibility(p, s, 0) == Eligibility::kBelowRatio));  // 0.4 < 0.5
  s.dirty_bytes = 600;
  BOOST_TEST((eligibility(p, s, 0) == Eligibility::kDirtyRatio));
  s.dirty_bytes = 10;
  p.max_compaction_lag_ms = 1000;
  s.first_dirty_append_ms = 0;
  BOOST_TEST((eligibility(p, s, 1001) == Eligibility::kMaxLag));
  s.active.start = 100;  // all dirty records are in the active segment
  BOOST_TEST((eligibility(p, s, 1001) == Eligibility::kNothingToClean));
  p.compact = false;
  BOOST_TEST((eligibility(p, s, 0) == Eligibility::kNotCompacted));
  BOOST_TEST(dirty_ratio(PartitionCleanState{}) == 0.0);
}

BOOST_AUTO_TEST_CASE(cleanable_end_is_the_smallest_bound_never_below_the_cleaner_point) {
  PartitionCleanState s;
  s.cleaner_point = 50;
  s.high_watermark = 300;
  s.active.start = 250;
  BOOST_TEST(cleanable_end(s, std::nullopt) == 250);
  BOOST_TEST(cleanable_end(s, 120) == 120);  // min.compaction.lag.ms
  s.high_watermark = 200;                    // the last stable offset of Iggy's side
  BOOST_TEST(cleanable_end(s, std::nullopt) == 200);
  BOOST_TEST(cleanable_end(s, 10) == 50);
}

BOOST_AUTO_TEST_CASE(sparse_index_blocks_and_lookups) {
  SparseIndexBuilder b(3);
  const std::vector<std::pair<int64_t, int64_t>> kept = {{2, 50}, {5, 10}, {9, 70}, {10, 20}, {14, 30}, {20, 90}, {21, 5}};
  for (auto [o, ts] : kept) b.add(o, ts);
  const std::vector<IndexEntry> want = {{2, 0, 70}, {10, 3, 90}, {21, 6, 5}};
  BOOST_TEST((b.entries() == want));
  BOOST_TEST(!index_floor(b.entries(), 1).has_value());
  BOOST_TEST(index_floor(b.entries(), 2)->generation_offset == 0u);
  BOOST_TEST(index_floor(b.entries(), 9)->generation_offset == 0u);
  BOOST_TEST(index_floor(b.entries(), 12)->generation_offset == 3u);
  BOOST_TEST(index_floor(b.entries(), 1000)->generation_offset == 6u);
  BOOST_TEST(index_for_timestamp(b.entries(), 71)->kafka_offset == 10);
  BOOST_TEST(index_for_timestamp(b.entries(), 60)->kafka_offset == 2);
  BOOST_TEST(!index_for_timestamp(b.entries(), 91).has_value());
}

BOOST_AUTO_TEST_CASE(recovery_of_each_pass_state_and_names) {
  BOOST_TEST((recovery_for(PassState::kWriting) == Recovery::kDropNextGeneration));
  BOOST_TEST((recovery_for(PassState::kCommitted) == Recovery::kFinishRetire));
  BOOST_TEST((recovery_for(PassState::kDone) == Recovery::kNothing));
  for (PassState s : {PassState::kWriting, PassState::kCommitted, PassState::kDone})
    BOOST_TEST((pass_state_from(pass_state_name(s)) == s));
  BOOST_TEST(!pass_state_from("bogus").has_value());
  std::array<uint8_t, 16> id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(i * 17);
  BOOST_TEST(generation_topic_name(id, 3, 12) == "00112233445566778899aabbccddeeff-3-12");
}

BOOST_AUTO_TEST_SUITE_END()
