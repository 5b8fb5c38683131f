#include "bridge/groups/group_timers.h"

#include <chrono>

#include "common/guard.h"

namespace kib::bridge {
namespace {

class UvGroupTimer final : public GroupTimer {
 public:
  explicit UvGroupTimer(uv_loop_t* loop) : handle_(new uv_timer_t) {
    uv_timer_init(loop, handle_);
    handle_->data = this;
    uv_unref(reinterpret_cast<uv_handle_t*>(handle_));
  }
  ~UvGroupTimer() override {
    uv_timer_stop(handle_);
    handle_->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(handle_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
  }
  void start(int64_t delay_ms, std::function<void()> fn) override {
    fn_ = std::move(fn);
    armed_ = true;
    uv_timer_start(handle_, &UvGroupTimer::on_timer, static_cast<uint64_t>(delay_ms < 0 ? 0 : delay_ms), 0);
  }
  void stop() override {
    armed_ = false;
    uv_timer_stop(handle_);
  }
  bool armed() const override { return armed_; }

 private:
  static void on_timer(uv_timer_t* h) {
    auto* self = static_cast<UvGroupTimer*>(h->data);
    if (!self) return;
    self->armed_ = false;
    // The callback may destroy this timer: run a copy and touch nothing afterwards.
    auto fn = self->fn_;
    guard::run(guard::Boundary::kTimer, "group timer", fn);
  }

  uv_timer_t* handle_;
  std::function<void()> fn_;
  bool armed_ = false;
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
