// Consumer lag for /metrics: every group's committed offsets (CommittedOffsets) against the
// partitions' high watermarks (PartitionLog). Watermarks of partitions being fetched are fresh
// anyway; for the others the monitor asks Iggy once per refresh interval, one GetTopic per
// topic that has committed offsets, so lag also grows while a group is stopped.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/liveness.h"
#include "uvx/timer.h"

namespace kib::bridge {
class CommittedOffsets;
class PartitionLog;
}  // namespace kib::bridge

namespace kib::app {

struct PartitionLag {
  std::string group;
  std::string topic;
  int32_t partition = 0;
  int64_t committed = 0;
  int64_t high_watermark = 0;
  int64_t lag = 0;  // max(0, high watermark - committed)
};

class ConsumerLagMonitor {
 public:
  static constexpr std::chrono::milliseconds kRefreshInterval{10000};

  ConsumerLagMonitor(uv_loop_t* loop, const bridge::CommittedOffsets& offsets, bridge::PartitionLog& log);
  ~ConsumerLagMonitor() = default;
  ConsumerLagMonitor(const ConsumerLagMonitor&) = delete;
  ConsumerLagMonitor& operator=(const ConsumerLagMonitor&) = delete;
  // Refreshes now and then every kRefreshInterval until stop().
  void start();
  void stop();

  // Every committed offset whose partition's high watermark is known, ordered by group,
  // topic and partition.
  std::vector<PartitionLag> lags() const;

 private:
  void refresh();

  const bridge::CommittedOffsets& offsets_;
  bridge::PartitionLog& log_;
  uv::Timer timer_;
  bool stopped_ = true;
  size_t refreshing_ = 0;  // GetTopic requests in flight
  Liveness alive_;
};

}  // namespace kib::app
