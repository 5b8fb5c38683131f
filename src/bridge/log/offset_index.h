// ListOffsets below the handler: latest and earliest from the partition's offsets, and by
// timestamp or max timestamp (-3) from a time index (time_index.h) built by scanning the
// partition once and extended incrementally: exact even where CreateTime does not grow with the
// offset, which Iggy's own timestamp poll (append time) cannot be. The first such query on a
// large partition reads all of it.
//
// Loop thread only. `cb` may run inside the call (the facade defers it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "bridge/log/log_types.h"
#include "bridge/log/partition_offsets.h"
#include "bridge/log/time_index.h"

namespace kib::bridge {

// The Kafka timestamp of a stored message; a message the mapping refuses (Fetch reports it) is
// indexed by its Iggy origin time.
TimestampMs kafka_timestamp_of(const iggy::MessageView& m);

class OffsetIndex {
 public:
  explicit OffsetIndex(OffsetsTable& offsets) : offsets_(offsets) {}
  OffsetIndex(const OffsetIndex&) = delete;
  OffsetIndex& operator=(const OffsetIndex&) = delete;

  // As PartitionLog::list_offsets, for a partition the topic is known to have.
  // `isolation`: at read_committed, latest is the last stable offset.
  void list_offsets(PartitionOffsets& p, TimestampMs timestamp, std::function<void(OffsetLookup)> cb,
                    IsolationLevel isolation = IsolationLevel::kReadUncommitted);
  // The partition's topic was deleted: its time index is rebuilt from scratch on next use.
  void forget(const PartitionOffsets& p) {
    if (auto it = indexes_.find(&p); it != indexes_.end()) it->second->started = false;
  }

 private:
  struct Index {
    TimeIndex time_index;
    bool started = false;
    bool indexing = false;
    int64_t target = 0;
    std::vector<std::function<void(Status)>> waiters;
  };
  Index& index_of(const PartitionOffsets& p);
  void extend(PartitionOffsets& p, std::function<void(Status)> done);
  void step(PartitionOffsets& p, Index& ix);
  void finish(Index& ix, const Status& status);
  void scan_for_timestamp(PartitionOffsets& p, KafkaOffset from, TimestampMs timestamp,
                          std::function<void(OffsetLookup)> cb);
  // Below a cleaned partition's cleaner point (docs/compaction.md): the first kept record of the
  // generation, from generation offset `from`, at or after the log start with a timestamp at or
  // after `timestamp`; none there: `live()` (the live log from the cleaner point).
  void scan_generation(PartitionOffsets& p, std::shared_ptr<const compaction::CleanedHead> head, uint64_t from,
                       TimestampMs timestamp, std::function<void(OffsetLookup)> cb, std::function<void()> live);

  OffsetsTable& offsets_;
  std::map<const PartitionOffsets*, std::unique_ptr<Index>> indexes_;
};

}  // namespace kib::bridge
