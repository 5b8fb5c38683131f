#include "kafka/handlers/registry.h"

#include <array>

namespace kib::kafka {
namespace {

// api key, min served, max served, min advertised, handler
constexpr std::array kHandlers{
    HandlerSpec{18, 0, 4, 0, &handle_api_versions},
};

}  // namespace

std::span<const HandlerSpec> handler_registry() { return kHandlers; }

const HandlerSpec* find_handler(int16_t api_key) {
  for (const auto& h : kHandlers)
    if (h.api_key == api_key) return &h;
  return nullptr;
}

}  // namespace kib::kafka
