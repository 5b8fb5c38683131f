// KIP-848 consumer groups (bridge/groups/consumer_group.h) through the real GroupCoordinator, a
// real SQLite state store and a manual clock: members join and are reconciled one heartbeat at a
// time (revocation before reassignment), fencing and the request checks answer Kafka's errors,
// a session that expires hands the partitions over, a static member comes back without a
// rebalance, offsets commit with member epochs, and a restart keeps members and epochs.
// Real clients against Kafka and the bridge: tests/clients/test_group_member_kill.py.
#include <boost/test/unit_test.hpp>

#include <uv.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_coordinator.h"
#include "state/state_store.h"
#include "support/consumer_group_harness.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::cg_test;
using kib::state::StateStore;

namespace {

// A consumer as the Java client drives it: joins with a full request, then heartbeats with what
// it owns whenever that changed (null otherwise), adopting each assignment it is given at once.
struct Member {
  Member(Harness& h, std::string id, std::optional<std::string> instance = std::nullopt)
      : h(h), id(std::move(id)), instance(std::move(instance)) {}
  Harness& h;
  std::string id;
  std::optional<std::string> instance;
  std::string assignor = "uniform";
  int32_t epoch = 0;
  Parts owned;
  bool owned_changed = true;

  ConsumerHeartbeatResult beat() {
    ConsumerHeartbeatParams p;
    p.group_id = "g";
    p.member_id = id;
    p.member_epoch = epoch;
    p.instance_id = instance;
    if (epoch == 0) {
      p.rebalance_timeout_ms = 30'000;
      p.subscribed_topic_names = std::vector<std::string>{"orders"};
      p.server_assignor = assignor;
      p.owned.emplace();
    } else if (owned_changed) {
      p.owned = owned;
    }
    owned_changed = false;
    ConsumerHeartbeatResult r = h.beat(p);
    if (r.error == ErrorCode::kNone) {
      epoch = r.member_epoch;
      if (r.assignment) {
        owned_changed = owned != *r.assignment;
        owned = *r.assignment;
        std::erase_if(owned, [](const auto& kv) { return kv.second.empty(); });
      }
    }
    return r;
  }
  size_t count() const { return owned.count("orders") ? owned.at("orders").size() : 0; }
};

ConsumerGroupView view(Harness& h) {
  auto d = h.gc->consumer_group_describe("g");
  BOOST_REQUIRE((d.error == ErrorCode::kNone));
  return d.group;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(consumer_group)

BOOST_AUTO_TEST_CASE(members_are_reconciled_revocation_first_until_the_group_is_stable) {
  Harness h;
  Member a{h, "member-a"}, b{h, "member-b"};
  BOOST_TEST((a.beat().error == ErrorCode::kNone));
  BOOST_TEST(a.epoch == 1);
  BOOST_TEST(a.count() == 6u);
  BOOST_TEST(view(h).state == "Stable");

  // b joins: the target gives it 3 of a's partitions, which are not free yet.
  BOOST_TEST((b.beat().error == ErrorCode::kNone));
  BOOST_TEST(b.epoch == 2);
  BOOST_TEST(b.count() == 0u);
  BOOST_TEST(view(h).state == "Reconciling");
  // a is told to give three up, and keeps its epoch until it has.
  a.beat();
  BOOST_TEST(a.count() == 3u);
  BOOST_TEST(a.epoch == 1);
  // b asks again before a reported the revocation: still nothing.
  b.beat();
  BOOST_TEST(b.count() == 0u);
  a.beat();  // reports what it owns: now at epoch 2
  BOOST_TEST(a.epoch == 2);
  b.beat();
  BOOST_TEST(b.count() == 3u);
  b.beat();
  BOOST_TEST(view(h).state == "Stable");
  std::set<int32_t> all = a.owned["orders"];
  all.insert(b.owned["orders"].begin(), b.owned["orders"].end());
  BOOST_TEST(all.size() == 6u);
  const auto v = view(h);
  BOOST_TEST(v.group_epoch == 2);
  BOOST_TEST(v.assignment_epoch == 2);
  BOOST_TEST(v.assignor == "uniform");
}

BOOST_AUTO_TEST_CASE(requests_are_checked_and_stale_members_fenced_as_kafka) {
  Harness h;
  ConsumerHeartbeatParams p;
  p.group_id = "g";
  p.member_id = "";
  p.member_epoch = 0;
  p.rebalance_timeout_ms = 30'000;
  p.subscribed_topic_names = std::vector<std::string>{"orders"};
  p.owned.emplace();
  BOOST_TEST((h.beat(p, 1).error == ErrorCode::kInvalidRequest));  // v1: the member makes its id
  auto v0 = h.beat(p, 0);                                           // v0: the coordinator does
  BOOST_TEST((v0.error == ErrorCode::kNone));
  BOOST_TEST(v0.member_id.size() == 22u);
  p.member_id = "m";
  p.rebalance_timeout_ms = -1;
  BOOST_TEST((h.beat(p).error == ErrorCode::kInvalidRequest));
  p.rebalance_timeout_ms = 30'000;
  p.owned = Parts{{"orders", {0}}};
  BOOST_TEST((h.beat(p).error == ErrorCode::kInvalidRequest));  // TopicPartitions must be empty when joining
  p.owned.emplace();
  p.server_assignor = "sticky";
  auto bad = h.beat(p);
  BOOST_TEST((bad.error == ErrorCode::kUnsupportedAssignor));
  BOOST_TEST(bad.message == "ServerAssignor sticky is not supported. Supported assignors: uniform, range.");
  p.server_assignor.reset();
  p.subscribed_topic_names = std::vector<std::string>(10'001, "orders");  // [groups] consumer_max_subscribed_topics
  BOOST_TEST((h.beat(p).error == ErrorCode::kInvalidRequest));
  p.subscribed_topic_names = std::vector<std::string>{"orders"};
  p.member_epoch = -3;
  BOOST_TEST((h.beat(p).error == ErrorCode::kInvalidRequest));

  Member m{h, "m"};
  m.beat();
  ConsumerHeartbeatParams hb;
  hb.group_id = "g";
  hb.member_id = "m";
  hb.member_epoch = m.epoch + 1;
  BOOST_TEST((h.beat(hb).error == ErrorCode::kFencedMemberEpoch));
  hb.member_epoch = m.epoch;
  hb.member_id = "nobody";
  BOOST_TEST((h.beat(hb).error == ErrorCode::kUnknownMemberId));
  hb.group_id = "other";
  hb.member_id = "m";
  auto missing = h.beat(hb);
  BOOST_TEST((missing.error == ErrorCode::kGroupIdNotFound));
  BOOST_TEST(missing.message == "Consumer group other not found.");
}

BOOST_AUTO_TEST_CASE(an_expired_session_hands_the_partitions_to_the_others) {
  Harness h;
  Member a{h, "a"}, b{h, "b"};
  a.beat();
  b.beat();
  for (int i = 0; i < 4; ++i) {
    a.beat();
    b.beat();
  }
  BOOST_TEST(a.count() + b.count() == 6u);
  // b stops heartbeating; a goes on.
  for (int i = 0; i < 12; ++i) {
    h.advance(1'000);
    a.beat();
  }
  BOOST_TEST(view(h).members.size() == 1u);
  BOOST_TEST(a.count() == 6u);
  BOOST_TEST(view(h).state == "Stable");
}

BOOST_AUTO_TEST_CASE(a_static_member_comes_back_with_its_partitions_and_no_new_epoch) {
  Harness h;
  Member a{h, "a1", std::string("host-a")}, b{h, "b", std::string("host-b")};
  a.beat();
  b.beat();
  for (int i = 0; i < 4; ++i) {
    a.beat();
    b.beat();
  }
  const auto before = a.owned;
  const int32_t group_epoch = view(h).group_epoch;
  ConsumerHeartbeatParams leave;
  leave.group_id = "g";
  leave.member_id = "a1";
  leave.member_epoch = -2;
  leave.instance_id = "host-a";
  BOOST_TEST((h.beat(leave).error == ErrorCode::kNone));
  // Another process with the same instance id may not take it while it is held...
  Member thief{h, "a2", std::string("host-b")};
  BOOST_TEST((thief.beat().error == ErrorCode::kUnreleasedInstanceId));
  // ...but the restarted one (a new member id) gets its partitions back at once.
  Member again{h, "a2", std::string("host-a")};
  BOOST_TEST((again.beat().error == ErrorCode::kNone));
  BOOST_TEST((again.owned == before));
  BOOST_TEST(view(h).group_epoch == group_epoch);
  BOOST_TEST(view(h).members.size() == 2u);
  // The old incarnation is fenced.
  a.epoch = again.epoch;
  BOOST_TEST((a.beat().error == ErrorCode::kFencedInstanceId));
}

BOOST_AUTO_TEST_CASE(offset_commits_and_fetches_carry_the_member_epoch) {
  Harness h;
  Member a{h, "a"};
  a.beat();
  OffsetCommitParams c;
  c.group_id = "g";
  c.member_id = "a";
  c.generation_id = a.epoch;
  c.group_id_not_found_error = true;  // v9+
  c.entries.push_back({"orders", 0, 5, -1, ""});
  std::optional<std::vector<ErrorCode>> out;
  h.gc->commit_offsets(c, [&](std::vector<ErrorCode> e) { out = e; });
  while (!out) uv_run(&h.loop, UV_RUN_ONCE);
  BOOST_TEST((out->at(0) == ErrorCode::kNone));
  c.generation_id = a.epoch + 1;
  out.reset();
  h.gc->commit_offsets(c, [&](std::vector<ErrorCode> e) { out = e; });
  while (!out) uv_run(&h.loop, UV_RUN_ONCE);
  BOOST_TEST((out->at(0) == ErrorCode::kStaleMemberEpoch));
  c.transactional = true;  // TxnOffsetCommit: Kafka answers a stale epoch ILLEGAL_GENERATION there
  out.reset();
  h.gc->commit_offsets(c, [&](std::vector<ErrorCode> e) { out = e; });
  while (!out) uv_run(&h.loop, UV_RUN_ONCE);
  BOOST_TEST((out->at(0) == ErrorCode::kIllegalGeneration));
  c.transactional = false;
  c.generation_id = a.epoch;
  c.group_id_not_found_error = false;  // v8: not for consumer protocol members
  out.reset();
  h.gc->commit_offsets(c, [&](std::vector<ErrorCode> e) { out = e; });
  while (!out) uv_run(&h.loop, UV_RUN_ONCE);
  BOOST_TEST((out->at(0) == ErrorCode::kUnsupportedVersion));
  BOOST_TEST(!h.gc->validate_offset_fetch("g", "a", a.epoch));
  BOOST_TEST((h.gc->validate_offset_fetch("g", "a", a.epoch - 1) == ErrorCode::kStaleMemberEpoch));
  BOOST_TEST((h.gc->validate_offset_fetch("g", "b", 1) == ErrorCode::kUnknownMemberId));
  BOOST_TEST(!h.gc->validate_offset_fetch("g", "", -1));  // the admin client
  h.settle();
}

BOOST_AUTO_TEST_CASE(a_restart_keeps_members_epochs_and_assignments) {
  Harness h;
  Member a{h, "a"}, b{h, "b"};
  a.beat();
  b.beat();
  // The reconciliation's steps after b's join write one member each (no new target): what the
  // restart reads back must still be the whole group.
  for (int i = 0; i < 4; ++i) {
    a.beat();
    b.beat();
  }
  const auto before = view(h);
  BOOST_TEST(before.state == "Stable");
  h.stop();
  h.start();
  const auto after = view(h);
  BOOST_TEST(after.state == "Stable");
  BOOST_TEST(after.group_epoch == before.group_epoch);
  BOOST_TEST(after.members.size() == 2u);
  // The members carry on at their epochs: no fencing, no new assignment.
  auto r = a.beat();
  BOOST_TEST((r.error == ErrorCode::kNone));
  BOOST_TEST(r.member_epoch == before.group_epoch);
  BOOST_TEST(!r.assignment);
  BOOST_TEST(view(h).group_epoch == before.group_epoch);
  // A classic JoinGroup naming no protocol meets a live consumer group: its protocols are not
  // supported (INCONSISTENT_GROUP_PROTOCOL), the group untouched.
  JoinGroupParams j;
  j.group_id = "g";
  j.session_timeout_ms = 10'000;
  j.rebalance_timeout_ms = 10'000;
  j.protocol_type = "consumer";
  std::optional<JoinGroupResult> jr;
  h.gc->join_group(j, [&](JoinGroupResult x) { jr = x; });
  while (!jr) uv_run(&h.loop, UV_RUN_ONCE);
  BOOST_TEST((jr->error == ErrorCode::kInconsistentGroupProtocol));
  BOOST_TEST(h.gc->list_groups({}, {"consumer"}).size() == 1u);
  BOOST_TEST(h.gc->describe_group("g").not_classic.value_or("") == "Group g is not a classic group.");
}

BOOST_AUTO_TEST_CASE(a_regular_expression_subscription_follows_the_topics_it_matches) {
  Harness h;
  h.topics = {{"orders", 2}, {"orders-eu", 2}, {"payments", 3}};
  ConsumerHeartbeatParams p;
  p.group_id = "g";
  p.member_id = "m";
  p.member_epoch = 0;
  p.rebalance_timeout_ms = 30'000;
  p.subscribed_topic_regex = "(";
  p.owned.emplace();
  auto bad = h.beat(p);
  BOOST_TEST((bad.error == ErrorCode::kInvalidRegularExpression));
  BOOST_TEST(bad.message.find("SubscribedTopicRegex `(` is not a valid regular expression: ") == 0u, bad.message);
  p.subscribed_topic_regex = std::string(2000, 'a');
  BOOST_TEST((h.beat(p).error == ErrorCode::kInvalidRegularExpression));  // over [groups] consumer_max_regex_bytes
  BOOST_TEST(h.gc->list_groups({}, {}).empty());  // nothing was created

  p.subscribed_topic_regex = "orders.*";  // whole names, as RE2/J's matches()
  auto r = h.beat(p);
  BOOST_REQUIRE((r.error == ErrorCode::kNone));
  BOOST_TEST((*r.assignment == Parts{{"orders", {0, 1}}, {"orders-eu", {0, 1}}}));
  const int32_t epoch = r.member_epoch;
  // A topic created later is picked up at the next refresh (every 10 s), with a new group epoch.
  h.topics["orders-us"] = 1;
  h.topics["xorders"] = 1;
  ConsumerHeartbeatParams hb;
  hb.group_id = "g";
  hb.member_id = "m";
  hb.member_epoch = epoch;
  r = h.beat(hb);
  BOOST_TEST(!r.assignment);
  h.advance(5'000);
  r = h.beat(hb);
  BOOST_TEST(!r.assignment);
  h.advance(5'000);
  hb.member_epoch = r.member_epoch;
  r = h.beat(hb);
  BOOST_TEST(r.member_epoch == epoch + 1);
  BOOST_TEST((*r.assignment == Parts{{"orders", {0, 1}}, {"orders-eu", {0, 1}}, {"orders-us", {0}}}));
  BOOST_TEST(h.gc->consumer_group_describe("g").group.members.at(0).member.subscribed_topic_regex == "orders.*");
}

BOOST_AUTO_TEST_CASE(a_regular_expression_resolves_only_to_topics_the_member_may_describe) {
  // Kafka's filterTopicDescribeAuthorizedTopics: the principal of the heartbeat that resolves
  // the expression must be allowed to DESCRIBE each topic it keeps.
  Harness h;
  h.topics = {{"orders", 2}, {"orders-secret", 2}, {"payments", 3}};
  ConsumerHeartbeatParams p;
  p.group_id = "g";
  p.member_id = "m";
  p.member_epoch = 0;
  p.rebalance_timeout_ms = 30'000;
  p.subscribed_topic_regex = "orders.*";
  p.owned.emplace();
  std::vector<std::string> asked;
  p.may_describe_topic = [&](const std::string& t) {
    asked.push_back(t);
    return t != "orders-secret";
  };
  auto r = h.beat(p);
  BOOST_REQUIRE((r.error == ErrorCode::kNone));
  BOOST_TEST((*r.assignment == Parts{{"orders", {0, 1}}}));
  BOOST_TEST((std::set<std::string>(asked.begin(), asked.end()) == std::set<std::string>{"orders", "orders-secret"}));
}

BOOST_AUTO_TEST_SUITE_END()
