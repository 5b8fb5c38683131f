// One streams group (src/bridge/groups/streams_group.h) driven heartbeat by heartbeat through a
// host double (clock, timers, topics, writes): Kafka Streams' word count joining, its internal
// topics reported missing then found, the initial delay and the assignment interval, a second
// instance taking half the tasks only after the first let them go, leaving, fencing, Kafka's
// refusals and the offset rules. The neighbours are doubles; the group is the real one.
#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>

#include "bridge/groups/streams_group.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::streams;

namespace {

const std::string kRep = "wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition";
const std::string kLog = "wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog";

struct World {
  int64_t now = 1'000'000;
  std::map<std::string, int32_t> topics{{"words", 3}};
  std::set<std::string> sessions, rebalances;
  int persisted = 0;
  int member_writes = 0;  // of those, writes of one member's row
};

struct FakeHost : StreamsGroupHost {
  explicit FakeHost(World& w) : w(w) {}
  int64_t now_ms() const override { return w.now; }
  void arm_session(const std::string& m, int64_t) override { w.sessions.insert(m); }
  void cancel_session(const std::string& m) override { w.sessions.erase(m); }
  void arm_rebalance(const std::string& m, int32_t, int64_t) override { w.rebalances.insert(m); }
  void cancel_rebalance(const std::string& m) override { w.rebalances.erase(m); }
  std::optional<int32_t> partitions(const std::string& t) const override {
    auto it = w.topics.find(t);
    return it == w.topics.end() ? std::nullopt : std::optional<int32_t>(it->second);
  }
  void persist(const StreamsGroup&, const std::string* only_member, std::function<void(Status)> done) override {
    ++w.persisted;
    if (only_member) ++w.member_writes;
    if (done) done(ok_status());
  }
  void answer(StreamsHeartbeatCallback cb, StreamsHeartbeatResult r) override { cb(std::move(r)); }
  World& w;
};

Topology word_count() {
  Subtopology split;
  split.id = "0";
  split.source_topics = {"words"};
  split.repartition_sink_topics = {kRep};
  Subtopology count;
  count.id = "1";
  count.repartition_source_topics = {TopicInfo{kRep, 0, -1, {{"cleanup.policy", "delete"}}}};
  count.state_changelog_topics = {TopicInfo{kLog, 0, -1, {{"cleanup.policy", "compact"}}}};
  return Topology{0, {split, count}};
}

struct Fixture {
  World w;
  StreamsGroup g{"wc", StreamsGroupOptions{}, std::make_unique<FakeHost>(w)};

  StreamsHeartbeatResult beat(StreamsHeartbeatParams p) {
    std::optional<StreamsHeartbeatResult> out;
    g.heartbeat(p, [&](StreamsHeartbeatResult r) { out = std::move(r); });
    BOOST_REQUIRE(out.has_value());
    return *out;
  }
  StreamsHeartbeatResult join(const std::string& member, const std::string& process, Topology t = word_count()) {
    StreamsHeartbeatParams p;
    p.member_id = member;
    p.member_epoch = 0;
    p.rebalance_timeout_ms = 300000;
    p.topology = std::move(t);
    p.owned = OwnedTasks{};
    p.process_id = process;
    p.client_id = member + "-client";
    p.client_host = "/127.0.0.1";
    return beat(p);
  }
  StreamsHeartbeatResult again(const std::string& member, int32_t epoch, std::optional<OwnedTasks> owned = std::nullopt) {
    StreamsHeartbeatParams p;
    p.member_id = member;
    p.member_epoch = epoch;
    p.owned = std::move(owned);
    p.client_id = member + "-client";
    p.client_host = "/127.0.0.1";
    return beat(p);
  }
  // No task active on two members, whatever the step.
  void check_exclusive() {
    std::map<std::pair<std::string, int32_t>, int> owners;
    for (const auto& [id, m] : g.members())
      for (const MemberTasks* t : {&m.r.assigned, &m.r.pending_revocation})
        for (const auto& [s, parts] : t->active)
          for (const auto& [p, e] : parts) ++owners[std::make_pair(s, p)];
    for (const auto& [task, n] : owners) BOOST_TEST(n == 1, "task " << task.first << "_" << task.second);
  }
};

size_t active_count(const std::optional<TaskAssignment>& t) {
  size_t n = 0;
  if (t)
    for (const auto& [s, parts] : t->active) n += parts.size();
  return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(streams_group)

BOOST_FIXTURE_TEST_CASE(word_count_joins_waits_for_its_topics_then_gets_every_task, Fixture) {
  auto r = join("a", "p1");
  BOOST_TEST((r.error == ErrorCode::kNone));
  BOOST_TEST(r.member_epoch == 1);
  BOOST_TEST(r.heartbeat_interval_ms == 5000);
  BOOST_REQUIRE(r.tasks.has_value());  // a joining member always gets its (empty) tasks
  BOOST_TEST(active_count(r.tasks) == 0u);
  BOOST_REQUIRE(r.status.size() == 2u);
  BOOST_TEST((r.status[0] == StreamsStatusEntry{StreamsStatus::kAssignmentDelayed,
                                                "Assignment delayed due to the configured initial rebalance delay."}));
  BOOST_TEST((r.status[1] == StreamsStatusEntry{StreamsStatus::kMissingInternalTopics,
                                                "Internal topics are missing: " + kLog + ", " + kRep}));
  BOOST_REQUIRE(r.topics_to_create.size() == 2u);
  BOOST_TEST(r.topics_to_create[0].partitions == 3);
  BOOST_TEST(g.group_epoch() == 2);
  BOOST_TEST(g.state_name() == std::string("NotReady"));
  BOOST_TEST(w.sessions.contains("a"));

  // The caller created the topics; the delay is over.
  w.topics[kRep] = 3;
  w.topics[kLog] = 3;
  w.now += 3001;
  r = again("a", 1, OwnedTasks{});
  BOOST_TEST(r.status.empty());
  BOOST_TEST(r.topics_to_create.empty());
  BOOST_TEST(r.member_epoch == 3);
  BOOST_TEST(active_count(r.tasks) == 6u);
  BOOST_TEST(g.state_name() == std::string("Stable"));
  // Nothing changed: no task lists in the answer, and nothing written.
  const int writes = w.persisted;
  r = again("a", 3, r.tasks);
  BOOST_TEST(!r.tasks.has_value());
  BOOST_TEST(r.member_epoch == 3);
  BOOST_TEST(w.persisted == writes);
}

BOOST_FIXTURE_TEST_CASE(a_second_instance_gets_half_the_tasks_once_the_first_let_them_go, Fixture) {
  w.topics[kRep] = 3;
  w.topics[kLog] = 3;
  join("a", "p1");
  w.now += 3001;
  auto a = again("a", 1, OwnedTasks{});
  BOOST_REQUIRE(active_count(a.tasks) == 6u);
  const TaskAssignment a_all = *a.tasks;

  w.now += 10;
  auto b = join("b", "p2");  // within the assignment interval of a's target
  BOOST_TEST(b.status.at(0).detail == "Assignment delayed due to the configured assignment interval.");
  BOOST_TEST(active_count(b.tasks) == 0u);
  w.now += 1000;
  b = again("b", b.member_epoch, OwnedTasks{});  // the new target: b's tasks are still a's
  BOOST_TEST(b.status.empty());
  BOOST_TEST(active_count(b.tasks) == 0u);
  check_exclusive();

  a = again("a", a.member_epoch, a_all);  // a is told to give up three
  BOOST_TEST(active_count(a.tasks) == 3u);
  BOOST_TEST(w.rebalances.contains("a"));
  check_exclusive();
  b = again("b", b.member_epoch, OwnedTasks{});  // still held by a
  BOOST_TEST(active_count(b.tasks) == 0u);

  const int member_writes = w.member_writes;
  a = again("a", a.member_epoch, a.tasks);  // a let them go: only its own row is written
  BOOST_TEST(!w.rebalances.contains("a"));
  BOOST_TEST(w.member_writes == member_writes + 1);
  b = again("b", b.member_epoch, OwnedTasks{});
  BOOST_TEST(active_count(b.tasks) == 3u);
  check_exclusive();
  BOOST_TEST(a.member_epoch == b.member_epoch);
  BOOST_TEST(g.state_name() == std::string("Stable"));

  // a leaves: its tasks go to b at the next target.
  StreamsHeartbeatParams leave;
  leave.member_id = "a";
  leave.member_epoch = -1;
  auto left = beat(leave);
  BOOST_TEST(left.member_epoch == -1);
  BOOST_TEST(left.heartbeat_interval_ms == 0);
  BOOST_TEST(!w.sessions.contains("a"));
  w.now += 1000;
  b = again("b", b.member_epoch, b.tasks);
  BOOST_TEST(active_count(b.tasks) == 6u);
}

BOOST_FIXTURE_TEST_CASE(a_static_member_that_left_with_epoch_minus_2_is_replaced_by_its_next_incarnation, Fixture) {
  // Kafka 4.4's static streams members: -2 keeps the place and the tasks, the new incarnation
  // takes them over without a new group epoch; a live holder refuses a second incarnation.
  w.topics[kRep] = 3;
  w.topics[kLog] = 3;
  StreamsHeartbeatParams p;
  p.member_id = "a1";
  p.instance_id = "app-0";
  p.member_epoch = 0;
  p.rebalance_timeout_ms = 300000;
  p.topology = word_count();
  p.owned = OwnedTasks{};
  p.process_id = "p1";
  auto a = beat(p);
  w.now += 3001;
  StreamsHeartbeatParams again_p;
  again_p.member_id = "a1";
  again_p.instance_id = "app-0";
  again_p.member_epoch = a.member_epoch;
  again_p.owned = OwnedTasks{};
  a = beat(again_p);
  BOOST_REQUIRE(active_count(a.tasks) == 6u);
  const int32_t epoch = g.group_epoch();

  StreamsHeartbeatParams second = p;  // another process claims the instance id while a1 lives
  second.member_id = "a2";
  auto refused = beat(second);
  BOOST_TEST((refused.error == ErrorCode::kUnreleasedInstanceId));
  BOOST_TEST(refused.message ==
             "Static member a2 with instance id app-0 cannot join the group because the instance id is owned by a1 member.");
  StreamsHeartbeatParams wrong = again_p;
  wrong.member_id = "a2";
  wrong.member_epoch = a.member_epoch;
  BOOST_TEST((beat(wrong).error == ErrorCode::kFencedInstanceId));

  StreamsHeartbeatParams leave;
  leave.member_id = "a1";
  leave.instance_id = "app-0";
  leave.member_epoch = -2;
  auto left = beat(leave);
  BOOST_TEST((left.error == ErrorCode::kNone));
  BOOST_TEST(left.member_epoch == -2);
  BOOST_REQUIRE(g.members().count("a1") == 1u);  // still there, holding its tasks
  BOOST_TEST(g.members().at("a1").r.member_epoch == -2);
  BOOST_TEST(g.group_epoch() == epoch);
  BOOST_TEST(w.sessions.contains("a1"));

  auto back = beat(second);  // the next incarnation
  BOOST_TEST((back.error == ErrorCode::kNone));
  BOOST_TEST(g.members().count("a1") == 0u);
  BOOST_REQUIRE(g.members().count("a2") == 1u);
  BOOST_TEST(*g.members().at("a2").instance_id == "app-0");
  BOOST_TEST(active_count(back.tasks) == 6u);  // its predecessor's tasks, at once
  BOOST_TEST(!w.sessions.contains("a1"));
  check_exclusive();

  // -1 from a static member removes it.
  leave.member_id = "a2";
  leave.member_epoch = -1;
  BOOST_TEST((beat(leave).error == ErrorCode::kNone));
  BOOST_TEST(g.members().empty());
}

BOOST_FIXTURE_TEST_CASE(kafkas_refusals, Fixture) {
  join("a", "p1");
  auto r = again("a", 99);
  BOOST_TEST((r.error == ErrorCode::kFencedMemberEpoch));
  BOOST_TEST(r.message ==
             "The streams group member has a greater member epoch (99) than the one known by the group coordinator "
             "(1). The member must abandon all its partitions and rejoin.");
  r = again("ghost", 3);
  BOOST_TEST((r.error == ErrorCode::kUnknownMemberId));
  BOOST_TEST(r.message == "Member ghost is not a member of group wc.");
  Topology other = word_count();
  other.subtopologies[0].source_topics = {"sentences"};
  r = join("c", "p3", other);
  BOOST_TEST((r.error == ErrorCode::kInvalidRequest));
  BOOST_TEST(r.message == "Topology updates are not supported yet.");
  BOOST_TEST(!g.members().contains("c"));
}

BOOST_AUTO_TEST_CASE(an_invalid_topology_fails_the_join_and_is_not_kept) {
  World w;
  StreamsGroup g{"bad", StreamsGroupOptions{}, std::make_unique<FakeHost>(w)};
  Subtopology loop;
  loop.id = "0";
  loop.repartition_source_topics = {TopicInfo{"r", 0, 0, {}}};
  loop.repartition_sink_topics = {"r"};
  StreamsHeartbeatParams p;
  p.member_id = "a";
  p.topology = Topology{0, {loop}};
  p.owned = OwnedTasks{};
  p.rebalance_timeout_ms = 1000;
  std::optional<StreamsHeartbeatResult> r;
  g.heartbeat(p, [&](StreamsHeartbeatResult x) { r = std::move(x); });
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST((r->error == ErrorCode::kStreamsInvalidTopology));
  BOOST_TEST(!g.topology().has_value());
  BOOST_TEST(g.members().empty());
}

BOOST_AUTO_TEST_CASE(a_full_group_refuses_a_joining_member) {
  World w;
  StreamsGroupOptions o;
  o.max_size = 1;
  StreamsGroup g{"full", o, std::make_unique<FakeHost>(w)};
  StreamsHeartbeatParams p;
  p.member_epoch = 0;
  p.topology = word_count();
  p.owned = OwnedTasks{};
  p.rebalance_timeout_ms = 1000;
  std::optional<StreamsHeartbeatResult> r;
  p.member_id = "a";
  g.heartbeat(p, [&](StreamsHeartbeatResult x) { r = std::move(x); });
  BOOST_TEST((r->error == ErrorCode::kNone));
  p.member_id = "b";
  g.heartbeat(p, [&](StreamsHeartbeatResult x) { r = std::move(x); });
  BOOST_TEST((r->error == ErrorCode::kGroupMaxSizeReached));
  BOOST_TEST(r->message == "The streams group has reached its maximum capacity of 1 members.");
}

BOOST_FIXTURE_TEST_CASE(offsets_follow_the_member_and_task_epochs, Fixture) {
  w.topics[kRep] = 3;
  w.topics[kLog] = 3;
  join("a", "p1");
  w.now += 3001;
  auto a = again("a", 1, OwnedTasks{});
  const int32_t epoch = a.member_epoch;
  OffsetCommitParams c;
  c.group_id = "wc";
  c.member_id = "a";
  c.group_id_not_found_error = true;  // v9+
  c.generation_id = epoch;
  c.entries.push_back({"words", 1, 10, -1, ""});
  BOOST_TEST(!g.validate_offset_commit(c).has_value());
  c.generation_id = epoch + 1;
  BOOST_TEST((g.validate_offset_commit(c) == ErrorCode::kStaleMemberEpoch));
  c.generation_id = epoch - 1;  // older than the task's assignment epoch
  BOOST_TEST((g.validate_offset_commit(c) == ErrorCode::kStaleMemberEpoch));
  c.transactional = true;  // TxnOffsetCommit: a stale epoch is ILLEGAL_GENERATION there
  BOOST_TEST((g.validate_offset_commit(c) == ErrorCode::kIllegalGeneration));
  c.generation_id = epoch + 1;
  BOOST_TEST((g.validate_offset_commit(c) == ErrorCode::kIllegalGeneration));
  c.transactional = false;
  c.group_id_not_found_error = false;  // v8
  c.generation_id = epoch;
  BOOST_TEST((g.validate_offset_commit(c) == ErrorCode::kUnsupportedVersion));
  c.member_id = "nobody";
  BOOST_TEST((g.validate_offset_commit(c) == ErrorCode::kUnknownMemberId));
  BOOST_TEST(!g.validate_offset_fetch("a", epoch).has_value());
  BOOST_TEST((g.validate_offset_fetch("a", epoch - 1) == ErrorCode::kStaleMemberEpoch));
  BOOST_TEST(!g.validate_offset_fetch("", -1).has_value());
  BOOST_TEST(g.is_subscribed_to_topic("words"));
  BOOST_TEST(g.is_subscribed_to_topic(kRep));
  BOOST_TEST(!g.is_subscribed_to_topic(kLog));
  BOOST_TEST((g.validate_delete_group() == ErrorCode::kNonEmptyGroup));
  g.on_session_expired("a");
  BOOST_TEST(g.members().empty());
  BOOST_TEST(!g.validate_delete_group().has_value());
  BOOST_TEST(g.state_name() == std::string("Empty"));
  BOOST_TEST(g.describe().not_classic.value_or("") == "Group wc is not a classic group.");
}

BOOST_AUTO_TEST_SUITE_END()
