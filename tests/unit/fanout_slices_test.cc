// in_slices (server/handlers/fanout.h) on a real libuv loop: a fan-out request's entries are
// worked on a slice at a time, and the loop polls (serves other connections) before the first
// slice and between slices, not only between loop iterations.
#include <boost/test/unit_test.hpp>

#include <uv.h>

#include <cstddef>
#include <vector>

#include "server/handlers/fanout.h"

using kib::kafka::in_slices;
using kib::kafka::kEntriesPerSlice;

namespace {

// Counts the loop's polls: a check handle runs right after each poll phase.
struct PollCounter {
  uv_check_t check{};
  size_t polls = 0;
  explicit PollCounter(uv_loop_t* loop) {
    uv_check_init(loop, &check);
    check.data = this;
    uv_check_start(&check, [](uv_check_t* h) { ++static_cast<PollCounter*>(h->data)->polls; });
    uv_unref(reinterpret_cast<uv_handle_t*>(&check));
  }
  void close() { uv_close(reinterpret_cast<uv_handle_t*>(&check), nullptr); }
};

struct Run {
  size_t polls_at_call = 0;
  std::vector<size_t> polls_at_step;  // by entry
  size_t polls_at_done = 0;
  bool done = false;
};

// in_slices(n) called from a timer callback, which runs before the poll of its loop iteration
// (a read callback runs inside it): either way a poll comes before the first slice.
Run run_from_timer(size_t n) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  PollCounter counter(&loop);
  Run run;
  uv_timer_t timer;
  uv_timer_init(&loop, &timer);
  struct Ctx {
    Run* run;
    PollCounter* counter;
    size_t n;
  } ctx{&run, &counter, n};
  timer.data = &ctx;
  uv_timer_start(
      &timer,
      [](uv_timer_t* t) {
        auto* c = static_cast<Ctx*>(t->data);
        c->run->polls_at_call = c->counter->polls;
        c->run->polls_at_step.assign(c->n, 0);
        in_slices(
            t->loop, c->n, [c](size_t i) { c->run->polls_at_step[i] = c->counter->polls; },
            [c] {
              c->run->polls_at_done = c->counter->polls;
              c->run->done = true;
            });
      },
      0, 0);
  uv_run(&loop, UV_RUN_DEFAULT);
  counter.close();
  uv_close(reinterpret_cast<uv_handle_t*>(&timer), nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return run;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fanout_slices)

BOOST_AUTO_TEST_CASE(the_loop_polls_before_the_first_slice_and_between_slices) {
  const size_t n = 4 * kEntriesPerSlice + 1;
  const Run r = run_from_timer(n);
  BOOST_TEST_REQUIRE(r.done);
  // The handler's turn (a decode of milliseconds) and the first slice are never one turn.
  BOOST_TEST(r.polls_at_step[0] > r.polls_at_call);
  // At most kEntriesPerSlice entries between two polls.
  size_t slices = 1;
  for (size_t i = 1; i < n; ++i) {
    BOOST_TEST(r.polls_at_step[i] >= r.polls_at_step[i - 1]);
    if (r.polls_at_step[i] != r.polls_at_step[i - 1]) ++slices;
  }
  BOOST_TEST(slices >= (n + kEntriesPerSlice - 1) / kEntriesPerSlice);
  BOOST_TEST(r.polls_at_done >= r.polls_at_step[n - 1]);
}

BOOST_AUTO_TEST_CASE(a_small_request_is_worked_on_at_once) {
  const Run r = run_from_timer(kEntriesPerSlice);
  BOOST_TEST_REQUIRE(r.done);
  BOOST_TEST(r.polls_at_done == r.polls_at_call);
}

BOOST_AUTO_TEST_SUITE_END()
