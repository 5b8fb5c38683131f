#include "common/guard.h"

#include <spdlog/spdlog.h>

#include "common/text.h"

namespace kib::guard {
namespace {

std::array<std::atomic<uint64_t>, kBoundaryCount> g_caught{};

}  // namespace

const char* boundary_name(Boundary b) {
  switch (b) {
    case Boundary::kKafkaConnection: return "kafka_connection";
    case Boundary::kKafkaResponse: return "kafka_response";
    case Boundary::kHttp: return "http";
    case Boundary::kTimer: return "timer";
    case Boundary::kSignal: return "signal";
    case Boundary::kLoopTask: return "loop_task";
    case Boundary::kIggyCompletion: return "iggy_completion";
    case Boundary::kIggyConnection: return "iggy_connection";
    case Boundary::kStateWriter: return "state_writer";
    case Boundary::kStateCompletion: return "state_completion";
    case Boundary::kCount: break;
  }
  return "unknown";
}

uint64_t caught(Boundary b) {
  auto i = static_cast<size_t>(b);
  return i < kBoundaryCount ? g_caught[i].load(std::memory_order_relaxed) : 0;
}

void detail::report(Boundary b, std::string_view context, std::string_view what) noexcept {
  auto i = static_cast<size_t>(b);
  if (i < kBoundaryCount) g_caught[i].fetch_add(1, std::memory_order_relaxed);
  try {
    spdlog::error("callback exception boundary={} context=\"{}\": {}", boundary_name(b), esc(context), esc(what, 1024));
  } catch (...) {
    // Logging failed (out of memory): the count above is all that is left.
  }
}

}  // namespace kib::guard
