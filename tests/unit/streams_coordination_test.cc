// KIP-1071 streams groups through the real GroupCoordinator (streams_coordination.cc), a real
// SQLite state store and a manual clock: Kafka 4.4's request checks, the group created by a join
// and its internal topics created through the coordinator's topic creator (once while in flight,
// failures kept and reported), the first tasks after the initial delay, a restart that keeps the
// topology, members, epochs and tasks (no new group epoch), ListGroups' "streams" type,
// StreamsGroupDescribe's not-found messages and DeleteGroups removing the rows. One group's logic
// is in streams_group_test.cc; Kafka Streams itself against Kafka 4.4 and the bridge:
// tests/clients/test_streams_groups.py.
#include <boost/test/unit_test.hpp>

#include <uv.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/groups/streams_group_rows.h"
#include "state/state_store.h"
#include "support/manual_group_timers.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::streams;
using kib::state::StateStore;

namespace {

constexpr int64_t kStart = 1'700'000'000'000;
const std::string kRep = "wc-by-word-repartition";
const std::string kLog = "wc-counts-changelog";

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

struct Harness {
  std::filesystem::path dir;
  uv_loop_t loop{};
  ManualGroupTimers timers{kStart};
  GroupCoordinatorOptions options;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<CommittedOffsets> offsets;
  std::unique_ptr<GroupCoordinator> gc;
  std::map<std::string, int32_t> topics{{"words", 2}};
  std::vector<std::string> creations;               // create_topic calls, in order
  std::map<std::string, std::function<void(Status)>> pending_creations;
  bool topics_known = true;

  Harness() {
    char tmpl[] = "/tmp/kib-sgroups-XXXXXX";
    dir = mkdtemp(tmpl);
    uv_loop_init(&loop);
    options.streams.initial_rebalance_delay_ms = 3000;
    options.streams.session_timeout_ms = 45000;
    options.topic_partitions = [this](const std::string& t) -> std::optional<int32_t> {
      auto it = topics.find(t);
      if (it == topics.end()) return std::nullopt;
      return it->second;
    };
    options.topics_known = [this] { return topics_known; };
    options.create_topic = [this](const std::string& name, int32_t partitions, int16_t, const auto&,
                                  std::function<void(Status)> done) {
      creations.push_back(name + ":" + std::to_string(partitions));
      pending_creations[name] = [this, name, partitions, done = std::move(done)](Status st) {
        if (st) topics[name] = partitions;
        done(std::move(st));
      };
    };
    start();
  }
  ~Harness() {
    stop();
    uv_loop_close(&loop);
    std::filesystem::remove_all(dir);
  }
  void start() {
    auto s = StateStore::open((dir / "state.db").string(), &loop);
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
  void settle() {
    while ((gc && gc->pending_writes() > 0) || (offsets && offsets->pending_writes() > 0)) uv_run(&loop, UV_RUN_ONCE);
  }
  void finish_creations(Status st = ok_status()) {
    auto all = std::move(pending_creations);
    pending_creations.clear();
    for (auto& [_, f] : all) f(st);
  }

  StreamsHeartbeatResult beat(StreamsHeartbeatShape shape, StreamsHeartbeatParams p) {
    std::optional<StreamsHeartbeatResult> out;
    shape.group_id = shape.group_id.empty() ? "wc" : shape.group_id;
    gc->streams_group_heartbeat(shape, std::move(p), [&out](StreamsHeartbeatResult r) { out = std::move(r); });
    while (!out) uv_run(&loop, UV_RUN_ONCE);
    settle();
    return std::move(*out);
  }
  StreamsHeartbeatResult join(const std::string& member) {
    StreamsHeartbeatShape shape;
    shape.has_topology = true;
    for (int i = 0; i < 3; ++i) shape.owned_sent[i] = true;
    StreamsHeartbeatParams p;
    p.member_id = member;
    p.rebalance_timeout_ms = 300000;
    p.topology = word_count();
    p.owned = OwnedTasks{};
    p.process_id = "process-" + member;
    return beat(shape, p);
  }
  StreamsHeartbeatResult heartbeat(const std::string& member, int32_t epoch, std::optional<OwnedTasks> owned) {
    StreamsHeartbeatShape shape;
    for (int i = 0; i < 3; ++i) shape.owned_sent[i] = owned.has_value();
    StreamsHeartbeatParams p;
    p.member_id = member;
    p.member_epoch = epoch;
    p.owned = std::move(owned);
    return beat(shape, p);
  }
  int64_t count(const std::string& sql) {
    int64_t n = -1;
    BOOST_REQUIRE(store->run_blocking([&](SQLite::Database& db) { n = db.execAndGet(sql).getInt64(); }).ok());
    return n;
  }
};

bool has_status(const StreamsHeartbeatResult& r, StreamsStatus code) {
  for (const auto& s : r.status)
    if (s.code == code) return true;
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(streams_heartbeat_requests_are_checked_as_kafka_4_4_checks_them) {
  Harness h;
  auto refused = [&](StreamsHeartbeatShape shape, StreamsHeartbeatParams p) {
    auto r = h.beat(std::move(shape), std::move(p));
    BOOST_TEST((r.error != ErrorCode::kNone));
    return r.message;
  };
  StreamsHeartbeatShape join_shape;
  join_shape.has_topology = true;
  for (int i = 0; i < 3; ++i) join_shape.owned_sent[i] = true;
  StreamsHeartbeatParams join;
  join.member_id = "m";
  join.rebalance_timeout_ms = 1000;
  join.topology = word_count();
  join.owned = OwnedTasks{};

  auto p = join;
  p.member_id = " ";
  BOOST_TEST(refused(join_shape, p) == "MemberId can't be empty.");
  p = join;
  p.rebalance_timeout_ms = -1;
  BOOST_TEST(refused(join_shape, p) == "RebalanceTimeoutMs must be provided in first request.");
  auto s = join_shape;
  s.owned_sent[1] = false;
  BOOST_TEST(refused(s, join) == "StandbyTasks must be empty when (re-)joining.");
  s = join_shape;
  s.owned_empty[0] = false;
  BOOST_TEST(refused(s, join) == "ActiveTasks must be empty when (re-)joining.");
  s = join_shape;
  s.has_topology = false;
  BOOST_TEST(refused(s, join) == "Topology must be non-null when (re-)joining.");
  s = join_shape;
  s.changelog_partitions = {{kLog, 3}};
  BOOST_TEST(refused(s, join) ==
             "Changelog topic " + kLog + " must have an undefined partition count, but it is set to 3.");
  s = join_shape;
  s.source_topic_regex = {"w.*"};
  BOOST_TEST(refused(s, join) == "Regular expressions for source topics are not supported yet.");
  p = join;
  p.member_epoch = -3;
  BOOST_TEST(refused(join_shape, p) == "MemberEpoch is -3, but must be greater than or equal to -2.");
  p = join;
  p.member_epoch = 4;
  s = join_shape;
  s.has_topology = false;
  s.owned_sent[2] = false;
  BOOST_TEST(refused(s, p) == "If one task-type is non-null, all must be non-null.");
  s.owned_sent[2] = true;
  s.has_topology = true;
  BOOST_TEST(refused(s, p) == "Topology can only be provided when (re-)joining.");
  s.has_topology = false;
  BOOST_TEST(refused(s, p) == "Streams group wc not found.");
  // No request above left a group behind.
  BOOST_TEST(h.gc->list_groups({}, {}).empty());
}

BOOST_AUTO_TEST_CASE(a_join_creates_the_internal_topics_once_and_tasks_follow_the_initial_delay) {
  Harness h;
  auto r = h.join("a");
  BOOST_REQUIRE(r.error == ErrorCode::kNone);
  BOOST_TEST(r.member_epoch == 1);  // the assignment epoch of a new group, whose first target waits
  BOOST_TEST(has_status(r, StreamsStatus::kAssignmentDelayed));
  BOOST_TEST(has_status(r, StreamsStatus::kMissingInternalTopics));
  BOOST_TEST(r.topics_to_create.size() == 2u);
  // The handler asks the coordinator to create them: once while the creation is in flight.
  BOOST_TEST(h.gc->create_streams_topics(r.topics_to_create, 10000).empty());
  BOOST_TEST(h.gc->create_streams_topics(r.topics_to_create, 10000).empty());
  BOOST_TEST(h.creations == (std::vector<std::string>{kRep + ":2", kLog + ":2"}), boost::test_tools::per_element());
  h.finish_creations();

  h.timers.advance(3000);
  r = h.heartbeat("a", r.member_epoch, OwnedTasks{});
  BOOST_REQUIRE(r.error == ErrorCode::kNone);
  BOOST_TEST(r.status.empty());
  BOOST_REQUIRE(r.tasks.has_value());
  BOOST_TEST((r.tasks->active == Tasks{{"0", {0, 1}}, {"1", {0, 1}}}));
  BOOST_TEST(h.gc->list_groups({}, {"streams"}).size() == 1u);
  BOOST_TEST(h.gc->list_groups({}, {"consumer"}).empty());
  BOOST_TEST(h.gc->list_groups({}, {"streams"}).front().state == "Stable");
}

// Right after a restart the catalog has not read the topics from Iggy yet: a group configured
// against no topics would take every task away (NotReady) and give them back later. The
// heartbeat waits instead, as Kafka's coordinator answers while it loads, and its member's
// session goes on.
BOOST_AUTO_TEST_CASE(heartbeats_wait_with_load_in_progress_until_the_topics_are_known) {
  Harness h;
  auto r = h.join("a");
  h.gc->create_streams_topics(r.topics_to_create, 10000);
  h.finish_creations();
  h.timers.advance(3000);
  r = h.heartbeat("a", r.member_epoch, OwnedTasks{});
  BOOST_REQUIRE(r.tasks.has_value());
  const int32_t epoch = r.member_epoch, group_epoch = h.gc->streams_group_describe("wc").group->group_epoch();
  h.topics_known = false;
  for (int i = 0; i < 10; ++i) {  // 50 s of heartbeats, beyond the 45 s session
    h.timers.advance(5000);
    BOOST_TEST((h.heartbeat("a", epoch, std::nullopt).error == ErrorCode::kCoordinatorLoadInProgress));
  }
  h.topics_known = true;
  r = h.heartbeat("a", epoch, std::nullopt);
  BOOST_REQUIRE((r.error == ErrorCode::kNone));
  BOOST_TEST(r.member_epoch == epoch);
  BOOST_TEST(!r.tasks.has_value());
  BOOST_TEST(h.gc->streams_group_describe("wc").group->group_epoch() == group_epoch);
}

// A group's own streams.* configs (kafka-configs --entity-type groups): the heartbeat interval
// reaches the next answer; a new standby count moves the group epoch (a new target assignment).
BOOST_AUTO_TEST_CASE(a_groups_own_streams_configs_reach_its_members) {
  Harness h;
  StreamsGroupOptions own = h.options.streams;
  own.heartbeat_interval_ms = 2500;
  h.options.streams_options = [&own](const std::string&) { return own; };
  h.stop();
  h.start();
  auto r = h.join("a");
  BOOST_TEST(r.heartbeat_interval_ms == 2500);
  h.gc->create_streams_topics(r.topics_to_create, 10000);
  h.finish_creations();
  h.timers.advance(3000);
  r = h.heartbeat("a", r.member_epoch, OwnedTasks{});
  BOOST_REQUIRE(r.tasks.has_value());
  const int32_t group_epoch = h.gc->streams_group_describe("wc").group->group_epoch();
  own.heartbeat_interval_ms = 4000;
  own.num_standby_replicas = 1;
  h.gc->group_config_changed("wc");
  h.timers.advance(1000);
  r = h.heartbeat("a", r.member_epoch, std::nullopt);
  BOOST_TEST(r.heartbeat_interval_ms == 4000);
  BOOST_TEST(h.gc->streams_group_describe("wc").group->group_epoch() == group_epoch + 1);
}

BOOST_AUTO_TEST_CASE(a_failed_internal_topic_creation_is_reported_until_it_expires) {
  Harness h;
  auto r = h.join("a");
  h.gc->create_streams_topics(r.topics_to_create, 10000);
  h.finish_creations(Error{ErrorDomain::kKafka, 0, "no room for topics"});
  auto failures = h.gc->create_streams_topics(r.topics_to_create, 10000);
  BOOST_TEST(failures == (std::vector<std::string>{kRep + " (no room for topics)", kLog + " (no room for topics)"}),
             boost::test_tools::per_element());
  BOOST_TEST(h.creations.size() == 2u);
  h.timers.advance(10001);
  BOOST_TEST(h.gc->create_streams_topics(r.topics_to_create, 10000).empty());
  BOOST_TEST(h.creations.size() == 4u);  // tried again once the failure expired
}

BOOST_AUTO_TEST_CASE(a_restart_keeps_the_streams_group_its_members_epochs_and_tasks) {
  Harness h;
  auto r = h.join("a");
  h.gc->create_streams_topics(r.topics_to_create, 10000);
  h.finish_creations();
  h.timers.advance(3000);
  r = h.heartbeat("a", r.member_epoch, OwnedTasks{});
  BOOST_REQUIRE(r.tasks.has_value());
  const int32_t epoch = r.member_epoch;
  const OwnedTasks owned = *r.tasks;
  const auto described = h.gc->streams_group_describe("wc");
  BOOST_REQUIRE(described.group != nullptr);
  const int32_t group_epoch = described.group->group_epoch();
  BOOST_TEST(h.count("SELECT count(*) FROM streams_group_members WHERE group_id = 'wc'") == 1);

  h.stop();
  h.start();
  const auto after = h.gc->streams_group_describe("wc");
  BOOST_REQUIRE(after.group != nullptr);
  BOOST_TEST(after.group->members().size() == 1u);
  BOOST_TEST(after.group->state_name() == std::string("Stable"));
  // The member carries on at its epoch with its tasks: no new group epoch, no new tasks.
  r = h.heartbeat("a", epoch, owned);
  BOOST_REQUIRE(r.error == ErrorCode::kNone);
  BOOST_TEST(r.member_epoch == epoch);
  BOOST_TEST(!r.tasks.has_value());
  BOOST_TEST(h.gc->streams_group_describe("wc").group->group_epoch() == group_epoch);
}

BOOST_AUTO_TEST_CASE(describing_and_deleting_streams_groups_answer_as_kafka) {
  Harness h;
  BOOST_TEST(h.gc->streams_group_describe("nope").message == "Group nope not found.");
  auto r = h.join("a");
  BOOST_TEST((h.gc->streams_group_describe("wc").error == ErrorCode::kNone));
  std::optional<std::vector<ErrorCode>> deleted;
  h.gc->delete_groups({"wc"}, [&](std::vector<ErrorCode> e) { deleted = std::move(e); });
  h.settle();
  BOOST_REQUIRE(deleted.has_value());
  BOOST_TEST((deleted->front() == ErrorCode::kNonEmptyGroup));
  StreamsHeartbeatShape leave_shape;
  StreamsHeartbeatParams leave;
  leave.member_id = "a";
  leave.member_epoch = -1;
  BOOST_TEST(h.beat(leave_shape, leave).member_epoch == -1);
  deleted.reset();
  h.gc->delete_groups({"wc"}, [&](std::vector<ErrorCode> e) { deleted = std::move(e); });
  while (!deleted) uv_run(&h.loop, UV_RUN_ONCE);
  h.settle();
  BOOST_TEST((deleted->front() == ErrorCode::kNone));
  BOOST_TEST(h.count("SELECT count(*) FROM streams_groups") == 0);
  BOOST_TEST(h.count("SELECT count(*) FROM streams_group_members") == 0);
}

BOOST_AUTO_TEST_CASE(streams_group_rows_round_trip_the_snapshot) {
  StreamsGroupSnapshot s;
  s.group_id = "wc";
  s.group_epoch = 7;
  s.assignment_epoch = 6;
  s.validated_topology_epoch = 0;
  s.last_standby_replicas = 0;
  s.topology = word_count();
  s.topology->subtopologies[1].copartition_groups = {CopartitionGroup{{}, {}, {0}}};
  s.configured_from = {{"words", 2}, {kRep, 2}};
  StreamsMember m;
  m.member_id = "a";
  m.rack_id = "r1";
  m.client_id = "c";
  m.client_host = "/127.0.0.1";
  m.rebalance_timeout_ms = 300000;
  m.topology_epoch = 0;
  m.user_endpoint = Endpoint{"localhost", 8080};
  m.client_tags = {{"zone", "a"}};
  m.r.process_id = "p";
  m.r.member_epoch = 6;
  m.r.previous_member_epoch = 5;
  m.r.state = StreamsMemberState::kUnrevokedTasks;
  m.r.assigned.active = {{"0", {{0, 3}, {1, 6}}}};
  m.r.pending_revocation.active = {{"1", {{1, 4}}}};
  m.r.assigned.standby = {{"1", {0}}};
  s.members["a"] = m;
  s.target["a"] = TaskAssignment{{{"0", {0, 1}}}, {{"1", {0}}}, {}};
  auto [row, members] = streams_group_rows(s, "Reconciling", 42);
  BOOST_TEST(members.front().state == "unrevoked_tasks");
  BOOST_TEST(members.front().tasks[0] == R"({"0":{"0":3,"1":6}})");
  state::StoredStreamsGroup stored{row, members};
  std::string error;
  auto back = streams_group_from_rows(stored, &error);
  BOOST_REQUIRE_MESSAGE(back.has_value(), error);
  BOOST_TEST((back->topology == s.topology));
  BOOST_TEST((back->members == s.members));
  BOOST_TEST((back->target == s.target));
  BOOST_TEST((back->configured_from == s.configured_from));
  BOOST_TEST(back->group_epoch == 7);
  stored.members.front().tasks[3] = "{not json";
  BOOST_TEST(!streams_group_from_rows(stored, &error).has_value());
}
