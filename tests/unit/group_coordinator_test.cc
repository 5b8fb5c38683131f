// The classic group protocol state machine against a real SQLite state store, with a manual
// clock for every timer. Kafka references: GroupCoordinator.scala / GroupMetadata.scala (3.x),
// GroupMetadataManager.java / ClassicGroup.java (4.x), and their GroupCoordinatorTest.
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bridge/groups/classic_group.h"
#include "bridge/groups/group_coordinator.h"
#include "kafka/protocol/generated/consumer_protocol_assignment.h"
#include "kafka/protocol/generated/consumer_protocol_subscription.h"
#include "state/state_store.h"
#include "support/manual_group_timers.h"

using namespace kib;
using namespace kib::bridge;
using kib::state::StateStore;

namespace {

constexpr int64_t kStart = 1'700'000'000'000;
constexpr int32_t kSession = 10'000;
constexpr int32_t kRebalance = 30'000;

Bytes subscription(std::vector<std::string> topics) {
  kafka::msg::ConsumerProtocolSubscription s;
  s.topics = std::move(topics);
  s.user_data = std::nullopt;
  ByteWriter w(64);
  w.be<int16_t>(0);
  s.encode(w, 0);
  return w.take();
}

Bytes assignment_of(const std::string& topic, std::vector<int32_t> partitions) {
  kafka::msg::ConsumerProtocolAssignment a;
  a.assigned_partitions.push_back({topic, std::move(partitions)});
  a.user_data = std::nullopt;
  ByteWriter w(64);
  w.be<int16_t>(0);
  a.encode(w, 0);
  return w.take();
}

struct Harness {
  std::filesystem::path dir;
  uv_loop_t loop{};
  ManualGroupTimers timers{kStart};
  GroupCoordinatorOptions options;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<CommittedOffsets> offsets;
  std::unique_ptr<GroupCoordinator> gc;

  explicit Harness(GroupCoordinatorOptions opts = {}) : options(std::move(opts)) {
    char tmpl[] = "/tmp/kib-groups-XXXXXX";
    dir = mkdtemp(tmpl);
    uv_loop_init(&loop);
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
  void restart() {
    stop();
    start();
  }
  // Runs the loop until every state write the coordinator and the offsets issued has completed.
  void settle() {
    while ((gc && gc->pending_writes() > 0) || (offsets && offsets->pending_writes() > 0)) uv_run(&loop, UV_RUN_ONCE);
  }
  void advance(int64_t ms) {
    timers.advance(ms);
    settle();
  }
};

// A test consumer: its member id and generation, and the answers it is waiting for.
struct Consumer {
  Harness& h;
  std::string group;
  std::string client_id;
  std::optional<std::string> instance;
  std::vector<GroupProtocol> protocols;
  std::string member_id;
  int32_t generation = -1;
  std::shared_ptr<std::optional<JoinGroupResult>> join_result = std::make_shared<std::optional<JoinGroupResult>>();
  std::shared_ptr<std::optional<SyncGroupResult>> sync_result = std::make_shared<std::optional<SyncGroupResult>>();

  Consumer(Harness& h, std::string group, std::string client_id, std::vector<std::string> topics = {"orders"},
           std::optional<std::string> instance = std::nullopt)
      : h(h), group(std::move(group)), client_id(std::move(client_id)), instance(std::move(instance)) {
    protocols.push_back({"range", subscription(std::move(topics))});
  }

  JoinGroupParams params(int16_t version) const {
    JoinGroupParams p;
    p.group_id = group;
    p.member_id = member_id;
    p.group_instance_id = instance;
    p.require_known_member_id = version >= 4 && !instance;
    p.supports_skip_assignment = version >= 9;
    p.client_id = client_id;
    p.client_host = "/127.0.0.1";
    p.session_timeout_ms = kSession;
    p.rebalance_timeout_ms = kRebalance;
    p.protocol_type = "consumer";
    p.protocols = protocols;
    return p;
  }
  // Sends JoinGroup; the answer lands in join_result (maybe later).
  void send_join(int16_t version = 9) {
    join_result->reset();
    auto out = join_result;
    h.gc->join_group(params(version), [out](JoinGroupResult r) { *out = std::move(r); });
    h.settle();
  }
  // KIP-394 handshake: MEMBER_ID_REQUIRED, then the real join.
  void join(int16_t version = 9) {
    send_join(version);
    if (*join_result && (*join_result)->error == ErrorCode::kMemberIdRequired) {
      member_id = (*join_result)->member_id;
      send_join(version);
    }
  }
  bool joined() {
    if (!*join_result) return false;
    if ((*join_result)->error == ErrorCode::kNone) {
      member_id = (*join_result)->member_id;
      generation = (*join_result)->generation_id;
    }
    return true;
  }
  bool is_leader() const { return *join_result && (*join_result)->leader_id == member_id; }
  void send_sync(std::vector<std::pair<std::string, Bytes>> assignments = {}) {
    sync_result->reset();
    auto out = sync_result;
    SyncGroupParams p;
    p.group_id = group;
    p.generation_id = generation;
    p.member_id = member_id;
    p.group_instance_id = instance;
    p.protocol_type = "consumer";
    p.protocol_name = "range";
    p.assignments = std::move(assignments);
    h.gc->sync_group(std::move(p), [out](SyncGroupResult r) { *out = std::move(r); });
    h.settle();
  }
  ErrorCode heartbeat() { return h.gc->heartbeat(group, member_id, instance, generation); }
  ErrorCode leave() {
    auto r = h.gc->leave_group(group, {{member_id, instance, "test"}});
    return r.error != ErrorCode::kNone ? r.error : r.member_errors.at(0);
  }
};

// Joins every consumer, waits out the initial delay, and syncs with the leader assigning
// `orders` partition i to the i-th consumer.
void form_group(Harness& h, std::vector<Consumer*> cs) {
  for (auto* c : cs) c->join();
  h.advance(h.options.initial_rebalance_delay_ms);
  h.advance(h.options.initial_rebalance_delay_ms);  // the delay extends once when members arrived during it
  std::vector<std::pair<std::string, Bytes>> assignments;
  Consumer* leader = nullptr;
  for (size_t i = 0; i < cs.size(); ++i) {
    BOOST_REQUIRE(cs[i]->joined());
    BOOST_REQUIRE((*cs[i]->join_result)->error == ErrorCode::kNone);
    if (cs[i]->is_leader()) leader = cs[i];
    assignments.emplace_back(cs[i]->member_id, assignment_of("orders", {static_cast<int32_t>(i)}));
  }
  BOOST_REQUIRE(leader);
  for (auto* c : cs)
    if (c != leader) c->send_sync();
  leader->send_sync(assignments);
  for (auto* c : cs) {
    BOOST_REQUIRE(*c->sync_result);
    BOOST_REQUIRE((*c->sync_result)->error == ErrorCode::kNone);
  }
}

// A ClassicGroupHost that only records what the group asks for: the test delivers answers,
// passes deadlines and completes writes by hand.
struct RecordingHost final : ClassicGroupHost {
  int64_t now = kStart;
  std::vector<std::function<void()>> answers;
  std::map<std::string, int64_t> heartbeats;  // member id -> delay
  std::map<std::string, int64_t> pending_members;
  std::optional<int64_t> join_deadline;
  std::optional<std::pair<int64_t, int32_t>> sync_deadline;  // delay, generation
  struct Write {
    std::optional<GroupState> as_state;
    bool with_assignment = false;
    std::function<void(Status)> done;
  };
  std::vector<Write> writes;

  int64_t now_ms() const override { return now; }
  void answer(JoinCallback cb, JoinGroupResult r) override {
    answers.push_back([cb = std::move(cb), r = std::move(r)]() mutable { cb(std::move(r)); });
  }
  void answer(SyncCallback cb, SyncGroupResult r) override {
    answers.push_back([cb = std::move(cb), r = std::move(r)]() mutable { cb(std::move(r)); });
  }
  void arm_heartbeat(const std::string& member_id, int64_t delay_ms) override { heartbeats[member_id] = delay_ms; }
  void cancel_heartbeat(const std::string& member_id) override { heartbeats.erase(member_id); }
  void arm_pending_member(const std::string& member_id, int64_t delay_ms) override {
    pending_members[member_id] = delay_ms;
  }
  void cancel_pending_member(const std::string& member_id) override { pending_members.erase(member_id); }
  void arm_join_deadline(int64_t delay_ms) override { join_deadline = delay_ms; }
  void cancel_join_deadline() override { join_deadline.reset(); }
  void arm_sync_deadline(int64_t delay_ms, int32_t generation) override { sync_deadline = {delay_ms, generation}; }
  void cancel_sync_deadline() override { sync_deadline.reset(); }
  void persist(const ClassicGroup&, const std::map<std::string, Bytes>* assignment, std::optional<GroupState> as_state,
               std::function<void(Status)> done) override {
    writes.push_back({as_state, assignment != nullptr, std::move(done)});
  }
  void deliver() {
    auto batch = std::move(answers);
    answers.clear();
    for (auto& f : batch) f();
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(group_coordinator)

BOOST_AUTO_TEST_CASE(first_join_v4_gets_member_id_required_with_client_id_uuid_then_joins_after_initial_delay) {
  Harness h;
  Consumer c(h, "g", "consumer-1");
  c.send_join(4);
  BOOST_REQUIRE(*c.join_result);
  BOOST_TEST(int((*c.join_result)->error) == int(ErrorCode::kMemberIdRequired));
  const std::string id = (*c.join_result)->member_id;
  BOOST_TEST(id.rfind("consumer-1-", 0) == 0);
  BOOST_TEST(id.size() == std::string("consumer-1-").size() + 36);
  c.member_id = id;
  c.send_join(4);
  BOOST_TEST(!*c.join_result);  // waits for group.initial.rebalance.delay.ms
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("PreparingRebalance"));
  h.advance(2999);
  BOOST_TEST(!*c.join_result);
  h.advance(1);
  BOOST_REQUIRE(c.joined());
  const auto& r = **c.join_result;
  BOOST_TEST(int(r.error) == 0);
  BOOST_TEST(r.member_id == id);
  BOOST_TEST(r.generation_id == 1);
  BOOST_TEST(r.leader_id == id);
  BOOST_TEST(r.protocol_name.value_or("") == "range");
  BOOST_TEST(r.protocol_type.value_or("") == "consumer");
  BOOST_REQUIRE(r.members.size() == 1u);
  BOOST_TEST((r.members[0].metadata == c.protocols[0].metadata));
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("CompletingRebalance"));
}

BOOST_AUTO_TEST_CASE(join_v3_without_member_id_is_added_at_once) {
  Harness h;
  Consumer c(h, "g", "old-client");
  c.send_join(3);
  BOOST_TEST(!*c.join_result);
  h.advance(3000);
  BOOST_REQUIRE(c.joined());
  BOOST_TEST((*c.join_result)->member_id.rfind("old-client-", 0) == 0);
}

BOOST_AUTO_TEST_CASE(followers_wait_for_the_leader_and_get_its_assignment_byte_for_byte) {
  Harness h;
  Consumer a(h, "g", "a"), b(h, "g", "b");
  a.join();
  b.join();
  h.advance(3000);
  h.advance(3000);
  BOOST_REQUIRE(a.joined() && b.joined());
  Consumer& leader = a.is_leader() ? a : b;
  Consumer& follower = a.is_leader() ? b : a;
  BOOST_TEST((*leader.join_result)->members.size() == 2u);
  BOOST_TEST((*follower.join_result)->members.empty());
  BOOST_TEST((*follower.join_result)->leader_id == leader.member_id);

  follower.send_sync();
  BOOST_TEST(!*follower.sync_result);  // waits for the leader
  Bytes opaque{0x00, 0x01, 0xff, 0x00, 0x7f, 0x80, 0x00};  // not the consumer protocol: opaque
  Bytes mine = assignment_of("orders", {0, 1, 2});
  leader.send_sync({{follower.member_id, opaque}, {leader.member_id, mine}});
  BOOST_REQUIRE(*follower.sync_result);
  BOOST_REQUIRE(*leader.sync_result);
  BOOST_TEST(((*follower.sync_result)->assignment == opaque));
  BOOST_TEST(((*leader.sync_result)->assignment == mine));
  BOOST_TEST((*leader.sync_result)->protocol_name.value_or("") == "range");
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("Stable"));
  // A member syncing again in Stable gets the same bytes.
  follower.send_sync();
  BOOST_TEST(((*follower.sync_result)->assignment == opaque));
  auto d = h.gc->describe_group("g");
  BOOST_TEST(d.state == "Stable");
  BOOST_TEST(d.protocol_name == "range");
  BOOST_REQUIRE(d.members.size() == 2u);
  for (const auto& m : d.members)
    BOOST_TEST((m.assignment == (m.member_id == leader.member_id ? mine : opaque)));
}

BOOST_AUTO_TEST_CASE(members_left_out_by_the_leader_get_an_empty_assignment) {
  Harness h;
  Consumer a(h, "g", "a"), b(h, "g", "b");
  a.join();
  b.join();
  h.advance(6000);
  BOOST_REQUIRE(a.joined() && b.joined());
  Consumer& leader = a.is_leader() ? a : b;
  Consumer& follower = a.is_leader() ? b : a;
  leader.send_sync({{leader.member_id, assignment_of("orders", {0})}, {"not-a-member", Bytes{1, 2}}});
  follower.send_sync();
  BOOST_REQUIRE(*follower.sync_result);
  BOOST_TEST(int((*follower.sync_result)->error) == 0);
  BOOST_TEST((*follower.sync_result)->assignment.empty());
}

BOOST_AUTO_TEST_CASE(a_new_member_triggers_a_rebalance_that_completes_when_everyone_rejoined) {
  Harness h;
  Consumer a(h, "g", "a");
  form_group(h, {&a});
  int32_t gen = a.generation;
  Consumer b(h, "g", "b");
  b.join();
  BOOST_TEST(!*b.join_result);
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("PreparingRebalance"));
  BOOST_TEST(int(a.heartbeat()) == int(ErrorCode::kRebalanceInProgress));
  // Offsets may still be committed while PreparingRebalance (Kafka relies on the heartbeat).
  a.send_join();
  // Not an initial rebalance: it completes as soon as every member has rejoined.
  BOOST_REQUIRE(a.joined() && b.joined());
  BOOST_TEST(a.generation == gen + 1);
  BOOST_TEST(b.generation == gen + 1);
  BOOST_TEST(a.is_leader());  // the leader keeps leading when it rejoins
  BOOST_TEST((*a.join_result)->members.size() == 2u);
}

BOOST_AUTO_TEST_CASE(the_leader_rejoining_a_stable_group_forces_a_rebalance_followers_with_same_metadata_do_not) {
  Harness h;
  Consumer a(h, "g", "a"), b(h, "g", "b");
  form_group(h, {&a, &b});
  Consumer& leader = a.is_leader() ? a : b;
  Consumer& follower = a.is_leader() ? b : a;
  int32_t gen = follower.generation;
  follower.send_join();
  BOOST_REQUIRE(*follower.join_result);
  BOOST_TEST((*follower.join_result)->generation_id == gen);
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("Stable"));
  leader.send_join();
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("PreparingRebalance"));
  follower.send_join();
  BOOST_REQUIRE(leader.joined() && follower.joined());
  BOOST_TEST(leader.generation == gen + 1);
}

BOOST_AUTO_TEST_CASE(a_member_without_heartbeats_is_evicted_after_its_session_timeout) {
  Harness h;
  Consumer a(h, "g", "a"), b(h, "g", "b");
  form_group(h, {&a, &b});
  int32_t gen = a.generation;
  for (int i = 0; i < 3; ++i) {
    h.advance(3000);
    BOOST_TEST(int(a.heartbeat()) == 0);
  }
  BOOST_TEST(h.gc->member_count("g") == 2u);
  h.advance(1000);  // b's last sign of life was 10 s ago
  BOOST_TEST(h.gc->member_count("g") == 1u);
  BOOST_TEST(int(b.heartbeat()) == int(ErrorCode::kUnknownMemberId));
  BOOST_TEST(int(a.heartbeat()) == int(ErrorCode::kRebalanceInProgress));
  a.send_join();
  BOOST_REQUIRE(a.joined());
  BOOST_TEST(a.generation == gen + 1);
  BOOST_TEST((*a.join_result)->members.size() == 1u);
}

BOOST_AUTO_TEST_CASE(members_that_do_not_rejoin_within_the_rebalance_timeout_are_removed) {
  Harness h;
  Consumer a(h, "g", "a"), b(h, "g", "b");
  form_group(h, {&a, &b});
  int32_t gen = a.generation;
  Consumer c(h, "g", "c");
  c.join();
  a.send_join();
  for (int t = 0; t < kRebalance - 5000; t += 5000) {
    h.advance(5000);
    BOOST_TEST(int(b.heartbeat()) == int(ErrorCode::kRebalanceInProgress));  // alive, but never rejoins
  }
  BOOST_TEST(!*a.join_result);
  h.advance(5000);
  BOOST_REQUIRE(a.joined() && c.joined());
  BOOST_TEST(a.generation == gen + 1);
  BOOST_TEST(h.gc->member_count("g") == 2u);
  BOOST_TEST(int(b.heartbeat()) == int(ErrorCode::kUnknownMemberId));
}

BOOST_AUTO_TEST_CASE(members_that_never_sync_are_removed_after_the_rebalance_timeout) {
  Harness h;
  Consumer a(h, "g", "a"), b(h, "g", "b");
  a.join();
  b.join();
  h.advance(6000);
  BOOST_REQUIRE(a.joined() && b.joined());
  Consumer& leader = a.is_leader() ? a : b;
  Consumer& follower = a.is_leader() ? b : a;
  leader.send_sync({{a.member_id, Bytes{1}}, {b.member_id, Bytes{2}}});
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("Stable"));
  // Both stay alive; the follower just never sends SyncGroup.
  for (int i = 0; i < 5; ++i) {
    h.advance(5000);
    BOOST_TEST(int(leader.heartbeat()) == 0);
    BOOST_TEST(int(follower.heartbeat()) == 0);
  }
  BOOST_TEST(h.gc->member_count("g") == 2u);
  h.advance(5000);
  BOOST_TEST(h.gc->member_count("g") == 1u);
  BOOST_TEST(int(follower.heartbeat()) == int(ErrorCode::kUnknownMemberId));
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("PreparingRebalance"));
}

BOOST_AUTO_TEST_CASE(generation_and_membership_fencing_errors) {
  Harness h;
  Consumer a(h, "g", "a");
  form_group(h, {&a});
  BOOST_TEST(int(h.gc->heartbeat("g", a.member_id, std::nullopt, a.generation - 1)) ==
             int(ErrorCode::kIllegalGeneration));
  BOOST_TEST(int(h.gc->heartbeat("g", "stranger", std::nullopt, a.generation)) == int(ErrorCode::kUnknownMemberId));
  BOOST_TEST(int(h.gc->heartbeat("nope", a.member_id, std::nullopt, a.generation)) ==
             int(ErrorCode::kUnknownMemberId));
  BOOST_TEST(int(h.gc->heartbeat("", a.member_id, std::nullopt, a.generation)) == int(ErrorCode::kInvalidGroupId));

  int32_t old_gen = a.generation;
  a.generation = old_gen - 1;
  a.send_sync();
  BOOST_TEST(int((*a.sync_result)->error) == int(ErrorCode::kIllegalGeneration));
  a.generation = old_gen;

  // A second member: the group rebalances; the old generation is fenced everywhere.
  Consumer b(h, "g", "b");
  b.join();
  a.send_join();
  BOOST_REQUIRE(a.joined() && b.joined());
  BOOST_TEST(int(h.gc->heartbeat("g", a.member_id, std::nullopt, old_gen)) == int(ErrorCode::kIllegalGeneration));
  // Commits during CompletingRebalance: REBALANCE_IN_PROGRESS.
  std::optional<std::vector<ErrorCode>> errs;
  h.gc->commit_offsets({"g", a.generation, a.member_id, std::nullopt, -1, false, {{"orders", 0, 5, -1, ""}}},
                       [&](std::vector<ErrorCode> e) { errs = e; });
  h.settle();
  BOOST_REQUIRE(errs);
  BOOST_TEST(int((*errs)[0]) == int(ErrorCode::kRebalanceInProgress));
  errs.reset();
  h.gc->commit_offsets({"g", old_gen, a.member_id, std::nullopt, -1, false, {{"orders", 0, 5, -1, ""}}},
                       [&](std::vector<ErrorCode> e) { errs = e; });
  h.settle();
  BOOST_TEST(int((*errs)[0]) == int(ErrorCode::kIllegalGeneration));
  // Sync with a protocol name other than the group's: INCONSISTENT_GROUP_PROTOCOL.
  SyncGroupParams p{"g", a.generation, a.member_id, std::nullopt, std::string("consumer"), std::string("roundrobin"), {}};
  std::optional<SyncGroupResult> sr;
  h.gc->sync_group(p, [&](SyncGroupResult r) { sr = r; });
  BOOST_TEST(int(sr->error) == int(ErrorCode::kInconsistentGroupProtocol));
}

// KIP-447: a transactional producer's offsets are checked against the group as its consumer's
// would be, so that a member that lost its partitions in a rebalance cannot commit their input.
BOOST_AUTO_TEST_CASE(transactional_offset_commits_are_fenced_by_generation_member_and_instance) {
  Harness h;
  Consumer a(h, "g", "a", {"orders"}, std::string("instance-a"));
  form_group(h, {&a});
  auto txn = [](std::string group, int32_t generation, std::string member, std::optional<std::string> instance) {
    OffsetCommitParams p;
    p.group_id = std::move(group);
    p.generation_id = generation;
    p.member_id = std::move(member);
    p.group_instance_id = std::move(instance);
    p.transactional = true;
    return p;
  };
  auto check = [&](const OffsetCommitParams& p) { return int(h.gc->validate_txn_offset_commit(p).value_or(ErrorCode::kNone)); };
  BOOST_TEST(check(txn("g", a.generation, a.member_id, std::string("instance-a"))) == 0);
  BOOST_TEST(check(txn("g", a.generation - 1, a.member_id, std::string("instance-a"))) == int(ErrorCode::kIllegalGeneration));
  BOOST_TEST(check(txn("g", a.generation, "stranger", std::nullopt)) == int(ErrorCode::kUnknownMemberId));
  BOOST_TEST(check(txn("g", a.generation, "stranger", std::string("instance-a"))) == int(ErrorCode::kFencedInstanceId));
  BOOST_TEST(check(txn("g", a.generation, a.member_id, std::string("instance-z"))) == int(ErrorCode::kUnknownMemberId));
  // No group metadata (TxnOffsetCommit v0-2, or a producer given none): not fenced, even though
  // the group has members; an OffsetCommit like it is refused.
  BOOST_TEST(check(txn("g", -1, "", std::nullopt)) == 0);
  std::optional<std::vector<ErrorCode>> errs;
  h.gc->commit_offsets({"g", -1, "", std::nullopt, -1, false, {{"orders", 0, 5, -1, ""}}},
                       [&](std::vector<ErrorCode> e) { errs = e; });
  h.settle();
  BOOST_REQUIRE(errs);
  BOOST_TEST(int((*errs)[0]) == int(ErrorCode::kUnknownMemberId));
  // An unknown group takes a commit without generation only.
  BOOST_TEST(check(txn("nope", -1, "", std::nullopt)) == 0);
  BOOST_TEST(check(txn("nope", 3, "m", std::nullopt)) == int(ErrorCode::kIllegalGeneration));

  // A second member: while the group completes its rebalance, the member of the new generation
  // may commit transactionally (Kafka does not enforce the group's state for those); the old
  // generation may not.
  int32_t old_gen = a.generation;
  Consumer b(h, "g", "b");
  b.join();
  a.send_join();
  BOOST_REQUIRE(a.joined() && b.joined());
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("CompletingRebalance"));
  BOOST_TEST(check(txn("g", a.generation, a.member_id, std::string("instance-a"))) == 0);
  BOOST_TEST(check(txn("g", old_gen, a.member_id, std::string("instance-a"))) == int(ErrorCode::kIllegalGeneration));
}

BOOST_AUTO_TEST_CASE(a_restarted_static_member_gets_its_assignment_back_without_a_rebalance) {
  Harness h;
  Consumer a(h, "g", "a", {"orders"}, std::string("instance-a"));
  Consumer b(h, "g", "b", {"orders"}, std::string("instance-b"));
  form_group(h, {&a, &b});
  int32_t gen = a.generation;
  Bytes a_assignment = (*a.sync_result)->assignment;
  std::string old_id = a.member_id;
  std::string leader = (*a.join_result)->leader_id;

  // The process restarts: same group.instance.id, no member id (v5-v8).
  Consumer a2(h, "g", "a", {"orders"}, std::string("instance-a"));
  a2.send_join(8);
  BOOST_REQUIRE(a2.joined());
  BOOST_TEST(int((*a2.join_result)->error) == 0);
  BOOST_TEST(a2.member_id.rfind("instance-a-", 0) == 0);
  BOOST_TEST(a2.member_id != old_id);
  BOOST_TEST(a2.generation == gen);  // no rebalance
  BOOST_TEST((*a2.join_result)->leader_id == leader);  // the old leader id: a2 never runs the assignor
  BOOST_TEST((*a2.join_result)->members.empty());
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("Stable"));
  a2.send_sync();
  BOOST_TEST(((*a2.sync_result)->assignment == a_assignment));
  BOOST_TEST(int(b.heartbeat()) == 0);
  // The old incarnation is fenced.
  BOOST_TEST(int(h.gc->heartbeat("g", old_id, std::string("instance-a"), gen)) == int(ErrorCode::kFencedInstanceId));
  a.send_sync();
  BOOST_TEST(int((*a.sync_result)->error) == int(ErrorCode::kFencedInstanceId));
}

BOOST_AUTO_TEST_CASE(a_restarted_static_leader_on_join_v9_is_told_to_skip_assignment) {
  Harness h;
  Consumer a(h, "g", "a", {"orders"}, std::string("instance-a"));
  Consumer b(h, "g", "b", {"orders"}, std::string("instance-b"));
  form_group(h, {&a, &b});
  Consumer& leader = a.is_leader() ? a : b;
  Consumer again(h, "g", leader.client_id, {"orders"}, leader.instance);
  again.send_join(9);
  BOOST_REQUIRE(again.joined());
  BOOST_TEST((*again.join_result)->leader_id == again.member_id);
  BOOST_TEST((*again.join_result)->skip_assignment);
  BOOST_TEST((*again.join_result)->members.size() == 2u);
  BOOST_TEST(again.generation == leader.generation);
}

BOOST_AUTO_TEST_CASE(a_static_member_rejoining_with_another_protocol_triggers_a_rebalance) {
  Harness h;
  Consumer a(h, "g", "a", {"orders"}, std::string("instance-a"));
  Consumer b(h, "g", "b", {"orders"}, std::string("instance-b"));
  form_group(h, {&a, &b});
  Consumer a2(h, "g", "a", {"orders"}, std::string("instance-a"));
  a2.protocols = {{"roundrobin", subscription({"orders"})}, {"range", subscription({"orders"})}};
  a2.send_join(9);
  // range is still the only protocol both support, and b votes for it: no change, no rebalance.
  BOOST_REQUIRE(*a2.join_result);
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("Stable"));
  Consumer b2(h, "g", "b", {"orders"}, std::string("instance-b"));
  b2.protocols = {{"cooperative-sticky", subscription({"orders"})}, {"range", subscription({"orders"})}};
  b2.member_id = b.member_id;
  b2.send_join(9);  // b changes metadata: rebalance
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("PreparingRebalance"));
}

BOOST_AUTO_TEST_CASE(the_first_rebalance_is_delayed_and_the_delay_extends_while_members_arrive) {
  GroupCoordinatorOptions o;
  o.initial_rebalance_delay_ms = 3000;
  Harness h(o);
  Consumer a(h, "g", "a"), b(h, "g", "b"), c(h, "g", "c");
  a.join();
  h.advance(2000);
  b.join();  // arrives during the delay: the delay is extended once more
  h.advance(1000);
  BOOST_TEST(!*a.join_result);
  h.advance(2000);
  c.join();
  h.advance(999);
  BOOST_TEST(!*a.join_result);
  h.advance(1);  // 6 s: c arrived during the second delay, extend again
  BOOST_TEST(!*a.join_result);
  h.advance(3000);
  BOOST_REQUIRE(a.joined() && b.joined() && c.joined());
  BOOST_TEST(a.generation == 1);
  BOOST_TEST(h.gc->member_count("g") == 3u);
}

BOOST_AUTO_TEST_CASE(the_initial_delay_can_be_shortened_for_tests) {
  GroupCoordinatorOptions o;
  o.initial_rebalance_delay_ms = 0;
  Harness h(o);
  Consumer a(h, "g", "a");
  a.join();
  h.advance(0);
  BOOST_REQUIRE(a.joined());
}

BOOST_AUTO_TEST_CASE(two_hundred_members_joining_at_once_converge_to_one_generation) {
  Harness h;
  std::vector<std::unique_ptr<Consumer>> cs;
  for (int i = 0; i < 200; ++i) cs.push_back(std::make_unique<Consumer>(h, "big", "c" + std::to_string(i)));
  // Everyone asks at once: all get MEMBER_ID_REQUIRED first (nothing is created yet).
  for (auto& c : cs) c->send_join(9);
  for (auto& c : cs) {
    BOOST_REQUIRE(*c->join_result);
    BOOST_REQUIRE(int((*c->join_result)->error) == int(ErrorCode::kMemberIdRequired));
    c->member_id = (*c->join_result)->member_id;
  }
  // They rejoin in two waves; half of the second wave retries a lost request (same metadata).
  for (int i = 0; i < 120; ++i) cs[i]->send_join(9);
  h.advance(2500);
  for (int i = 120; i < 200; ++i) cs[i]->send_join(9);
  for (int i = 120; i < 160; ++i) cs[i]->send_join(9);
  h.advance(10'000);
  std::set<int32_t> generations;
  std::set<std::string> leaders, ids;
  size_t leaders_with_members = 0;
  for (auto& c : cs) {
    BOOST_REQUIRE(c->joined());
    BOOST_REQUIRE(int((*c->join_result)->error) == 0);
    generations.insert(c->generation);
    leaders.insert((*c->join_result)->leader_id);
    ids.insert(c->member_id);
    if (c->is_leader()) leaders_with_members += (*c->join_result)->members.size();
  }
  BOOST_TEST(generations.size() == 1u);
  BOOST_TEST(leaders.size() == 1u);
  BOOST_TEST(ids.size() == 200u);
  BOOST_TEST(leaders_with_members == 200u);
  Consumer* leader = nullptr;
  std::vector<std::pair<std::string, Bytes>> assignments;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i]->is_leader()) leader = cs[i].get();
    assignments.emplace_back(cs[i]->member_id, assignment_of("orders", {static_cast<int32_t>(i)}));
  }
  for (auto& c : cs)
    if (c.get() != leader) c->send_sync();
  leader->send_sync(assignments);
  for (size_t i = 0; i < cs.size(); ++i) {
    BOOST_REQUIRE(*cs[i]->sync_result);
    BOOST_TEST(((*cs[i]->sync_result)->assignment == assignments[i].second));
  }
  BOOST_TEST(group_state_name(*h.gc->group_state("big")) == std::string("Stable"));
  BOOST_TEST(h.gc->member_count("big") == 200u);
}

BOOST_AUTO_TEST_CASE(group_max_size_refuses_the_member_past_the_limit) {
  GroupCoordinatorOptions o;
  o.max_size = 2;
  Harness h(o);
  Consumer a(h, "g", "a"), b(h, "g", "b");
  form_group(h, {&a, &b});
  Consumer c(h, "g", "c");
  c.join();
  BOOST_REQUIRE(*c.join_result);
  BOOST_TEST(int((*c.join_result)->error) == int(ErrorCode::kGroupMaxSizeReached));
  BOOST_TEST(h.gc->member_count("g") == 2u);
}

BOOST_AUTO_TEST_CASE(a_pending_member_that_never_rejoins_expires_and_stops_blocking_the_rebalance) {
  Harness h;
  Consumer a(h, "g", "a");
  form_group(h, {&a});
  Consumer b(h, "g", "b");
  b.send_join(9);  // MEMBER_ID_REQUIRED: b is pending and never comes back
  BOOST_TEST(int((*b.join_result)->error) == int(ErrorCode::kMemberIdRequired));
  a.send_join();  // the leader rejoins: a rebalance that waits for the pending member
  BOOST_TEST(!*a.join_result);
  h.advance(kSession - 1);
  BOOST_TEST(!*a.join_result);
  h.advance(1);
  BOOST_REQUIRE(a.joined());
  BOOST_TEST(h.gc->member_count("g") == 1u);
}

BOOST_AUTO_TEST_CASE(leave_group_rebalances_and_accepts_batches_by_instance_id) {
  Harness h;
  Consumer a(h, "g", "a", {"orders"}, std::string("ia")), b(h, "g", "b", {"orders"}, std::string("ib"));
  Consumer c(h, "g", "c");
  form_group(h, {&a, &b, &c});
  BOOST_TEST(int(c.leave()) == 0);
  BOOST_TEST(h.gc->member_count("g") == 2u);
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("PreparingRebalance"));
  // kafka-consumer-groups --delete-members style: by instance id, no member id.
  auto r = h.gc->leave_group("g", {{"", std::string("ia"), ""}, {"", std::string("ib"), ""}, {"", std::string("zz"), ""}});
  BOOST_TEST(int(r.error) == 0);
  BOOST_REQUIRE(r.member_errors.size() == 3u);
  BOOST_TEST(int(r.member_errors[0]) == 0);
  BOOST_TEST(int(r.member_errors[1]) == 0);
  BOOST_TEST(int(r.member_errors[2]) == int(ErrorCode::kUnknownMemberId));
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("Empty"));
  BOOST_TEST(int(h.gc->leave_group("nope", {{"x", std::nullopt, ""}}).error) == int(ErrorCode::kUnknownMemberId));
}

BOOST_AUTO_TEST_CASE(a_member_leaving_while_another_awaits_its_join_answer_completes_the_rebalance) {
  Harness h;
  Consumer a(h, "g", "a"), b(h, "g", "b");
  form_group(h, {&a, &b});
  Consumer& leader = a.is_leader() ? a : b;
  Consumer& follower = a.is_leader() ? b : a;
  leader.send_join();
  BOOST_TEST(!*leader.join_result);
  BOOST_TEST(int(follower.leave()) == 0);
  BOOST_REQUIRE(leader.joined());
  BOOST_TEST((*leader.join_result)->members.size() == 1u);
}

BOOST_AUTO_TEST_CASE(protocol_selection_takes_the_common_protocol_with_most_votes) {
  Harness h;
  Consumer a(h, "g", "a"), b(h, "g", "b"), c(h, "g", "c");
  Bytes md = subscription({"orders"});
  a.protocols = {{"range", md}, {"roundrobin", md}};
  b.protocols = {{"roundrobin", md}, {"range", md}, {"sticky", md}};
  c.protocols = {{"roundrobin", md}, {"range", md}};
  a.join();
  b.join();
  c.join();
  h.advance(6000);
  BOOST_REQUIRE(a.joined());
  BOOST_TEST((*a.join_result)->protocol_name.value_or("") == "roundrobin");
  // A member supporting none of the group's protocols is refused.
  Consumer d(h, "g", "d");
  d.protocols = {{"sticky", md}};
  d.join();
  BOOST_TEST(int((*d.join_result)->error) == int(ErrorCode::kInconsistentGroupProtocol));
  Consumer e(h, "g", "e");
  e.join();  // "range" is supported by all: accepted
  BOOST_TEST(!*e.join_result);
}

BOOST_AUTO_TEST_CASE(join_validation_errors) {
  Harness h;
  Consumer a(h, "g", "a");
  auto p = a.params(9);
  p.session_timeout_ms = 1000;
  std::optional<JoinGroupResult> r;
  h.gc->join_group(p, [&](JoinGroupResult x) { r = x; });
  BOOST_TEST(int(r->error) == int(ErrorCode::kInvalidSessionTimeout));
  p = a.params(9);
  p.group_id = "";
  h.gc->join_group(p, [&](JoinGroupResult x) { r = x; });
  BOOST_TEST(int(r->error) == int(ErrorCode::kInvalidGroupId));
  p = a.params(9);
  p.member_id = "stale-member";
  h.gc->join_group(p, [&](JoinGroupResult x) { r = x; });
  BOOST_TEST(int(r->error) == int(ErrorCode::kUnknownMemberId));
  BOOST_TEST(!h.gc->group_state("g"));
}

BOOST_AUTO_TEST_CASE(a_duplicate_join_from_the_same_member_answers_the_first_one) {
  Harness h;
  Consumer a(h, "g", "a");
  a.join();
  auto first = a.join_result;
  a.join_result = std::make_shared<std::optional<JoinGroupResult>>();
  a.send_join();
  BOOST_REQUIRE(*first);
  BOOST_TEST(int((*first)->error) == int(ErrorCode::kRebalanceInProgress));
  h.advance(3000);
  BOOST_REQUIRE(a.joined());
  BOOST_TEST(int((*a.join_result)->error) == 0);
}

BOOST_AUTO_TEST_CASE(describe_and_list_show_state_protocol_and_members) {
  Harness h;
  Consumer a(h, "g1", "a");
  form_group(h, {&a});
  Consumer b(h, "g2", "b");
  b.join();
  auto d = h.gc->describe_group("g1");
  BOOST_TEST(d.state == "Stable");
  BOOST_TEST(d.protocol_type == "consumer");
  BOOST_REQUIRE(d.members.size() == 1u);
  BOOST_TEST(d.members[0].client_id == "a");
  BOOST_TEST(d.members[0].client_host == "/127.0.0.1");
  BOOST_TEST(!d.members[0].metadata.empty());
  auto d2 = h.gc->describe_group("g2");
  BOOST_TEST(d2.state == "PreparingRebalance");
  BOOST_TEST(d2.protocol_name.empty());
  BOOST_TEST(d2.members[0].metadata.empty());
  BOOST_TEST(h.gc->describe_group("none").state == "Dead");

  BOOST_TEST(h.gc->list_groups({}, {}).size() == 2u);
  auto stable = h.gc->list_groups({"STABLE"}, {});
  BOOST_REQUIRE(stable.size() == 1u);
  BOOST_TEST(stable[0].group_id == "g1");
  BOOST_TEST(stable[0].protocol_type == "consumer");
  BOOST_TEST(h.gc->list_groups({}, {"Classic"}).size() == 2u);
  BOOST_TEST(h.gc->list_groups({}, {"consumer"}).empty());
}

BOOST_AUTO_TEST_CASE(delete_groups_refuses_groups_with_members_and_forgets_empty_ones) {
  Harness h;
  Consumer a(h, "g", "a");
  form_group(h, {&a});
  std::optional<std::vector<ErrorCode>> errs;
  h.gc->delete_groups({"g", "unknown"}, [&](std::vector<ErrorCode> e) { errs = e; });
  h.settle();
  BOOST_REQUIRE(errs);
  BOOST_TEST(int((*errs)[0]) == int(ErrorCode::kNonEmptyGroup));
  BOOST_TEST(int((*errs)[1]) == int(ErrorCode::kGroupIdNotFound));
  BOOST_TEST(int(a.leave()) == 0);
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("Empty"));
  errs.reset();
  h.gc->delete_groups({"g"}, [&](std::vector<ErrorCode> e) { errs = e; });
  BOOST_TEST(!errs);  // answered once durable
  h.settle();
  BOOST_TEST(int((*errs)[0]) == 0);
  BOOST_TEST(!h.gc->group_state("g"));
  h.restart();
  BOOST_TEST(!h.gc->group_state("g"));
}

BOOST_AUTO_TEST_CASE(after_a_restart_a_stable_group_comes_back_empty_and_its_members_rejoin) {
  Harness h;
  Consumer a(h, "g", "a");
  form_group(h, {&a});
  int32_t gen = a.generation;
  h.restart();
  BOOST_TEST(group_state_name(*h.gc->group_state("g")) == std::string("Empty"));
  BOOST_TEST(h.gc->generation("g") == gen);
  BOOST_TEST(int(a.heartbeat()) == int(ErrorCode::kUnknownMemberId));
  a.send_join();  // its old member id is unknown now
  BOOST_TEST(int((*a.join_result)->error) == int(ErrorCode::kUnknownMemberId));
  a.member_id.clear();
  a.join();
  h.advance(3000);
  BOOST_REQUIRE(a.joined());
  BOOST_TEST(a.generation == gen + 1);  // generations keep increasing across restarts
  auto list = h.gc->list_groups({}, {});
  BOOST_REQUIRE(list.size() == 1u);
  BOOST_TEST(list[0].protocol_type == "consumer");
}

BOOST_AUTO_TEST_CASE(stopping_answers_waiting_joins_and_syncs_with_not_coordinator) {
  Harness h;
  Consumer a(h, "g", "a"), b(h, "g", "b");
  a.join();
  b.join();
  h.advance(6000);
  BOOST_REQUIRE(a.joined() && b.joined());
  Consumer& follower = a.is_leader() ? b : a;
  follower.send_sync();  // waits for the leader
  Consumer c(h, "g2", "c");
  c.join();  // waits for the initial delay
  BOOST_REQUIRE(!*follower.sync_result && !*c.join_result);
  h.gc->stop();
  BOOST_REQUIRE(*follower.sync_result && *c.join_result);
  BOOST_TEST(int((*follower.sync_result)->error) == int(ErrorCode::kNotCoordinator));
  BOOST_TEST(int((*c.join_result)->error) == int(ErrorCode::kNotCoordinator));
  BOOST_TEST(int(follower.heartbeat()) == int(ErrorCode::kCoordinatorNotAvailable));
  h.advance(60'000);  // no timer fires any more
}

// Kafka's memberId is clientId + "-" + UUID; a client id near the 32767-byte STRING bound made
// a member id the JoinGroup response could not encode (the request then never got an answer).
BOOST_AUTO_TEST_CASE(member_ids_from_huge_client_or_instance_ids_stay_small_and_encodable) {
  Harness h;
  const std::string huge(32'700, 'c');
  Consumer c(h, "g", huge);
  c.send_join(4);
  BOOST_REQUIRE(*c.join_result);
  BOOST_TEST(int((*c.join_result)->error) == int(ErrorCode::kMemberIdRequired));
  const std::string id = (*c.join_result)->member_id;
  BOOST_TEST(id.size() == 255u + 1 + 36);
  BOOST_TEST(id.rfind(std::string(255, 'c') + "-", 0) == 0);

  // A static member's id starts with its group.instance.id, cut the same way and at a UTF-8
  // character boundary (a 3-byte character straddles byte 255 here).
  std::string instance = std::string(254, 'i') + "\u20ac" + std::string(32'000, 'i');
  Consumer s(h, "g2", "client", {"orders"}, instance);
  s.send_join(5);
  h.advance(3000);
  BOOST_REQUIRE(*s.join_result);
  const std::string sid = (*s.join_result)->member_id;
  BOOST_TEST(sid.size() == 254u + 1 + 36);
  BOOST_TEST(sid.rfind(std::string(254, 'i') + "-", 0) == 0);
}

// Kafka's ClassicGroupState.validPreviousStates.
BOOST_AUTO_TEST_CASE(state_transitions_are_checked_against_kafkas_valid_previous_states) {
  using S = GroupState;
  const S all[] = {S::kEmpty, S::kPreparingRebalance, S::kCompletingRebalance, S::kStable, S::kDead};
  const std::map<S, std::set<S>> valid = {
      {S::kEmpty, {S::kPreparingRebalance}},
      {S::kPreparingRebalance, {S::kStable, S::kCompletingRebalance, S::kEmpty}},
      {S::kCompletingRebalance, {S::kPreparingRebalance}},
      {S::kStable, {S::kCompletingRebalance}},
      {S::kDead, {S::kEmpty, S::kPreparingRebalance, S::kCompletingRebalance, S::kStable, S::kDead}},
  };
  for (S to : all)
    for (S from : all)
      BOOST_TEST(is_valid_transition(from, to) == (valid.at(to).count(from) != 0),
                 group_state_name(from) << " -> " << group_state_name(to));
}

// The classic group's state machine on its own: it decides, and asks its host for deadlines,
// answers and writes; here the test is the host (no coordinator, timers or SQLite).
BOOST_AUTO_TEST_CASE(a_classic_group_runs_a_rebalance_for_a_host_driven_by_hand) {
  GroupCoordinatorOptions options;
  auto owned = std::make_unique<RecordingHost>();
  RecordingHost& host = *owned;
  ClassicGroup g("g", options, std::move(owned));
  BOOST_TEST(g.state_name() == std::string("Empty"));

  JoinGroupParams p;
  p.group_id = "g";
  p.require_known_member_id = true;
  p.client_id = "c";
  p.session_timeout_ms = kSession;
  p.rebalance_timeout_ms = kRebalance;
  p.protocol_type = "consumer";
  p.protocols.push_back({"range", subscription({"orders"})});
  std::optional<JoinGroupResult> joined;
  auto on_join = [&](JoinGroupResult r) { joined = std::move(r); };

  // KIP-394: a member id, pending for one session timeout.
  JoinGroupParams first = p;
  g.join(first, on_join);
  host.deliver();
  BOOST_REQUIRE(joined);
  BOOST_TEST(int(joined->error) == int(ErrorCode::kMemberIdRequired));
  const std::string id = joined->member_id;
  BOOST_TEST(host.pending_members.at(id) == kSession);
  BOOST_TEST(!host.join_deadline);

  // Back with it: a member, the delayed first rebalance armed, the pending deadline gone.
  joined.reset();
  JoinGroupParams second = p;
  second.member_id = id;
  g.join(second, on_join);
  host.deliver();
  BOOST_TEST(!joined);
  BOOST_TEST(host.pending_members.empty());
  BOOST_TEST(host.heartbeats.at(id) == options.new_member_join_timeout_ms);
  BOOST_TEST(host.join_deadline.value_or(-1) == options.initial_rebalance_delay_ms);
  BOOST_TEST(g.state_name() == std::string("PreparingRebalance"));

  // The delay passes: generation 1, this member leads, SyncGroup expected within the rebalance timeout.
  g.on_join_deadline();
  host.deliver();
  BOOST_REQUIRE(joined);
  BOOST_TEST(int(joined->error) == 0);
  BOOST_TEST(joined->generation_id == 1);
  BOOST_TEST(joined->leader_id == id);
  BOOST_TEST(g.state_name() == std::string("CompletingRebalance"));
  BOOST_TEST(host.heartbeats.at(id) == kSession);
  BOOST_TEST((host.sync_deadline == std::pair<int64_t, int32_t>{kRebalance, 1}));
  BOOST_TEST(host.writes.empty());

  // The leader's assignment is answered once stored, and the group is Stable then.
  std::optional<SyncGroupResult> synced;
  SyncGroupParams sp;
  sp.group_id = "g";
  sp.generation_id = 1;
  sp.member_id = id;
  Bytes mine = assignment_of("orders", {0});
  sp.assignments = {{id, mine}};
  g.sync(sp, [&](SyncGroupResult r) { synced = std::move(r); });
  host.deliver();
  BOOST_TEST(!synced);
  BOOST_TEST(!host.sync_deadline);
  BOOST_REQUIRE(host.writes.size() == 1u);
  BOOST_TEST((host.writes[0].as_state == GroupState::kStable));
  BOOST_TEST(host.writes[0].with_assignment);
  host.writes[0].done(ok_status());
  host.deliver();
  BOOST_REQUIRE(synced);
  BOOST_TEST(int(synced->error) == 0);
  BOOST_TEST((synced->assignment == mine));
  BOOST_TEST(g.state_name() == std::string("Stable"));
  BOOST_TEST(int(g.heartbeat(id, std::nullopt, 1)) == 0);

  // Its session passes: the member goes, the group rebalances and ends Empty in generation 2,
  // which is stored.
  g.on_heartbeat_expired(id);
  host.deliver();
  BOOST_TEST(g.state_name() == std::string("Empty"));
  BOOST_TEST(g.generation() == 2);
  BOOST_TEST(host.heartbeats.empty());
  BOOST_REQUIRE(host.writes.size() == 2u);
  BOOST_TEST(!host.writes[1].as_state);
  BOOST_TEST(!host.writes[1].done);
  BOOST_TEST(g.is_empty());
}

BOOST_AUTO_TEST_SUITE_END()
