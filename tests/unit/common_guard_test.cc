// The boundary guard: an exception from a callback is caught, counted and handed to the
// failure handler; nothing escapes, whatever is thrown.
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>

#include "common/guard.h"
#include "metrics/bridge_metrics.h"
#include "metrics/metrics.h"

using namespace kib;

BOOST_AUTO_TEST_SUITE(common_guard)

BOOST_AUTO_TEST_CASE(a_callback_that_returns_runs_once_and_is_not_counted) {
  const uint64_t before = guard::caught(guard::Boundary::kTimer);
  int runs = 0;
  bool failed = false;
  BOOST_TEST(guard::run(guard::Boundary::kTimer, "test", [&] { ++runs; }, [&](std::string_view) { failed = true; }));
  BOOST_TEST(runs == 1);
  BOOST_TEST(!failed);
  BOOST_TEST(guard::caught(guard::Boundary::kTimer) == before);
}

BOOST_AUTO_TEST_CASE(std_exceptions_are_caught_counted_and_reported_to_on_fail) {
  const uint64_t before = guard::caught(guard::Boundary::kIggyCompletion);
  std::string what;
  bool ok = guard::run(
      guard::Boundary::kIggyCompletion, "test",
      [] { throw std::length_error("ErrorMessage: string of 32787 bytes exceeds 32767"); },
      [&](std::string_view w) { what = std::string(w); });
  BOOST_TEST(!ok);
  BOOST_TEST(what == "ErrorMessage: string of 32787 bytes exceeds 32767");
  BOOST_TEST(guard::caught(guard::Boundary::kIggyCompletion) == before + 1);
}

BOOST_AUTO_TEST_CASE(anything_thrown_is_caught_and_so_is_a_throwing_failure_handler) {
  const uint64_t before = guard::caught(guard::Boundary::kStateCompletion);
  std::string what;
  BOOST_TEST(!guard::run(guard::Boundary::kStateCompletion, "test", [] { throw 42; },
                         [&](std::string_view w) { what = std::string(w); }));
  BOOST_TEST(what == "unknown exception");
  // The handler throwing too is caught and counted as well.
  BOOST_TEST(!guard::run(guard::Boundary::kStateCompletion, "test", [] { throw std::runtime_error("a"); },
                         [](std::string_view) { throw std::runtime_error("b"); }));
  BOOST_TEST(guard::caught(guard::Boundary::kStateCompletion) == before + 3);
}

BOOST_AUTO_TEST_CASE(every_boundary_has_a_metric_label) {
  for (size_t i = 0; i < guard::kBoundaryCount; ++i)
    BOOST_TEST(std::string(guard::boundary_name(static_cast<guard::Boundary>(i))) != "unknown");
  metrics::bridge_metrics();
  guard::run(guard::Boundary::kSignal, "test", [] { throw std::runtime_error("x"); });
  const std::string text = metrics::global().render();
  BOOST_TEST(text.find("# TYPE kib_callback_exceptions_total counter") != std::string::npos);
  BOOST_TEST(text.find("kib_callback_exceptions_total{boundary=\"kafka_connection\"}") != std::string::npos);
  BOOST_TEST(text.find("kib_callback_exceptions_total{boundary=\"signal\"} " +
                       std::to_string(guard::caught(guard::Boundary::kSignal))) != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
