// Time for the group coordinator: a wall clock (commit timestamps, retention) and re-armable
// one-shot timers (heartbeat and session expiry, rebalance and sync deadlines). On the bridge
// they are uv timers on the loop; unit tests drive a fake clock by hand.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>

namespace kib::bridge {

// One re-armable one-shot timer. start() re-arms (the previous deadline is forgotten); the
// callback may destroy the timer itself. Destroying the timer disarms it.
class GroupTimer {
 public:
  virtual ~GroupTimer() = default;
  virtual void start(int64_t delay_ms, std::function<void()> fn) = 0;
  virtual void stop() = 0;
  virtual bool armed() const = 0;
};

class GroupTimers {
 public:
  virtual ~GroupTimers() = default;
  // Wall clock, ms since the epoch.
  virtual int64_t now_ms() const = 0;
  virtual std::unique_ptr<GroupTimer> make_timer() = 0;
};

// uv timers on `loop`; they never keep the loop alive on their own.
std::unique_ptr<GroupTimers> make_uv_group_timers(uv_loop_t* loop);

}  // namespace kib::bridge
