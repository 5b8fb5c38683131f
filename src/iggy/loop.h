// Small owners of libuv handles used by the Iggy client. Each handle is heap-allocated and closed
// asynchronously on destruction (uv_close + delete in the close callback), so the owning object
// may be destroyed at any time on the loop thread; the loop must run again to free the handle.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include <uv.h>

namespace kib::iggy {

// One-shot timer. The callback is moved out before it runs, so it may re-arm the timer.
class LoopTimer {
 public:
  explicit LoopTimer(uv_loop_t* loop);
  ~LoopTimer();
  LoopTimer(const LoopTimer&) = delete;
  LoopTimer& operator=(const LoopTimer&) = delete;

  void start(std::chrono::milliseconds after, std::function<void()> fn);
  void stop();
  bool active() const;

 private:
  static void on_timer(uv_timer_t* h);
  uv_timer_t* handle_;
  std::function<void()> fn_;
};

// Runs posted tasks on a later loop iteration (never inside post()). Used to keep the promise that
// callbacks never run synchronously inside an API call. Tasks still queued at destruction are
// dropped without running.
class LoopTasks {
 public:
  explicit LoopTasks(uv_loop_t* loop);
  ~LoopTasks();
  LoopTasks(const LoopTasks&) = delete;
  LoopTasks& operator=(const LoopTasks&) = delete;

  void post(std::function<void()> task);
  size_t pending() const { return tasks_.size(); }

 private:
  static void on_idle(uv_idle_t* h);
  uv_idle_t* handle_;
  std::vector<std::function<void()>> tasks_;
};

uint64_t loop_now_ms(uv_loop_t* loop);

}  // namespace kib::iggy
