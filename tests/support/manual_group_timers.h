// A clock that moves only when told to: unit tests and simulations of the group coordinator
// (session timeouts of minutes run in microseconds, and deterministically).
#pragma once

#include <cstdint>
#include <set>

#include "bridge/groups/group_timers.h"

namespace kib::bridge {

class ManualGroupTimers final : public GroupTimers {
 public:
  explicit ManualGroupTimers(int64_t start_ms) : now_(start_ms) {}
  ~ManualGroupTimers() override;

  int64_t now_ms() const override { return now_; }
  std::unique_ptr<GroupTimer> make_timer() override;

  // Moves the clock forward by `ms`, firing every timer that falls due, in deadline order
  // (ties in the order they were armed); timers armed by callbacks fire too if due.
  void advance(int64_t ms);
  size_t armed() const;

 private:
  class Timer;
  int64_t now_;
  uint64_t next_seq_ = 0;
  std::set<Timer*> timers_;
};

}  // namespace kib::bridge
