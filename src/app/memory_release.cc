#include "app/memory_release.h"

#include <malloc.h>

#include <spdlog/spdlog.h>

#include <chrono>

#include "metrics/bridge_metrics.h"
#include "uvx/timer.h"

namespace kib {

uint64_t heap_free_bytes() { return static_cast<uint64_t>(mallinfo2().fordblks); }

MemoryReleaser::MemoryReleaser(uv_loop_t* loop, uint64_t interval_ms, uint64_t min_free_bytes,
                               std::function<double()> activity)
    : timer_(std::make_unique<uv::Timer>(loop, "memory release")), activity_(std::move(activity)) {
  timer_->unref();  // never what keeps the loop running
  configure(interval_ms, min_free_bytes);
}

MemoryReleaser::~MemoryReleaser() = default;

void MemoryReleaser::configure(uint64_t interval_ms, uint64_t min_free_bytes) {
  min_free_bytes_ = min_free_bytes;
  if (interval_ms == interval_ms_) return;
  interval_ms_ = interval_ms;
  if (interval_ms == 0) return timer_->stop();
  timer_->start_repeating(std::chrono::milliseconds(interval_ms), [this] { check(); });
}

bool MemoryReleaser::check() {
  // Quiet, not silent: consumers long-polling an idle topic and group heartbeats send a few
  // hundred bytes a second; a load sends megabytes.
  const double activity = activity_ ? activity_() : 0;
  const bool idle = last_activity_ >= 0 && activity - last_activity_ < kQuietBytesPerCheck;
  last_activity_ = activity;
  if (!idle) return false;
  const uint64_t free_bytes = heap_free_bytes();
  if (free_bytes < min_free_bytes_) return false;
  auto resident = [] {
    auto m = metrics::process_memory();
    return m ? m->resident_bytes : 0;
  };
  const uint64_t before = resident();
  const auto t0 = std::chrono::steady_clock::now();
  malloc_trim(0);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t after = resident();
  ++stats_.trims;
  if (before > after) stats_.released_bytes += before - after;
  spdlog::debug("memory: idle with {} bytes free in the heap; trimmed RSS {} -> {} bytes in {} us", free_bytes, before,
                after, us);
  return true;
}

}  // namespace kib
