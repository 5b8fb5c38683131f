// KIP-848's online migration (group_migration.cc, consumer_group_classic.cc) through the real
// GroupCoordinator and SQLite state store: a consumer-protocol member upgrades a live classic
// group, the classic members keep working inside the consumer group through JoinGroup, SyncGroup
// and Heartbeat until every partition is owned once, the last consumer-protocol member leaving
// downgrades the group, the policy and a custom assignor refuse as Kafka does, and a restart keeps
// the classic members. Real clients beside Kafka: tests/clients/test_group_migration.py.
#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bridge/groups/consumer_protocol.h"
#include "kafka/protocol/generated/consumer_protocol_assignment.h"
#include "kafka/protocol/generated/consumer_protocol_subscription.h"
#include "support/consumer_group_harness.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::cg_test;

namespace {

constexpr int32_t kClassicSession = 10'000;
constexpr int32_t kClassicRebalance = 20'000;

// A ConsumerProtocolSubscription v1 (topics and owned partitions), as a Java 3.x+ consumer sends.
Bytes subscription(const std::vector<std::string>& topics, const Parts& owned) {
  kafka::msg::ConsumerProtocolSubscription s;
  s.topics = topics;
  for (const auto& [t, ps] : owned) s.owned_partitions.push_back({t, std::vector<int32_t>(ps.begin(), ps.end())});
  ByteWriter w(256);
  w.be<int16_t>(1);
  s.encode(w, 1);
  return w.take();
}

Bytes assignment_with_user_data(const Parts& parts) {
  kafka::msg::ConsumerProtocolAssignment a;
  for (const auto& [t, ps] : parts) a.assigned_partitions.push_back({t, std::vector<int32_t>(ps.begin(), ps.end())});
  a.user_data = Bytes{1, 2, 3};
  ByteWriter w(256);
  w.be<int16_t>(1);
  a.encode(w, 1);
  return w.take();
}

// A Java consumer at group.protocol=classic with the range assignor, driven by hand.
struct Classic {
  explicit Classic(Harness& h) : h(h) {}
  Harness& h;
  std::optional<std::string> instance;
  std::string member_id;
  int32_t generation = -1;
  Parts owned;
  std::optional<JoinGroupResult> join_result;
  std::optional<SyncGroupResult> sync_result;

  JoinGroupParams params() const {
    JoinGroupParams p;
    p.group_id = "g";
    p.member_id = member_id;
    p.group_instance_id = instance;
    p.require_known_member_id = !instance;
    p.supports_skip_assignment = true;
    p.client_id = "classic";
    p.client_host = "/127.0.0.1";
    p.session_timeout_ms = kClassicSession;
    p.rebalance_timeout_ms = kClassicRebalance;
    p.protocol_type = "consumer";
    p.protocols = {{"range", subscription({"orders"}, owned)}};
    return p;
  }
  void send_join() {
    join_result.reset();
    h.gc->join_group(params(), [this](JoinGroupResult r) { join_result = std::move(r); });
    h.settle();
    if (join_result && join_result->error == ErrorCode::kMemberIdRequired) {
      member_id = join_result->member_id;
      join_result.reset();
      h.gc->join_group(params(), [this](JoinGroupResult r) { join_result = std::move(r); });
      h.settle();
    }
    take_join();
  }
  // The JoinGroup answer, once it came: its member id and generation are the member's.
  bool take_join() {
    if (!join_result) return false;
    if (join_result->error == ErrorCode::kNone) {
      member_id = join_result->member_id;
      generation = join_result->generation_id;
    }
    return true;
  }
  void send_sync(std::vector<std::pair<std::string, Bytes>> assignments = {}) {
    sync_result.reset();
    SyncGroupParams p;
    p.group_id = "g";
    p.generation_id = generation;
    p.member_id = member_id;
    p.group_instance_id = instance;
    p.protocol_type = "consumer";
    p.protocol_name = "range";
    p.assignments = std::move(assignments);
    h.gc->sync_group(std::move(p), [this](SyncGroupResult r) { sync_result = std::move(r); });
    h.settle();
  }
  // The SyncGroup answer, once it came (kRequestTimedOut while it has not): the member adopts it.
  ErrorCode take_sync() {
    if (!sync_result) return ErrorCode::kRequestTimedOut;
    if (sync_result->error == ErrorCode::kNone) {
      auto parts = assigned_partitions(sync_result->assignment);
      BOOST_REQUIRE(parts);
      owned.clear();
      for (const auto& [t, ps] : *parts)
        if (!ps.empty()) owned[t] = std::set<int32_t>(ps.begin(), ps.end());
    }
    return sync_result->error;
  }
  ErrorCode sync() {
    send_sync();
    return take_sync();
  }
  ErrorCode heartbeat() { return h.gc->heartbeat("g", member_id, instance, generation); }
  // What the Java client does on REBALANCE_IN_PROGRESS (cooperative: it keeps what it owns and
  // reports it in the next JoinGroup): rejoin, then sync.
  ErrorCode rejoin_and_sync() {
    send_join();
    if (!join_result) return ErrorCode::kRequestTimedOut;
    if (join_result->error != ErrorCode::kNone) return join_result->error;
    return sync();
  }
  size_t count() const { return owned.count("orders") ? owned.at("orders").size() : 0; }
};

// A consumer at group.protocol=consumer.
struct Modern {
  Modern(Harness& h, std::string id) : h(h), id(std::move(id)) {}
  Harness& h;
  std::string id;
  int32_t epoch = 0;
  Parts owned;
  ConsumerHeartbeatResult beat() {
    ConsumerHeartbeatParams p;
    p.group_id = "g";
    p.member_id = id;
    p.member_epoch = epoch;
    if (epoch == 0) {
      p.rebalance_timeout_ms = 30'000;
      p.subscribed_topic_names = std::vector<std::string>{"orders"};
    }
    p.owned = owned;
    ConsumerHeartbeatResult r = h.beat(p);
    if (r.error == ErrorCode::kNone) {
      epoch = r.member_epoch;
      if (r.assignment) {
        owned = *r.assignment;
        std::erase_if(owned, [](const auto& kv) { return kv.second.empty(); });
      }
    }
    return r;
  }
  ConsumerHeartbeatResult leave() {
    ConsumerHeartbeatParams p;
    p.group_id = "g";
    p.member_id = id;
    p.member_epoch = -1;
    return h.beat(p);
  }
  size_t count() const { return owned.count("orders") ? owned.at("orders").size() : 0; }
};

// Two classic members form a Stable classic group at generation 1: a gets orders 0-2, b 3-5.
void form_classic_group(Harness& h, Classic& a, Classic& b, bool custom_assignor = false) {
  a.send_join();
  b.send_join();
  h.advance(h.options.initial_rebalance_delay_ms);
  h.advance(h.options.initial_rebalance_delay_ms);  // the delay extends once when members arrived during it
  BOOST_REQUIRE(a.take_join() && b.take_join());
  BOOST_REQUIRE(a.generation == 1);
  BOOST_REQUIRE(b.generation == 1);
  auto encode = [&](const Parts& p) { return custom_assignor ? assignment_with_user_data(p) : encode_assignment(p, 1); };
  std::vector<std::pair<std::string, Bytes>> plan{{a.member_id, encode({{"orders", {0, 1, 2}}})},
                                                  {b.member_id, encode({{"orders", {3, 4, 5}}})}};
  Classic& leader = a.join_result->leader_id == a.member_id ? a : b;
  Classic& follower = &leader == &a ? b : a;
  follower.send_sync();
  leader.send_sync(plan);
  if (custom_assignor) {
    BOOST_REQUIRE(leader.sync_result && follower.sync_result);
  } else {
    BOOST_REQUIRE((leader.take_sync() == ErrorCode::kNone));
    BOOST_REQUIRE((follower.take_sync() == ErrorCode::kNone));
    BOOST_REQUIRE(a.count() == 3u);
  }
  BOOST_REQUIRE((h.gc->group_state("g") == GroupState::kStable));
}

// Drives every member until none is told to rebalance and every partition has one owner.
void settle_group(Harness& h, std::vector<Classic*> classics, std::vector<Modern*> moderns) {
  for (int round = 0; round < 12; ++round) {
    for (auto* m : moderns) BOOST_REQUIRE((m->beat().error == ErrorCode::kNone));
    for (auto* c : classics) {
      const ErrorCode e = c->heartbeat();
      if (e == ErrorCode::kRebalanceInProgress) {
        const ErrorCode r = c->rejoin_and_sync();
        BOOST_REQUIRE((r == ErrorCode::kNone || r == ErrorCode::kRebalanceInProgress));
      } else {
        BOOST_REQUIRE((e == ErrorCode::kNone));
      }
    }
    h.advance(100);
  }
}

std::vector<int32_t> owners_of_each_partition(std::vector<const Parts*> owned) {
  std::vector<int32_t> count(6, 0);
  for (const Parts* p : owned)
    if (p->count("orders"))
      for (int32_t q : p->at("orders")) ++count.at(q);
  return count;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(group_migration)

BOOST_AUTO_TEST_CASE(a_consumer_protocol_member_upgrades_a_live_classic_group_and_the_classic_members_carry_on) {
  Harness h;
  Classic a{h}, b{h};
  form_classic_group(h, a, b);

  Modern c{h, "modern-c"};
  BOOST_REQUIRE((c.beat().error == ErrorCode::kNone));
  // The group is a consumer group now: the classic members at epoch = the generation with what
  // their SyncGroup gave them, the new member one epoch further.
  auto d = h.gc->consumer_group_describe("g");
  BOOST_REQUIRE((d.error == ErrorCode::kNone));
  BOOST_TEST(d.group.members.size() == 3u);
  BOOST_TEST(d.group.group_epoch == 2);
  for (const auto& mv : d.group.members) {
    if (mv.member.member_id == "modern-c") {
      BOOST_TEST(!mv.member.classic.has_value());
      continue;
    }
    BOOST_REQUIRE(mv.member.classic.has_value());
    BOOST_TEST(mv.member.classic->session_timeout_ms == kClassicSession);
    BOOST_TEST(mv.member.member_epoch == 1);
  }
  BOOST_TEST(h.gc->describe_group("g").not_classic.has_value());  // DescribeGroups: "not a classic group"
  BOOST_TEST(!h.gc->group_state("g").has_value());

  // The classic members learn of the new target from their heartbeats, revoke by rejoining, and
  // every partition ends up with exactly one owner, two each.
  BOOST_TEST((a.heartbeat() == ErrorCode::kRebalanceInProgress));
  settle_group(h, {&a, &b}, {&c});
  BOOST_TEST(owners_of_each_partition({&a.owned, &b.owned, &c.owned}) == std::vector<int32_t>(6, 1),
             boost::test_tools::per_element());
  BOOST_TEST(a.count() == 2u);
  BOOST_TEST(b.count() == 2u);
  BOOST_TEST(c.count() == 2u);
  BOOST_TEST(h.gc->consumer_group_describe("g").group.state == "Stable");
  // Generation = member epoch for everything the classic member sends.
  BOOST_TEST(a.generation == c.epoch);
  std::vector<ErrorCode> commit;
  OffsetCommitParams oc;
  oc.group_id = "g";
  oc.member_id = a.member_id;
  oc.generation_id = a.generation;
  oc.entries.push_back({"orders", *a.owned["orders"].begin(), 10, -1, std::nullopt});
  h.gc->commit_offsets(oc, [&](std::vector<ErrorCode> e) { commit = std::move(e); });
  h.settle();
  BOOST_REQUIRE(commit.size() == 1u);
  BOOST_TEST((commit[0] == ErrorCode::kNone));
  oc.generation_id = a.generation + 1;
  h.gc->commit_offsets(oc, [&](std::vector<ErrorCode> e) { commit = std::move(e); });
  h.settle();
  BOOST_TEST((commit.at(0) == ErrorCode::kIllegalGeneration));
}

BOOST_AUTO_TEST_CASE(the_last_consumer_protocol_member_leaving_downgrades_the_group_to_a_rebalancing_classic_group) {
  Harness h;
  Classic a{h}, b{h};
  form_classic_group(h, a, b);
  Modern c{h, "modern-c"};
  BOOST_REQUIRE((c.beat().error == ErrorCode::kNone));
  settle_group(h, {&a, &b}, {&c});
  const int32_t epoch = h.gc->consumer_group_describe("g").group.group_epoch;

  BOOST_REQUIRE((c.leave().error == ErrorCode::kNone));
  // A classic group again, at generation = the group epoch before the leave, rebalancing.
  BOOST_TEST((h.gc->consumer_group_describe("g").error == ErrorCode::kGroupIdNotFound));
  BOOST_REQUIRE(h.gc->group_state("g").has_value());
  BOOST_TEST((*h.gc->group_state("g") == GroupState::kPreparingRebalance));
  BOOST_TEST(h.gc->generation("g") == epoch);
  BOOST_TEST(h.gc->member_count("g") == 2u);
  // The members rejoin as classic members do; the group completes a rebalance.
  BOOST_TEST((a.heartbeat() == ErrorCode::kRebalanceInProgress));
  a.send_join();
  b.send_join();  // the last one in completes the join phase
  BOOST_REQUIRE(a.take_join() && b.take_join());
  BOOST_TEST(a.generation == epoch + 1);
  const bool a_leads = a.join_result->leader_id == a.member_id;
  BOOST_TEST((a_leads ? a.join_result->members.size() : b.join_result->members.size()) == 2u);
}

BOOST_AUTO_TEST_CASE(refused_upgrades_answer_kafkas_errors_and_leave_the_classic_group) {
  {
    Harness h;
    h.options.consumer_upgrade = false;
    h.stop();
    h.start();
    Classic a{h}, b{h};
    form_classic_group(h, a, b);
    Modern c{h, "modern-c"};
    auto r = c.beat();
    BOOST_TEST((r.error == ErrorCode::kGroupIdNotFound));
    BOOST_TEST(r.message == "Cannot upgrade classic group g to consumer group because online upgrade is disabled.");
    BOOST_TEST((*h.gc->group_state("g") == GroupState::kStable));
    BOOST_TEST((a.heartbeat() == ErrorCode::kNone));
  }
  {
    Harness h;
    Classic a{h}, b{h};
    form_classic_group(h, a, b, /*custom_assignor=*/true);
    Modern c{h, "modern-c"};
    auto r = c.beat();
    BOOST_TEST((r.error == ErrorCode::kGroupIdNotFound));
    BOOST_TEST(r.message.find("because an unsupported custom assignor is in use") != std::string::npos);
    BOOST_TEST((*h.gc->group_state("g") == GroupState::kStable));
  }
  {
    // Migration disabled both ways: a classic member may not join a consumer group.
    Harness h;
    h.options.consumer_upgrade = false;
    h.options.consumer_downgrade = false;
    h.stop();
    h.start();
    Modern c{h, "modern-c"};
    BOOST_REQUIRE((c.beat().error == ErrorCode::kNone));
    Classic a{h};
    a.send_join();
    BOOST_REQUIRE(a.join_result);
    BOOST_TEST((a.join_result->error == ErrorCode::kInconsistentGroupProtocol));
  }
}

BOOST_AUTO_TEST_CASE(a_classic_member_joins_a_consumer_group_and_a_silent_one_is_fenced) {
  Harness h;
  Modern c{h, "modern-c"};
  BOOST_REQUIRE((c.beat().error == ErrorCode::kNone));
  BOOST_TEST(c.count() == 6u);
  Classic a{h};
  a.send_join();  // MEMBER_ID_REQUIRED first, then the join proper
  BOOST_REQUIRE(a.join_result);
  BOOST_REQUIRE((a.join_result->error == ErrorCode::kNone));
  BOOST_TEST(a.join_result->member_id.size() == 22u);
  BOOST_TEST(a.join_result->leader_id.empty());  // the coordinator assigns: nobody leads
  BOOST_TEST(a.join_result->members.empty());
  BOOST_TEST(*a.join_result->protocol_name == "range");
  // Nothing free yet: its sync gets an empty assignment until c released three partitions.
  BOOST_TEST((a.sync() == ErrorCode::kNone));
  BOOST_TEST(a.count() == 0u);
  settle_group(h, {&a}, {&c});
  BOOST_TEST(a.count() == 3u);
  BOOST_TEST(c.count() == 3u);
  auto d = h.gc->consumer_group_describe("g");
  BOOST_TEST(d.group.members.size() == 2u);

  // A classic member told to rejoin that does not within its rebalance timeout is fenced, and the
  // consumer-protocol member gets everything back.
  BOOST_REQUIRE((c.beat().error == ErrorCode::kNone));
  Classic b{h};
  b.send_join();
  BOOST_REQUIRE((b.join_result && b.join_result->error == ErrorCode::kNone));
  BOOST_TEST((b.sync() == ErrorCode::kNone));
  BOOST_TEST((a.heartbeat() == ErrorCode::kRebalanceInProgress));
  for (int i = 0; i < 5; ++i) {  // c and b stay alive, a does not rejoin
    h.advance(5'000);
    BOOST_REQUIRE((c.beat().error == ErrorCode::kNone));
    b.heartbeat();
  }
  BOOST_TEST((a.heartbeat() == ErrorCode::kUnknownMemberId));
  BOOST_TEST(h.gc->consumer_group_describe("g").group.members.size() == 2u);
  // b stops heartbeating: its own session (10 s, not the group's) ends it.
  for (int i = 0; i < 3; ++i) {
    h.advance(5'000);
    BOOST_REQUIRE((c.beat().error == ErrorCode::kNone));
  }
  BOOST_TEST(h.gc->consumer_group_describe("g").group.members.size() == 1u);
}

BOOST_AUTO_TEST_CASE(classic_members_inside_a_consumer_group_survive_a_restart) {
  Harness h;
  Classic a{h}, b{h};
  form_classic_group(h, a, b);
  Modern c{h, "modern-c"};
  BOOST_REQUIRE((c.beat().error == ErrorCode::kNone));
  settle_group(h, {&a, &b}, {&c});
  const auto before = h.gc->consumer_group_describe("g").group;

  h.stop();
  h.start();
  const auto after = h.gc->consumer_group_describe("g");
  BOOST_REQUIRE((after.error == ErrorCode::kNone));
  BOOST_REQUIRE(after.group.members.size() == 3u);
  for (size_t i = 0; i < 3; ++i) {
    BOOST_TEST((after.group.members[i].member == before.members[i].member));
    BOOST_TEST((after.group.members[i].target == before.members[i].target));
  }
  // The classic members carry on at their generation: no rebalance.
  BOOST_TEST((a.heartbeat() == ErrorCode::kNone));
  BOOST_TEST((b.heartbeat() == ErrorCode::kNone));
  BOOST_TEST((c.beat().error == ErrorCode::kNone));
  BOOST_TEST(h.gc->consumer_group_describe("g").group.state == "Stable");
}

BOOST_AUTO_TEST_SUITE_END()
