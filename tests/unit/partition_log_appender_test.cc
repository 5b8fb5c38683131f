// The Produce path's appender (bridge/log/appender.h) against an in-memory Iggy: one send at a
// time per partition, coalescing of what queued meanwhile, the idempotent head checks, and the
// "appended" signal upward.
#include <boost/test/unit_test.hpp>

#include "bridge/log/appender.h"
#include "log_services_support.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::testing;
using kafka::ErrorCode;

namespace {

struct Appending {
  TestLoop loop;
  FakeIggy iggy;
  FakeRegistry registry;
  OffsetsTable offsets{&loop.loop, iggy};
  Idempotence idempotence{&registry};
  std::vector<int64_t> appended_at;  // high watermark at each "appended" signal
  Appender appender{iggy, offsets, idempotence,
                    [this](PartitionOffsets& p) { appended_at.push_back(p.high_watermark()); }};
  std::vector<ProduceResult> results;

  Appending() { iggy.add_topic("t", 1); }
  PartitionOffsets& p() { return offsets.at("t", PartitionId(0)); }
};

std::shared_ptr<AppendJob> sized_job(uint64_t bytes, uint64_t min_us, uint64_t max_us, bool unknown = false) {
  auto j = std::make_shared<AppendJob>();
  j->send_bytes = bytes;
  j->min_origin_us = min_us;
  j->max_origin_us = max_us;
  j->unknown_origin = unknown;
  return j;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(partition_log_appender)

BOOST_AUTO_TEST_CASE(coalescing_stops_at_the_send_size_the_timestamp_span_unknown_origins_and_refusals) {
  auto all = [](AppendJob&) { return true; };
  std::deque<std::shared_ptr<AppendJob>> q{sized_job(100, 10, 20), sized_job(100, 5, 30), sized_job(100, 15, 15)};
  BOOST_TEST(coalesced_jobs(q, all) == 3u);
  BOOST_TEST(coalesced_jobs(q, [&](AppendJob& j) { return &j != q[2].get(); }) == 2u);
  std::deque<std::shared_ptr<AppendJob>> big{sized_job(kMaxCoalescedSendBytes - 10, 0, 0), sized_job(11, 0, 0)};
  BOOST_TEST(coalesced_jobs(big, all) == 1u);
  std::deque<std::shared_ptr<AppendJob>> span{sized_job(1, 0, 0), sized_job(1, kMaxSendSpanUs + 1, kMaxSendSpanUs + 1)};
  BOOST_TEST(coalesced_jobs(span, all) == 1u);
  std::deque<std::shared_ptr<AppendJob>> head_unknown{sized_job(1, 0, 0, true), sized_job(1, 0, 0)};
  BOOST_TEST(coalesced_jobs(head_unknown, all) == 1u);
  std::deque<std::shared_ptr<AppendJob>> next_unknown{sized_job(1, 0, 0), sized_job(1, 0, 0, true)};
  BOOST_TEST(coalesced_jobs(next_unknown, all) == 1u);
  // Only jobs of one Iggy identity (a principal's own pool) share a send.
  std::deque<std::shared_ptr<AppendJob>> identities{sized_job(1, 0, 0), sized_job(1, 0, 0), sized_job(1, 0, 0)};
  identities[2]->as = reinterpret_cast<iggy::IggyPool*>(0x1000);
  BOOST_TEST(coalesced_jobs(identities, all) == 2u);
}

BOOST_FIXTURE_TEST_CASE(a_send_runs_as_its_jobs_identity, Appending) {
  auto* alice = reinterpret_cast<iggy::IggyPool*>(0x1000);  // compared, never used here
  auto job = make_job({{"a"}}, &results);
  job->as = alice;
  appender.append(p(), job);
  iggy.serve(2);  // GetTopic, Poll First: the send is in Iggy
  auto bridge_job = make_job({{"b"}}, &results);
  appender.append(p(), bridge_job);
  iggy.serve();
  BOOST_REQUIRE_EQUAL(results.size(), 2u);
  BOOST_TEST((iggy.send_identities == std::vector<iggy::IggyPool*>{alice, nullptr}));
}

BOOST_FIXTURE_TEST_CASE(appends_queued_behind_a_send_go_together_in_order, Appending) {
  appender.append(p(), make_job({{"a", "b"}}, &results));
  BOOST_TEST(iggy.get_topics == 1);  // the offsets are loaded first
  iggy.serve(2);                     // GetTopic, Poll First: now the first send is in Iggy
  BOOST_TEST(iggy.sends == 1);
  BOOST_TEST(iggy.pending() == 1u);
  appender.append(p(), make_job({{"c"}}, &results));
  appender.append(p(), make_job({{"d", "e", "f"}}, &results));
  BOOST_TEST(iggy.sends == 1);  // one send at a time
  BOOST_TEST(appender.queued(p()) == 3u);
  iggy.serve();
  BOOST_REQUIRE_EQUAL(results.size(), 3u);
  BOOST_TEST(iggy.sends == 2);
  BOOST_TEST((iggy.send_sizes == std::vector<size_t>{2, 4}));
  BOOST_TEST(results[0].base_offset() == 0);
  BOOST_TEST(results[1].base_offset() == 2);
  BOOST_TEST(results[2].base_offset() == 3);
  for (const auto& r : results) BOOST_TEST(kafka::to_int16(r.error) == 0);
  BOOST_TEST((appended_at == std::vector<int64_t>{2, 6}));
  BOOST_TEST(p().high_watermark() == 6);
  BOOST_TEST(appender.queued(p()) == 0u);
}

BOOST_FIXTURE_TEST_CASE(a_failed_send_answers_its_jobs_and_the_next_append_is_sent, Appending) {
  appender.append(p(), make_job({{"a"}}, &results));
  iggy.fail_sends = true;
  iggy.serve();
  BOOST_REQUIRE_EQUAL(results.size(), 1u);
  BOOST_TEST(kafka::to_int16(results[0].error) != 0);
  BOOST_TEST(appended_at.empty());
  iggy.fail_sends = false;
  appender.append(p(), make_job({{"b"}}, &results));
  iggy.serve();
  BOOST_REQUIRE_EQUAL(results.size(), 2u);
  BOOST_TEST(kafka::to_int16(results[1].error) == 0);
  BOOST_TEST(results[1].base_offset() == 0);
  BOOST_TEST(iggy.get_topics == 1);  // the offsets are loaded once
}

BOOST_FIXTURE_TEST_CASE(idempotent_batches_are_stamped_recorded_and_their_retries_are_duplicates, Appending) {
  appender.append(p(), make_job({{"a", "b"}, 1'700'000'000'000, {}, 42, 0, 0}, &results));
  iggy.serve();
  BOOST_REQUIRE_EQUAL(results.size(), 1u);
  BOOST_TEST(results[0].base_offset() == 0);
  BOOST_REQUIRE_EQUAL(registry.recorded.size(), 1u);
  BOOST_TEST(registry.recorded[0].producer_id == 42);
  BOOST_TEST(registry.recorded[0].count == 2);
  auto seq = parse_producer_message_id(iggy.partition("t", 0).messages[1].id);
  BOOST_REQUIRE(seq.has_value());
  BOOST_TEST(seq->producer_id() == 42);
  BOOST_TEST(seq->sequence == 1);
  // The retry: the registry now knows the range.
  appender.append(p(), make_job({{"a", "b"}, 1'700'000'000'000, {}, 42, 0, 0}, &results));
  iggy.serve();
  BOOST_REQUIRE_EQUAL(results.size(), 2u);
  BOOST_TEST(results[1].base_offset() == 0);
  BOOST_TEST(iggy.sends == 1);
  BOOST_TEST(iggy.partition("t", 0).messages.size() == 2u);
}

BOOST_FIXTURE_TEST_CASE(after_a_lost_send_the_tail_is_read_before_the_retry_so_it_is_not_stored_twice, Appending) {
  appender.append(p(), make_job({{"a"}}, &results));  // loads the offsets
  iggy.serve();
  appender.append(p(), make_job({{"x", "y"}, 1'700'000'000'000, {}, 7, 0, 0}, &results));
  iggy.serve();  // tail recovery (no producer batch there yet), then the send: offsets 1, 2
  BOOST_TEST(iggy.sends == 2);
  BOOST_REQUIRE_EQUAL(registry.recorded.size(), 1u);
  // The next batch's send fails with its outcome unknown...
  iggy.fail_sends = true;
  appender.append(p(), make_job({{"x", "y"}, 1'700'000'000'000, {}, 7, 0, 2}, &results));
  iggy.serve();
  BOOST_TEST(registry.aborted == std::vector<int32_t>{2});
  BOOST_REQUIRE_EQUAL(results.size(), 3u);
  BOOST_TEST(kafka::to_int16(results[2].error) != 0);
  // ...and Iggy did store it, at offsets 3 and 4.
  FakeIggy::Stored m;
  m.id = producer_message_id(ProducerId(7), ProducerEpoch(0), 2, true);
  iggy.partition("t", 0).messages.push_back(m);
  m.id = producer_message_id(ProducerId(7), ProducerEpoch(0), 3, false);
  iggy.partition("t", 0).messages.push_back(m);
  iggy.fail_sends = false;
  const int sends_before = iggy.sends;
  appender.append(p(), make_job({{"x", "y"}, 1'700'000'000'000, {}, 7, 0, 2}, &results));  // the client's retry
  iggy.serve();
  BOOST_TEST(iggy.sends == sends_before);  // answered from the recovered tail, not stored twice
  BOOST_REQUIRE_EQUAL(results.size(), 4u);
  BOOST_TEST(kafka::to_int16(results[3].error) == 0);
  BOOST_TEST(results[3].base_offset() == 3);
  BOOST_REQUIRE_EQUAL(registry.recorded.size(), 2u);
  BOOST_TEST(registry.recorded[1].first_sequence == 2);
  BOOST_TEST(registry.recorded[1].base_offset == 3);
  BOOST_TEST(p().high_watermark() == 5);
}

BOOST_FIXTURE_TEST_CASE(a_refused_verdict_answers_the_head_and_the_queue_moves_on, Appending) {
  registry.verdicts[5] = SequenceCheck{SequenceVerdict::kOutOfOrder, kNoOffset};
  appender.append(p(), make_job({{"a"}, 1'700'000'000'000, {}, 3, 0, 5}, &results));
  appender.append(p(), make_job({{"b"}}, &results));
  iggy.serve();
  BOOST_REQUIRE_EQUAL(results.size(), 2u);
  BOOST_TEST(kafka::to_int16(results[0].error) == kafka::to_int16(ErrorCode::kOutOfOrderSequenceNumber));
  BOOST_TEST(kafka::to_int16(results[1].error) == 0);
  BOOST_TEST(iggy.partition("t", 0).messages.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
