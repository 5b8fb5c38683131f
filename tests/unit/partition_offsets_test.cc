// The bottom of the log (bridge/log/partition_offsets.h): high watermark and log start per
// partition, from GetTopic, polls and the bridge's own appends.
#include <boost/test/unit_test.hpp>

#include "bridge/log/partition_offsets.h"
#include "log_services_support.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::testing;

BOOST_AUTO_TEST_SUITE(partition_offsets)

BOOST_AUTO_TEST_CASE(get_topic_tells_an_empty_partition_from_one_message_at_zero) {
  iggy::PartitionInfo empty;
  BOOST_TEST(high_watermark_of(empty)() == 0);
  iggy::PartitionInfo one;
  one.messages_count = 1;
  BOOST_TEST(high_watermark_of(one)() == 1);
  iggy::PartitionInfo many;
  many.messages_count = 5;
  many.current_offset = 9;
  BOOST_TEST(high_watermark_of(many)() == 10);
}

BOOST_AUTO_TEST_CASE(a_reply_older_than_an_own_append_never_lowers_the_high_watermark) {
  PartitionOffsets p;
  p.high_watermark = KafkaOffset(10);
  p.log_start = KafkaOffset(4);
  iggy::PartitionInfo info;
  info.messages_count = 3;
  info.current_offset = 2;  // hw 3: purged and refilled, or a reply from before our appends
  info.size_bytes = 300;
  apply_partition_info(p, info, /*appended_since=*/true);
  BOOST_TEST(p.high_watermark() == 10);
  apply_partition_info(p, info, /*appended_since=*/false);
  BOOST_TEST(p.high_watermark() == 3);
  BOOST_TEST(p.log_start() == 3);  // never above the end
  BOOST_TEST(p.avg_message_bytes == 100u);
}

BOOST_AUTO_TEST_CASE(polls_and_appends_only_raise_the_high_watermark) {
  PartitionOffsets p;
  p.high_watermark = KafkaOffset(5);
  iggy::PolledMessages empty;
  observe_poll(p, empty);
  BOOST_TEST(p.high_watermark() == 5);
  iggy::PolledMessages r;
  r.current_offset = 7;
  r.messages.resize(2);
  r.messages[0].offset = 2;
  r.messages[1].offset = 3;
  r.payload_bytes = 400;
  observe_poll(p, r);
  BOOST_TEST(p.high_watermark() == 8);
  BOOST_TEST(p.avg_message_bytes == 200u);
  note_appended(p, KafkaOffset(20), 4);
  BOOST_TEST(p.high_watermark() == 24);
  BOOST_TEST(p.appends_done == 1u);
  note_appended(p, kNoOffset, 0);  // offset not reported
  BOOST_TEST(p.high_watermark() == 24);
  BOOST_TEST(p.appends_done == 2u);
}

BOOST_AUTO_TEST_CASE(concurrent_refreshes_share_one_get_topic_and_one_poll_first) {
  TestLoop loop;
  FakeIggy iggy;
  iggy.add_topic("t", 2);
  for (int i = 0; i < 6; ++i) iggy.partition("t", 1).messages.push_back({});
  iggy.partition("t", 1).log_start = 2;
  OffsetsTable offsets(&loop.loop, iggy);
  PartitionOffsets& p = offsets.at("t", PartitionId(1));
  BOOST_TEST(!offsets.refreshed_at("t").has_value());
  int done = 0;
  offsets.refresh(p, [&](Status s) { done += s.ok(); });
  offsets.refresh(p, [&](Status s) { done += s.ok(); });
  BOOST_TEST(done == 0);  // nothing inside the call
  iggy.serve();
  BOOST_TEST(done == 2);
  BOOST_TEST(iggy.get_topics == 1);
  BOOST_TEST(iggy.polls == 1);
  BOOST_TEST(p.loaded);
  BOOST_TEST(p.high_watermark() == 6);
  BOOST_TEST(p.log_start() == 2);
  BOOST_TEST(offsets.refreshed_at("t").has_value());
  BOOST_TEST(offsets.find("t", PartitionId(0)) != nullptr);  // GetTopic taught it every partition
  BOOST_TEST(offsets.find("t", PartitionId(0))->high_watermark() == 0);
}

BOOST_AUTO_TEST_CASE(a_topic_missing_in_iggy_is_an_unknown_partition_and_stays_unloaded) {
  TestLoop loop;
  FakeIggy iggy;
  OffsetsTable offsets(&loop.loop, iggy);
  PartitionOffsets& p = offsets.at("gone", PartitionId(0));
  std::optional<Status> got;
  offsets.refresh(p, [&](Status s) { got = s; });
  iggy.serve();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(!got->ok());
  BOOST_TEST(kafka::to_int16(to_kafka_error(got->error())) == kafka::to_int16(kafka::ErrorCode::kUnknownTopicOrPartition));
  BOOST_TEST(!p.loaded);
  BOOST_TEST(!offsets.refreshed_at("gone").has_value());
}

BOOST_AUTO_TEST_SUITE_END()
