#include "bridge/log/leader_epoch.h"

#include "bridge/log/fetch_records.h"

namespace kib::bridge {

std::optional<EpochEndOffset> epoch_end_without_log(int32_t current_leader_epoch, int32_t leader_epoch) {
  using kafka::ErrorCode;
  if (current_leader_epoch != -1 && current_leader_epoch != kPartitionLeaderEpoch)
    return EpochEndOffset{current_leader_epoch > kPartitionLeaderEpoch ? ErrorCode::kUnknownLeaderEpoch
                                                                       : ErrorCode::kFencedLeaderEpoch,
                          -1, kNoOffset};
  if (leader_epoch != kPartitionLeaderEpoch) return EpochEndOffset{};
  return std::nullopt;
}

}  // namespace kib::bridge
