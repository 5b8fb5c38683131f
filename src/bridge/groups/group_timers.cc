#include "bridge/groups/group_timers.h"

#include <chrono>

#include "uvx/timer.h"
#include "uvx/work_owner.h"

namespace kib::bridge {
namespace {

// A thin adapter: the coordinator's timer interface on the one loop timer.
class UvGroupTimer final : public GroupTimer {
 public:
  explicit UvGroupTimer(uv_loop_t* loop) : timer_(loop, "group timer") { timer_.unref(); }
  void start(int64_t delay_ms, std::function<void()> fn) override {
    // Group deadlines are the coordinator's own work, not that of the connection whose request
    // armed them (uvx/work_owner.h).
    uv::OwnerScope bridge_work(uv::WorkOwner{});
    timer_.start(std::chrono::milliseconds(delay_ms), std::move(fn));
  }
  void stop() override { timer_.stop(); }
  bool armed() const override { return timer_.active(); }

 private:
  uv::Timer timer_;
};

class UvGroupTimers final : public GroupTimers {
 public:
  explicit UvGroupTimers(uv_loop_t* loop) : loop_(loop) {}
  int64_t now_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  std::unique_ptr<GroupTimer> make_timer() override { return std::make_unique<UvGroupTimer>(loop_); }

 private:
  uv_loop_t* loop_;
};

}  // namespace

std::unique_ptr<GroupTimers> make_uv_group_timers(uv_loop_t* loop) { return std::make_unique<UvGroupTimers>(loop); }

}  // namespace kib::bridge
