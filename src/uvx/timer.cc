#include "uvx/timer.h"

#include <utility>

#include "common/guard.h"
#include "uvx/work_owner.h"

namespace kib::uv {

namespace {
uint64_t to_ms(std::chrono::milliseconds d) { return d.count() < 0 ? 0 : static_cast<uint64_t>(d.count()); }
}  // namespace

Timer::Timer(uv_loop_t* loop, const char* what) : handle_(new uv_timer_t), what_(what) {
  uv_timer_init(loop, handle_);
  handle_->data = this;
}

Timer::~Timer() {
  uv_timer_stop(handle_);
  handle_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(handle_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

void Timer::start(std::chrono::milliseconds after, std::function<void()> fn) {
  fn_ = carry_owner(std::move(fn));
  repeating_ = false;
  uv_timer_start(handle_, &Timer::on_timer, to_ms(after), 0);
}

void Timer::start_repeating(std::chrono::milliseconds every, std::function<void()> fn) {
  fn_ = carry_owner(std::move(fn));
  repeating_ = true;
  const uint64_t ms = to_ms(every) == 0 ? 1 : to_ms(every);
  uv_timer_start(handle_, &Timer::on_timer, ms, ms);
}

void Timer::stop() {
  uv_timer_stop(handle_);
  fn_ = nullptr;
  repeating_ = false;
}

bool Timer::active() const { return uv_is_active(reinterpret_cast<const uv_handle_t*>(handle_)) != 0; }

void Timer::unref() { uv_unref(reinterpret_cast<uv_handle_t*>(handle_)); }

void Timer::on_timer(uv_timer_t* h) {
  auto* self = static_cast<Timer*>(h->data);
  if (!self) return;
  // The callback may destroy the Timer: it runs from a local, and nothing touches `self` after.
  std::function<void()> fn;
  if (self->repeating_) {
    fn = self->fn_;
  } else {
    fn = std::move(self->fn_);
    self->fn_ = nullptr;
  }
  if (fn) guard::run(guard::Boundary::kTimer, self->what_, fn);
}

}  // namespace kib::uv
