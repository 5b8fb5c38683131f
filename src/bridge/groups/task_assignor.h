// The task assignor of streams groups (KIP-1071): Kafka 4.3's StickyTaskAssignor ("sticky", the
// only one Kafka's coordinator uses), as a pure function of the members (with their previous
// target tasks) and the configured subtopologies. Members are grouped by process id (one Kafka
// Streams instance, whose stream threads are members); active tasks go back to their previous
// owner while it is under its quota, then to a previous standby owner, then to the least-loaded
// process; standby tasks (stateful subtopologies only, `num.standby.replicas` of each) never land
// on a process that holds the task already. No warm-up tasks, no rack awareness: Kafka 4.3 has
// neither. task_assignor.cc says how the port keeps Kafka's order of decisions.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kib::bridge::streams {

using Tasks = std::map<std::string, std::set<int32_t>>;  // subtopology id -> partitions (task ids)

// A member as the assignor sees it (Kafka's AssignmentMemberSpec): its previous target.
struct TaskAssignorMember {
  std::string member_id;
  std::string process_id;
  Tasks active;
  Tasks standby;
};

// One configured subtopology (Kafka's TopologyDescriber).
struct TaskSubtopology {
  std::string id;
  int32_t tasks = 0;      // maxNumInputPartitions
  bool stateful = false;  // has changelog topics
};

struct TaskAssignment {
  Tasks active;
  Tasks standby;
  Tasks warmup;  // never filled (Kafka 4.3's assignor has none)
  bool operator==(const TaskAssignment&) const = default;
};

// Every member gets an entry (possibly empty); every task of every subtopology is active on
// exactly one member when there is at least one member. Subtopologies are visited in id order
// whatever the order given; members in the order Kafka's HashMap of member ids visits them.
std::map<std::string, TaskAssignment> assign_tasks_sticky(const std::vector<TaskAssignorMember>& members,
                                                          const std::vector<TaskSubtopology>& subtopologies,
                                                          int32_t num_standby_replicas);

}  // namespace kib::bridge::streams
