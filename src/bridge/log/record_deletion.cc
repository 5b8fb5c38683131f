#include "bridge/log/record_deletion.h"

#include <spdlog/spdlog.h>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"

namespace kib::bridge {

using kafka::ErrorCode;

namespace {
std::string partition_name(const std::string& topic, PartitionId partition) {
  return topic + "-" + std::to_string(partition());
}
}  // namespace

Status deletable_check(const std::string& topic, PartitionId partition, bool deletable) {
  if (deletable) return ok_status();
  return kafka_error(ErrorCode::kPolicyViolation, "Records of partition " + partition_name(topic, partition) +
                                                      " can not be deleted due to the configured policy");
}

void RecordDeletion::delete_records(PartitionOffsets& p, KafkaOffset offset,
                                    std::function<void(DeleteRecordsResult)> cb) {
  // A fresh GetTopic every time: the high watermark decides OFFSET_OUT_OF_RANGE, and the
  // DeleteSegments rule needs segments_count and high watermark from one reply.
  auto then = [this, pp = &p, offset, cb](Status s) {
    if (!s) {
      cb(DeleteRecordsResult{to_kafka_error(s.error()), s.error().message, kNoOffset});
      return;
    }
    apply(*pp, offset, cb);
  };
  if (p.loaded) offsets_.refresh_topic(p.topic, then);
  else offsets_.refresh(p, then);
}

void RecordDeletion::apply(PartitionOffsets& p, KafkaOffset offset, std::function<void(DeleteRecordsResult)> cb) {
  const KafkaOffset hw = p.high_watermark;
  const std::string name = partition_name(p.topic, p.id);
  // Kafka's texts (Partition.scala:1695-1702).
  if (offset() < -1) {
    cb(DeleteRecordsResult{ErrorCode::kOffsetOutOfRange,
                           "The offset " + std::to_string(offset()) + " for partition " + name + " is not valid",
                           kNoOffset});
    return;
  }
  const KafkaOffset target = offset() == -1 ? hw : offset;
  if (target > hw) {
    cb(DeleteRecordsResult{ErrorCode::kOffsetOutOfRange,
                           "Cannot increment the log start offset to " + std::to_string(target()) + " of partition " +
                               name + " since it is larger than the high watermark " + std::to_string(hw()),
                           kNoOffset});
    return;
  }
  if (target <= p.log_start) {
    cb(DeleteRecordsResult{ErrorCode::kNone, {}, p.log_start});
    return;
  }
  const KafkaOffset reply_hw = p.reply_high_watermark;
  const uint32_t segments = p.segments_count;
  auto commit = [this, alive = alive_.token(), pp = &p, target, reply_hw, segments, name, cb](Status s) {
    if (!alive) return;
    if (!s) {
      spdlog::error("DeleteRecords {} to {}: the log start could not be stored: {}", name, target, s.error().message);
      cb(DeleteRecordsResult{ErrorCode::kKafkaStorageError, s.error().message, kNoOffset});
      return;
    }
    raise_floor(*pp, target);
    spdlog::info("DeleteRecords {}: log start {}", name, pp->log_start);
    cb(DeleteRecordsResult{ErrorCode::kNone, {}, pp->log_start});
    maybe_delete_segments(*pp, target, reply_hw, segments);
  };
  if (!save_) {
    commit(ok_status());
    return;
  }
  save_(p.topic, p.id, target, commit);
}

void RecordDeletion::maybe_delete_segments(PartitionOffsets& p, KafkaOffset floor, KafkaOffset reply_hw,
                                           uint32_t segments) {
  if (floor < reply_hw || segments < 2) return;
  const std::string name = partition_name(p.topic, p.id);
  ++stats_.sent;
  backend_.delete_segments(p.topic, p.id(), segments - 1, [this, alive = alive_.token(), name, segments](Result<Unit> r) {
    if (!alive) return;
    if (r) {
      spdlog::info("DeleteRecords {}: asked Iggy to delete the {} sealed segment(s) below the log start", name,
                   segments - 1);
      return;
    }
    ++stats_.failed;
    spdlog::warn("DeleteRecords {}: DeleteSegments failed (the log start stays logical): {}", name,
                 r.error().message);
  });
}

}  // namespace kib::bridge
