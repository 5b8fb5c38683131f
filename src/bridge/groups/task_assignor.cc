// Ported from Kafka 4.3's org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor
// and ProcessState, decision for decision. Where Kafka's choice hangs on iteration or heap order
// the port reproduces it: members and processes in java.util.HashMap order of their ids
// (common/java_hash_order.h; Kafka's group map is copied into a HashMap before assigning),
// java.util.PriorityQueue's binary heap (JavaHeap below: the same sift-up and sift-down, so
// equal loads come out in the same order), stable sorts as List.sort. Kafka's
// TaskAssignorExceptions ("no process available") cannot happen with at least one member and
// are not ported: without members nothing is assigned.
#include "bridge/groups/task_assignor.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>

#include "common/java_hash_order.h"

namespace kib::bridge::streams {
namespace {

struct TaskId {
  std::string subtopology;
  int32_t partition = 0;
  bool operator==(const TaskId&) const = default;
  bool operator<(const TaskId& o) const {  // TaskId.compareTo: subtopology, then partition
    return subtopology != o.subtopology ? subtopology < o.subtopology : partition < o.partition;
  }
};

// java.util.PriorityQueue with a comparator: offer sifts up, poll moves the last element to the
// root and sifts it down, ties never swap.
template <typename T>
class JavaHeap {
 public:
  explicit JavaHeap(std::function<int(const T&, const T&)> cmp) : cmp_(std::move(cmp)) {}
  bool empty() const { return q_.empty(); }
  void offer(T x) {
    size_t k = q_.size();
    q_.push_back(x);
    while (k > 0) {
      const size_t parent = (k - 1) >> 1;
      if (cmp_(x, q_[parent]) >= 0) break;
      q_[k] = q_[parent];
      k = parent;
    }
    q_[k] = std::move(x);
  }
  std::optional<T> poll() {
    if (q_.empty()) return std::nullopt;
    T result = std::move(q_[0]);
    T x = std::move(q_.back());
    q_.pop_back();
    const size_t n = q_.size();
    if (n > 0) {
      size_t k = 0;
      const size_t half = n >> 1;
      while (k < half) {
        size_t child = 2 * k + 1;
        if (child + 1 < n && cmp_(q_[child], q_[child + 1]) > 0) ++child;
        if (cmp_(x, q_[child]) <= 0) break;
        q_[k] = std::move(q_[child]);
        k = child;
      }
      q_[k] = std::move(x);
    }
    return result;
  }

 private:
  std::function<int(const T&, const T&)> cmp_;
  std::vector<T> q_;
};

int compare_doubles(double a, double b) { return a < b ? -1 : a > b ? 1 : 0; }

// Kafka's ProcessState: the members of one process and what they were given.
struct Process {
  std::string id;
  int capacity = 0;
  double load = 1.7976931348623157e308;  // Double.MAX_VALUE until a member is added
  int task_count = 0;
  std::vector<std::string> member_order;       // memberToTaskCounts' HashMap order
  std::unordered_map<std::string, int> counts;  // memberToTaskCounts
  std::map<std::string, std::set<TaskId>> active, standby;
  std::set<TaskId> tasks;
  std::optional<JavaHeap<std::pair<std::string, int>>> members_by_load;

  void compute_load() { load = capacity <= 0 ? -1 : static_cast<double>(task_count) / capacity; }

  void add_member(const std::string& m) {
    if (!counts.contains(m)) member_order.push_back(m);
    counts[m] = 0;
    ++capacity;
    compute_load();
  }

  int add_internal(const std::string& member, const TaskId& t, bool is_active) {
    ++task_count;
    tasks.insert(t);
    (is_active ? active : standby)[member].insert(t);
    const int n = ++counts[member];
    compute_load();
    return n;
  }

  int add_task(const std::string& member, const TaskId& t, bool is_active) {
    const int n = add_internal(member, t, is_active);
    members_by_load.reset();  // Kafka drops the heap: it cannot reorder one entry
    return n;
  }

  int add_to_least_loaded_member(const TaskId& t, bool is_active) {
    if (counts.empty()) return -1;
    if (counts.size() == 1) return add_internal(member_order.front(), t, is_active);
    if (!members_by_load) {
      members_by_load.emplace([](const std::pair<std::string, int>& a, const std::pair<std::string, int>& b) {
        return a.second < b.second ? -1 : a.second > b.second ? 1 : 0;
      });
      for (const auto& m : java_hash_order(member_order)) members_by_load->offer({m, counts.at(m)});
    }
    auto m = members_by_load->poll();
    const int n = add_internal(m->first, t, is_active);
    members_by_load->offer({m->first, n});
    return n;
  }
};

struct PrevMember {
  std::string process_id;
  std::string member_id;
};

int tasks_per_member(int tasks, int members) { return members == 0 ? 0 : tasks / members + (tasks % members > 0); }

class StickyAssignment {
 public:
  StickyAssignment(const std::vector<TaskAssignorMember>& members, std::vector<TaskSubtopology> subtopologies,
                   int32_t standby_replicas)
      : subtopologies_(std::move(subtopologies)), standby_replicas_(std::max(standby_replicas, 0)) {
    std::sort(subtopologies_.begin(), subtopologies_.end(),
              [](const TaskSubtopology& a, const TaskSubtopology& b) { return a.id < b.id; });
    for (const auto& s : subtopologies_) {
      total_tasks_ += s.tasks;
      total_active_ += s.tasks;
      if (s.stateful) total_tasks_ += s.tasks * standby_replicas_;
    }
    std::unordered_map<std::string, const TaskAssignorMember*> by_id;
    std::vector<std::string> ids;
    for (const auto& m : members)
      if (by_id.emplace(m.member_id, &m).second) ids.push_back(m.member_id);
    member_ids_ = java_hash_order(ids);
    members_with_active_capacity_ = members_with_capacity_ = static_cast<int>(member_ids_.size());
    active_per_member_ = tasks_per_member(total_active_, members_with_active_capacity_);
    total_per_member_ = tasks_per_member(total_tasks_, members_with_capacity_);
    std::vector<std::string> process_ids;
    for (const auto& id : member_ids_) {
      const TaskAssignorMember& m = *by_id.at(id);
      auto [it, fresh] = processes_.try_emplace(m.process_id);
      if (fresh) {
        it->second.id = m.process_id;
        process_ids.push_back(m.process_id);
      }
      it->second.add_member(id);
      for (const auto& [sub, parts] : m.active)
        for (int32_t p : parts) prev_active_[TaskId{sub, p}] = PrevMember{m.process_id, id};
      for (const auto& [sub, parts] : m.standby)
        for (int32_t p : parts) prev_standby_[TaskId{sub, p}].push_back(PrevMember{m.process_id, id});
    }
    // new HashMap<>(number of members): a table sized for the members, not the default 16.
    process_order_ = java_hash_order(process_ids, 0, member_ids_.size());
  }

  std::map<std::string, TaskAssignment> run() {
    if (member_ids_.empty()) return {};
    assign_active(task_ids(true));
    if (standby_replicas_ > 0) assign_standby(task_ids(false));
    std::map<std::string, TaskAssignment> out;
    for (const auto& id : member_ids_) out[id];
    for (auto& [pid, p] : processes_) {
      for (const auto& [m, ts] : p.active)
        for (const auto& t : ts) out[m].active[t.subtopology].insert(t.partition);
      for (const auto& [m, ts] : p.standby)
        for (const auto& t : ts) out[m].standby[t.subtopology].insert(t.partition);
    }
    return out;
  }

 private:
  std::vector<TaskId> task_ids(bool active) const {
    std::vector<TaskId> out;
    for (const auto& s : subtopologies_)
      if (active || s.stateful)
        for (int32_t p = 0; p < s.tasks; ++p) out.push_back({s.id, p});
    return out;
  }

  JavaHeap<Process*> processes_by_load() {
    JavaHeap<Process*> heap([](Process* const& a, Process* const& b) { return compare_doubles(a->load, b->load); });
    for (const auto& pid : process_order_) heap.offer(&processes_.at(pid));
    return heap;
  }

  void counted_active(int n) {
    if (n == active_per_member_) {
      --members_with_active_capacity_;
      total_active_ -= n;
      active_per_member_ = tasks_per_member(total_active_, members_with_active_capacity_);
    }
    counted(n);
  }

  void counted(int n) {
    if (n == total_per_member_) {
      --members_with_capacity_;
      total_tasks_ -= n;
      total_per_member_ = tasks_per_member(total_tasks_, members_with_capacity_);
    }
  }

  // findPrevMemberWithLeastLoad: the first previous owner, replaced by a later one only when
  // both its process and the member itself carry less (and its process lacks the task).
  const PrevMember* least_loaded_previous(const std::vector<PrevMember>* prev, const TaskId* task) {
    if (!prev || prev->empty()) return nullptr;
    const PrevMember* candidate = &prev->front();
    const Process& cp = processes_.at(candidate->process_id);
    double process_load = cp.load;
    double member_load = cp.counts.at(candidate->member_id);
    for (size_t i = 1; i < prev->size(); ++i) {
      const PrevMember& m = (*prev)[i];
      const Process& p = processes_.at(m.process_id);
      if (p.load < process_load && (!task || !p.tasks.contains(*task))) {
        const double load = p.counts.at(m.member_id);
        if (load < member_load) {
          process_load = p.load;
          member_load = load;
          candidate = &m;
        }
      }
    }
    // Kafka checks the first candidate's process here, whichever candidate won.
    if (!task || !cp.tasks.contains(*task)) return candidate;
    return nullptr;
  }

  void assign_active(std::vector<TaskId> tasks) {
    std::stable_sort(tasks.begin(), tasks.end(), [](const TaskId& a, const TaskId& b) {
      return a.partition != b.partition ? a.partition < b.partition : a.subtopology < b.subtopology;
    });
    // 1. back to the previous active owner, within its quota.
    std::erase_if(tasks, [&](const TaskId& t) {
      auto it = prev_active_.find(t);
      if (it == prev_active_.end()) return false;
      Process& p = processes_.at(it->second.process_id);
      if (p.counts.at(it->second.member_id) >= active_per_member_) return false;
      counted_active(p.add_task(it->second.member_id, t, true));
      return true;
    });
    // 2. to a previous standby owner, the least loaded, within its quota.
    std::erase_if(tasks, [&](const TaskId& t) {
      auto it = prev_standby_.find(t);
      const PrevMember* prev = least_loaded_previous(it == prev_standby_.end() ? nullptr : &it->second, nullptr);
      if (!prev) return false;
      Process& p = processes_.at(prev->process_id);
      if (p.counts.at(prev->member_id) >= active_per_member_) return false;
      counted_active(p.add_task(prev->member_id, t, true));
      return true;
    });
    // 3. the rest, by subtopology then partition, to the least-loaded process.
    std::stable_sort(tasks.begin(), tasks.end());
    JavaHeap<Process*> heap = processes_by_load();
    for (const TaskId& t : tasks) {
      Process* p = *heap.poll();
      counted_active(p->add_to_least_loaded_member(t, true));
      heap.offer(p);
    }
  }

  bool standby_to_least_loaded(JavaHeap<Process*>& heap, const TaskId& t) {
    auto polled = heap.poll();
    if (!polled) return false;
    Process* p = *polled;
    bool found = false;
    if (!p->tasks.contains(t)) {
      const int n = p->add_to_least_loaded_member(t, false);
      if (n != -1) {
        found = true;
        counted(n);
      }
    } else if (!heap.empty()) {
      found = standby_to_least_loaded(heap, t);
    }
    heap.offer(p);
    return found;
  }

  void assign_standby(std::vector<TaskId> tasks) {
    // Descending by partition, then subtopology (Kafka's comparator .reversed()).
    std::stable_sort(tasks.begin(), tasks.end(), [](const TaskId& a, const TaskId& b) {
      return a.partition != b.partition ? a.partition > b.partition : a.subtopology > b.subtopology;
    });
    std::vector<std::pair<TaskId, int>> to_least_loaded;  // task, replicas still to place
    for (const TaskId& t : tasks) {
      for (int i = 0; i < standby_replicas_; ++i) {
        if (auto it = prev_active_.find(t); it != prev_active_.end()) {
          Process& p = processes_.at(it->second.process_id);
          if (!p.tasks.contains(t) && p.counts.at(it->second.member_id) < total_per_member_) {
            counted(p.add_task(it->second.member_id, t, false));
            continue;
          }
        }
        if (auto it = prev_standby_.find(t); it != prev_standby_.end() && !it->second.empty()) {
          if (const PrevMember* prev = least_loaded_previous(&it->second, &t)) {
            Process& p = processes_.at(prev->process_id);
            if (p.counts.at(prev->member_id) < total_per_member_) {
              counted(p.add_task(prev->member_id, t, false));
              continue;
            }
          }
        }
        to_least_loaded.emplace_back(t, standby_replicas_ - i);
        break;
      }
    }
    // Descending by subtopology, then partition.
    std::stable_sort(to_least_loaded.begin(), to_least_loaded.end(),
                     [](const auto& a, const auto& b) { return b.first < a.first; });
    JavaHeap<Process*> heap = processes_by_load();
    for (const auto& [t, replicas] : to_least_loaded)
      for (int i = 0; i < replicas; ++i)
        if (!standby_to_least_loaded(heap, t)) break;  // not enough processes: fewer standbys, as Kafka
  }

  std::vector<TaskSubtopology> subtopologies_;
  int standby_replicas_ = 0;
  int total_tasks_ = 0, total_active_ = 0;
  int members_with_active_capacity_ = 0, members_with_capacity_ = 0;
  int active_per_member_ = 0, total_per_member_ = 0;
  std::vector<std::string> member_ids_;    // HashMap order
  std::vector<std::string> process_order_;  // HashMap order of processIdToState
  std::unordered_map<std::string, Process> processes_;
  std::map<TaskId, PrevMember> prev_active_;
  std::map<TaskId, std::vector<PrevMember>> prev_standby_;
};

}  // namespace

std::map<std::string, TaskAssignment> assign_tasks_sticky(const std::vector<TaskAssignorMember>& members,
                                                          const std::vector<TaskSubtopology>& subtopologies,
                                                          int32_t num_standby_replicas) {
  return StickyAssignment(members, subtopologies, num_standby_replicas).run();
}

}  // namespace kib::bridge::streams
