// The loop plumbing (src/uvx): the one timer, posted tasks, and the ambient work owner they carry.
#include <boost/test/unit_test.hpp>

#include <uv.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <vector>

#include "common/guard.h"
#include "uvx/tasks.h"
#include "uvx/timer.h"
#include "uvx/work_owner.h"

using namespace kib;
using namespace std::chrono_literals;

namespace {

struct Loop {
  uv_loop_t loop{};
  Loop() { uv_loop_init(&loop); }
  ~Loop() {
    uv_run(&loop, UV_RUN_DEFAULT);  // the close callbacks free the handles
    BOOST_TEST(uv_loop_close(&loop) == 0);
  }
  // Runs until `done` or `max` iterations.
  template <typename Done>
  void run_until(Done done, int max = 1000) {
    for (int i = 0; i < max && !done(); ++i) uv_run(&loop, UV_RUN_ONCE);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(uvx_timer)

BOOST_AUTO_TEST_CASE(a_one_shot_runs_once_and_is_inactive_while_it_runs) {
  Loop l;
  uv::Timer t(&l.loop);
  int ran = 0;
  bool active_inside = true;
  t.start(1ms, [&] {
    ++ran;
    active_inside = t.active();
  });
  BOOST_TEST(t.active());
  uv_run(&l.loop, UV_RUN_DEFAULT);  // returns: nothing else keeps the loop running
  BOOST_TEST(ran == 1);
  BOOST_TEST(!active_inside);
  BOOST_TEST(!t.active());
}

BOOST_AUTO_TEST_CASE(re_arming_replaces_the_deadline_and_the_callback) {
  Loop l;
  uv::Timer t(&l.loop);
  std::vector<int> ran;
  t.start(1h, [&] { ran.push_back(1); });
  t.start(1ms, [&] { ran.push_back(2); });
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(ran == std::vector<int>{2});
}

BOOST_AUTO_TEST_CASE(the_callback_may_re_arm_its_own_timer) {
  Loop l;
  uv::Timer t(&l.loop);
  int ran = 0;
  std::function<void()> again = [&] {
    if (++ran < 3) t.start(0ms, again);
  };
  t.start(0ms, again);
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(ran == 3);
}

BOOST_AUTO_TEST_CASE(stop_drops_the_callback) {
  Loop l;
  uv::Timer t(&l.loop);
  bool ran = false;
  t.start(0ms, [&] { ran = true; });
  t.stop();
  BOOST_TEST(!t.active());
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(!ran);
}

BOOST_AUTO_TEST_CASE(a_destroyed_timer_never_fires_and_its_handle_is_freed_by_the_loop) {
  Loop l;
  bool ran = false;
  auto t = std::make_unique<uv::Timer>(&l.loop);
  t->start(0ms, [&] { ran = true; });
  t.reset();
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(!ran);
  // ~Loop checks uv_loop_close succeeds: no handle left behind.
}

BOOST_AUTO_TEST_CASE(the_callback_may_destroy_its_own_timer) {
  Loop l;
  auto t = std::make_unique<uv::Timer>(&l.loop);
  int ran = 0;
  t->start(0ms, [&, keep = std::make_shared<int>(7)] {
    t.reset();
    ran += *keep;  // the callback's captures outlive the timer until it returns
  });
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(ran == 7);
  BOOST_TEST(!t);
}

BOOST_AUTO_TEST_CASE(a_repeating_timer_runs_until_stopped_from_its_callback) {
  Loop l;
  uv::Timer t(&l.loop);
  int ran = 0;
  t.start_repeating(1ms, [&] {
    if (++ran == 3) t.stop();
  });
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(ran == 3);
  BOOST_TEST(!t.active());
}

BOOST_AUTO_TEST_CASE(a_repeating_timer_may_destroy_itself) {
  Loop l;
  auto t = std::make_unique<uv::Timer>(&l.loop);
  int ran = 0;
  t->start_repeating(1ms, [&] {
    ++ran;
    t.reset();
  });
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(ran == 1);
}

BOOST_AUTO_TEST_CASE(an_unrefed_timer_does_not_keep_the_loop_running) {
  Loop l;
  uv::Timer t(&l.loop);
  bool ran = false;
  t.start(1h, [&] { ran = true; });
  t.unref();
  uv_run(&l.loop, UV_RUN_DEFAULT);  // returns at once
  BOOST_TEST(!ran);
  BOOST_TEST(t.active());
}

BOOST_AUTO_TEST_CASE(a_throwing_callback_is_caught_under_the_timers_name_and_the_timer_stays_usable) {
  Loop l;
  const uint64_t before = guard::caught(guard::Boundary::kTimer);
  uv::Timer t(&l.loop, "test timer");
  t.start(0ms, [] { throw std::runtime_error("bug"); });
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(guard::caught(guard::Boundary::kTimer) == before + 1);
  bool ran = false;
  t.start(0ms, [&] { ran = true; });
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(ran);
}

BOOST_AUTO_TEST_CASE(the_callback_runs_as_the_owner_that_armed_it) {
  Loop l;
  uv::Timer owned(&l.loop);
  uv::Timer bridge(&l.loop);
  uint64_t owned_as = 99, bridge_as = 99;
  bool cancellable = true;
  {
    uv::OwnerScope conn(uv::WorkOwner{42, true});
    owned.start(0ms, [&] {
      owned_as = uv::current_owner().id;
      cancellable = uv::current_owner().cancellable;
    });
  }
  bridge.start(0ms, [&] { bridge_as = uv::current_owner().id; });
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(owned_as == 42u);
  BOOST_TEST(!cancellable);  // what it starts is not dropped with the connection's reads
  BOOST_TEST(bridge_as == 0u);
  BOOST_TEST(uv::current_owner().id == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(uvx_tasks)

BOOST_AUTO_TEST_CASE(tasks_run_later_in_order_never_inside_post) {
  Loop l;
  uv::Tasks tasks(&l.loop);
  std::vector<int> ran;
  tasks.post([&] {
    ran.push_back(1);
    tasks.post([&] { ran.push_back(3); });  // next iteration
  });
  tasks.post([&] { ran.push_back(2); });
  BOOST_TEST(ran.empty());
  BOOST_TEST(tasks.pending() == 2u);
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(ran == (std::vector<int>{1, 2, 3}));
  BOOST_TEST(tasks.pending() == 0u);
}

BOOST_AUTO_TEST_CASE(tasks_queued_at_destruction_are_dropped) {
  Loop l;
  bool ran = false;
  {
    uv::Tasks tasks(&l.loop);
    tasks.post([&] { ran = true; });
  }
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(!ran);
}

BOOST_AUTO_TEST_CASE(a_task_runs_as_the_owner_that_posted_it) {
  Loop l;
  uv::Tasks tasks(&l.loop);
  uint64_t as = 99;
  {
    uv::OwnerScope conn(7);
    tasks.post([&] { as = uv::current_owner().id; });
  }
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(as == 7u);
}

BOOST_AUTO_TEST_SUITE_END()
