// The consumer group protocol's server-side assignors (KIP-848), src/bridge/groups/assignors.h.
// Kafka references: UniformHomogeneousAssignmentBuilderTest, UniformHeterogeneousAssignmentBuilderTest,
// RangeAssignorTest and CommonAssignorTests (group-coordinator, 4.x). Kafka's expected results
// are used verbatim where its test input does not hinge on HashSet<Uuid> iteration order; where
// it does, the expected result here is worked out from the Java code with topics in name order
// (assignors.cc, difference 1), and the test says so.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bridge/groups/assignors.h"

using namespace kib::bridge;

namespace {

using GroupResult = std::map<std::string, MemberTargetAssignment>;

AssignorMember member(std::string id, std::set<std::string> topics, MemberTargetAssignment assignment = {},
                      std::optional<std::string> instance = std::nullopt) {
  return AssignorMember{std::move(id), std::move(instance), std::move(topics), std::move(assignment)};
}

std::set<int32_t> range_of(int32_t begin, int32_t end) {
  std::set<int32_t> s;
  for (int32_t p = begin; p < end; ++p) s.insert(p);
  return s;
}

// "A={t1:0,1;t2:3} B={}": comparable, and readable when a check fails.
std::string describe(const GroupResult& result) {
  std::string s;
  for (const auto& [member_id, assignment] : result) {
    if (!s.empty()) s += ' ';
    s += member_id + "={";
    bool first_topic = true;
    for (const auto& [topic, partitions] : assignment) {
      if (!first_topic) s += ';';
      first_topic = false;
      s += topic + ':';
      bool first = true;
      for (int32_t p : partitions) {
        if (!first) s += ',';
        first = false;
        s += std::to_string(p);
      }
    }
    s += '}';
  }
  return s;
}

size_t assigned_count(const MemberTargetAssignment& assignment) {
  size_t n = 0;
  for (const auto& [topic, partitions] : assignment) n += partitions.size();
  return n;
}

// Members with their assignment replaced by `result`'s (the next round of the same group).
std::vector<AssignorMember> with_assignments(std::vector<AssignorMember> members, const GroupResult& result) {
  for (auto& m : members) {
    auto it = result.find(m.member_id);
    m.assignment = it == result.end() ? MemberTargetAssignment{} : it->second;
  }
  return members;
}

// What holds for every assignor on every input: one entry per distinct member id; every partition
// of an existing topic that someone subscribes to goes to exactly one member that subscribes to
// it; nothing else is assigned; no empty partition sets.
void check_valid(const std::vector<AssignorMember>& members, const TopicPartitionCounts& topics,
                 const GroupResult& result) {
  std::map<std::string, const AssignorMember*> by_id;
  for (const auto& m : members) by_id.emplace(m.member_id, &m);
  BOOST_REQUIRE_EQUAL(result.size(), by_id.size());
  std::map<std::string, std::map<int32_t, int>> owners;  // topic -> partition -> times assigned
  for (const auto& [member_id, assignment] : result) {
    BOOST_REQUIRE(by_id.count(member_id));
    const AssignorMember& m = *by_id.at(member_id);
    for (const auto& [topic, partitions] : assignment) {
      BOOST_CHECK_MESSAGE(!partitions.empty(), member_id << " has an empty set for " << topic);
      BOOST_CHECK_MESSAGE(m.subscribed_topics.count(topic), member_id << " got unsubscribed " << topic);
      auto t = topics.find(topic);
      BOOST_REQUIRE_MESSAGE(t != topics.end(), member_id << " got unknown topic " << topic);
      for (int32_t p : partitions) {
        BOOST_CHECK(p >= 0 && p < t->second);
        ++owners[topic][p];
      }
    }
  }
  std::set<std::string> subscribed;
  for (const auto& [id, m] : by_id) subscribed.insert(m->subscribed_topics.begin(), m->subscribed_topics.end());
  for (const auto& [topic, count] : topics) {
    if (!subscribed.count(topic)) {
      BOOST_CHECK_MESSAGE(!owners.count(topic), "unsubscribed topic " << topic << " assigned");
      continue;
    }
    for (int32_t p = 0; p < count; ++p) {
      BOOST_CHECK_MESSAGE(owners[topic][p] == 1, topic << ":" << p << " assigned " << owners[topic][p] << " times");
    }
  }
}

void check_balanced(const GroupResult& result) {
  size_t lo = SIZE_MAX, hi = 0;
  for (const auto& [id, assignment] : result) {
    lo = std::min(lo, assigned_count(assignment));
    hi = std::max(hi, assigned_count(assignment));
  }
  BOOST_CHECK_MESSAGE(hi - lo <= 1, "unbalanced: " << lo << " to " << hi << " partitions per member");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(consumer_assignors)

// ---- names ------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(known_names_dispatch_and_unknown_names_yield_nothing) {
  BOOST_CHECK(is_known_assignor("uniform"));
  BOOST_CHECK(is_known_assignor("range"));
  BOOST_CHECK(!is_known_assignor("Uniform"));
  BOOST_CHECK(!is_known_assignor("simple"));
  BOOST_CHECK(!is_known_assignor(""));
  std::vector<AssignorMember> members{member("A", {"t"}), member("B", {"t"})};
  TopicPartitionCounts topics{{"t", 3}};
  BOOST_CHECK_EQUAL(describe(assign("uniform", members, topics)), describe(assign_uniform(members, topics)));
  BOOST_CHECK_EQUAL(describe(assign("range", members, topics)), describe(assign_range(members, topics)));
  BOOST_CHECK(assign("sticky", members, topics).empty());
  BOOST_CHECK(assign_uniform({}, topics).empty());
  BOOST_CHECK(assign_range({}, topics).empty());
}

// ---- uniform, homogeneous (UniformHomogeneousAssignmentBuilderTest) ---------------------------

BOOST_AUTO_TEST_CASE(uniform_one_member_no_subscription_gets_an_empty_entry) {
  BOOST_CHECK_EQUAL(describe(assign_uniform({member("A", {})}, {{"topic1", 3}})), "A={}");
}

BOOST_AUTO_TEST_CASE(uniform_subscription_to_a_missing_topic_is_ignored) {
  // Kafka's testOneMemberSubscribedToNonexistentTopic expects PartitionAssignorException from the
  // builder; in the coordinator TopicIds never hands it a missing topic, which is what happens here.
  BOOST_CHECK_EQUAL(describe(assign_uniform({member("A", {"topic2"})}, {{"topic1", 3}})), "A={}");
  BOOST_CHECK_EQUAL(describe(assign_uniform({member("A", {"topic1", "topic2"}), member("B", {"topic1", "topic2"})},
                                            {{"topic1", 3}})),
                    "A={topic1:0} B={topic1:1,2}");
}

BOOST_AUTO_TEST_CASE(uniform_first_assignment_two_members_two_topics) {
  // testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks. 5 partitions, 2 members: quota 2 plus
  // one extra, which A (first) gives up for B. The free partitions are dealt in topic order:
  // Kafka's HashSet<Uuid> happened to visit topic3 first (A={topic3:0,1} B={topic1:0,1,2}); in
  // name order topic1 comes first.
  std::vector<AssignorMember> members{member("A", {"topic1", "topic3"}), member("B", {"topic1", "topic3"})};
  TopicPartitionCounts topics{{"topic1", 3}, {"topic3", 2}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,1} B={topic1:2;topic3:0,1}");
  check_valid(members, topics, result);
  check_balanced(result);

  // Named so that name order is the order Kafka's test visited them in, Kafka's expected result.
  std::vector<AssignorMember> renamed{member("A", {"a-topic3", "b-topic1"}), member("B", {"a-topic3", "b-topic1"})};
  BOOST_CHECK_EQUAL(describe(assign_uniform(renamed, {{"b-topic1", 3}, {"a-topic3", 2}})),
                    "A={a-topic3:0,1} B={b-topic1:0,1,2}");
}

BOOST_AUTO_TEST_CASE(uniform_more_members_than_partitions_the_first_goes_without) {
  // testFirstAssignmentNumMembersGreaterThanTotalNumPartitions, Kafka's expected result: A gives
  // up the extra slot (3 - 0 > 2 members still owed one), B and C must take theirs.
  std::vector<AssignorMember> members{member("A", {"topic3"}), member("B", {"topic3"}), member("C", {"topic3"})};
  TopicPartitionCounts topics{{"topic3", 2}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={} B={topic3:0} C={topic3:1}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(uniform_unbalanced_previous_assignment_is_trimmed_to_quota) {
  // testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment, Kafka's expected result:
  // A (quota 3) keeps topic1:0,1 and topic2:0 and gives up topic2:1, which B (one short) takes.
  std::vector<AssignorMember> members{
      member("A", {"topic1", "topic2"}, {{"topic1", {0, 1}}, {"topic2", {0, 1}}}),
      member("B", {"topic1", "topic2"}, {{"topic1", {2}}, {"topic2", {2}}}),
  };
  TopicPartitionCounts topics{{"topic1", 3}, {"topic2", 3}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,1;topic2:0} B={topic1:2;topic2:1,2}");
  check_valid(members, topics, result);
  check_balanced(result);
}

BOOST_AUTO_TEST_CASE(uniform_partitions_added_go_to_members_below_quota) {
  // testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics (topic1 3 -> 6, topic2 3 -> 5).
  // Both keep what they had; A (3 held, gives up the extra slot) takes 2 more, B (3 held) 3 more.
  // The new partitions are dealt in name order (Kafka's test: topic2's first, giving
  // A={topic1:0,2;topic2:0,3,4} B={topic1:1,3,4,5;topic2:1,2}).
  std::vector<AssignorMember> members{
      member("A", {"topic1", "topic2"}, {{"topic1", {0, 2}}, {"topic2", {0}}}),
      member("B", {"topic1", "topic2"}, {{"topic1", {1}}, {"topic2", {1, 2}}}),
  };
  TopicPartitionCounts topics{{"topic1", 6}, {"topic2", 5}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,2,3,4;topic2:0} B={topic1:1,5;topic2:1,2,3,4}");
  check_valid(members, topics, result);
  check_balanced(result);
}

BOOST_AUTO_TEST_CASE(uniform_member_joins_and_only_the_excess_moves) {
  // testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics, Kafka's
  // expected result: quota 2 each; A gives up topic2:0, B gives up topic2:2, C gets both.
  std::vector<AssignorMember> members{
      member("A", {"topic1", "topic2"}, {{"topic1", {0, 2}}, {"topic2", {0}}}),
      member("B", {"topic1", "topic2"}, {{"topic1", {1}}, {"topic2", {1, 2}}}),
      member("C", {"topic1", "topic2"}),
  };
  TopicPartitionCounts topics{{"topic1", 3}, {"topic2", 3}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,2} B={topic1:1;topic2:1} C={topic2:0,2}");
  check_valid(members, topics, result);
  check_balanced(result);
}

BOOST_AUTO_TEST_CASE(uniform_member_leaves_and_its_partitions_are_shared_out) {
  // testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics: C held
  // topic1:2 and topic2:2. A and B keep theirs and take one each, in name order (Kafka's test
  // dealt topic2:2 first: A={topic1:0;topic2:0,2} B={topic1:1,2;topic2:1}).
  std::vector<AssignorMember> members{
      member("A", {"topic1", "topic2"}, {{"topic1", {0}}, {"topic2", {0}}}),
      member("B", {"topic1", "topic2"}, {{"topic1", {1}}, {"topic2", {1}}}),
  };
  TopicPartitionCounts topics{{"topic1", 3}, {"topic2", 3}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,2;topic2:0} B={topic1:1;topic2:1,2}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(uniform_unsubscribed_topic_is_dropped_from_the_assignment) {
  // testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics.
  std::vector<AssignorMember> members{
      member("A", {"topic2"}, {{"topic1", {0}}, {"topic2", {0}}}),
      member("B", {"topic2"}, {{"topic1", {1}}, {"topic2", {1}}}),
  };
  auto result = assign_uniform(members, {{"topic1", 2}, {"topic2", 2}});
  BOOST_CHECK_EQUAL(describe(result), "A={topic2:0} B={topic2:1}");
}

BOOST_AUTO_TEST_CASE(uniform_homogeneous_assignment_is_a_fixed_point_and_ignores_input_order) {
  // CommonAssignorTests.testAssignmentReuse and testReassignmentStickiness: feeding the result back
  // changes nothing, whatever order the members come in.
  std::vector<AssignorMember> members{member("A", {"topic1", "topic2", "topic3"}),
                                      member("B", {"topic1", "topic2", "topic3"}),
                                      member("C", {"topic1", "topic2", "topic3"})};
  TopicPartitionCounts topics{{"topic1", 2}, {"topic2", 5}, {"topic3", 7}};
  auto first = assign_uniform(members, topics);
  check_valid(members, topics, first);
  check_balanced(first);
  auto again = with_assignments(members, first);
  std::sort(again.begin(), again.end(), [](const auto& a, const auto& b) { return a.member_id < b.member_id; });
  do {
    BOOST_CHECK_EQUAL(describe(assign_uniform(again, topics)), describe(first));
  } while (std::next_permutation(again.begin(), again.end(),
                                 [](const auto& a, const auto& b) { return a.member_id < b.member_id; }));
}

BOOST_AUTO_TEST_CASE(uniform_large_homogeneous_group_is_valid_and_balanced) {
  // testValidityAndBalanceForLargeSampleSet: 100 topics of 3 partitions, 49 members.
  std::set<std::string> names;
  TopicPartitionCounts topics;
  for (int i = 1; i < 101; ++i) {
    names.insert("topic-" + std::to_string(i));
    topics["topic-" + std::to_string(i)] = 3;
  }
  std::vector<AssignorMember> members;
  for (int i = 1; i < 50; ++i) members.push_back(member("member" + std::to_string(i), names));
  auto result = assign_uniform(members, topics);
  check_valid(members, topics, result);
  check_balanced(result);
}

// ---- uniform, heterogeneous (UniformHeterogeneousAssignmentBuilderTest) -----------------------
// Kafka's test sorts member ids (TestGroupSpecImpl) and its topic Uuids compare in topic-number
// order, so its expected results carry over verbatim.

BOOST_AUTO_TEST_CASE(uniform_heterogeneous_first_assignment_two_members_two_topics) {
  // topic1 (3 per subscriber, 1 subscriber) is dealt before topic3 (6 / 2 = 3, 2 subscribers);
  // topic3 then fills B up to A's level before alternating.
  std::vector<AssignorMember> members{member("A", {"topic1", "topic3"}), member("B", {"topic3"})};
  TopicPartitionCounts topics{{"topic1", 3}, {"topic3", 6}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,1,2;topic3:4} B={topic3:0,1,2,3,5}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(uniform_heterogeneous_more_members_than_partitions) {
  std::vector<AssignorMember> members{member("A", {"topic3"}), member("B", {"topic3"}), member("C", {"topic1"})};
  TopicPartitionCounts topics{{"topic3", 1}, {"topic1", 2}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic3:0} B={} C={topic1:0,1}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(uniform_heterogeneous_unbalanced_previous_assignment_is_rebalanced) {
  // testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment: sizes 3/2/9. topic2
  // (2 per subscriber, 2 subscribers) is balanced before topic1 (2 per subscriber, 3): C gives
  // topic2:3,2,1 to B, then topic1:5 to A.
  std::vector<AssignorMember> members{
      member("A", {"topic1"}, {{"topic1", {0, 1, 2}}}),
      member("B", {"topic1", "topic2"}, {{"topic1", {3}}, {"topic2", {0}}}),
      member("C", {"topic1", "topic2", "topic3"},
             {{"topic1", {4, 5}}, {"topic2", {1, 2, 3}}, {"topic3", {0, 1, 2, 3}}}),
  };
  TopicPartitionCounts topics{{"topic1", 6}, {"topic2", 4}, {"topic3", 4}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,1,2,5} B={topic1:3;topic2:0,1,2,3} C={topic1:4;topic3:0,1,2,3}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(uniform_heterogeneous_partitions_added) {
  std::vector<AssignorMember> members{
      member("A", {"topic1", "topic3"}, {{"topic1", {0, 1, 2, 3}}, {"topic3", {0, 1}}}),
      member("B", {"topic1", "topic2", "topic3", "topic4"}, {{"topic2", {0, 1, 2}}, {"topic4", {0, 1, 2}}}),
  };
  TopicPartitionCounts topics{{"topic1", 6}, {"topic2", 5}, {"topic3", 3}, {"topic4", 3}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,1,2,3,4,5;topic3:0,1,2} B={topic2:0,1,2,3,4;topic4:0,1,2}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(uniform_heterogeneous_member_and_partitions_added) {
  // testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics.
  std::vector<AssignorMember> members{
      member("A", {"topic1"}, {{"topic1", {0, 2}}, {"topic2", {0}}}),
      member("B", {"topic1", "topic2"}, {{"topic1", {1}}, {"topic2", {1, 2}}}),
      member("C", {"topic1", "topic2"}),
  };
  TopicPartitionCounts topics{{"topic1", 6}, {"topic2", 7}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,2,3,4,5} B={topic1:1;topic2:1,2,6} C={topic2:0,3,4,5}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(uniform_heterogeneous_member_removed) {
  std::vector<AssignorMember> members{
      member("A", {"topic1", "topic3"}, {{"topic1", {0, 1, 2}}, {"topic3", {0, 1}}}),
      member("B", {"topic2"}, {{"topic2", {3, 4, 5, 6}}}),
  };
  TopicPartitionCounts topics{{"topic1", 3}, {"topic2", 8}, {"topic3", 3}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,1,2;topic3:0,1,2} B={topic2:0,1,2,3,4,5,6,7}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(uniform_heterogeneous_subscription_removed) {
  std::vector<AssignorMember> members{
      member("A", {"topic1"}, {{"topic1", {0, 2}}, {"topic2", {1, 3}}}),
      member("B", {"topic1", "topic2"}, {{"topic1", {1}}, {"topic2", {0, 2, 4}}}),
  };
  TopicPartitionCounts topics{{"topic1", 3}, {"topic2", 5}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,1,2} B={topic2:0,1,2,3,4}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(uniform_heterogeneous_partitions_run_out_before_balance) {
  // testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions. Both subscribe to the
  // same topics but Kafka's test calls the group heterogeneous; here it is taken as such by
  // giving B a subscription to a topic that does not exist (which only changes the type).
  std::vector<AssignorMember> members{
      member("A", {"topic1", "topic2", "topic3"}, {{"topic1", {0, 1}}, {"topic2", {0, 1}}, {"topic3", {0, 1}}}),
      member("B", {"topic1", "topic2", "topic3", "missing"}),
  };
  TopicPartitionCounts topics{{"topic1", 2}, {"topic2", 2}, {"topic3", 2}};
  auto result = assign_uniform(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic2:0;topic3:0,1} B={topic1:0,1;topic2:1}");
  check_valid(members, topics, result);
  check_balanced(result);
}

BOOST_AUTO_TEST_CASE(uniform_heterogeneous_member_without_subscriptions) {
  std::vector<AssignorMember> members{member("A", {"topic1"}), member("B", {})};
  auto result = assign_uniform(members, {{"topic1", 3}});
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,1,2} B={}");
}

BOOST_AUTO_TEST_CASE(uniform_heterogeneous_overlapping_subscriptions_balance_per_topic) {
  // balanceTopics' Javadoc case: A and B on t1, B and C on t2. Each topic's subscribers end within
  // one partition of each other, and a second run from the result moves nothing.
  std::vector<AssignorMember> members{member("A", {"t1"}), member("B", {"t1", "t2"}), member("C", {"t2"})};
  TopicPartitionCounts topics{{"t1", 15}, {"t2", 15}};
  auto result = assign_uniform(members, topics);
  check_valid(members, topics, result);
  BOOST_CHECK_EQUAL(assigned_count(result["A"]) + assigned_count(result["B"]) + assigned_count(result["C"]), 30u);
  for (const auto& [id, a] : result) BOOST_CHECK_MESSAGE(assigned_count(a) >= 9 && assigned_count(a) <= 11, describe(result));
  BOOST_CHECK_EQUAL(describe(assign_uniform(with_assignments(members, result), topics)), describe(result));
}

// ---- range (RangeAssignor in 4.3) --------------------------------------------------------------

BOOST_AUTO_TEST_CASE(range_one_member_no_topic) {
  BOOST_CHECK_EQUAL(describe(assign_range({member("A", {})}, {{"topic1", 3}})), "A={}");
  BOOST_CHECK_EQUAL(describe(assign_range({member("A", {"topic2"})}, {{"topic1", 3}})), "A={}");
}

BOOST_AUTO_TEST_CASE(range_two_members_two_topics_same_subscriptions) {
  std::vector<AssignorMember> members{member("A", {"topic1", "topic3"}), member("B", {"topic1", "topic3"})};
  TopicPartitionCounts topics{{"topic1", 3}, {"topic3", 2}};
  auto result = assign_range(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,1;topic3:0} B={topic1:2;topic3:1}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(range_co_partitions_topics_with_equal_partition_counts) {
  // RangeAssignor's Javadoc example: M0 [T1P0, T1P1, T2P0, T2P1], M1 [T1P2, T2P2].
  std::vector<AssignorMember> members{member("M0", {"T1", "T2"}), member("M1", {"T1", "T2"})};
  auto result = assign_range(members, {{"T1", 3}, {"T2", 3}});
  BOOST_CHECK_EQUAL(describe(result), "M0={T1:0,1;T2:0,1} M1={T1:2;T2:2}");

  // Three members, three topics of 7: every member gets the same partition numbers of each.
  std::vector<AssignorMember> three{member("a", {"x", "y", "z"}), member("b", {"x", "y", "z"}),
                                    member("c", {"x", "y", "z"})};
  TopicPartitionCounts topics{{"x", 7}, {"y", 7}, {"z", 7}};
  auto r3 = assign_range(three, topics);
  check_valid(three, topics, r3);
  for (const auto& [id, a] : r3) {
    BOOST_REQUIRE_EQUAL(a.size(), 3u);
    BOOST_CHECK(a.at("x") == a.at("y"));
    BOOST_CHECK(a.at("y") == a.at("z"));
  }
  BOOST_CHECK(r3["a"].at("x") == range_of(0, 3));
  BOOST_CHECK(r3["b"].at("x") == range_of(3, 5));
  BOOST_CHECK(r3["c"].at("x") == range_of(5, 7));
}

BOOST_AUTO_TEST_CASE(range_uneven_partition_counts) {
  std::vector<AssignorMember> members{member("A", {"t1", "t2"}), member("B", {"t1", "t2"})};
  auto result = assign_range(members, {{"t1", 3}, {"t2", 5}});
  BOOST_CHECK_EQUAL(describe(result), "A={t1:0,1;t2:0,1,2} B={t1:2;t2:3,4}");
}

BOOST_AUTO_TEST_CASE(range_different_subscriptions_split_each_topic_among_its_subscribers) {
  // testFirstAssignmentThreeConsumersThreeTopicsDifferentSubscriptions.
  std::vector<AssignorMember> members{member("A", {"topic1", "topic2"}), member("B", {"topic3"}),
                                      member("C", {"topic2", "topic3"})};
  TopicPartitionCounts topics{{"topic1", 3}, {"topic2", 3}, {"topic3", 2}};
  auto result = assign_range(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0,1,2;topic2:0,1} B={topic3:0} C={topic2:2;topic3:1}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(range_more_members_than_partitions) {
  std::vector<AssignorMember> members{member("A", {"topic1", "topic3"}), member("B", {"topic1", "topic3"}),
                                      member("C", {"topic1", "topic3"})};
  TopicPartitionCounts topics{{"topic1", 3}, {"topic3", 2}};
  auto result = assign_range(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0;topic3:0} B={topic1:1;topic3:1} C={topic1:2}");
  check_valid(members, topics, result);
}

BOOST_AUTO_TEST_CASE(range_ignores_the_current_assignment) {
  // 4.3's RangeAssignor has no sticky path: the result depends on the member order alone. A
  // member joining re-cuts the ranges (the 3.x RangeAssignorTest expected A={0} B={2} C={1} here,
  // keeping B's partition; 4.3 gives C the last range).
  std::vector<AssignorMember> members{
      member("A", {"topic1", "topic2"}, {{"topic1", {0, 1}}, {"topic2", {0, 1}}}),
      member("B", {"topic1", "topic2"}, {{"topic1", {2}}, {"topic2", {2}}}),
      member("C", {"topic1", "topic2"}),
  };
  TopicPartitionCounts topics{{"topic1", 3}, {"topic2", 3}};
  auto result = assign_range(members, topics);
  BOOST_CHECK_EQUAL(describe(result), "A={topic1:0;topic2:0} B={topic1:1;topic2:1} C={topic1:2;topic2:2}");

  // With the member set unchanged the assignment is stable: the result fed back, or any other
  // current assignment (even a nonsensical one), gives the same answer.
  BOOST_CHECK_EQUAL(describe(assign_range(with_assignments(members, result), topics)), describe(result));
  auto scrambled = members;
  scrambled[0].assignment = {{"topic1", {2, 7, -1}}, {"gone", {0}}};
  scrambled[2].assignment = {{"topic2", {0, 1, 2}}};
  BOOST_CHECK_EQUAL(describe(assign_range(scrambled, topics)), describe(result));
}

BOOST_AUTO_TEST_CASE(range_orders_static_members_by_instance_id_then_the_rest_by_member_id) {
  // sortMemberIds(): instance ids first (ascending), then members without one by member id.
  std::vector<AssignorMember> members{
      member("m-a", {"t"}, {}, "i2"),
      member("m-b", {"t"}),
      member("m-c", {"t"}, {}, "i1"),
      member("m-0", {"t"}),
  };
  auto result = assign_range(members, {{"t", 4}});
  BOOST_CHECK_EQUAL(describe(result), "m-0={t:2} m-a={t:1} m-b={t:3} m-c={t:0}");
}

BOOST_AUTO_TEST_CASE(range_static_members_keep_their_ranges_across_a_rolling_bounce) {
  // RangeAssignor's Javadoc: after a rolling bounce members come back with new member ids. Without
  // instance ids the ranges follow the member id order and get swapped (M0 -> M3, M1 -> M2); with
  // instance ids I0 keeps [T1P0, T1P1, T2P0, T2P1] and I1 keeps [T1P2, T2P2].
  TopicPartitionCounts topics{{"T1", 3}, {"T2", 3}};
  auto dynamic_after = assign_range({member("M3", {"T1", "T2"}), member("M2", {"T1", "T2"})}, topics);
  BOOST_CHECK_EQUAL(describe(dynamic_after), "M2={T1:0,1;T2:0,1} M3={T1:2;T2:2}");

  auto before = assign_range({member("M0", {"T1", "T2"}, {}, "I0"), member("M1", {"T1", "T2"}, {}, "I1")}, topics);
  auto after = assign_range({member("M3", {"T1", "T2"}, {}, "I0"), member("M2", {"T1", "T2"}, {}, "I1")}, topics);
  BOOST_CHECK_EQUAL(describe(before), "M0={T1:0,1;T2:0,1} M1={T1:2;T2:2}");
  BOOST_CHECK_EQUAL(describe(after), "M2={T1:2;T2:2} M3={T1:0,1;T2:0,1}");
}

// ---- inputs Kafka never produces ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(inconsistent_current_assignments_are_sanitised_not_trusted) {
  // Out-of-range and negative partitions, a topic that no longer exists, a partition claimed by two
  // members (the first by member id keeps it), a duplicate member id (first occurrence counts), a
  // negative partition count (treated as a missing topic) and an empty topic.
  std::vector<AssignorMember> members{
      member("B", {"t", "empty", "neg"}, {{"t", {0, 1, 5, -3}}, {"gone", {0}}, {"neg", {0}}}),
      member("A", {"t", "empty", "neg"}, {{"t", {1, 2}}}),
      member("A", {"other"}, {{"other", {0}}}),
  };
  TopicPartitionCounts topics{{"t", 4}, {"empty", 0}, {"neg", -1}, {"other", 2}};
  for (const char* name : {"uniform", "range"}) {
    auto result = assign(name, members, topics);
    BOOST_TEST_CONTEXT(name) {
      check_valid({members[0], members[1]}, topics, result);
      check_balanced(result);
    }
  }
  // Uniform keeps what it can: A holds 1 and 2 (first claimant of 1), B keeps 0 and gets 3.
  BOOST_CHECK_EQUAL(describe(assign_uniform(members, topics)), "A={t:1,2} B={t:0,3}");
}

// ---- properties on random inputs ---------------------------------------------------------------

namespace {

struct RandomGroup {
  std::vector<AssignorMember> members;
  TopicPartitionCounts topics;
};

// Up to 6 topics (some with 0 partitions, some subscribed to but missing), up to 12 members with
// ids drawn from a small pool (so duplicates occur), random instance ids, and current assignments
// that are partly plausible and partly garbage.
RandomGroup random_group(std::mt19937& rng, bool homogeneous) {
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomGroup g;
  const int topic_count = pick(1, 6);
  std::vector<std::string> names;
  for (int t = 0; t < topic_count; ++t) {
    names.push_back("topic-" + std::to_string(t));
    if (pick(0, 9) > 0) g.topics[names.back()] = pick(0, 30);
  }
  std::set<std::string> shared;
  for (const auto& n : names) {
    if (pick(0, 2) > 0) shared.insert(n);
  }
  const int member_count = pick(1, 12);
  for (int m = 0; m < member_count; ++m) {
    AssignorMember a;
    a.member_id = "member-" + std::to_string(pick(0, 14));
    if (pick(0, 2) == 0) a.instance_id = "instance-" + std::to_string(pick(0, 9));
    if (homogeneous) {
      a.subscribed_topics = shared;
    } else {
      for (const auto& n : names) {
        if (pick(0, 1)) a.subscribed_topics.insert(n);
      }
    }
    for (const auto& n : names) {
      if (pick(0, 2) > 0) continue;
      auto& parts = a.assignment[n];
      for (int k = pick(0, 8); k > 0; --k) parts.insert(pick(-2, 33));
    }
    g.members.push_back(std::move(a));
  }
  return g;
}

// Every member keeps at least min(what it held that is still valid, total / members) partitions:
// UniformHomogeneousAssignmentBuilder only revokes above the member's quota.
void check_homogeneous_stickiness(const std::vector<AssignorMember>& members, const TopicPartitionCounts& topics,
                                  const GroupResult& result) {
  size_t total = 0;
  for (const auto& t : members.front().subscribed_topics) {
    auto it = topics.find(t);
    if (it != topics.end() && it->second > 0) total += static_cast<size_t>(it->second);
  }
  const size_t minimum_quota = total / result.size();
  for (const auto& m : members) {
    size_t held = 0, kept = 0;
    for (const auto& [topic, partitions] : m.assignment) {
      auto it = result.at(m.member_id).find(topic);
      for (int32_t p : partitions) {
        ++held;
        if (it != result.at(m.member_id).end() && it->second.count(p)) ++kept;
      }
    }
    BOOST_CHECK_MESSAGE(kept >= std::min(held, minimum_quota),
                        m.member_id << " kept " << kept << " of " << held << " (quota " << minimum_quota << ")");
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(random_inputs_are_assigned_validly_and_deterministically) {
  std::mt19937 rng(20260514);
  for (int round = 0; round < 400; ++round) {
    const bool homogeneous = round % 2 == 0;
    RandomGroup g = random_group(rng, homogeneous);
    auto shuffled = g.members;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (const char* name : {"uniform", "range"}) {
      BOOST_TEST_CONTEXT("round " << round << " " << name) {
        auto result = assign(name, g.members, g.topics);
        check_valid(g.members, g.topics, result);
        // Input order does not matter, except which of two entries with the same member id counts.
        std::map<std::string, int> id_counts;
        for (const auto& m : g.members) ++id_counts[m.member_id];
        if (std::all_of(id_counts.begin(), id_counts.end(), [](const auto& e) { return e.second == 1; })) {
          BOOST_CHECK_EQUAL(describe(assign(name, shuffled, g.topics)), describe(result));
        }
        if (homogeneous && std::string(name) == "uniform") check_balanced(result);
        if (std::string(name) == "range") {
          // Each member's share of a topic is one contiguous range, shares differ by at most one.
          std::map<std::string, std::pair<size_t, size_t>> spread;  // topic -> (min, max) share
          std::map<std::string, const AssignorMember*> by_id;
          for (const auto& m : g.members) by_id.emplace(m.member_id, &m);
          for (const auto& [id, a] : result) {
            for (const auto& t : by_id.at(id)->subscribed_topics) {
              if (!g.topics.count(t)) continue;
              auto it = a.find(t);
              const size_t share = it == a.end() ? 0 : it->second.size();
              if (it != a.end()) BOOST_CHECK(*it->second.rbegin() - *it->second.begin() + 1 == static_cast<int32_t>(share));
              auto [s, inserted] = spread.emplace(t, std::make_pair(share, share));
              s->second.first = std::min(s->second.first, share);
              s->second.second = std::max(s->second.second, share);
            }
          }
          for (const auto& [t, s] : spread) BOOST_CHECK_MESSAGE(s.second - s.first <= 1, t << " shares " << s.first << ".." << s.second);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(random_uniform_rounds_are_sticky_and_converge) {
  // A group evolving over rounds: members join and leave, topics grow, each round starts from the
  // previous round's target assignment as Kafka's TargetAssignmentBuilder does.
  std::mt19937 rng(848);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int run = 0; run < 40; ++run) {
    const bool homogeneous = run % 2 == 0;
    TopicPartitionCounts topics;
    const int topic_count = pick(1, 5);
    std::set<std::string> all;
    for (int t = 0; t < topic_count; ++t) {
      all.insert("t" + std::to_string(t));
      topics["t" + std::to_string(t)] = pick(1, 40);
    }
    auto subscription = [&]() {
      if (homogeneous) return all;
      std::set<std::string> s;
      for (const auto& t : all) {
        if (pick(0, 1)) s.insert(t);
      }
      return s;
    };
    std::vector<AssignorMember> members;
    int next_id = 0;
    for (int m = pick(1, 6); m > 0; --m) members.push_back(member("m" + std::to_string(next_id++), subscription()));
    GroupResult previous;
    for (int round = 0; round < 8; ++round) {
      BOOST_TEST_CONTEXT("run " << run << " round " << round) {
        members = with_assignments(members, previous);
        auto result = assign_uniform(members, topics);
        check_valid(members, topics, result);
        if (homogeneous) {
          check_balanced(result);
          check_homogeneous_stickiness(members, topics, result);
          // And the result is a fixed point (CommonAssignorTests.testAssignmentReuse).
          BOOST_CHECK_EQUAL(describe(assign_uniform(with_assignments(members, result), topics)), describe(result));
        }
        previous = result;
        // Change the group: a member leaves, one joins, or a topic grows.
        switch (pick(0, 2)) {
          case 0:
            if (members.size() > 1) members.erase(members.begin() + pick(0, static_cast<int>(members.size()) - 1));
            break;
          case 1:
            members.push_back(member("m" + std::to_string(next_id++), subscription()));
            break;
          default:
            topics["t" + std::to_string(pick(0, topic_count - 1))] += pick(1, 10);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(large_groups_stay_bounded) {
  // 10,000 members and a million partitions: the work is linear-ish and nothing overflows.
  std::vector<AssignorMember> members;
  for (int i = 0; i < 10'000; ++i) members.push_back(member("member-" + std::to_string(i), {"big", "small"}));
  TopicPartitionCounts topics{{"big", 1'000'000}, {"small", 7}};
  auto uniform = assign_uniform(members, topics);
  check_balanced(uniform);
  size_t total = 0;
  for (const auto& [id, a] : uniform) total += assigned_count(a);
  BOOST_CHECK_EQUAL(total, 1'000'007u);
  auto range = assign_range(members, topics);
  BOOST_CHECK(range["member-0"].at("big") == range_of(0, 100));
  BOOST_CHECK_EQUAL(range["member-0"].at("small").size(), 1u);

  // Heterogeneous: half of the members also read "small" with its 7 partitions.
  for (size_t i = 0; i < members.size(); i += 2) members[i].subscribed_topics = {"big"};
  auto hetero = assign_uniform(with_assignments(members, uniform), topics);
  check_valid(members, topics, hetero);
  check_balanced(hetero);
}

BOOST_AUTO_TEST_SUITE_END()
