// The Fetch path's reader (bridge/log/reader.h, read_ahead.h) against an in-memory Iggy: passes,
// long polls woken by appends or by Iggy's news, read-ahead, cancellation.
#include <boost/test/unit_test.hpp>

#include "bridge/log/reader.h"
#include "bridge/mapping/generation_mapping.h"
#include "log_services_support.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::testing;
using kafka::ErrorCode;

namespace {

struct Reading {
  TestLoop loop;
  FakeIggy iggy;
  OffsetsTable offsets{&loop.loop, iggy};
  uv::Tasks tasks{&loop.loop};
  Reader reader{&loop.loop, iggy, offsets, tasks, [](const std::string& topic, PartitionId partition,
                                                     std::function<void(Status)> cb) {
                  if (topic == "t" && partition() >= 0 && partition() < 2) return cb(ok_status());
                  cb(kafka_error(ErrorCode::kUnknownTopicOrPartition, "unknown " + topic));
                }};
  std::optional<std::vector<FetchPartitionResult>> got;

  Reading() { iggy.add_topic("t", 2); }

  void fetch(int64_t offset, int32_t max_wait_ms, int32_t partition_max_bytes = 1 << 20, uint64_t owner = 0,
             std::string topic = "t", IsolationLevel isolation = IsolationLevel::kReadUncommitted,
             iggy::IggyPool* as = nullptr) {
    got.reset();
    FetchParams params;
    params.max_wait_ms = max_wait_ms;
    params.isolation = isolation;
    params.as = as;
    reader.fetch({FetchPartitionRequest{std::move(topic), PartitionId(0), KafkaOffset(offset), partition_max_bytes}},
                 params, [this](std::vector<FetchPartitionResult> r) { got = std::move(r); }, owner);
  }
  // Serves Iggy and runs the loop until the fetch is answered.
  void wait_answer(uint64_t ms = 3000) {
    loop.run_until([&] {
      iggy.serve();
      return got.has_value();
    }, ms);
  }
  size_t records_in(const FetchPartitionResult& r) {
    // Each record of the test batches is one byte of value; count batches' records by decoding.
    kafka::DecompressionBudget budget{64u << 20};
    auto decoded = kafka::decode_record_batches(r.records, budget);
    BOOST_REQUIRE(decoded.ok());
    size_t n = 0;
    for (const auto& b : decoded.value()) n += b.records.size();
    return n;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(partition_log_reader)

BOOST_FIXTURE_TEST_CASE(a_fetch_that_may_not_wait_answers_with_what_is_there, Reading) {
  store(iggy, "t", 0, {{"a", "b", "c"}});
  fetch(0, 0);
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_REQUIRE_EQUAL(got->size(), 1u);
  const FetchPartitionResult& r = got->front();
  BOOST_TEST(kafka::to_int16(r.error) == 0);
  BOOST_TEST(r.high_watermark() == 3);
  BOOST_TEST(r.last_stable_offset() == 3);
  BOOST_TEST(r.log_start_offset() == 0);
  BOOST_TEST(records_in(r) == 3u);
  BOOST_TEST(reader.waiting_fetches() == 0u);
}

BOOST_FIXTURE_TEST_CASE(an_unknown_partition_and_an_offset_past_the_end_are_errors_at_once, Reading) {
  fetch(0, 5000, 1 << 20, 0, "nope");
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(kafka::to_int16(got->front().error) == kafka::to_int16(ErrorCode::kUnknownTopicOrPartition));
  fetch(7, 5000);
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(kafka::to_int16(got->front().error) == kafka::to_int16(ErrorCode::kOffsetOutOfRange));
}

BOOST_FIXTURE_TEST_CASE(a_long_poll_wakes_when_this_bridge_appends, Reading) {
  store(iggy, "t", 0, {{"a"}});
  fetch(1, 60'000);
  iggy.serve();
  loop.spin();
  BOOST_TEST(!got.has_value());
  BOOST_TEST(reader.waiting_fetches() == 1u);
  store(iggy, "t", 0, {{"b", "c"}});
  PartitionOffsets& p = offsets.at("t", PartitionId(0));
  note_appended(p, KafkaOffset(1), 2);
  reader.appended(p);
  iggy.serve();
  loop.spin();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(records_in(got->front()) == 2u);
  BOOST_TEST(got->front().high_watermark() == 3);
  BOOST_TEST(reader.waiting_fetches() == 0u);
}

// A committed transaction being appended holds the last stable offset (PartitionLog::hold_stable):
// read_committed sees nothing from the hold on, read_uncommitted sees everything, and a
// read_committed long poll wakes when the hold goes.
BOOST_FIXTURE_TEST_CASE(read_committed_stops_at_the_last_stable_offset_and_wakes_on_release, Reading) {
  store(iggy, "t", 0, {{"a", "b"}});
  PartitionOffsets& p = offsets.at("t", PartitionId(0));
  p.stable_holds.insert(2);  // a commit's appends start at 2
  store(iggy, "t", 0, {{"t1", "t2", "t3"}});
  fetch(0, 0, 1 << 20, 0, "t", IsolationLevel::kReadCommitted);
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(got->front().high_watermark() == 5);
  BOOST_TEST(got->front().last_stable_offset() == 2);
  BOOST_TEST(records_in(got->front()) == 2u);
  fetch(0, 0, 1 << 20, 0, "t", IsolationLevel::kReadUncommitted);
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(records_in(got->front()) == 5u);
  BOOST_TEST(got->front().last_stable_offset() == 2);  // reported at either level, as Kafka does

  fetch(2, 60'000, 1 << 20, 0, "t", IsolationLevel::kReadCommitted);
  iggy.serve();
  loop.spin();
  BOOST_TEST(!got.has_value());  // nothing stable at 2 yet: it waits
  p.stable_holds.clear();
  reader.appended(p);  // what release_stable does
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(records_in(got->front()) == 3u);
  BOOST_TEST(got->front().last_stable_offset() == 5);
}

BOOST_AUTO_TEST_CASE(the_last_stable_offset_is_the_lowest_hold_below_the_high_watermark) {
  PartitionOffsets p;
  p.high_watermark = KafkaOffset(10);
  BOOST_TEST(last_stable_offset(p)() == 10);
  p.stable_holds.insert(7);
  p.stable_holds.insert(4);
  BOOST_TEST(last_stable_offset(p)() == 4);
  p.stable_holds.erase(p.stable_holds.find(4));
  BOOST_TEST(last_stable_offset(p)() == 7);
  p.high_watermark = KafkaOffset(5);  // a deleted and recreated topic: never above the HW
  BOOST_TEST(last_stable_offset(p)() == 5);
}

BOOST_FIXTURE_TEST_CASE(a_long_poll_sees_native_appends_through_get_topic, Reading) {
  fetch(0, 60'000);
  iggy.serve();
  BOOST_TEST(!got.has_value());
  const int get_topics = iggy.get_topics;
  store(iggy, "t", 0, {{"n"}});  // a native Iggy producer: the bridge is not told
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(records_in(got->front()) == 1u);
  BOOST_TEST(iggy.get_topics > get_topics);
}

BOOST_FIXTURE_TEST_CASE(the_next_fetch_is_served_from_the_read_ahead, Reading) {
  store(iggy, "t", 0, {{"a", "b", "c"}});
  fetch(0, 0, /*partition_max_bytes=*/1);  // one record per poll
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(records_in(got->front()) == 1u);
  BOOST_TEST(reader.read_aheads().has(offsets.at("t", PartitionId(0))));
  iggy.serve();  // the read-ahead's reply arrives
  fetch(1, 0, 1);
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(records_in(got->front()) == 1u);
  BOOST_TEST(std::count(iggy.poll_offsets.begin(), iggy.poll_offsets.end(), 1) == 1);  // the read-ahead's only
}

// [principals] per_principal: a fetch polls as its principal's Iggy identity, and a read-ahead
// started for one identity is never served to another (Iggy might not let that one poll).
BOOST_FIXTURE_TEST_CASE(polls_run_as_the_fetchs_identity_and_read_aheads_serve_only_that_identity, Reading) {
  store(iggy, "t", 0, {{"a", "b", "c"}});
  auto* alice = reinterpret_cast<iggy::IggyPool*>(0x1000);  // identities are compared, never used here
  auto* bob = reinterpret_cast<iggy::IggyPool*>(0x2000);
  fetch(0, 0, /*partition_max_bytes=*/1, 0, "t", IsolationLevel::kReadUncommitted, alice);
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(records_in(got->front()) == 1u);
  iggy.serve();  // alice's read-ahead at offset 1 arrives
  BOOST_TEST(std::count(iggy.poll_identities.begin(), iggy.poll_identities.end(), alice) == 2);  // fetch + read-ahead
  fetch(1, 0, 1, 0, "t", IsolationLevel::kReadUncommitted, bob);
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(records_in(got->front()) == 1u);
  // Bob polled offset 1 himself: the read-ahead was alice's.
  BOOST_TEST(std::count(iggy.poll_offsets.begin(), iggy.poll_offsets.end(), 1) == 2);
  BOOST_TEST(std::count(iggy.poll_identities.begin(), iggy.poll_identities.end(), bob) >= 1);
  for (size_t i = 0; i < iggy.poll_identities.size(); ++i)
    if (iggy.poll_identities[i] == nullptr) BOOST_TEST(iggy.poll_offsets[i] == -1);  // only the bridge's Poll First
}

BOOST_FIXTURE_TEST_CASE(cancelled_fetches_are_dropped_unanswered_with_their_queued_polls, Reading) {
  fetch(0, 60'000, 1 << 20, /*owner=*/9);
  iggy.serve();
  BOOST_TEST(reader.waiting_fetches() == 1u);
  BOOST_TEST(std::count(iggy.poll_owners.begin(), iggy.poll_owners.end(), 9u) >= 1);
  reader.cancel_fetches(9);
  BOOST_TEST(reader.waiting_fetches() == 0u);
  BOOST_TEST(iggy.cancelled == std::vector<uint64_t>{9});
  store(iggy, "t", 0, {{"a"}});
  reader.appended(offsets.at("t", PartitionId(0)));
  iggy.serve();
  loop.spin();
  BOOST_TEST(!got.has_value());
}

BOOST_FIXTURE_TEST_CASE(stop_waiting_answers_long_polls_now_and_later_ones_do_not_wait, Reading) {
  fetch(0, 60'000);
  iggy.serve();
  BOOST_TEST(reader.waiting_fetches() == 1u);
  reader.stop_waiting();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(got->front().records.empty());
  fetch(0, 60'000);
  iggy.serve();
  loop.spin();
  BOOST_TEST(got.has_value());
}

namespace {

// The offsets of the records a fetch answered, in order.
std::vector<int64_t> offsets_in(const FetchPartitionResult& r) {
  kafka::DecompressionBudget budget{64u << 20};
  auto decoded = kafka::decode_record_batches(r.records, budget);
  BOOST_REQUIRE(decoded.ok());
  std::vector<int64_t> out;
  for (const auto& b : decoded.value())
    for (const auto& rec : b.records) out.push_back(b.offset_of(rec));
  return out;
}

// A compacted partition t-0 (docs/compaction.md): the live log holds offsets 0..9 but its
// segments below 6 are gone; the generation "kc/g1" keeps offsets 1 and 4; the cleaner point is 6.
void clean(Reading& r, std::vector<compaction::IndexEntry> index = {}) {
  store(r.iggy, "t", 0, {{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}});
  r.iggy.partition("t", 0).log_start = 6;
  r.iggy.add_topic("kc/g1", 1);
  for (int64_t kept : {1, 4}) {
    auto block = generation_header_block({}, kept, std::nullopt);
    BOOST_REQUIRE(block.ok());
    r.iggy.partition("kc/g1", 0).messages.push_back({{}, 1'700'000'000'000'000, Bytes{'k'}, std::move(block.value())});
  }
  auto head = std::make_shared<compaction::CleanedHead>();
  head->generation = 1;
  head->stream = "kc";
  head->topic = "g1";
  head->cleaner_point = 6;
  head->log_start = 0;
  head->index = std::move(index);
  set_cleaned_head(r.offsets.at("t", PartitionId(0)), std::move(head));
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(below_the_cleaner_point_reads_come_from_the_generation_with_gaps, Reading) {
  clean(*this);
  fetch(0, 0);
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  const FetchPartitionResult& r = got->front();
  BOOST_TEST(kafka::to_int16(r.error) == 0);
  BOOST_TEST(r.log_start_offset() == 0);  // unchanged by cleaning, as on Kafka
  BOOST_TEST(r.high_watermark() == 10);
  BOOST_TEST((offsets_in(r) == std::vector<int64_t>{1, 4}));
  BOOST_TEST(iggy.generation_polls == 1);
}

BOOST_FIXTURE_TEST_CASE(a_fetch_in_the_last_gap_below_the_cleaner_point_reads_the_live_log_from_it, Reading) {
  clean(*this);
  fetch(5, 0);
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(kafka::to_int16(got->front().error) == 0);
  BOOST_TEST((offsets_in(got->front()) == std::vector<int64_t>{6, 7, 8, 9}));
  // At the cleaner point and above: the live log only.
  const int generation_polls = iggy.generation_polls;
  fetch(7, 0);
  wait_answer();
  BOOST_TEST((offsets_in(got->front()) == std::vector<int64_t>{7, 8, 9}));
  BOOST_TEST(iggy.generation_polls == generation_polls);
}

BOOST_FIXTURE_TEST_CASE(the_sparse_index_picks_where_a_generation_read_starts, Reading) {
  clean(*this, {{1, 0, 0}, {4, 1, 0}});
  fetch(3, 0);  // before 4: not in the index, so from 1's block (generation offset 0)
  wait_answer();
  BOOST_TEST((offsets_in(got->front()) == std::vector<int64_t>{4}));
  BOOST_TEST((iggy.generation_poll_offsets == std::vector<int64_t>{0}));
  fetch(4, 0);
  wait_answer();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST((offsets_in(got->front()) == std::vector<int64_t>{4}));
  BOOST_TEST((iggy.generation_poll_offsets == std::vector<int64_t>{0, 1}));  // 4's own block
  for (int64_t o : iggy.poll_offsets) BOOST_TEST(o == -1);  // no live read: the generation had a record
}

BOOST_AUTO_TEST_SUITE_END()
