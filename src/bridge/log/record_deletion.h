// DeleteRecords (docs/mapping.md "DeleteRecords"): Iggy cannot truncate a partition at an offset,
// so the bridge keeps a per-partition floor (PartitionOffsets::deleted_to, persisted through
// SaveLogStart) and every read goes by max(Iggy's log start, floor). Kafka's rules
// (Partition.scala deleteRecordsOnLeader): -1 means the high watermark; any other negative offset,
// or one above the high watermark, is OFFSET_OUT_OF_RANGE; an offset at or below the current log
// start changes nothing and answers the current log start.
//
// Space: once the floor reaches the high watermark of the GetTopic reply it was checked against,
// every sealed segment lies wholly below it, so DeleteSegments(partition, segments_count - 1) is
// sent, fire and forget (Iggy never deletes the active segment, and a segment sealed after that
// reply is not counted). Otherwise the floor is only logical and Iggy's retention frees the space.
//
// Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "bridge/log/log_backend.h"
#include "bridge/log/partition_offsets.h"
#include "common/ids.h"
#include "common/liveness.h"
#include "common/result.h"
#include "kafka/protocol/error_code.h"

namespace kib::bridge {

struct TopicMetadata;

struct DeleteRecordsResult {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  std::string message;                     // why, for errors (logged; the response has no text)
  KafkaOffset low_watermark = kNoOffset;  // the partition's log start afterwards, -1 on error
};

// POLICY_VIOLATION with Kafka's text unless `deletable`.
Status deletable_check(const std::string& topic, PartitionId partition, bool deletable);

// Makes a floor durable: `done` runs on the loop once it is (or with the error).
using SaveLogStart =
    std::function<void(const std::string& topic, PartitionId partition, KafkaOffset floor, std::function<void(Status)>)>;

struct SegmentDeletionStats {
  uint64_t sent = 0;
  uint64_t failed = 0;
};

class RecordDeletion {
 public:
  RecordDeletion(LogBackend& backend, OffsetsTable& offsets) : backend_(backend), offsets_(offsets) {}

  // Without one, floors live in memory only (unit tests).
  void set_store(SaveLogStart save) { save_ = std::move(save); }

  // For a partition the topic is known to have. `cb` may run inside this call.
  void delete_records(PartitionOffsets& p, KafkaOffset offset, std::function<void(DeleteRecordsResult)> cb);

  const SegmentDeletionStats& segment_deletions() const { return stats_; }

 private:
  void apply(PartitionOffsets& p, KafkaOffset offset, std::function<void(DeleteRecordsResult)> cb);
  void maybe_delete_segments(PartitionOffsets& p, KafkaOffset floor, KafkaOffset reply_hw, uint32_t segments);

  LogBackend& backend_;
  OffsetsTable& offsets_;
  SaveLogStart save_;
  SegmentDeletionStats stats_;
  Liveness alive_;  // a store completion may come after the log is gone (shutdown)
};

}  // namespace kib::bridge
