#include "server/handlers/fanout.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>

#include "kafka/protocol/generated/api_keys.h"
#include "metrics/bridge_metrics.h"
#include "uvx/tasks.h"

namespace kib::kafka {

void refuse_oversized_answer(const Responder& respond, std::string_view what, const AnswerBudget& budget) {
  metrics::record_request_error(msg::api_name(respond.header().api_key), "response_too_large");
  respond.close(fmt::format("{}: its answer would take at least {} bytes, past [limits] max_response_bytes ({})", what,
                            budget.used(), budget.max()));
}

namespace {

struct Sliced {
  size_t n = 0;
  size_t next = 0;
  std::function<void(size_t)> step;
  std::function<void()> done;
  std::function<bool()> keep_going;
  std::unique_ptr<uv::Tasks> tasks;
};

void run_slice(const std::shared_ptr<Sliced>& s) {
  if (s->keep_going && !s->keep_going()) {
    s->tasks.reset();
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  const size_t end = std::min(s->n, s->next + kEntriesPerSlice);
  while (s->next < end) {
    s->step(s->next++);
    if (std::chrono::steady_clock::now() - started >= std::chrono::microseconds(kSliceMicros)) break;
  }
  if (s->next < s->n) {
    s->tasks->post([s] { run_slice(s); });
    return;
  }
  auto done = std::move(s->done);
  s->tasks.reset();  // safe inside its own task: Tasks runs a batch it moved out of itself
  done();
}

}  // namespace

void in_slices(uv_loop_t* loop, size_t n, std::function<void(size_t)> step, std::function<void()> done,
               std::function<bool()> keep_going) {
  if (n <= kEntriesPerSlice || loop == nullptr) {
    for (size_t i = 0; i < n; ++i) step(i);
    return done();
  }
  auto s = std::make_shared<Sliced>();
  s->n = n;
  s->step = std::move(step);
  s->done = std::move(done);
  s->keep_going = std::move(keep_going);
  s->tasks = std::make_unique<uv::Tasks>(loop);
  // Even the first slice waits until the loop has polled once more: the handler has just
  // decoded a request of this size (2-3 ms for 200,000 entries), which is enough for one turn.
  // A task posted from a read callback runs in the next iteration's idle phase, which comes
  // before that iteration's poll: run there, the first slice (and the setup it does) added to
  // the decode's turn and another connection waited for both (4.4 ms, where each alone is under
  // 3). Posted again from there, it runs after the poll.
  s->tasks->post([s] { s->tasks->post([s] { run_slice(s); }); });
}

}  // namespace kib::kafka
