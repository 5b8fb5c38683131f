// Gives the memory the bridge freed after a burst back to the OS. glibc keeps freed heap memory
// in its arenas for reuse: request frames, Iggy replies and evicted cached batches (16 KiB to
// 1 MiB each) live on the heap once glibc's dynamic mmap threshold has risen past them, and only
// a heap's free top is returned on its own. After a burst the bridge's RSS stayed at the burst's
// size (137 MiB with 3.5 MiB in use, measured), and the next burst added to it.
//
// Every `interval_ms` it looks at how many Kafka request bytes arrived since the last look; if
// hardly any did (idle: a trim then costs a running load no page faults) and the
// arenas hold at least `min_free_bytes` free, malloc_trim(0) releases every whole free page.
// [limits] memory_trim_interval_ms (0 = off) and memory_trim_min_free_bytes.
//
// Loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>

namespace kib {

namespace uv {
class Timer;
}

// Kafka request bytes per check below which the bridge counts as idle.
inline constexpr double kQuietBytesPerCheck = 64 * 1024;

struct MemoryReleaseStats {
  uint64_t trims = 0;
  uint64_t released_bytes = 0;  // RSS before minus after, summed over trims
};

class MemoryReleaser {
 public:
  // `activity`: a total that grows while the bridge is busy (Kafka request bytes received).
  MemoryReleaser(uv_loop_t* loop, uint64_t interval_ms, uint64_t min_free_bytes, std::function<double()> activity);
  ~MemoryReleaser();
  MemoryReleaser(const MemoryReleaser&) = delete;
  MemoryReleaser& operator=(const MemoryReleaser&) = delete;

  // SIGHUP: new settings from the next check on (interval 0 stops the checks).
  void configure(uint64_t interval_ms, uint64_t min_free_bytes);
  // One check now, as the timer does; true when it trimmed.
  bool check();

  const MemoryReleaseStats& stats() const { return stats_; }

 private:
  std::unique_ptr<uv::Timer> timer_;
  uint64_t interval_ms_ = 0;
  uint64_t min_free_bytes_ = 0;
  std::function<double()> activity_;
  double last_activity_ = -1;
  MemoryReleaseStats stats_;
};

// Free bytes in glibc's arenas (mallinfo2's fordblks).
uint64_t heap_free_bytes();

}  // namespace kib
