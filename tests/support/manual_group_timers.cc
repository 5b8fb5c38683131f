#include "support/manual_group_timers.h"

namespace kib::bridge {

class ManualGroupTimers::Timer final : public GroupTimer {
 public:
  explicit Timer(ManualGroupTimers* owner) : owner_(owner) { owner_->timers_.insert(this); }
  ~Timer() override {
    if (owner_) owner_->timers_.erase(this);
  }
  void start(int64_t delay_ms, std::function<void()> fn) override {
    fn_ = std::move(fn);
    deadline_ = owner_->now_ + (delay_ms < 0 ? 0 : delay_ms);
    seq_ = owner_->next_seq_++;
    armed_ = true;
  }
  void stop() override { armed_ = false; }
  bool armed() const override { return armed_; }

  ManualGroupTimers* owner_;
  std::function<void()> fn_;
  int64_t deadline_ = 0;
  uint64_t seq_ = 0;
  bool armed_ = false;
};

ManualGroupTimers::~ManualGroupTimers() {
  for (auto* t : timers_) t->owner_ = nullptr;
}

std::unique_ptr<GroupTimer> ManualGroupTimers::make_timer() { return std::make_unique<Timer>(this); }

void ManualGroupTimers::advance(int64_t ms) {
  const int64_t target = now_ + ms;
  for (;;) {
    Timer* next = nullptr;
    for (auto* t : timers_)
      if (t->armed_ && t->deadline_ <= target &&
          (!next || t->deadline_ < next->deadline_ || (t->deadline_ == next->deadline_ && t->seq_ < next->seq_)))
        next = t;
    if (!next) break;
    now_ = next->deadline_;
    next->armed_ = false;
    auto fn = next->fn_;  // the callback may destroy the timer
    fn();
  }
  now_ = target;
}

size_t ManualGroupTimers::armed() const {
  size_t n = 0;
  for (auto* t : timers_) n += t->armed_ ? 1 : 0;
  return n;
}

}  // namespace kib::bridge
