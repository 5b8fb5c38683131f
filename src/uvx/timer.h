// The one timer: a libuv timer handle owned by an object that may be destroyed at any time on the
// loop thread. The handle is heap-allocated and closed on destruction (uv_close, deleted in the
// close callback), so the loop must run again to free it; a callback of a destroyed Timer never
// runs. Every callback runs through guard::run (Boundary::kTimer, named by `what`), and as the
// work of the owner that armed it (uvx/work_owner.h). Loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>

namespace kib::uv {

class Timer {
 public:
  // `what` names the timer in the guard's log line when its callback throws.
  explicit Timer(uv_loop_t* loop, const char* what = "loop timer");
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Runs `fn` once, `after` from now (negative: on the next timer pass). Re-arming replaces the
  // previous deadline and callback. The callback is moved out before it runs: it may re-arm the
  // timer or destroy it.
  void start(std::chrono::milliseconds after, std::function<void()> fn);
  // Runs `fn` every `every` (at least 1 ms) until stop(), the first time `every` from now. The
  // callback may stop, re-arm or destroy the timer.
  void start_repeating(std::chrono::milliseconds every, std::function<void()> fn);
  // Disarms; the callback is dropped without running.
  void stop();
  // Armed and not yet fired (a repeating timer: until stop()).
  bool active() const;
  // The timer no longer keeps the loop running on its own (uv_unref).
  void unref();

 private:
  static void on_timer(uv_timer_t* h);
  uv_timer_t* handle_;
  const char* what_;
  std::function<void()> fn_;
  bool repeating_ = false;
};

// The loop's cached clock (uv_now), in ms.
inline uint64_t now_ms(uv_loop_t* loop) { return uv_now(loop); }

}  // namespace kib::uv
