// Committed offsets: durable before the answer, exact round trip of offset, leader epoch and
// metadata, reload after a restart, retention, OffsetDelete; and the SQL of state/group_store.
// Kafka references: GroupMetadataManager.storeOffsets / cleanupGroupMetadata (3.x),
// OffsetMetadataManager (4.x).
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "bridge/groups/group_coordinator.h"
#include "bridge/groups/manual_group_timers.h"
#include "kafka/protocol/generated/consumer_protocol_subscription.h"
#include "state/group_store.h"
#include "state/state_store.h"

using namespace kib;
using namespace kib::bridge;
using kib::state::StateStore;

namespace {

constexpr int64_t kStart = 1'700'000'000'000;
constexpr int64_t kDay = 24LL * 60 * 60 * 1000;
constexpr int32_t kSession = 30 * 60 * 1000;  // group.max.session.timeout.ms: days pass in few steps

struct Harness {
  std::filesystem::path dir;
  uv_loop_t loop{};
  ManualGroupTimers timers{kStart};
  GroupCoordinatorOptions options;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<GroupCoordinator> gc;

  explicit Harness(GroupCoordinatorOptions opts = {}) : options(std::move(opts)) {
    char tmpl[] = "/tmp/kib-offsets-XXXXXX";
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
    gc = std::make_unique<GroupCoordinator>(*store, timers, options);
    BOOST_REQUIRE(gc->load().ok());
  }
  void stop() {
    settle();
    gc.reset();
    if (store) store->close();
    store.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  void restart() {
    stop();
    start();
  }
  void settle() {
    while (gc && gc->pending_writes() > 0) uv_run(&loop, UV_RUN_ONCE);
  }
  void advance(int64_t ms) {
    timers.advance(ms);
    settle();
  }

  std::vector<ErrorCode> commit(OffsetCommitParams p) {
    std::optional<std::vector<ErrorCode>> out;
    gc->commit_offsets(std::move(p), [&](std::vector<ErrorCode> e) { out = std::move(e); });
    while (!out) uv_run(&loop, UV_RUN_ONCE);
    return *out;
  }
  // A commit with generation -1, as the admin client and manually assigned consumers send.
  ErrorCode simple_commit(const std::string& group, const std::string& topic, int32_t partition, int64_t offset,
                          std::optional<std::string> metadata = std::string(), int32_t leader_epoch = -1) {
    return commit({group, -1, "", std::nullopt, -1, false, {{topic, partition, offset, leader_epoch, metadata}}}).at(0);
  }
  FetchedOffset fetch_one(const std::string& group, const std::string& topic, int32_t partition) {
    std::vector<TopicPartitionIndex> tps{{topic, partition}};
    return gc->fetch_offsets(group, &tps).at(0);
  }
  int64_t count_rows(const std::string& sql) {
    SQLite::Database db(db_path(), SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }
};

Bytes subscription(std::vector<std::string> topics) {
  kafka::msg::ConsumerProtocolSubscription s;
  s.topics = std::move(topics);
  s.user_data = std::nullopt;
  ByteWriter w(64);
  w.be<int16_t>(0);
  s.encode(w, 0);
  return w.take();
}

// A one-member consumer group, Stable, subscribed to `topics`; returns {member id, generation}.
std::pair<std::string, int32_t> stable_member(Harness& h, const std::string& group, std::vector<std::string> topics) {
  JoinGroupParams p;
  p.group_id = group;
  p.client_id = "c";
  p.client_host = "/127.0.0.1";
  p.session_timeout_ms = kSession;
  p.rebalance_timeout_ms = 60'000;
  p.protocol_type = "consumer";
  p.protocols = {{"range", subscription(std::move(topics))}};
  std::optional<JoinGroupResult> jr;
  h.gc->join_group(p, [&](JoinGroupResult r) { jr = r; });
  h.settle();
  h.advance(3000);
  BOOST_REQUIRE(jr);
  BOOST_REQUIRE(int(jr->error) == 0);
  std::optional<SyncGroupResult> sr;
  h.gc->sync_group({group, jr->generation_id, jr->member_id, std::nullopt, std::nullopt, std::nullopt,
                    {{jr->member_id, Bytes{0, 1}}}},
                   [&](SyncGroupResult r) { sr = r; });
  h.settle();
  BOOST_REQUIRE(sr);
  return {jr->member_id, jr->generation_id};
}

// Advances `ms` with a heartbeat every 20 minutes.
void keep_alive(Harness& h, const std::string& group, const std::string& member, int32_t gen, int64_t ms) {
  constexpr int64_t kStep = 20 * 60 * 1000;
  for (int64_t t = 0; t < ms; t += kStep) {
    h.advance(std::min(kStep, ms - t));
    BOOST_REQUIRE(int(h.gc->heartbeat(group, member, std::nullopt, gen)) == 0);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(group_offsets)

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
  auto all = h.gc->fetch_offsets("g", nullptr);
  BOOST_REQUIRE(all.size() == 2u);
  BOOST_TEST(all[0].partition == 0);
  BOOST_TEST(all[1].partition == 1);
  BOOST_TEST(h.gc->fetch_offsets("no-such-group", nullptr).empty());
}

BOOST_AUTO_TEST_CASE(a_commit_is_answered_only_once_it_is_on_disk) {
  Harness h;
  std::optional<std::vector<ErrorCode>> out;
  h.gc->commit_offsets({"g", -1, "", std::nullopt, -1, false, {{"orders", 0, 100, -1, "m"}}},
                       [&](std::vector<ErrorCode> e) { out = e; });
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
    h.gc->commit_offsets({"g" + std::to_string(i % 50), -1, "", std::nullopt, -1, false, {{"orders", i % 7, i, -1, ""}}},
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
  auto errs = h.commit({"g", -1, "", std::nullopt, -1, false,
                        {{"t", 2, 5, -1, std::string(5000, 'y')}, {"t", 3, 6, -1, std::string("ok")}}});
  BOOST_TEST(int(errs[0]) == int(ErrorCode::kOffsetMetadataTooLarge));
  BOOST_TEST(int(errs[1]) == 0);
}

BOOST_AUTO_TEST_CASE(commits_to_unknown_topics_or_partitions_are_refused) {
  GroupCoordinatorOptions o;
  o.partition_count = [](const std::string& t) -> std::optional<int32_t> {
    if (t == "orders") return 3;
    return std::nullopt;
  };
  Harness h(o);
  auto errs = h.commit({"g", -1, "", std::nullopt, -1, false,
                        {{"orders", 2, 1, -1, ""}, {"orders", 3, 1, -1, ""}, {"missing", 0, 1, -1, ""}}});
  BOOST_TEST(int(errs[0]) == 0);
  BOOST_TEST(int(errs[1]) == int(ErrorCode::kUnknownTopicOrPartition));
  BOOST_TEST(int(errs[2]) == int(ErrorCode::kUnknownTopicOrPartition));
}

BOOST_AUTO_TEST_CASE(who_may_commit_to_which_group) {
  Harness h;
  auto [member, gen] = stable_member(h, "live", {"orders"});
  // Members of the current generation may.
  auto errs = h.commit({"live", gen, member, std::nullopt, -1, false, {{"orders", 0, 10, -1, ""}}});
  BOOST_TEST(int(errs[0]) == 0);
  // Without group management, only while the group is empty.
  errs = h.commit({"live", -1, "", std::nullopt, -1, false, {{"orders", 0, 11, -1, ""}}});
  BOOST_TEST(int(errs[0]) == int(ErrorCode::kUnknownMemberId));
  errs = h.commit({"live", gen, "stranger", std::nullopt, -1, false, {{"orders", 0, 11, -1, ""}}});
  BOOST_TEST(int(errs[0]) == int(ErrorCode::kUnknownMemberId));
  errs = h.commit({"live", gen + 1, member, std::nullopt, -1, false, {{"orders", 0, 11, -1, ""}}});
  BOOST_TEST(int(errs[0]) == int(ErrorCode::kIllegalGeneration));
  // A group that does not exist: ILLEGAL_GENERATION before v9, GROUP_ID_NOT_FOUND from v9.
  errs = h.commit({"ghost", 3, "m", std::nullopt, -1, false, {{"orders", 0, 1, -1, ""}}});
  BOOST_TEST(int(errs[0]) == int(ErrorCode::kIllegalGeneration));
  errs = h.commit({"ghost", 3, "m", std::nullopt, -1, true, {{"orders", 0, 1, -1, ""}}});
  BOOST_TEST(int(errs[0]) == int(ErrorCode::kGroupIdNotFound));
  BOOST_TEST(!h.gc->group_state("ghost"));
  // Generation -1 creates a group with no protocol (offset storage only).
  BOOST_TEST(int(h.simple_commit("ghost", "orders", 0, 5)) == 0);
  auto groups = h.gc->list_groups({}, {});
  BOOST_TEST(groups.size() == 2u);
  BOOST_TEST(h.gc->describe_group("ghost").state == "Empty");
  BOOST_TEST(h.gc->describe_group("ghost").protocol_type == "");
}

BOOST_AUTO_TEST_CASE(offsets_of_an_empty_group_expire_retention_after_it_became_empty) {
  Harness h;
  auto [member, gen] = stable_member(h, "g", {"orders"});
  h.commit({"g", gen, member, std::nullopt, -1, false, {{"orders", 0, 10, -1, ""}}});
  keep_alive(h, "g", member, gen, 8 * kDay);  // a live group keeps its offsets of subscribed topics, however old
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 10);
  BOOST_TEST(int(h.gc->leave_group("g", {{member, std::nullopt, ""}}).member_errors.at(0)) == 0);
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("Empty"));
  h.advance(7 * kDay - 11 * 60 * 1000);
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 10);
  h.advance(21 * 60 * 1000);  // the first retention check past 7 days
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);
  // With its offsets gone, the empty group goes too, from memory and from disk.
  BOOST_TEST(!h.gc->group_state("g"));
  BOOST_TEST(h.count_rows("SELECT count(*) FROM committed_offsets") == 0);
  BOOST_TEST(h.count_rows("SELECT count(*) FROM consumer_groups") == 0);
}

BOOST_AUTO_TEST_CASE(offsets_without_group_management_expire_retention_after_their_commit) {
  Harness h;
  h.simple_commit("simple", "orders", 0, 1);
  h.advance(3 * kDay);
  h.simple_commit("simple", "orders", 1, 2);
  h.advance(4 * kDay + 10 * 60 * 1000);
  BOOST_TEST(h.fetch_one("simple", "orders", 0).offset == -1);
  BOOST_TEST(h.fetch_one("simple", "orders", 1).offset == 2);
  h.restart();
  BOOST_TEST(h.fetch_one("simple", "orders", 0).offset == -1);
  BOOST_TEST(h.fetch_one("simple", "orders", 1).offset == 2);
}

BOOST_AUTO_TEST_CASE(a_stable_group_loses_offsets_of_topics_it_no_longer_subscribes_to) {
  Harness h;
  h.simple_commit("g", "old-topic", 0, 5);
  auto [member, gen] = stable_member(h, "g", {"orders"});
  h.commit({"g", gen, member, std::nullopt, -1, false, {{"orders", 0, 10, -1, ""}}});
  keep_alive(h, "g", member, gen, 8 * kDay);
  BOOST_TEST(h.fetch_one("g", "old-topic", 0).offset == -1);
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 10);
}

BOOST_AUTO_TEST_CASE(an_explicit_retention_time_from_offset_commit_v2_to_v4_is_honoured) {
  Harness h;
  h.commit({"g", -1, "", std::nullopt, 60 * 60 * 1000, false, {{"orders", 0, 3, -1, ""}}});
  h.advance(50 * 60 * 1000);
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 3);
  h.advance(10 * 60 * 1000);
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);
}

BOOST_AUTO_TEST_CASE(offset_delete_refuses_topics_the_group_consumes) {
  Harness h;
  h.simple_commit("g", "old-topic", 0, 5);
  auto [member, gen] = stable_member(h, "g", {"orders"});
  h.commit({"g", gen, member, std::nullopt, -1, false, {{"orders", 0, 10, -1, ""}}});
  std::optional<std::pair<ErrorCode, std::vector<ErrorCode>>> out;
  h.gc->delete_offsets("g", {{"orders", 0}, {"old-topic", 0}},
                       [&](ErrorCode g, std::vector<ErrorCode> e) { out = std::make_pair(g, e); });
  h.settle();
  BOOST_REQUIRE(out);
  BOOST_TEST(int(out->first) == 0);
  BOOST_TEST(int(out->second[0]) == int(ErrorCode::kGroupSubscribedToTopic));
  BOOST_TEST(int(out->second[1]) == 0);
  BOOST_TEST(h.fetch_one("g", "old-topic", 0).offset == -1);
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == 10);
  out.reset();
  h.gc->delete_offsets("nope", {{"orders", 0}}, [&](ErrorCode g, std::vector<ErrorCode> e) { out = std::make_pair(g, e); });
  h.settle();
  BOOST_TEST(int(out->first) == int(ErrorCode::kGroupIdNotFound));
  // Once empty, everything may go.
  h.gc->leave_group("g", {{member, std::nullopt, ""}});
  out.reset();
  h.gc->delete_offsets("g", {{"orders", 0}}, [&](ErrorCode g, std::vector<ErrorCode> e) { out = std::make_pair(g, e); });
  h.settle();
  BOOST_TEST(int(out->second[0]) == 0);
  h.restart();
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);
}

BOOST_AUTO_TEST_CASE(a_commit_queued_before_a_group_delete_does_not_resurrect_it) {
  Harness h;
  h.simple_commit("g", "orders", 0, 1);
  std::optional<std::vector<ErrorCode>> committed, deleted;
  h.gc->commit_offsets({"g", -1, "", std::nullopt, -1, false, {{"orders", 0, 2, -1, ""}}},
                       [&](std::vector<ErrorCode> e) { committed = e; });
  h.gc->delete_groups({"g"}, [&](std::vector<ErrorCode> e) { deleted = e; });
  h.settle();
  BOOST_REQUIRE(committed && deleted);
  BOOST_TEST(int(deleted->at(0)) == 0);
  BOOST_TEST(h.fetch_one("g", "orders", 0).offset == -1);
  BOOST_TEST(h.count_rows("SELECT count(*) FROM committed_offsets") == 0);
}

BOOST_AUTO_TEST_CASE(group_store_saves_members_readably_and_restart_empties_groups) {
  Harness h;
  auto [member, gen] = stable_member(h, "g", {"orders", "payments"});
  (void)gen;
  {
    SQLite::Database db(h.db_path(), SQLite::OPEN_READONLY);
    SQLite::Statement q(db, "SELECT g.state, g.protocol_type, g.protocol_name, g.leader_id, m.member_id, "
                            "m.subscribed_topics, m.client_host FROM consumer_groups g JOIN group_members m USING (group_id)");
    BOOST_REQUIRE(q.executeStep());
    BOOST_TEST(q.getColumn(0).getString() == "Stable");
    BOOST_TEST(q.getColumn(1).getString() == "consumer");
    BOOST_TEST(q.getColumn(2).getString() == "range");
    BOOST_TEST(q.getColumn(3).getString() == member);
    BOOST_TEST(q.getColumn(4).getString() == member);
    BOOST_TEST(q.getColumn(5).getString() == "orders,payments");
    BOOST_TEST(q.getColumn(6).getString() == "/127.0.0.1");
  }
  h.restart();
  BOOST_TEST(h.count_rows("SELECT count(*) FROM group_members") == 0);
  BOOST_TEST(h.count_rows("SELECT count(*) FROM consumer_groups WHERE state = 'Empty' AND generation = 1") == 1);
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
  auto snap = state::load_groups_for_restart(**db, 5000);
  BOOST_REQUIRE(snap.groups.size() == 2u);
  BOOST_TEST(snap.groups[0].group_id == "grp");
  BOOST_TEST(snap.groups[0].state == "Empty");
  BOOST_TEST(snap.groups[0].generation == 4);
  BOOST_TEST(snap.groups[0].updated_at_ms == 5000);
  BOOST_TEST(snap.groups[0].protocol_name == "");
  BOOST_TEST(snap.groups[1].group_id == "offsets-only");
  BOOST_REQUIRE(snap.offsets.size() == 2u);
  BOOST_TEST(snap.offsets[0].metadata == std::string("a\0b", 3));
  BOOST_TEST(snap.offsets[0].leader_epoch == 3);
  BOOST_TEST(!snap.offsets[0].expire_time_ms);
  BOOST_TEST(snap.offsets[1].expire_time_ms.value_or(0) == 99999);
  BOOST_TEST(state::expire_committed_offset(**db, "grp", "orders", 0, 1999) == 0);  // newer commit survives
  BOOST_TEST(state::expire_committed_offset(**db, "grp", "orders", 0, 2000) == 1);
  state::delete_group(**db, "offsets-only");
  BOOST_TEST((*db)->execAndGet("SELECT count(*) FROM committed_offsets").getInt() == 0);
  db->reset();
  h.start();
}

BOOST_AUTO_TEST_SUITE_END()
