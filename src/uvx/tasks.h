// Runs posted tasks on a later loop iteration (never inside post()): how a service keeps the
// promise that callbacks never run synchronously inside an API call. The idle handle is
// heap-allocated and closed on destruction (uv_close, deleted in the close callback), so the
// owner may be destroyed at any time on the loop thread; tasks still queued then are dropped
// without running. Each task runs through guard::run (Boundary::kLoopTask), as the work of the
// owner that posted it (uvx/work_owner.h). Loop thread only.
#pragma once

#include <uv.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace kib::uv {

class Tasks {
 public:
  explicit Tasks(uv_loop_t* loop);
  ~Tasks();
  Tasks(const Tasks&) = delete;
  Tasks& operator=(const Tasks&) = delete;

  void post(std::function<void()> task);
  size_t pending() const { return tasks_.size(); }

 private:
  static void on_idle(uv_idle_t* h);
  uv_idle_t* handle_;
  std::vector<std::function<void()>> tasks_;
};

}  // namespace kib::uv
