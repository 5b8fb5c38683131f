// CommittedOffsets on its own (the coordinator's side: group_offsets_test.cc): durable before
// the answer, exact round trip of offset, leader epoch and metadata, reload after a restart,
// the metadata limit, unknown partitions, each retention clock, OffsetDelete, forgetting a
// deleted group; and the offsets SQL of state/group_store. Kafka references:
// GroupMetadataManager.storeOffsets / cleanupGroupMetadata (3.x), OffsetMetadataManager (4.x).
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "bridge/groups/committed_offsets.h"
#include "state/group_store.h"
#include "state/state_store.h"
#include "support/manual_group_timers.h"

using namespace kib;
using namespace kib::bridge;
using kib::state::StateStore;

namespace {

constexpr int64_t kStart = 1'700'000'000'000;
constexpr int64_t kDay = 24LL * 60 * 60 * 1000;
using Clock = OffsetExpiration::Clock;

struct Harness {
  std::filesystem::path dir;
  uv_loop_t loop{};
  ManualGroupTimers timers{kStart};
  CommittedOffsetsOptions options;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<CommittedOffsets> co;
  std::vector<std::string> expired;  // what the expiry listener heard

  explicit Harness(CommittedOffsetsOptions opts = {}) : options(std::move(opts)) {
    char tmpl[] = "/tmp/kib-committed-XXXXXX";
    dir = mkdtemp(tmpl);
    uv_loop_init(&loop);
    start();
  }
  ~Harness() {
    stop();
    uv_loop_close(&loop);
    std::filesystem::remove_all(dir);
  }
  std::string db_path() const { return (dir / "state.db").string(); }
  void start() {
    auto s = StateStore::open(db_path(), &loop);
    BOOST_REQUIRE(s.ok());
    store = std::move(*s);
    co = std::make_unique<CommittedOffsets>(*store, timers, options);
    BOOST_REQUIRE(co->load().ok());
    co->set_expiry_listener([this](const std::string& g) { expired.push_back(g); });
  }
  void stop() {
    settle();
    co.reset();
    if (store) store->close();
    store.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  void restart() {
    stop();
    start();
  }
  void settle() {
    while (co && co->pending_writes() > 0) uv_run(&loop, UV_RUN_ONCE);
  }
  void advance(int64_t ms) {
    timers.advance(ms);
    settle();
  }
  // Expires by `how` and waits for the write; true if something was expiring.
  bool expire(const std::string& group, const OffsetExpiration& how) {
    bool expiring = co->expire_offsets(group, how);
    settle();
    return expiring;
  }

  std::vector<ErrorCode> commit(const std::string& group, std::vector<OffsetCommitEntry> entries,
                                int64_t retention_time_ms = -1) {
    std::optional<std::vector<ErrorCode>> out;
    co->commit(group, std::move(entries), retention_time_ms, [&](std::vector<ErrorCode> e) { out = std::move(e); });
    while (!out) uv_run(&loop, UV_RUN_ONCE);
    return *out;
  }
  ErrorCode simple_commit(const std::string& group, const std::string& topic, int32_t partition, int64_t offset,
                          std::optional<std::string> metadata = std::string(), int32_t leader_epoch = -1) {
    return commit(group, {{topic, partition, offset, leader_epoch, metadata}}).at(0);
  }
  FetchedOffset fetch_one(const std::string& group, const std::string& topic, int32_t partition) {
    std::vector<TopicPartitionIndex> tps{{topic, partition}};
    return co->fetch_offsets(group, &tps).at(0);
  }
  std::pair<ErrorCode, std::vector<ErrorCode>> delete_offsets(const std::string& group,
                                                              std::vector<TopicPartitionIndex> tps,
                                                              std::function<bool(const std::string&)> subscribed = {}) {
    std::optional<std::pair<ErrorCode, std::vector<ErrorCode>>> out;
    co->delete_offsets(group, tps, subscribed, [&](ErrorCode g, std::vector<ErrorCode> e) { out = std::make_pair(g, e); });
    while (!out) uv_run(&loop, UV_RUN_ONCE);
    return *out;
  }
  int64_t count_rows(const std::string& sql) {
    SQLite::Database db(db_path(), SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(committed_offsets)

BOOST_AUTO_TEST_CASE(offset_leader_epoch_and_metadata_round_trip_exactly) {
  Harness h;
  const char raw[] = "pos=\0\x01\xff;tz=Europe/Z\xc3\xbcrich \xf0\x9f\x98\x80";
  const std::string metadata(raw, sizeof(raw) - 1);
  BOOST_TEST(int(h.simple_commit("g", "orders", 0, 42, metadata, 7)) == 0);
  BOOST_TEST(int(h.simple_commit("g", "orders", 1, 0, std::nullopt)) == 0);  // null metadata is stored as ""
  auto f = h.fetch_one("g", "orders", 0);
  BOOST_TEST(f.offset == 42);
  BOOST_TEST(f.leader_epoch == 7);
  BOOST_TEST(f.metadata == metadata);
  BOOST_TEST(h.fetch_one("g", "orders", 1).metadata == "");
  // Unknown partitions: -1 with empty metadata and no error, as Kafka answers.
  auto none = h.fetch_one("g", "orders", 9);
  BOOST_TEST(none.offset == -1);
  BOOST_TEST(none.leader_epoch == -1);
  BOOST_TEST(none.metadata == "");
  BOOST_TEST(int(none.error) == 0);
  BOOST_TEST(h.fetch_one("no-such-group", "orders", 0).offset == -1);

  h.restart();
  f = h.fetch_one("g", "orders", 0);
  BOOST_TEST(f.offset == 42);
  BOOST_TEST(f.leader_epoch == 7);
  BOOST_TEST(f.metadata == metadata);
  auto all = h.co->fetch_offsets("g", nullptr);
  BOOST_REQUIRE(all.size() == 2u);
  BOOST_TEST(all[0].partition == 0);
  BOOST_TEST(all[1].partition == 1);
  BOOST_TEST(h.co->fetch_offsets("no-such-group", nullptr).empty());
}

BOOST_AUTO_TEST_CASE(a_commit_is_answered_only_once_it_is_on_disk) {
  Harness h;
  std::optional<std::vector<ErrorCode>> out;
  h.co->commit("g", {{"orders", 0, 100, -1, "m"}}, -1, [&](std::vector<ErrorCode> e) { out = e; });
  BOOST_TEST(!out);
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);  // not visible before it is durable
  while (!out) uv_run(&h.loop, UV_RUN_ONCE);
  BOOST_TEST(int(out->at(0)) == 0);
  // Another connection sees it on disk at once.
  BOOST_TEST(h.count_rows("SELECT committed_offset FROM committed_offsets WHERE group_id = 'g'") == 100);
  BOOST_TEST(h.count_rows("SELECT count(*) FROM consumer_groups WHERE group_id = 'g'") == 1);
}

BOOST_AUTO_TEST_CASE(thousands_of_commits_share_a_few_fsyncs) {
  Harness h;
  h.settle();
  uint64_t before = h.store->batches_committed();
  int answered = 0;
  for (int i = 0; i < 2000; ++i)
    h.co->commit("g" + std::to_string(i % 50), {{"orders", i % 7, i, -1, ""}}, -1,
                 [&](std::vector<ErrorCode> e) { answered += e.at(0) == ErrorCode::kNone; });
  while (answered < 2000) uv_run(&h.loop, UV_RUN_ONCE);
  uint64_t batches = h.store->batches_committed() - before;
  BOOST_TEST_MESSAGE("2000 commits in " << batches << " batches");
  BOOST_TEST(batches < 200u);
  BOOST_TEST(h.count_rows("SELECT count(*) FROM committed_offsets") == 50 * 7);
}

BOOST_AUTO_TEST_CASE(metadata_over_the_limit_is_offset_metadata_too_large) {
  Harness h;
  BOOST_TEST(int(h.simple_commit("g", "t", 0, 1, std::string(4096, 'x'))) == 0);
  BOOST_TEST(int(h.simple_commit("g", "t", 0, 2, std::string(4097, 'x'))) == int(ErrorCode::kOffsetMetadataTooLarge));
  // Kafka counts String.length(): 4096 two-byte characters fit.
  std::string umlauts;
  for (int i = 0; i < 4096; ++i) umlauts += "\xc3\xbc";
  BOOST_TEST(int(h.simple_commit("g", "t", 1, 3, umlauts)) == 0);
  BOOST_TEST(h.fetch_one("g", "t", 0).offset == 1);
  // Only the offending partition fails.
  auto errs = h.commit("g", {{"t", 2, 5, -1, std::string(5000, 'y')}, {"t", 3, 6, -1, std::string("ok")}});
  BOOST_TEST(int(errs[0]) == int(ErrorCode::kOffsetMetadataTooLarge));
  BOOST_TEST(int(errs[1]) == 0);
}

BOOST_AUTO_TEST_CASE(commits_to_unknown_topics_or_partitions_are_refused) {
  CommittedOffsetsOptions o;
  o.partition_count = [](const std::string& t) -> std::optional<int32_t> {
    if (t == "orders") return 3;
    return std::nullopt;
  };
  Harness h(o);
  auto errs = h.commit("g", {{"orders", 2, 1, -1, ""}, {"orders", 3, 1, -1, ""}, {"missing", 0, 1, -1, ""}});
  BOOST_TEST(int(errs[0]) == 0);
  BOOST_TEST(int(errs[1]) == int(ErrorCode::kUnknownTopicOrPartition));
  BOOST_TEST(int(errs[2]) == int(ErrorCode::kUnknownTopicOrPartition));
}

BOOST_AUTO_TEST_CASE(an_explicit_retention_time_from_offset_commit_v2_to_v4_is_honoured) {
  Harness h;
  h.commit("g", {{"orders", 0, 3, -1, ""}}, 60 * 60 * 1000);
  // Whatever the group's rule says, even none.
  h.advance(50 * 60 * 1000);
  BOOST_TEST(!h.expire("g", {OffsetExpiration::Clock::kNone, 0, nullptr}));
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 3);
  h.advance(10 * 60 * 1000);
  BOOST_TEST(h.expire("g", {OffsetExpiration::Clock::kNone, 0, nullptr}));
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);
}


BOOST_AUTO_TEST_CASE(retention_since_commit_expires_each_offset_on_its_own_and_keeps_kept_topics) {
  Harness h;
  h.simple_commit("g", "orders", 0, 1);
  h.simple_commit("g", "subscribed", 0, 9);
  h.advance(3 * kDay);
  h.simple_commit("g", "orders", 1, 2);
  h.advance(4 * kDay - 1);
  BOOST_TEST(!h.expire("g", {Clock::kSinceCommit, 0, nullptr}));  // one ms short of retention
  h.advance(1);
  std::set<std::string> kept{"subscribed"};
  BOOST_TEST(h.expire("g", {Clock::kSinceCommit, 0, &kept}));
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);
  BOOST_TEST(h.fetch_one("g", "orders", 1).offset == 2);
  BOOST_TEST(h.fetch_one("g", "subscribed", 0).offset == 9);
  BOOST_TEST(h.expired == std::vector<std::string>{"g"});
  BOOST_TEST(h.co->has_offsets("g"));
  h.restart();
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);
  BOOST_TEST(h.fetch_one("g", "orders", 1).offset == 2);
}

BOOST_AUTO_TEST_CASE(retention_since_empty_counts_from_when_the_group_became_empty) {
  Harness h;
  h.simple_commit("g", "orders", 0, 1);
  h.advance(10 * kDay);
  // Committed long ago, but empty only since now: nothing goes.
  BOOST_TEST(!h.expire("g", {Clock::kSinceEmpty, kStart + 10 * kDay, nullptr}));
  BOOST_TEST(!h.expire("g", {Clock::kNone, 0, nullptr}));
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 1);
  h.advance(7 * kDay);
  BOOST_TEST(h.expire("g", {Clock::kSinceEmpty, kStart + 10 * kDay, nullptr}));
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);
  BOOST_TEST(!h.co->has_offsets("g"));
  BOOST_TEST(h.co->groups().empty());
  BOOST_TEST(h.count_rows("SELECT count(*) FROM committed_offsets") == 0);
  // The group's row is the coordinator's: still there.
  BOOST_TEST(h.count_rows("SELECT count(*) FROM consumer_groups") == 1);
  BOOST_TEST(h.expired == std::vector<std::string>{"g"});
}

BOOST_AUTO_TEST_CASE(a_commit_in_flight_is_not_expired_and_a_newer_commit_survives) {
  Harness h;
  h.simple_commit("g", "orders", 0, 1);
  h.advance(8 * kDay);
  std::optional<std::vector<ErrorCode>> out;
  h.co->commit("g", {{"orders", 0, 2, -1, ""}}, -1, [&](std::vector<ErrorCode> e) { out = e; });
  BOOST_TEST(!h.co->expire_offsets("g", {Clock::kSinceCommit, 0, nullptr}));
  h.settle();
  BOOST_REQUIRE(out);
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 2);
}

BOOST_AUTO_TEST_CASE(offset_delete_deletes_all_but_subscribed_and_unknown_partitions) {
  CommittedOffsetsOptions o;
  o.partition_count = [](const std::string& t) -> std::optional<int32_t> {
    if (t == "missing") return std::nullopt;
    return 2;
  };
  Harness h(o);
  h.simple_commit("g", "orders", 0, 1);
  h.simple_commit("g", "old", 0, 2);
  auto [group_error, errors] =
      h.delete_offsets("g", {{"orders", 0}, {"old", 0}, {"missing", 0}, {"old", 5}},
                       [](const std::string& t) { return t == "orders"; });
  BOOST_TEST(int(group_error) == 0);
  BOOST_REQUIRE(errors.size() == 4u);
  BOOST_TEST(int(errors[0]) == int(ErrorCode::kGroupSubscribedToTopic));
  BOOST_TEST(int(errors[1]) == 0);
  BOOST_TEST(int(errors[2]) == int(ErrorCode::kUnknownTopicOrPartition));
  BOOST_TEST(int(errors[3]) == int(ErrorCode::kUnknownTopicOrPartition));
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 1);
  BOOST_TEST(h.fetch_one("g", "old", 0).offset == -1);
  // Without a subscription, everything may go; a group without offsets answers no error.
  BOOST_TEST(int(h.delete_offsets("g", {{"orders", 0}}).second.at(0)) == 0);
  BOOST_TEST(!h.co->has_offsets("g"));
  BOOST_TEST(int(h.delete_offsets("nobody", {{"orders", 0}}).second.at(0)) == 0);
  h.restart();
  BOOST_TEST(h.co->fetch_offsets("g", nullptr).empty());
}

BOOST_AUTO_TEST_CASE(a_forgotten_group_is_not_brought_back_by_a_commit_queued_before) {
  Harness h;
  h.simple_commit("g", "orders", 0, 1);
  std::optional<std::vector<ErrorCode>> out;
  h.co->commit("g", {{"orders", 0, 2, -1, ""}}, -1, [&](std::vector<ErrorCode> e) { out = e; });
  BOOST_TEST(h.co->has_offsets("g"));
  h.co->forget_group("g");  // DeleteGroups: the coordinator writes state::delete_group
  BOOST_TEST(!h.co->has_offsets("g"));
  h.settle();
  BOOST_REQUIRE(out);
  BOOST_TEST(int(out->at(0)) == 0);
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);
  BOOST_TEST(h.co->groups().empty());
  // A later commit starts the group afresh.
  BOOST_TEST(int(h.simple_commit("g", "orders", 0, 3)) == 0);
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 3);
}

BOOST_AUTO_TEST_CASE(after_stop_commits_and_deletes_are_coordinator_not_available) {
  Harness h;
  h.simple_commit("g", "orders", 0, 1);
  h.co->stop();
  BOOST_TEST(int(h.simple_commit("g", "orders", 0, 2)) == int(ErrorCode::kCoordinatorNotAvailable));
  BOOST_TEST(int(h.delete_offsets("g", {{"orders", 0}}).first) == int(ErrorCode::kCoordinatorNotAvailable));
  BOOST_TEST(!h.co->expire_offsets("g", {Clock::kSinceCommit, 0, nullptr}));
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);
  h.restart();
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 1);
}

BOOST_AUTO_TEST_CASE(group_store_sql_round_trip) {
  Harness h;
  h.stop();
  auto db = state::open_database(h.db_path());
  BOOST_REQUIRE(db.ok());
  BOOST_REQUIRE(state::migrate(**db).ok());
  state::GroupRow g{"grp", "consumer", "range", 4, "Stable", "m1", 1000};
  state::GroupMemberRow m;
  m.member_id = "m1";
  m.group_instance_id = "i1";
  m.client_id = "cid";
  m.client_host = "/10.0.0.1";
  m.session_timeout_ms = 45000;
  m.rebalance_timeout_ms = 300000;
  m.assignment = Bytes{0, 0, 0, 1, 0};
  m.assigned_partitions = "orders:0";
  state::save_group(**db, g, {m});
  state::upsert_committed_offsets(**db, {{"grp", "orders", 0, 17, 3, std::string("a\0b", 3), 2000, std::nullopt},
                                         {"offsets-only", "orders", 1, 5, -1, "", 2100, 99999}});
  {
    SQLite::Statement q(**db, "SELECT assignment, group_instance_id FROM group_members");
    BOOST_REQUIRE(q.executeStep());
    BOOST_TEST(q.getColumn(0).getBytes() == 5);
    BOOST_TEST(q.getColumn(1).getString() == "i1");
  }
  auto groups = state::load_groups_for_restart(**db, 5000);
  BOOST_REQUIRE(groups.size() == 2u);
  BOOST_TEST(groups[0].group_id == "grp");
  BOOST_TEST(groups[0].state == "Empty");
  BOOST_TEST(groups[0].generation == 4);
  BOOST_TEST(groups[0].updated_at_ms == 5000);
  BOOST_TEST(groups[0].protocol_name == "");
  BOOST_TEST(groups[1].group_id == "offsets-only");
  auto offsets = state::load_committed_offsets(**db);
  BOOST_REQUIRE(offsets.size() == 2u);
  BOOST_TEST(offsets[0].metadata == std::string("a\0b", 3));
  BOOST_TEST(offsets[0].leader_epoch == 3);
  BOOST_TEST(!offsets[0].expire_time_ms);
  BOOST_TEST(offsets[1].expire_time_ms.value_or(0) == 99999);
  BOOST_TEST(state::expire_committed_offset(**db, "grp", "orders", 0, 1999) == 0);  // newer commit survives
  BOOST_TEST(state::expire_committed_offset(**db, "grp", "orders", 0, 2000) == 1);
  state::delete_group(**db, "offsets-only");
  BOOST_TEST((*db)->execAndGet("SELECT count(*) FROM committed_offsets").getInt() == 0);
  db->reset();
  h.start();
}

BOOST_AUTO_TEST_SUITE_END()
