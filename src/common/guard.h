// The one guard at every boundary where the bridge's code is called back by something that
// cannot handle an exception: libuv (sockets, timers, signals, idle tasks), the Iggy client's
// completion dispatch, the state store's writer thread and its completions. An exception
// escaping there would call std::terminate and take every client down with one bad request.
//
//   guard::run(guard::Boundary::kTimer, "catalog refresh", [&] { ... },
//              [&](std::string_view what) { fail the one request / close the one connection });
//
// An exception is caught (std::exception and anything else), logged at error level with the
// boundary, the context and what() (escaped: it may quote client input), counted in
// kib_callback_exceptions_total{boundary=...}, and handed to `on_fail`, which fails the one
// request or closes the one connection the callback served. run() itself never throws: an
// exception from `on_fail` is logged and counted too.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <string_view>
#include <utility>

namespace kib::guard {

enum class Boundary : uint8_t {
  kKafkaConnection,  // Kafka listener: accept, read, write callbacks of a client connection
  kKafkaResponse,    // encoding a Kafka response (Responder::send)
  kHttp,             // ops HTTP server callbacks
  kTimer,            // timers (catalog refresh, group timers, producer sweep, Iggy timeouts)
  kSignal,           // SIGTERM/SIGINT/SIGHUP handlers
  kLoopTask,         // tasks posted to a later loop iteration (uv::Tasks)
  kIggyCompletion,   // a callback that receives an Iggy reply or error
  kIggyConnection,   // the Iggy client's socket callbacks
  kStateWriter,      // a job on the state store's writer thread
  kStateCompletion,  // a state store completion delivered back to the loop
  kCount
};
inline constexpr size_t kBoundaryCount = static_cast<size_t>(Boundary::kCount);

// "kafka_connection", "timer", ... (the metric's label values).
const char* boundary_name(Boundary b);

// Exceptions caught at `b` since start.
uint64_t caught(Boundary b);

namespace detail {
// Logs and counts; never throws.
void report(Boundary b, std::string_view context, std::string_view what) noexcept;
}  // namespace detail

namespace detail {
// Calls on_fail(what); an exception from on_fail itself is logged and counted, never rethrown.
template <typename OnFail>
void fail_safely(Boundary b, OnFail& on_fail, std::string_view what) noexcept {
  try {
    on_fail(what);
  } catch (const std::exception& e) {
    report(b, "handling the previous failure", e.what());
  } catch (...) {
    report(b, "handling the previous failure", "unknown exception");
  }
}
}  // namespace detail

template <typename Fn, typename OnFail>
bool run(Boundary b, std::string_view context, Fn&& fn, OnFail&& on_fail) noexcept {
  try {
    std::forward<Fn>(fn)();
    return true;
  } catch (const std::exception& e) {
    detail::report(b, context, e.what());
    detail::fail_safely(b, on_fail, e.what());
  } catch (...) {
    detail::report(b, context, "unknown exception");
    detail::fail_safely(b, on_fail, "unknown exception");
  }
  return false;
}

// When there is nothing to fail beyond the callback itself.
template <typename Fn>
bool run(Boundary b, std::string_view context, Fn&& fn) noexcept {
  return run(b, context, std::forward<Fn>(fn), [](std::string_view) {});
}

}  // namespace kib::guard
