// OffsetForLeaderEpoch's rules for a log that has only ever had leader epoch 0 (the bridge's
// partitions, kPartitionLeaderEpoch), from Kafka's Partition.lastOffsetForLeaderEpoch and
// LeaderEpochFileCache.endOffsetFor:
//   * a current leader epoch (when not -1) other than 0: above → UNKNOWN_LEADER_EPOCH, below →
//     FENCED_LEADER_EPOCH;
//   * epoch 0, the latest: ends at the log end (the high watermark, one replica);
//   * any other epoch (-1, or later than any known): (-1, -1).
#pragma once

#include <cstdint>
#include <optional>

#include "common/ids.h"
#include "kafka/protocol/error_code.h"

namespace kib::bridge {

struct EpochEndOffset {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  int32_t leader_epoch = -1;
  KafkaOffset end_offset = kNoOffset;
};

// The answer when it does not depend on the log; nullopt when it is (0, high watermark).
std::optional<EpochEndOffset> epoch_end_without_log(int32_t current_leader_epoch, int32_t leader_epoch);

}  // namespace kib::bridge
