// The Fetch path below the handler: passes over the requested partitions, long polls and their
// waiters, and the read-ahead (read_ahead.h).
//
//   * A pass reads every requested partition (sharing the fetch's max_bytes in request order) and
//     answers once it has min_bytes, an error, or the fetch may not wait.
//   * Otherwise the fetch waits: it wakes at once when this bridge appends to a requested
//     partition (appended()) and otherwise asks Iggy (GetTopic per topic) with backoff, so native
//     Iggy producers are seen. Later passes re-read only partitions that moved.
//
// Loop thread only. Callbacks never run inside the call that was given them.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "bridge/log/batch_cache.h"
#include "bridge/log/fetch_records.h"
#include "bridge/log/log_backend.h"
#include "bridge/log/log_types.h"
#include "bridge/log/partition_offsets.h"
#include "bridge/log/read_ahead.h"
#include "uvx/tasks.h"

namespace kib::bridge {

// Long-poll re-checks of Iggy for appends made by others (native Iggy producers, other bridges).
inline constexpr std::chrono::milliseconds kFirstRecheck{10};
inline constexpr std::chrono::milliseconds kMaxRecheck{200};

// What one pass read from one partition.
struct PartitionRead {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  std::shared_ptr<const void> buffer;  // owns what `records` point into
  std::vector<FetchedRecord> records;
  // Or, read from the produced-batch cache (batch_cache.h): whole batches as produced.
  std::vector<CachedBatch> cached;
};

// A pass's answer: per request its offsets (from `states`, nullptr while the topic is unknown)
// and records, encoded under the fetch's and the partitions' byte limits (KIP-74: the first
// partition with data returns at least one record whatever the limits). At read_committed no
// record at or above a partition's last stable offset is returned.
struct PassResults {
  std::vector<FetchPartitionResult> results;
  size_t bytes = 0;  // of records
  bool any_error = false;
};
PassResults assemble_pass(const std::vector<FetchPartitionRequest>& requests, const std::vector<PartitionRead>& reads,
                          const std::vector<PartitionOffsets*>& states, int32_t max_bytes,
                          IsolationLevel isolation = IsolationLevel::kReadUncommitted);

class Reader {
 public:
  // `tasks`: where read-ahead replies are handed over (the log's one task queue).
  // `cache`: recent produced batches a read answers with when its offset is in them (nullptr: none).
  Reader(uv_loop_t* loop, LogBackend& backend, OffsetsTable& offsets, uv::Tasks& tasks, PartitionLookup lookup,
         BatchCache* cache = nullptr);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // As PartitionLog::fetch; `cb` may run inside this call (the facade defers it).
  void fetch(std::vector<FetchPartitionRequest> partitions, const FetchParams& params, FetchCallback cb,
             uint64_t owner);
  void cancel_fetches(uint64_t owner);
  void stop_waiting();
  // This bridge appended to `p`: the fetches waiting on it read again.
  void appended(const PartitionOffsets& p);
  // `p`'s topic was deleted: its read-ahead goes, the fetches waiting on it read again (and
  // find the partition unknown).
  void topic_deleted(PartitionOffsets& p) {
    read_aheads_.forget(p);
    appended(p);
  }

  size_t waiting_fetches() const { return fetches_.size(); }
  const ReadAheads& read_aheads() const { return read_aheads_; }

 private:
  struct FetchOp;

  void run_pass(uint64_t op_id);
  void read_finished(uint64_t op_id);
  void read_partition(PartitionOffsets& p, KafkaOffset offset, int32_t max_bytes, bool refreshed, uint64_t owner,
                      iggy::IggyPool* as, std::function<void(PartitionRead)> cb);
  // Below a cleaned partition's cleaner point: the generation's records from `offset` on, read
  // from generation offset `from`; when the generation holds none between `offset` and the
  // cleaner point, the live log from the cleaner point (docs/compaction.md).
  void read_cleaned(PartitionOffsets& p, std::shared_ptr<const compaction::CleanedHead> head, KafkaOffset offset,
                    uint64_t from, int32_t max_bytes, uint64_t owner, iggy::IggyPool* as,
                    std::function<void(PartitionRead)> cb);
  void pass_done(uint64_t op_id);
  void arm_wait(uint64_t op_id);
  void wake(uint64_t op_id);
  void check_for_news(uint64_t op_id);
  void respond(uint64_t op_id);
  void forget(uint64_t op_id, FetchOp& op);

  uv_loop_t* loop_;
  LogBackend& backend_;
  OffsetsTable& offsets_;
  PartitionLookup lookup_;
  BatchCache* cache_;
  ReadAheads read_aheads_;
  std::unordered_map<uint64_t, std::unique_ptr<FetchOp>> fetches_;
  std::map<const PartitionOffsets*, std::vector<uint64_t>> waiters_;  // fetch ops to wake on an append
  uint64_t next_fetch_id_ = 1;
  bool stop_waiting_ = false;
};

}  // namespace kib::bridge
