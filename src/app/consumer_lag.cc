#include "app/consumer_lag.h"

#include <algorithm>
#include <set>

#include "bridge/groups/committed_offsets.h"
#include "bridge/log/partition_log.h"

namespace kib::app {

ConsumerLagMonitor::ConsumerLagMonitor(uv_loop_t* loop, const bridge::CommittedOffsets& offsets, bridge::PartitionLog& log)
    : offsets_(offsets), log_(log), timer_(loop, "consumer lag refresh") {}

void ConsumerLagMonitor::start() {
  stopped_ = false;
  refresh();
}

void ConsumerLagMonitor::stop() {
  stopped_ = true;
  timer_.stop();
}

void ConsumerLagMonitor::refresh() {
  if (stopped_) return;
  timer_.start(kRefreshInterval, [this] { refresh(); });
  if (refreshing_ > 0) return;  // a slow Iggy: do not pile up requests
  std::set<std::string> topics;
  for (const auto& g : offsets_.groups())
    for (const auto& o : offsets_.fetch_offsets(g, nullptr)) topics.insert(o.topic);
  for (const auto& t : topics) {
    ++refreshing_;
    log_.refresh_offsets_of(t, [this, alive = alive_.token()](Status) {
      if (alive) --refreshing_;  // a failure leaves the last known watermark in place
    });
  }
}

std::vector<PartitionLag> ConsumerLagMonitor::lags() const {
  std::vector<PartitionLag> out;
  for (const auto& g : offsets_.groups()) {
    for (const auto& o : offsets_.fetch_offsets(g, nullptr)) {
      // Committed offsets are plain Kafka offsets on the wire-facing group APIs; typed here.
      auto hw = log_.high_watermark(o.topic, PartitionId(o.partition));
      if (!hw || o.offset < 0) continue;
      const int64_t end = (*hw)();
      out.push_back({g, o.topic, o.partition, o.offset, end, std::max<int64_t>(0, end - o.offset)});
    }
  }
  std::sort(out.begin(), out.end(), [](const PartitionLag& a, const PartitionLag& b) {
    return std::tie(a.group, a.topic, a.partition) < std::tie(b.group, b.topic, b.partition);
  });
  return out;
}

}  // namespace kib::app
