#include "uvx/tasks.h"

#include <utility>

#include "common/guard.h"
#include "uvx/work_owner.h"

namespace kib::uv {

Tasks::Tasks(uv_loop_t* loop) : handle_(new uv_idle_t) {
  uv_idle_init(loop, handle_);
  handle_->data = this;
}

Tasks::~Tasks() {
  uv_idle_stop(handle_);
  handle_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(handle_), [](uv_handle_t* h) { delete reinterpret_cast<uv_idle_t*>(h); });
}

void Tasks::post(std::function<void()> task) {
  tasks_.push_back(carry_owner(std::move(task)));
  uv_idle_start(handle_, &Tasks::on_idle);
}

void Tasks::on_idle(uv_idle_t* h) {
  auto* self = static_cast<Tasks*>(h->data);
  if (!self) return;
  std::vector<std::function<void()>> batch;
  batch.swap(self->tasks_);
  uv_idle_stop(h);
  // A task may destroy the owner of these Tasks only via close callbacks that run later, so
  // `self` stays valid while the batch runs; tasks posted meanwhile run next iteration.
  // Each task alone: one that throws does not take the others (or the process) with it.
  for (auto& t : batch) guard::run(guard::Boundary::kLoopTask, "posted task", t);
}

}  // namespace kib::uv
