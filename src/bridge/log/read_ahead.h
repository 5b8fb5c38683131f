// Fetch's read-ahead: once a fetch got data from a partition, the poll for the offset after it
// starts at once, so the consumer's next fetch finds its data here instead of waiting for Iggy.
// At most one per partition. A read-ahead older than kReadAheadMaxAgeMs is not served
// (retention or a purge may have happened since); all of them together hold at most
// kReadAheadBudgetBytes (estimated from the partition's average message size).
//
// Loop thread only. A served reply is handed over from a posted task, never inside the call.
#pragma once

#include <uv.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "bridge/log/partition_offsets.h"
#include "uvx/tasks.h"

namespace kib::bridge {

inline constexpr uint64_t kReadAheadMaxAgeMs = 500;
inline constexpr uint64_t kReadAheadBudgetBytes = 64u << 20;

class ReadAheads {
 public:
  ReadAheads(uv_loop_t* loop, OffsetsTable& offsets, uv::Tasks& tasks)
      : loop_(loop), offsets_(offsets), tasks_(tasks) {}
  ReadAheads(const ReadAheads&) = delete;
  ReadAheads& operator=(const ReadAheads&) = delete;

  // A fetch's poll of `count` messages at `offset`: the read-ahead's reply when one for that
  // offset (and at least that count) is there or on its way, else a poll of its own, on behalf
  // of `owner` (uvx/work_owner.h; dropped unsent when that connection closes).
  // Only a read-ahead started as the same Iggy identity (`as`, LogBackend::poll) is served: a
  // principal never reads what Iggy would not let its own user poll.
  void poll(PartitionOffsets& p, int64_t offset, uint32_t count, uint64_t owner,
            iggy::Callback<iggy::PolledMessages> cb, iggy::IggyPool* as = nullptr);
  // Starts reading ahead at `offset` unless the partition has a read-ahead, `offset` is at the
  // high watermark, or the budget is spent (stale read-aheads give their room back first).
  void start(PartitionOffsets& p, int64_t offset, uint32_t count, iggy::IggyPool* as = nullptr);

  // The partition's topic was deleted: a read-ahead nobody waits for is dropped (its messages
  // belong to the old topic).
  void forget(const PartitionOffsets& p) {
    if (Entry* e = find(p); e && e->waiting.empty()) drop(p);
  }

  // Estimated bytes of every read-ahead; for tests.
  uint64_t bytes() const { return bytes_; }
  bool has(const PartitionOffsets& p) const { return entries_.count(&p) != 0; }

 private:
  struct Entry {
    int64_t offset = 0;
    uint32_t count = 0;
    uint64_t started_ms = 0;
    uint64_t budget_bytes = 0;  // charged to bytes_ until dropped
    iggy::IggyPool* as = nullptr;  // the identity it polls as
    std::optional<Result<iggy::PolledMessages>> reply;
    std::vector<iggy::Callback<iggy::PolledMessages>> waiting;
  };
  Entry* find(const PartitionOffsets& p);
  void drop(const PartitionOffsets& p);

  uv_loop_t* loop_;
  OffsetsTable& offsets_;
  uv::Tasks& tasks_;
  std::map<const PartitionOffsets*, std::unique_ptr<Entry>> entries_;
  uint64_t bytes_ = 0;
};

}  // namespace kib::bridge
