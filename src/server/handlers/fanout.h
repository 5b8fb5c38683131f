// Requests that fan out per entry: DescribeConfigs (resources), ListOffsets (partitions),
// OffsetFetch (groups and partitions), DescribeProducers (partitions), DescribeTopicPartitions
// (topics), DescribeGroups (groups), ListTransactions and DescribeAcls (what matches). Kafka
// bounds none of them beyond the request's size; a 3.5 MB DescribeConfigs naming one topic
// 150,000 times took 2.2 GB and stalled the loop for 2 s. Each such handler
//
//   * answers an entry named twice once (or refuses the duplicates as Kafka does, ListOffsets'
//     INVALID_REQUEST), so the work and the answer follow the distinct entries;
//   * keeps an AnswerBudget: what the answer will hold in memory, estimated before the work from
//     the number of entries and added to while it is built (strings, configs, members); past
//     [limits] max_response_bytes the request is refused: the connection is closed with a log
//     line and kib_request_errors_total{code="response_too_large"} (there is no Kafka error code
//     for "your answer would be too big", and a partial answer would be a wrong one);
//   * does its per-entry work a slice at a time (in_slices), so that one request naming a
//     million entries does not hold the loop: other connections are served between slices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "server/context/request.h"

namespace kib::kafka {

// Entries of one slice, and the time a slice may take before the rest waits for the next loop
// iteration (whichever comes first).
inline constexpr size_t kEntriesPerSlice = 256;
inline constexpr int64_t kSliceMicros = 500;

class AnswerBudget {
 public:
  explicit AnswerBudget(uint64_t max_bytes) : max_(max_bytes) {}
  // Adds `bytes` to the estimate; false once it passes the bound.
  bool add(uint64_t bytes) {
    used_ += bytes;
    return used_ <= max_;
  }
  bool over() const { return used_ > max_; }
  uint64_t used() const { return used_; }
  uint64_t max() const { return max_; }

 private:
  uint64_t max_;
  uint64_t used_ = 0;
};

// Closes the request's connection because its answer would pass the budget: logs `what` (e.g.
// "DescribeConfigs naming 150000 resources") with the estimate and the bound, and counts
// kib_request_errors_total{api,code="response_too_large"}.
void refuse_oversized_answer(const Responder& respond, std::string_view what, const AnswerBudget& budget);

// Runs step(i) for i in [0, n), then done(). A slice runs up to kEntriesPerSlice steps or
// kSliceMicros, whichever ends first; every slice runs on a later loop iteration. A small request
// (n <= kEntriesPerSlice), or one without a loop (a unit test's), runs at once, inside the call.
// `keep_going` (optional) is asked before each slice: false (the connection closed, the budget
// passed) stops without done().
// Which of n entries share their key with another entry, found one entry at a time (so a
// handler can do it a slice at a time): add(i, hash, same) with i in order, where `hash` is entry
// i's key hash and `same(j)` tells whether entry j (an earlier one) has the same key; once every
// entry is in, repeated(i) holds for every occurrence of a key named twice. One open-addressed
// table of entry indices (2n..4n slots, one allocation), not a node-based map: a request naming
// 200,000 partitions is checked in about 3 ms and its table freed at once, where a std::map keyed
// by names held the loop 80 ms.
class RepeatedKeys {
 public:
  explicit RepeatedKeys(size_t n) : repeated_(n, false) {
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    slots_.assign(cap, kEmpty);
  }
  template <typename Same>
  void add(size_t i, uint64_t hash, Same&& same) {
    const size_t mask = slots_.size() - 1;
    for (size_t s = hash & mask;; s = (s + 1) & mask) {
      if (slots_[s] == kEmpty) {
        slots_[s] = static_cast<uint32_t>(i);
        return;
      }
      if (same(static_cast<size_t>(slots_[s]))) {
        repeated_[slots_[s]] = repeated_[i] = true;
        return;
      }
    }
  }
  bool repeated(size_t i) const { return repeated_[i]; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  std::vector<bool> repeated_;
  std::vector<uint32_t> slots_;
};

// RepeatedKeys over all n entries at once: `hash(i)`, `same(i, j)`.
template <typename Hash, typename Same>
std::vector<bool> repeated_keys(size_t n, Hash&& hash, Same&& same) {
  RepeatedKeys keys(n);
  for (size_t i = 0; i < n; ++i) keys.add(i, hash(i), [&](size_t j) { return same(j, i); });
  std::vector<bool> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = keys.repeated(i);
  return out;
}

void in_slices(uv_loop_t* loop, size_t n, std::function<void(size_t)> step, std::function<void()> done,
               std::function<bool()> keep_going = nullptr);

}  // namespace kib::kafka
