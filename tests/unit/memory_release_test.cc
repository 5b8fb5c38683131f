// The idle memory release (app/memory_release.h) against glibc's real heap: it trims only when
// the bridge was quiet since the last check and enough is free, and then RSS goes down.
#include <boost/test/unit_test.hpp>

#include <uv.h>

#include <cstring>
#include <memory>
#include <vector>

#include "app/memory_release.h"
#include "metrics/bridge_metrics.h"

using namespace kib;

namespace {

// Under ASan its allocator replaces glibc's heap: nothing there for mallinfo2 to count or for
// malloc_trim to release, so the tests that need glibc's heap run in the release build only.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGlibcHeap = false;
#else
constexpr bool kGlibcHeap = true;
#endif

boost::test_tools::assertion_result glibc_heap(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(kGlibcHeap);
  r.message() << "ASan's allocator replaces glibc's heap";
  return r;
}

struct Loop {
  uv_loop_t loop{};
  Loop() { uv_loop_init(&loop); }
  ~Loop() {
    uv_run(&loop, UV_RUN_NOWAIT);  // closes the released timer handle
    uv_loop_close(&loop);
  }
};

// 48 MiB in 64 KiB blocks (below glibc's mmap threshold: on the heap), touched so they are
// resident, then every other one freed: the holes are free heap memory that only malloc_trim
// gives back (the heap's top stays in use).
struct Holes {
  std::vector<std::unique_ptr<char[]>> kept;
  Holes() {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < 768; ++i) {
      blocks.emplace_back(new char[64 * 1024]);
      std::memset(blocks.back().get(), 1, 64 * 1024);
    }
    for (size_t i = 0; i < blocks.size(); ++i)
      if (i % 2) kept.push_back(std::move(blocks[i]));
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(memory_release)

BOOST_AUTO_TEST_CASE(an_idle_bridge_with_free_heap_memory_gives_it_back, *boost::unit_test::precondition(glibc_heap)) {
  Loop l;
  double activity = 0;
  MemoryReleaser m(&l.loop, 0, 8u << 20, [&] { return activity; });
  Holes holes;
  BOOST_REQUIRE(heap_free_bytes() >= 16u << 20);
  BOOST_TEST(!m.check());  // the first check only takes the baseline
  const uint64_t before = metrics::process_memory().value().resident_bytes;
  BOOST_TEST(m.check());
  BOOST_TEST(m.stats().trims == 1u);
  BOOST_TEST(m.stats().released_bytes >= 8u << 20);
  BOOST_TEST(metrics::process_memory().value().resident_bytes + (8u << 20) <= before);
}

BOOST_AUTO_TEST_CASE(a_busy_bridge_is_not_trimmed_however_much_is_free, *boost::unit_test::precondition(glibc_heap)) {
  Loop l;
  double activity = 0;
  MemoryReleaser m(&l.loop, 0, 8u << 20, [&] { return activity; });
  Holes holes;
  m.check();
  activity += kQuietBytesPerCheck;  // a load: requests keep arriving
  BOOST_TEST(!m.check());
  activity += kQuietBytesPerCheck - 1;  // consumers long-polling an idle topic: quiet
  BOOST_TEST(m.check());
  BOOST_TEST(m.stats().trims == 1u);
}

BOOST_AUTO_TEST_CASE(too_little_free_memory_is_left_alone, *boost::unit_test::precondition(glibc_heap)) {
  Loop l;
  MemoryReleaser m(&l.loop, 0, uint64_t{1} << 40, [] { return 0.0; });
  Holes holes;
  m.check();
  BOOST_TEST(!m.check());
  BOOST_TEST(m.stats().trims == 0u);
}

BOOST_AUTO_TEST_CASE(the_timer_checks_every_interval_and_zero_stops_it) {
  Loop l;
  int checks = 0;
  MemoryReleaser m(&l.loop, 10, uint64_t{1} << 40, [&] {
    ++checks;
    return 0.0;
  });
  uv_timer_t stop{};
  uv_timer_init(&l.loop, &stop);
  uv_timer_start(&stop, [](uv_timer_t* t) { uv_stop(t->loop); }, 100, 0);
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(checks >= 3);
  m.configure(0, 0);
  const int at_stop = checks;
  uv_timer_start(&stop, [](uv_timer_t* t) { uv_stop(t->loop); }, 50, 0);
  uv_run(&l.loop, UV_RUN_DEFAULT);
  BOOST_TEST(checks == at_stop);
  uv_close(reinterpret_cast<uv_handle_t*>(&stop), nullptr);
}

BOOST_AUTO_TEST_SUITE_END()
