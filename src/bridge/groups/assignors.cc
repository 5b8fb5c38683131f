// Ported from Apache Kafka 4.3's group coordinator (org.apache.kafka.coordinator.group):
//   - assignor/UniformAssignor: the homogeneous/heterogeneous dispatch (assign_uniform).
//   - assignor/UniformHomogeneousAssignmentBuilder: uniform_homogeneous below.
//   - assignor/UniformHeterogeneousAssignmentBuilder, with its MemberAssignmentBalancer:
//     UniformHeterogeneous below.
//   - assignor/RangeAssignor: assign_range.
//   - modern/GroupSpecImpl.isPartitionAssigned (the inverted target assignment) is the per-topic
//     owner table Group::owners; ModernGroup/ConsumerGroup.subscriptionType is Group::homogeneous.
//   - AssignorHelpers (isImmutableMap, deepCopyAssignment) exists for Java's copy-on-write of
//     the members' assignment maps; here the assignments are plain values, so it has no port.
//
// Known differences from Kafka, all forced by the interface or by determinism:
//   1. Topic names stand in for topic ids. Where Kafka sorts topic ids (the heterogeneous
//      builder's topic order, last tie-break) we sort names. Where Kafka iterates a
//      HashSet/HashMap keyed by Uuid in an order that shapes the result (the homogeneous
//      builder's subscribedTopicIds, which orders its list of unassigned partitions; every
//      member's assignment map, which decides which partitions a member over its quota keeps)
//      we iterate names in ascending order. Partitions within a topic are iterated ascending
//      (Java's HashSet<Integer> does so for partition numbers below its table size).
//   2. Kafka iterates GroupSpec.memberIds(), the key set of a HashMap; here members are always
//      taken in ascending member-id order. Kafka's own assignor tests pin that order too
//      (TreeMap members, UniformHeterogeneousAssignmentBuilderTest's TestGroupSpecImpl). A
//      member id given twice in the input counts once (its first occurrence).
//   3. The subscription type is computed here, not carried by the group: homogeneous when every
//      member's subscribed_topics set is the same (names, existing or not, as Kafka's
//      SubscriptionCount.byNameCount counts them). Kafka also calls a group heterogeneous when
//      members reach the same topics through different means (one by regex, one by names);
//      with regexes already expanded that cannot be told apart here.
//   4. Kafka throws PartitionAssignorException for a subscribed topic missing from the metadata
//      (its TopicIds already drops those, so it does not happen there) and when partitions are
//      left unassigned (cannot happen: the quotas add up to the partition count). Here nothing
//      throws: missing topics (or negative counts) are ignored.
//   5. The current target assignments are sanitised before the assignors run. Dropped: topics
//      absent from `topics`, topics the member does not subscribe to (both builders drop those
//      first anyway), partitions outside [0, count) (a topic recreated under the same name with
//      fewer partitions: with ids that would be another topic), and a partition that an earlier
//      member (by member id) already holds. A consistent Kafka target assignment has none of
//      the last two, so for Kafka's inputs this changes nothing.
//   6. Racks: Kafka 4.3's UniformAssignor and RangeAssignor never read MemberSubscription.rackId()
//      (the Javadoc's "potentially rack aware" is historical), so the rack id is not an input.
//   7. RangeAssignor in 4.3 has no sticky path: it ignores the current assignment (the 3.7-3.9
//      RangeAssignor kept partitions within quota; 4.0 dropped that). Its stability comes from
//      the member order: static members first by instance id, then the others by member id.
//      Java's String.compareTo compares UTF-16 code units, std::string bytes: the orders agree
//      except between code points above U+FFFF and U+E000..U+FFFF. Two members with the same
//      instance id (impossible in Kafka) are ordered by member id.
//   8. Counts are 64-bit where Java uses int (a group with more than 2^31 partitions).
#include "bridge/groups/assignors.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace kib::bridge {

namespace {

using TopicIndex = int;   // into Group::topic_names, which is sorted: index order is name order
using MemberIndex = int;  // into Group::members, which is sorted by member id
using Assignment = std::map<TopicIndex, std::set<int32_t>>;

// The assignors' input, normalised: Kafka's GroupSpecImpl plus its SubscribedTopicDescriber.
struct Group {
  std::vector<std::string> topic_names;         // existing topics some member subscribes to, sorted
  std::vector<int32_t> partition_counts;        // by topic index
  std::vector<const AssignorMember*> members;   // distinct ids, sorted
  std::vector<std::vector<TopicIndex>> subscriptions;  // by member: existing subscribed topics, ascending
  bool homogeneous = true;
  // Only with_assignments: the sanitised current target assignments and, per topic, the owner of
  // every partition in them (-1: none), Kafka's invertedTargetAssignment.
  std::vector<Assignment> assignments;
  std::vector<std::vector<MemberIndex>> owners;

  TopicIndex topic_index(const std::string& name) const {
    auto it = std::lower_bound(topic_names.begin(), topic_names.end(), name);
    if (it == topic_names.end() || *it != name) return -1;
    return static_cast<TopicIndex>(it - topic_names.begin());
  }
};

Group normalise(const std::vector<AssignorMember>& input, const TopicPartitionCounts& topics, bool with_assignments) {
  Group g;
  std::map<std::string_view, const AssignorMember*> by_id;
  for (const auto& m : input) by_id.emplace(m.member_id, &m);
  for (const auto& [id, m] : by_id) g.members.push_back(m);
  if (g.members.empty()) return g;

  for (const auto* m : g.members) {
    if (m->subscribed_topics != g.members.front()->subscribed_topics) {
      g.homogeneous = false;
      break;
    }
  }

  std::set<std::string> names;
  for (const auto* m : g.members) {
    for (const auto& t : m->subscribed_topics) {
      auto it = topics.find(t);
      if (it != topics.end() && it->second >= 0) names.insert(t);
    }
  }
  for (const auto& name : names) {
    g.topic_names.push_back(name);
    g.partition_counts.push_back(topics.at(name));
  }

  g.subscriptions.resize(g.members.size());
  for (size_t i = 0; i < g.members.size(); ++i) {
    for (const auto& t : g.members[i]->subscribed_topics) {  // ascending names: ascending indices
      TopicIndex ti = g.topic_index(t);
      if (ti >= 0) g.subscriptions[i].push_back(ti);
    }
  }

  if (!with_assignments) return g;
  g.owners.resize(g.topic_names.size());
  for (size_t t = 0; t < g.topic_names.size(); ++t) g.owners[t].assign(static_cast<size_t>(g.partition_counts[t]), -1);
  g.assignments.resize(g.members.size());
  for (size_t i = 0; i < g.members.size(); ++i) {
    for (const auto& [topic, partitions] : g.members[i]->assignment) {
      TopicIndex ti = g.topic_index(topic);
      if (ti < 0 || !std::binary_search(g.subscriptions[i].begin(), g.subscriptions[i].end(), ti)) continue;
      std::set<int32_t> kept;
      for (int32_t p : partitions) {
        if (p < 0 || p >= g.partition_counts[ti]) continue;
        MemberIndex& owner = g.owners[ti][static_cast<size_t>(p)];
        if (owner != -1) continue;
        owner = static_cast<MemberIndex>(i);
        kept.insert(kept.end(), p);
      }
      if (!kept.empty()) g.assignments[i].emplace(ti, std::move(kept));
    }
  }
  return g;
}

std::map<std::string, MemberTargetAssignment> to_result(const Group& g, std::vector<Assignment> target) {
  std::map<std::string, MemberTargetAssignment> out;
  for (size_t i = 0; i < g.members.size(); ++i) {
    MemberTargetAssignment& member = out[g.members[i]->member_id];
    if (i >= target.size()) continue;
    for (auto& [t, partitions] : target[i]) {
      if (!partitions.empty()) member.emplace(g.topic_names[static_cast<size_t>(t)], std::move(partitions));
    }
  }
  return out;
}

// UniformHomogeneousAssignmentBuilder.build(): every member subscribes to the same topics. Each
// member keeps its current partitions up to its quota (total / members, plus one for the first
// members able to fill an extra slot), the rest are dealt out in order to the members below quota.
std::vector<Assignment> uniform_homogeneous(Group& g) {
  const size_t n = g.members.size();
  std::vector<Assignment> target(n);
  const std::vector<TopicIndex>& subscribed = g.subscriptions.front();
  if (subscribed.empty()) return target;

  // The partitions nobody holds, topic by topic (Kafka: HashSet<Uuid> order; here name order).
  std::vector<std::pair<TopicIndex, int32_t>> unassigned;
  int64_t total_partitions = 0;
  for (TopicIndex t : subscribed) {
    const int32_t count = g.partition_counts[static_cast<size_t>(t)];
    for (int32_t p = 0; p < count; ++p) {
      if (g.owners[static_cast<size_t>(t)][static_cast<size_t>(p)] == -1) unassigned.emplace_back(t, p);
    }
    total_partitions += count;
  }

  const int64_t minimum_quota = total_partitions / static_cast<int64_t>(n);
  int64_t remaining_members_to_get_an_extra_partition = total_partitions % static_cast<int64_t>(n);

  // maybeRevokePartitions(). (Topics the members no longer subscribe to were dropped by normalise.)
  struct MemberWithRemainingQuota {
    MemberIndex member;
    int64_t remaining_quota;
  };
  std::vector<MemberWithRemainingQuota> unfilled;
  for (size_t i = 0; i < n; ++i) {
    Assignment& assignment = target[i] = std::move(g.assignments[i]);
    int64_t quota = minimum_quota;
    bool quota_has_extra_partition = false;
    if (remaining_members_to_get_an_extra_partition > 0) {
      ++quota;
      quota_has_extra_partition = true;
    }
    for (auto it = assignment.begin(); it != assignment.end();) {
      std::set<int32_t>& partitions = it->second;
      const auto size = static_cast<int64_t>(partitions.size());
      if (size <= quota) {
        quota -= size;
        ++it;
        continue;
      }
      // Keep the first `quota` partitions (ascending; Kafka: the set's iteration order), revoke the rest.
      auto revoked = std::next(partitions.begin(), static_cast<std::ptrdiff_t>(quota));
      for (auto p = revoked; p != partitions.end(); ++p) unassigned.emplace_back(it->first, *p);
      partitions.erase(revoked, partitions.end());
      quota = 0;
      it = partitions.empty() ? assignment.erase(it) : std::next(it);
    }
    // Give up the extra partition for a later member to claim, unless this member is one of the
    // last remaining_members_to_get_an_extra_partition members and must take it.
    if (quota > 0 && quota_has_extra_partition &&
        static_cast<int64_t>(n - i) > remaining_members_to_get_an_extra_partition) {
      --quota;
      quota_has_extra_partition = false;
    }
    if (quota > 0) unfilled.push_back({static_cast<MemberIndex>(i), quota});
    if (quota_has_extra_partition) --remaining_members_to_get_an_extra_partition;
  }

  // assignRemainingPartitions(). Kafka throws if partitions are left over; the quotas sum to the
  // partition count, so none are.
  size_t next = 0;
  for (const auto& member : unfilled) {
    Assignment& assignment = target[static_cast<size_t>(member.member)];
    for (int64_t k = 0; k < member.remaining_quota && next < unassigned.size(); ++k, ++next) {
      assignment[unassigned[next].first].insert(unassigned[next].second);
    }
  }
  return target;
}

// UniformHeterogeneousAssignmentBuilder: members subscribe to different topics. Keeps every
// current partition that is still subscribed, deals the free partitions to the least loaded
// subscribers topic by topic, then moves partitions from the most to the least loaded
// subscribers of each topic until balanced (or MAX_ITERATION_COUNT rounds).
class UniformHeterogeneous {
 public:
  explicit UniformHeterogeneous(Group& g)
      : g_(g), n_(g.members.size()), topic_subscribers_(g.topic_names.size()), sizes_(n_, 0), target_(n_) {
    // Subscribers per topic, ascending member index (members are visited in order).
    for (size_t i = 0; i < n_; ++i) {
      for (TopicIndex t : g_.subscriptions[i]) topic_subscribers_[static_cast<size_t>(t)].push_back(static_cast<MemberIndex>(i));
    }
  }

  std::vector<Assignment> build() {
    if (g_.topic_names.empty()) return std::move(target_);
    maybe_revoke_partitions();
    assign_remaining_partitions(compute_unassigned_partitions());
    balance();
    return std::move(target_);
  }

 private:
  static constexpr int kMaxIterationCount = 16;  // MAX_ITERATION_COUNT

  int32_t partition_count(TopicIndex t) const { return g_.partition_counts[static_cast<size_t>(t)]; }
  const std::vector<MemberIndex>& subscribers(TopicIndex t) const { return topic_subscribers_[static_cast<size_t>(t)]; }
  std::vector<MemberIndex>& owners(TopicIndex t) { return g_.owners[static_cast<size_t>(t)]; }

  // topicComparator: partitions per subscriber descending, then subscriber count ascending, then
  // topic id ascending (here: name). Java divides in double; so does this, for identical ties.
  bool topic_less(TopicIndex a, TopicIndex b) const {
    const auto subscribers_a = static_cast<int64_t>(subscribers(a).size());
    const auto subscribers_b = static_cast<int64_t>(subscribers(b).size());
    const double per_subscriber_a = static_cast<double>(partition_count(a)) / static_cast<double>(subscribers_a);
    const double per_subscriber_b = static_cast<double>(partition_count(b)) / static_cast<double>(subscribers_b);
    if (per_subscriber_a != per_subscriber_b) return per_subscriber_a > per_subscriber_b;
    if (subscribers_a != subscribers_b) return subscribers_a < subscribers_b;
    return a < b;
  }

  std::vector<TopicIndex> sort_topics(std::vector<TopicIndex> topics) const {
    std::sort(topics.begin(), topics.end(), [this](TopicIndex a, TopicIndex b) { return topic_less(a, b); });
    return topics;
  }

  // maybeRevokePartitions(): normalise already dropped the unsubscribed topics and filled the
  // owner table; what is left is taking the assignments over and counting them.
  void maybe_revoke_partitions() {
    for (size_t i = 0; i < n_; ++i) {
      target_[i] = std::move(g_.assignments[i]);
      for (const auto& [t, partitions] : target_[i]) sizes_[i] += static_cast<int64_t>(partitions.size());
    }
  }

  std::map<TopicIndex, std::vector<int32_t>> compute_unassigned_partitions() {
    std::map<TopicIndex, std::vector<int32_t>> unassigned;
    for (size_t t = 0; t < g_.topic_names.size(); ++t) {
      std::vector<int32_t> partitions;
      const auto topic = static_cast<TopicIndex>(t);
      for (int32_t p = 0; p < partition_count(topic); ++p) {
        if (owners(topic)[static_cast<size_t>(p)] == -1) partitions.push_back(p);
      }
      if (!partitions.empty()) unassigned.emplace(topic, std::move(partitions));
    }
    return unassigned;
  }

  void add_partition_to_target_assignment(TopicIndex t, int32_t partition, MemberIndex member) {
    target_[static_cast<size_t>(member)][t].insert(partition);
    owners(t)[static_cast<size_t>(partition)] = member;
    ++sizes_[static_cast<size_t>(member)];
  }

  void remove_partition_from_target_assignment(TopicIndex t, int32_t partition, MemberIndex member) {
    Assignment& assignment = target_[static_cast<size_t>(member)];
    auto it = assignment.find(t);
    if (it != assignment.end()) {
      it->second.erase(partition);
      if (it->second.empty()) assignment.erase(it);
    }
    owners(t)[static_cast<size_t>(partition)] = -1;
    --sizes_[static_cast<size_t>(member)];
  }

  void assign_partition(TopicIndex t, int32_t partition, MemberIndex member) {
    const MemberIndex old_member = owners(t)[static_cast<size_t>(partition)];
    if (old_member != -1) remove_partition_from_target_assignment(t, partition, old_member);
    add_partition_to_target_assignment(t, partition, member);
  }

  // MemberAssignmentBalancer: over one topic's subscribers sorted by assigned partition count
  // (ties by member index), a least loaded range [0, least_end) growing rightwards and a most
  // loaded range [most_start, most_end) growing leftwards. Kept line for line with Kafka's: the
  // order in which it hands out members is the assignment.
  class Balancer {
   public:
    explicit Balancer(const std::vector<int64_t>& sizes) : sizes_(sizes) {}

    // initialize(): returns the spread between the most and least loaded member. `members` is
    // never empty (every topic here has a subscriber).
    int64_t initialize(const std::vector<MemberIndex>& members) {
      sorted_ = members;
      std::sort(sorted_.begin(), sorted_.end(), [this](MemberIndex a, MemberIndex b) {
        if (size(a) != size(b)) return size(a) < size(b);
        return a < b;
      });
      const auto count = static_cast<int64_t>(sorted_.size());
      least_loaded_range_end_ = 0;
      least_loaded_range_partition_count_ = size(sorted_.front()) - 1;
      next_least_loaded_member_ = 0;
      most_loaded_range_start_ = count;
      most_loaded_range_end_ = count;
      most_loaded_range_partition_count_ = size(sorted_.back()) + 1;
      next_most_loaded_member_ = count - 1;
      return size(sorted_.back()) - size(sorted_.front());
    }

    // nextLeastLoadedMember(): the member to give the next partition to.
    MemberIndex next_least_loaded_member() {
      if (next_least_loaded_member_ >= least_loaded_range_end_) {
        // Hit the end of the range: bump its level and try to expand it.
        ++least_loaded_range_partition_count_;
        while (least_loaded_range_end_ < static_cast<int64_t>(sorted_.size()) &&
               size(at(least_loaded_range_end_)) == least_loaded_range_partition_count_) {
          ++least_loaded_range_end_;
        }
        next_least_loaded_member_ = 0;
      }
      return at(next_least_loaded_member_++);
    }

    // nextMostLoadedMember(): the member to take the next partition from, -1 when none is left.
    MemberIndex next_most_loaded_member() {
      if (next_most_loaded_member_ < most_loaded_range_start_) {
        if (most_loaded_range_end_ <= most_loaded_range_start_ && most_loaded_range_start_ > 0) {
          // The range was emptied by exclude_most_loaded_member(): reset the level so that the
          // range does expand below.
          most_loaded_range_partition_count_ = size(at(most_loaded_range_start_ - 1));
        } else {
          --most_loaded_range_partition_count_;
        }
        while (most_loaded_range_start_ > 0 &&
               size(at(most_loaded_range_start_ - 1)) == most_loaded_range_partition_count_) {
          --most_loaded_range_start_;
        }
        next_most_loaded_member_ = most_loaded_range_end_ - 1;
      }
      if (next_most_loaded_member_ < 0) return -1;
      return at(next_most_loaded_member_--);
    }

    // excludeMostLoadedMember(): drops the member last returned by next_most_loaded_member()
    // (which has nothing left to give) by swapping it to the end of the range and shrinking it.
    void exclude_most_loaded_member() {
      const auto returned = static_cast<size_t>(next_most_loaded_member_ + 1);
      const auto last = static_cast<size_t>(most_loaded_range_end_ - 1);
      std::swap(sorted_[returned], sorted_[last]);
      --most_loaded_range_end_;
    }

    bool is_balanced() const { return most_loaded_range_partition_count_ - least_loaded_range_partition_count_ <= 1; }

   private:
    int64_t size(MemberIndex m) const { return sizes_[static_cast<size_t>(m)]; }
    MemberIndex at(int64_t i) const { return sorted_[static_cast<size_t>(i)]; }

    const std::vector<int64_t>& sizes_;
    std::vector<MemberIndex> sorted_;
    int64_t least_loaded_range_end_ = 0;              // exclusive
    int64_t least_loaded_range_partition_count_ = -1;
    int64_t next_least_loaded_member_ = 0;
    int64_t most_loaded_range_start_ = 0;              // inclusive
    int64_t most_loaded_range_end_ = 0;                // exclusive
    int64_t most_loaded_range_partition_count_ = 1;
    int64_t next_most_loaded_member_ = -1;
  };

  // assignRemainingPartitions(): topics in topicComparator order, each free partition to the
  // least loaded subscriber.
  void assign_remaining_partitions(const std::map<TopicIndex, std::vector<int32_t>>& unassigned) {
    std::vector<TopicIndex> topics;
    for (const auto& [t, partitions] : unassigned) topics.push_back(t);
    Balancer balancer(sizes_);
    for (TopicIndex t : sort_topics(std::move(topics))) {
      balancer.initialize(subscribers(t));
      for (int32_t p : unassigned.at(t)) assign_partition(t, p, balancer.next_least_loaded_member());
    }
  }

  // balance(): only topics with two or more subscribers can move.
  void balance() {
    std::vector<TopicIndex> topics;
    for (size_t t = 0; t < g_.topic_names.size(); ++t) {
      if (topic_subscribers_[t].size() >= 2) topics.push_back(static_cast<TopicIndex>(t));
    }
    if (!topics.empty()) balance_topics(sort_topics(std::move(topics)));
  }

  // balanceTopics(): loops over the topics until a whole round moves nothing, at most
  // MAX_ITERATION_COUNT rounds.
  void balance_topics(const std::vector<TopicIndex>& sorted_topics) {
    int64_t last_rebalance_topic_index = -1;
    Balancer balancer(sizes_);
    std::vector<int32_t> partitions;
    // startPartitionIndices / endPartitionIndices (exclusive), by member; -1: absent from the map.
    std::vector<int64_t> start_partition_indices(n_, -1), end_partition_indices(n_, -1);
    std::vector<MemberIndex> touched;
    for (int i = 0; i < kMaxIterationCount; ++i) {
      for (size_t topic_index = 0; topic_index < sorted_topics.size(); ++topic_index) {
        // A full round since the last topic that moved anything: nothing more to do.
        if (static_cast<int64_t>(topic_index) == last_rebalance_topic_index) return;
        const int64_t reassigned = balance_topic(sorted_topics[topic_index], balancer, partitions,
                                                 start_partition_indices, end_partition_indices, touched);
        if (reassigned > 0 || last_rebalance_topic_index == -1) {
          last_rebalance_topic_index = static_cast<int64_t>(topic_index);
        }
      }
    }
  }

  // balanceTopic(): moves the topic's partitions from its most to its least loaded subscribers.
  int64_t balance_topic(TopicIndex t, Balancer& balancer, std::vector<int32_t>& partitions,
                        std::vector<int64_t>& start_partition_indices, std::vector<int64_t>& end_partition_indices,
                        std::vector<MemberIndex>& touched) {
    int64_t reassigned = 0;
    if (balancer.initialize(subscribers(t)) <= 1) return reassigned;  // already balanced

    // The partitions grouped by owner (then by number), and each owner's range in that list: a
    // member gives up the last partition of its range.
    const std::vector<MemberIndex>& partition_owners = owners(t);
    partitions.resize(static_cast<size_t>(partition_count(t)));
    std::iota(partitions.begin(), partitions.end(), 0);
    std::sort(partitions.begin(), partitions.end(), [&partition_owners](int32_t a, int32_t b) {
      const MemberIndex owner_a = partition_owners[static_cast<size_t>(a)];
      const MemberIndex owner_b = partition_owners[static_cast<size_t>(b)];
      if (owner_a != owner_b) return owner_a < owner_b;
      return a < b;
    });
    for (MemberIndex m : touched) start_partition_indices[static_cast<size_t>(m)] = end_partition_indices[static_cast<size_t>(m)] = -1;
    touched.clear();
    for (size_t i = 0; i < partitions.size(); ++i) {
      const MemberIndex owner = partition_owners[static_cast<size_t>(partitions[i])];
      if (owner < 0) continue;  // every partition is owned by now; a -1 key would never be looked up
      if (start_partition_indices[static_cast<size_t>(owner)] < 0) {
        start_partition_indices[static_cast<size_t>(owner)] = static_cast<int64_t>(i);
        touched.push_back(owner);
      }
      end_partition_indices[static_cast<size_t>(owner)] = static_cast<int64_t>(i) + 1;
    }

    while (!balancer.is_balanced()) {
      // A member of the most loaded range that still has a partition of this topic to give.
      MemberIndex most_loaded = -1;
      while (true) {
        most_loaded = balancer.next_most_loaded_member();
        if (most_loaded == -1) break;
        const auto m = static_cast<size_t>(most_loaded);
        if (start_partition_indices[m] < 0 || end_partition_indices[m] - start_partition_indices[m] <= 0) {
          balancer.exclude_most_loaded_member();
          continue;
        }
        break;
      }
      if (most_loaded == -1) break;

      const auto m = static_cast<size_t>(most_loaded);
      const int32_t partition = partitions[static_cast<size_t>(end_partition_indices[m] - 1)];
      --end_partition_indices[m];

      const MemberIndex least_loaded = balancer.next_least_loaded_member();
      // The ranges the two members came from differ by one or less: balanced.
      if (balancer.is_balanced()) break;

      assign_partition(t, partition, least_loaded);
      ++reassigned;
    }
    return reassigned;
  }

  Group& g_;
  size_t n_;
  std::vector<std::vector<MemberIndex>> topic_subscribers_;  // topicSubscribers
  std::vector<int64_t> sizes_;                               // memberTargetAssignmentSizes
  std::vector<Assignment> target_;                           // targetAssignment
};

}  // namespace

std::map<std::string, MemberTargetAssignment> assign_uniform(const std::vector<AssignorMember>& members,
                                                             const TopicPartitionCounts& topics) {
  Group g = normalise(members, topics, true);
  if (g.members.empty()) return {};
  if (g.homogeneous) return to_result(g, uniform_homogeneous(g));
  return to_result(g, UniformHeterogeneous(g).build());
}

// RangeAssignor. Kafka has assignHomogeneousGroup (every member takes the first member's topics,
// each topic shared by all members) and assignHeterogeneousGroup (each topic shared by its
// subscribers); for a homogeneous group the two compute the same thing, so one path serves both.
// Each topic's partitions are cut into consecutive ranges of partitions / subscribers, the first
// partitions % subscribers members in order taking one more; topics with the same partition count
// and subscribers are therefore co-partitioned.
std::map<std::string, MemberTargetAssignment> assign_range(const std::vector<AssignorMember>& members,
                                                           const TopicPartitionCounts& topics) {
  Group g = normalise(members, topics, false);
  if (g.members.empty()) return {};

  // sortMemberIds(): static members first, by instance id; then the others by member id.
  std::vector<MemberIndex> order(g.members.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&g](MemberIndex a, MemberIndex b) {
    const auto& instance_a = g.members[static_cast<size_t>(a)]->instance_id;
    const auto& instance_b = g.members[static_cast<size_t>(b)]->instance_id;
    if (instance_a && instance_b && *instance_a != *instance_b) return *instance_a < *instance_b;
    if (instance_a.has_value() != instance_b.has_value()) return instance_a.has_value();
    return a < b;  // member id order
  });

  // TopicMetadata: numMembers is the topic's subscriber count; minQuota / extraPartitions.
  struct TopicMetadata {
    int64_t num_members = 0;
    int64_t min_quota = 0;
    int64_t extra_partitions = 0;
    int64_t next_range = 0;
  };
  std::vector<TopicMetadata> metadata(g.topic_names.size());
  for (const auto& subscribed : g.subscriptions) {
    for (TopicIndex t : subscribed) ++metadata[static_cast<size_t>(t)].num_members;
  }
  for (size_t t = 0; t < metadata.size(); ++t) {
    if (metadata[t].num_members == 0) continue;
    metadata[t].min_quota = g.partition_counts[t] / metadata[t].num_members;
    metadata[t].extra_partitions = g.partition_counts[t] % metadata[t].num_members;
  }

  std::vector<Assignment> target(g.members.size());
  for (MemberIndex m : order) {
    for (TopicIndex t : g.subscriptions[static_cast<size_t>(m)]) {
      // addPartitionsToAssignment()
      TopicMetadata& topic = metadata[static_cast<size_t>(t)];
      const int64_t start = topic.next_range;
      int64_t quota = topic.min_quota;
      if (topic.extra_partitions > 0) {
        ++quota;
        --topic.extra_partitions;
      }
      const int64_t end = std::min<int64_t>(start + quota, g.partition_counts[static_cast<size_t>(t)]);
      topic.next_range = end;
      if (start >= end) continue;
      std::set<int32_t>& partitions = target[static_cast<size_t>(m)][t];
      for (int64_t p = start; p < end; ++p) partitions.insert(partitions.end(), static_cast<int32_t>(p));
    }
  }
  return to_result(g, std::move(target));
}

bool is_known_assignor(std::string_view name) {
  return name == "uniform" || name == "range";
}

std::map<std::string, MemberTargetAssignment> assign(std::string_view assignor,
                                                     const std::vector<AssignorMember>& members,
                                                     const TopicPartitionCounts& topics) {
  if (assignor == "uniform") return assign_uniform(members, topics);
  if (assignor == "range") return assign_range(members, topics);
  return {};
}

}  // namespace kib::bridge
