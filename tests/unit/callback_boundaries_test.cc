// The guards wired at the boundaries: a callback that throws is caught where libuv, the loop
// task queue or the state store calls it, and the other callbacks of the same batch still run.
// Before the guards each of these ended the test binary in std::terminate.
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "common/guard.h"
#include "state/state_store.h"
#include "uvx/tasks.h"
#include "uvx/timer.h"

using namespace kib;

BOOST_AUTO_TEST_SUITE(callback_boundaries)

BOOST_AUTO_TEST_CASE(a_throwing_loop_task_or_timer_is_caught_and_the_rest_run) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  const uint64_t tasks_before = guard::caught(guard::Boundary::kLoopTask);
  const uint64_t timers_before = guard::caught(guard::Boundary::kTimer);
  int ran = 0;
  {
    uv::Tasks tasks(&loop);
    uv::Timer timer(&loop);
    tasks.post([] { throw std::length_error("string of 32787 bytes exceeds 32767"); });
    tasks.post([&] { ++ran; });
    timer.start(std::chrono::milliseconds(1), [] { throw 7; });
    for (int i = 0; i < 100 && (ran == 0 || guard::caught(guard::Boundary::kTimer) == timers_before); ++i)
      uv_run(&loop, UV_RUN_ONCE);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  BOOST_TEST(ran == 1);
  BOOST_TEST(guard::caught(guard::Boundary::kLoopTask) == tasks_before + 1);
  BOOST_TEST(guard::caught(guard::Boundary::kTimer) == timers_before + 1);
}

BOOST_AUTO_TEST_CASE(a_throwing_state_completion_does_not_lose_the_others) {
  char tmpl[] = "/tmp/kib-guard-XXXXXX";
  std::filesystem::path dir = mkdtemp(tmpl);
  uv_loop_t loop;
  uv_loop_init(&loop);
  const uint64_t before = guard::caught(guard::Boundary::kStateCompletion);
  int done = 0;
  {
    auto store = state::StateStore::open((dir / "state.db").string(), &loop);
    BOOST_REQUIRE(store.ok());
    auto noop = [](SQLite::Database&) {};
    (*store)->write(noop, [](Status) { throw std::runtime_error("handler bug"); });
    (*store)->write(noop, [&](Status s) { done += s.ok() ? 1 : 100; });
    (*store)->write([](SQLite::Database&) { throw 1; }, [&](Status s) { done += s.ok() ? 100 : 1; });
    for (int i = 0; i < 1000 && done < 2; ++i) uv_run(&loop, UV_RUN_NOWAIT), usleep(1000);
    (*store)->close();
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  std::filesystem::remove_all(dir);
  BOOST_TEST(done == 2);  // the second succeeded, the third (non-std throw in its job) failed alone
  BOOST_TEST(guard::caught(guard::Boundary::kStateCompletion) == before + 1);
}

BOOST_AUTO_TEST_SUITE_END()
