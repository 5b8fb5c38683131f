// DeleteRecords below the handler (bridge/log/record_deletion.h): the floor the bridge keeps over
// Iggy's log start, Kafka's offset rules, durability before the answer, the DeleteSegments rule,
// and what Fetch and ListOffsets see afterwards; plus OffsetForLeaderEpoch's epoch-0 rules
// (bridge/log/leader_epoch.h) and DescribeLogDirs (bridge/log/log_dirs.h).
#include <boost/test/unit_test.hpp>

#include "bridge/log/leader_epoch.h"
#include "bridge/log/log_dirs.h"
#include "bridge/log/offset_index.h"
#include "bridge/log/reader.h"
#include "bridge/log/record_deletion.h"
#include "log_services_support.h"
#include "uvx/tasks.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::testing;
using kafka::ErrorCode;

namespace {

struct Deleting {
  TestLoop loop;
  FakeIggy iggy;
  OffsetsTable offsets{&loop.loop, iggy};
  RecordDeletion deletion{iggy, offsets};
  struct Saved {
    std::string topic;
    int32_t partition;
    int64_t floor;
    std::function<void(Status)> done;
  };
  std::vector<Saved> saved;  // store writes not yet committed

  Deleting() {
    iggy.add_topic("t", 2);
    store(iggy, "t", 0, {{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}});  // offsets 0..9
    deletion.set_store([this](const std::string& topic, PartitionId p, KafkaOffset floor,
                              std::function<void(Status)> done) {
      saved.push_back({topic, p(), floor(), std::move(done)});
    });
  }
  PartitionOffsets& p0() { return offsets.at("t", PartitionId(0)); }
  // Deletes up to `offset` and commits the store write (if any) with `commit`.
  DeleteRecordsResult del(int64_t offset, Status commit = ok_status()) {
    std::optional<DeleteRecordsResult> got;
    deletion.delete_records(p0(), KafkaOffset(offset), [&](DeleteRecordsResult r) { got = r; });
    iggy.serve();
    if (!got && !saved.empty()) {
      BOOST_TEST(!got.has_value());  // not before the store committed
      auto s = std::move(saved.back());
      saved.pop_back();
      s.done(commit);
    }
    BOOST_REQUIRE(got.has_value());
    return *got;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(partition_log_delete_records)

BOOST_AUTO_TEST_CASE(the_effective_log_start_is_the_higher_of_iggy_and_the_floor) {
  PartitionOffsets p;
  p.high_watermark = KafkaOffset(10);
  set_iggy_log_start(p, KafkaOffset(2));
  BOOST_TEST(p.log_start() == 2);
  raise_floor(p, KafkaOffset(6));
  BOOST_TEST(p.log_start() == 6);
  BOOST_TEST(p.iggy_log_start() == 2);
  raise_floor(p, KafkaOffset(4));  // never lowered
  BOOST_TEST(p.deleted_to() == 6);
  BOOST_TEST(p.log_start() == 6);
  set_iggy_log_start(p, KafkaOffset(3));  // a later Poll First does not undo the floor
  BOOST_TEST(p.log_start() == 6);
  set_iggy_log_start(p, KafkaOffset(8));  // retention passed it
  BOOST_TEST(p.log_start() == 8);
}

BOOST_AUTO_TEST_CASE(reset_topic_clears_the_floor_of_only_the_deleted_topic) {
  TestLoop loop;
  FakeIggy iggy;
  OffsetsTable offsets(&loop.loop, iggy);
  raise_floor(offsets.at("gone", PartitionId(0)), KafkaOffset(5));
  raise_floor(offsets.at("gone", PartitionId(1)), KafkaOffset(7));
  raise_floor(offsets.at("kept", PartitionId(0)), KafkaOffset(3));
  offsets.reset_topic("gone");
  BOOST_TEST(offsets.at("gone", PartitionId(0)).deleted_to() == 0);
  BOOST_TEST(offsets.at("gone", PartitionId(0)).log_start() == 0);
  BOOST_TEST(offsets.at("gone", PartitionId(1)).deleted_to() == 0);
  BOOST_TEST(offsets.at("kept", PartitionId(0)).log_start() == 3);
  BOOST_TEST(offsets.of_topic("gone").size() == 2u);
}

BOOST_FIXTURE_TEST_CASE(minus_one_means_the_high_watermark_and_answers_after_the_store, Deleting) {
  DeleteRecordsResult r = del(-1);
  BOOST_TEST(kafka::to_int16(r.error) == 0);
  BOOST_TEST(r.low_watermark() == 10);
  BOOST_TEST(p0().log_start() == 10);
  BOOST_TEST(p0().deleted_to() == 10);
  BOOST_TEST(saved.empty());
}

BOOST_FIXTURE_TEST_CASE(an_offset_inside_the_log_moves_the_start_and_is_stored, Deleting) {
  std::optional<DeleteRecordsResult> got;
  deletion.delete_records(p0(), KafkaOffset(4), [&](DeleteRecordsResult r) { got = r; });
  iggy.serve();
  BOOST_TEST(!got.has_value());
  BOOST_REQUIRE(saved.size() == 1u);
  BOOST_TEST(saved[0].topic == "t");
  BOOST_TEST(saved[0].partition == 0);
  BOOST_TEST(saved[0].floor == 4);
  BOOST_TEST(p0().log_start() == 0);  // nothing changes before it is durable
  saved[0].done(ok_status());
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(got->low_watermark() == 4);
  BOOST_TEST(p0().log_start() == 4);
}

BOOST_FIXTURE_TEST_CASE(above_the_high_watermark_or_negative_is_offset_out_of_range, Deleting) {
  DeleteRecordsResult above = del(11);
  BOOST_TEST(kafka::to_int16(above.error) == kafka::to_int16(ErrorCode::kOffsetOutOfRange));
  BOOST_TEST(above.low_watermark() == -1);
  BOOST_TEST(above.message ==
             "Cannot increment the log start offset to 11 of partition t-0 since it is larger than the high "
             "watermark 10");
  DeleteRecordsResult negative = del(-2);
  BOOST_TEST(kafka::to_int16(negative.error) == kafka::to_int16(ErrorCode::kOffsetOutOfRange));
  BOOST_TEST(negative.message == "The offset -2 for partition t-0 is not valid");
  BOOST_TEST(saved.empty());
  BOOST_TEST(p0().log_start() == 0);
}

BOOST_FIXTURE_TEST_CASE(a_lower_offset_is_a_no_op_that_answers_the_current_start, Deleting) {
  BOOST_TEST(del(6).low_watermark() == 6);
  DeleteRecordsResult again = del(3);
  BOOST_TEST(kafka::to_int16(again.error) == 0);
  BOOST_TEST(again.low_watermark() == 6);
  BOOST_TEST(del(6).low_watermark() == 6);
  BOOST_TEST(saved.empty());  // no write for a no-op
  iggy.partition("t", 0).log_start = 8;  // Iggy's retention went further
  offsets.refresh_log_start(p0(), [](Status) {});
  iggy.serve();
  BOOST_TEST(del(7).low_watermark() == 8);
}

BOOST_FIXTURE_TEST_CASE(a_failed_store_leaves_the_start_and_reports_a_storage_error, Deleting) {
  DeleteRecordsResult r = del(5, Status(Error{ErrorDomain::kState, 1, "disk full (test)"}));
  BOOST_TEST(kafka::to_int16(r.error) == kafka::to_int16(ErrorCode::kKafkaStorageError));
  BOOST_TEST(r.low_watermark() == -1);
  BOOST_TEST(p0().log_start() == 0);
}

BOOST_FIXTURE_TEST_CASE(segments_are_deleted_only_when_the_start_reaches_the_high_watermark, Deleting) {
  iggy.segments[{"t", 0}] = 3;
  del(5);
  iggy.serve();
  BOOST_TEST(iggy.segment_deletions.empty());  // segment offsets are unknown: only logical
  del(-1);
  iggy.serve();
  BOOST_REQUIRE(iggy.segment_deletions.size() == 1u);
  BOOST_TEST(iggy.segment_deletions[0].topic == "t");
  BOOST_TEST(iggy.segment_deletions[0].partition == 0);
  BOOST_TEST(iggy.segment_deletions[0].segments == 2u);  // every sealed one, never the active one
  BOOST_TEST(deletion.segment_deletions().sent == 1u);
  BOOST_TEST(deletion.segment_deletions().failed == 0u);
  iggy.segments[{"t", 1}] = 1;  // only the active segment: nothing to ask
  store(iggy, "t", 1, {{"x"}});
  std::optional<DeleteRecordsResult> got;
  deletion.delete_records(offsets.at("t", PartitionId(1)), KafkaOffset(-1), [&](DeleteRecordsResult r) { got = r; });
  iggy.serve();
  BOOST_REQUIRE(saved.size() == 1u);
  saved[0].done(ok_status());
  iggy.serve();
  BOOST_TEST(got->low_watermark() == 1);
  BOOST_TEST(iggy.segment_deletions.size() == 1u);
}

BOOST_FIXTURE_TEST_CASE(fetch_and_list_offsets_honour_a_restored_floor, Deleting) {
  // As after a restart: the stored floor is loaded before anything reads the partition.
  raise_floor(p0(), KafkaOffset(4));
  OffsetIndex index{offsets};
  auto list = [&](TimestampMs ts) {
    std::optional<OffsetLookup> got;
    index.list_offsets(p0(), ts, [&](OffsetLookup r) { got = r; });
    loop.run_until([&] {
      iggy.serve();
      return got.has_value();
    });
    BOOST_REQUIRE(got.has_value());
    return *got;
  };
  BOOST_TEST(list(kEarliestTimestamp).offset() == 4);
  BOOST_TEST(list(kLatestTimestamp).offset() == 10);
  BOOST_TEST(list(TimestampMs(0)).offset() == 4);  // a time before the floor: the floor

  uv::Tasks tasks{&loop.loop};
  Reader reader{&loop.loop, iggy, offsets, tasks,
                [](const std::string&, PartitionId, std::function<void(Status)> cb) { cb(ok_status()); }};
  auto fetch = [&](int64_t offset) {
    std::optional<std::vector<FetchPartitionResult>> got;
    reader.fetch({FetchPartitionRequest{"t", PartitionId(0), KafkaOffset(offset), 1 << 20}}, FetchParams{},
                 [&](std::vector<FetchPartitionResult> r) { got = std::move(r); }, 0);
    loop.run_until([&] {
      iggy.serve();
      return got.has_value();
    });
    BOOST_REQUIRE(got.has_value());
    return got->at(0);
  };
  FetchPartitionResult below = fetch(3);
  BOOST_TEST(kafka::to_int16(below.error) == kafka::to_int16(ErrorCode::kOffsetOutOfRange));
  FetchPartitionResult at = fetch(4);
  BOOST_TEST(kafka::to_int16(at.error) == 0);
  BOOST_TEST(at.log_start_offset() == 4);
  BOOST_TEST(at.high_watermark() == 10);
  BOOST_TEST(!at.records.empty());
}

BOOST_AUTO_TEST_CASE(a_policy_without_delete_is_a_policy_violation_with_kafkas_text) {
  BOOST_TEST(deletable_check("t", PartitionId(0), true).ok());
  Status refused = deletable_check("orders", PartitionId(3), false);
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(kafka::to_int16(to_kafka_error(refused.error())) == kafka::to_int16(ErrorCode::kPolicyViolation));
  BOOST_TEST(refused.error().message ==
             "Records of partition orders-3 can not be deleted due to the configured policy");
}

BOOST_AUTO_TEST_CASE(leader_epoch_zero_is_the_only_epoch) {
  BOOST_TEST(!epoch_end_without_log(-1, 0).has_value());  // (0, HW)
  BOOST_TEST(!epoch_end_without_log(0, 0).has_value());
  auto later = epoch_end_without_log(-1, 5);
  BOOST_REQUIRE(later.has_value());
  BOOST_TEST(kafka::to_int16(later->error) == 0);
  BOOST_TEST(later->leader_epoch == -1);
  BOOST_TEST(later->end_offset() == -1);
  auto undefined = epoch_end_without_log(-1, -1);
  BOOST_REQUIRE(undefined.has_value());
  BOOST_TEST(undefined->end_offset() == -1);
  auto unknown = epoch_end_without_log(1, 0);
  BOOST_REQUIRE(unknown.has_value());
  BOOST_TEST(kafka::to_int16(unknown->error) == kafka::to_int16(ErrorCode::kUnknownLeaderEpoch));
  auto fenced = epoch_end_without_log(-3, 0);
  BOOST_REQUIRE(fenced.has_value());
  BOOST_TEST(kafka::to_int16(fenced->error) == kafka::to_int16(ErrorCode::kFencedLeaderEpoch));
}

BOOST_AUTO_TEST_CASE(log_dirs_list_every_partition_with_its_size_and_the_disk) {
  TestLoop loop;
  FakeIggy iggy;
  iggy.add_topic("a", 2);
  iggy.add_topic("b", 1);
  store(iggy, "a", 1, {{"x", "y"}});
  OffsetsTable offsets(&loop.loop, iggy);
  LogDirs dirs(iggy, offsets, log_dir_name("127.0.0.1:8090", "kafka"), [] {
    return std::vector<std::pair<std::string, int32_t>>{{"a", 2}, {"b", 1}};
  });
  auto describe = [&](LogDirQuery q) {
    std::optional<LogDirDescription> got;
    dirs.describe(std::move(q), true, [&](LogDirDescription d) { got = std::move(d); });
    iggy.serve();
    BOOST_REQUIRE(got.has_value());
    return *got;
  };
  LogDirDescription all = describe(std::nullopt);
  BOOST_TEST(all.log_dir == "iggy://127.0.0.1:8090/kafka");
  BOOST_TEST(all.total_bytes == -1);  // GetStats refused
  BOOST_TEST(all.usable_bytes == -1);
  BOOST_REQUIRE(all.topics.size() == 2u);
  BOOST_TEST(all.topics[0].name == "a");
  BOOST_REQUIRE(all.topics[0].partitions.size() == 2u);
  BOOST_TEST(all.topics[0].partitions[0].size_bytes == 0);
  BOOST_TEST(all.topics[0].partitions[1].size_bytes == 200);  // the double's 100 bytes per message
  BOOST_TEST(all.topics[1].name == "b");

  iggy::Stats stats;
  stats.total_disk_space = 1000;
  stats.free_disk_space = 400;
  iggy.stats = stats;
  LogDirDescription some = describe(LogDirQuery{{{"a", {1, 7}}, {"missing", {0}}}});
  BOOST_TEST(some.total_bytes == 1000);
  BOOST_TEST(some.usable_bytes == 400);
  BOOST_REQUIRE(some.topics.size() == 1u);  // unknown topics and partitions are left out
  BOOST_REQUIRE(some.topics[0].partitions.size() == 1u);
  BOOST_TEST(some.topics[0].partitions[0].partition == 1);
}

// A compacted partition's log on disk is its live log plus its generation topic
// (docs/compaction.md): the cleaned head counts, and a generation retired while the size was asked
// for is replaced by the partition's new one.
BOOST_AUTO_TEST_CASE(log_dirs_count_a_compacted_partitions_generation) {
  TestLoop loop;
  FakeIggy iggy;
  iggy.add_topic("c", 2);
  store(iggy, "c", 0, {{"x", "y", "z"}});  // the live log: 300 bytes in the double
  store(iggy, "c", 1, {{"x"}});
  iggy.add_topic("kc/g1", 1);
  iggy.partition("kc/g1", 0).messages.resize(2);  // the cleaned head: 200 bytes
  iggy.add_topic("kc/g2", 1);
  iggy.partition("kc/g2", 0).messages.resize(1);
  OffsetsTable offsets(&loop.loop, iggy);
  auto head = [](const std::string& topic) {
    auto h = std::make_shared<compaction::CleanedHead>();
    h->stream = "kc";
    h->topic = topic;
    return h;
  };
  set_cleaned_head(offsets.at("c", PartitionId(0)), head("g1"));
  LogDirs dirs(iggy, offsets, log_dir_name("127.0.0.1:8090", "kafka"), [] {
    return std::vector<std::pair<std::string, int32_t>>{{"c", 2}};
  });
  std::optional<LogDirDescription> got;
  dirs.describe(std::nullopt, false, [&](LogDirDescription d) { got = std::move(d); });
  iggy.serve();
  BOOST_REQUIRE(got.has_value());
  BOOST_REQUIRE(got->topics.size() == 1u);
  BOOST_REQUIRE(got->topics[0].partitions.size() == 2u);
  BOOST_TEST(got->topics[0].partitions[0].size_bytes == 300 + 200);
  BOOST_TEST(got->topics[0].partitions[1].size_bytes == 100);  // not compacted: the live log alone
  BOOST_TEST(iggy.generation_get_topics == 1);

  // A pass commits between the partition's GetTopic and its generation's: g1 is gone, g2 counts.
  got.reset();
  dirs.describe(std::nullopt, false, [&](LogDirDescription d) { got = std::move(d); });
  BOOST_TEST(iggy.serve(1) == 1u);  // the topic's GetTopic; the generation's is asked for
  BOOST_TEST(iggy.generation_get_topics == 2);
  set_cleaned_head(offsets.at("c", PartitionId(0)), head("g2"));
  iggy.topics.erase("kc/g1");
  iggy.serve();
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(got->topics[0].partitions[0].size_bytes == 300 + 100);
  BOOST_TEST(iggy.generation_get_topics == 3);
}

BOOST_AUTO_TEST_SUITE_END()
