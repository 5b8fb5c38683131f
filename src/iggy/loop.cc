#include "iggy/loop.h"

#include <utility>

#include "common/guard.h"
#include "iggy/owner.h"

namespace kib::iggy {

LoopTimer::LoopTimer(uv_loop_t* loop) : handle_(new uv_timer_t) {
  uv_timer_init(loop, handle_);
  handle_->data = this;
}

LoopTimer::~LoopTimer() {
  uv_timer_stop(handle_);
  handle_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(handle_),
           [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

void LoopTimer::start(std::chrono::milliseconds after, std::function<void()> fn) {
  // The owner of the work that armed the timer owns what it runs (see owner.h).
  if (const WorkOwner owner = current_owner(); owner.id != 0 && fn)
    fn = [owner, fn = std::move(fn)] {
      OwnerScope scope(WorkOwner{owner.id, false});
      fn();
    };
  fn_ = std::move(fn);
  uint64_t ms = after.count() < 0 ? 0 : static_cast<uint64_t>(after.count());
  uv_timer_start(handle_, &LoopTimer::on_timer, ms, 0);
}

void LoopTimer::stop() {
  uv_timer_stop(handle_);
  fn_ = nullptr;
}

bool LoopTimer::active() const { return uv_is_active(reinterpret_cast<const uv_handle_t*>(handle_)) != 0; }

void LoopTimer::on_timer(uv_timer_t* h) {
  auto* self = static_cast<LoopTimer*>(h->data);
  if (!self) return;
  auto fn = std::move(self->fn_);
  self->fn_ = nullptr;
  if (fn) guard::run(guard::Boundary::kTimer, "loop timer", fn);
}

LoopTasks::LoopTasks(uv_loop_t* loop) : handle_(new uv_idle_t) {
  uv_idle_init(loop, handle_);
  handle_->data = this;
}

LoopTasks::~LoopTasks() {
  uv_idle_stop(handle_);
  handle_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(handle_),
           [](uv_handle_t* h) { delete reinterpret_cast<uv_idle_t*>(h); });
}

void LoopTasks::post(std::function<void()> task) {
  if (const WorkOwner owner = current_owner(); owner.id != 0 && task)
    task = [owner, task = std::move(task)] {
      OwnerScope scope(WorkOwner{owner.id, false});
      task();
    };
  tasks_.push_back(std::move(task));
  uv_idle_start(handle_, &LoopTasks::on_idle);
}

void LoopTasks::on_idle(uv_idle_t* h) {
  auto* self = static_cast<LoopTasks*>(h->data);
  if (!self) return;
  std::vector<std::function<void()>> batch;
  batch.swap(self->tasks_);
  uv_idle_stop(h);
  // A task may destroy the owner of this LoopTasks only via close callbacks that run later, so
  // `self` stays valid while the batch runs; tasks posted meanwhile run next iteration.
  // Each task alone: one that throws does not take the others (or the process) with it.
  for (auto& t : batch) guard::run(guard::Boundary::kLoopTask, "posted task", t);
}

uint64_t loop_now_ms(uv_loop_t* loop) { return uv_now(loop); }

}  // namespace kib::iggy
