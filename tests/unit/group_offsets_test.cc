// The coordinator's side of committed offsets (the storage itself: committed_offsets_test.cc):
// who may commit, each group's retention rule, empty groups dropped once their offsets expired,
// OffsetDelete against the group's subscription, DeleteGroups; and the group SQL of
// state/group_store. Kafka references: GroupCoordinator.handleCommitOffsets /
// cleanupGroupMetadata (3.x), GroupMetadataManager / OffsetMetadataManager (4.x).
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "bridge/groups/group_coordinator.h"
#include "kafka/protocol/generated/consumer_protocol_subscription.h"
#include "state/group_store.h"
#include "state/state_store.h"
#include "support/manual_group_timers.h"

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
  std::unique_ptr<CommittedOffsets> offsets;
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
    offsets = std::make_unique<CommittedOffsets>(*store, timers);
    BOOST_REQUIRE(offsets->load().ok());
    gc = std::make_unique<GroupCoordinator>(*store, timers, *offsets, options);
    BOOST_REQUIRE(gc->load().ok());
  }
  void stop() {
    settle();
    gc.reset();
    offsets.reset();
    if (store) store->close();
    store.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  void restart() {
    stop();
    start();
  }
  void settle() {
    while ((gc && gc->pending_writes() > 0) || (offsets && offsets->pending_writes() > 0)) uv_run(&loop, UV_RUN_ONCE);
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
    return offsets->fetch_offsets(group, &tps).at(0);
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

BOOST_AUTO_TEST_SUITE_END()
