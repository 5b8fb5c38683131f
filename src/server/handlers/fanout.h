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
// kSliceMicros, whichever ends first; the rest runs on later loop iterations. A small request
// (n <= kEntriesPerSlice), or one without a loop (a unit test's), runs at once, inside the call.
// `keep_going` (optional) is asked before each slice: false (the connection closed, the budget
// passed) stops without done().
void in_slices(uv_loop_t* loop, size_t n, std::function<void(size_t)> step, std::function<void()> done,
               std::function<bool()> keep_going = nullptr);

}  // namespace kib::kafka
