#include "kafka/handlers/registry.h"

#include <array>

namespace kib::kafka {
namespace {

// api key, min served, max served, min advertised, handler
constexpr std::array kHandlers{
    HandlerSpec{3, 0, 12, 0, &handle_metadata},
    HandlerSpec{10, 0, 6, 0, &handle_find_coordinator},
    HandlerSpec{18, 0, 4, 0, &handle_api_versions},
    HandlerSpec{19, 2, 7, 2, &handle_create_topics},
    HandlerSpec{22, 0, 4, 0, &handle_init_producer_id},
};

}  // namespace

std::span<const HandlerSpec> handler_registry() { return kHandlers; }

const HandlerSpec* find_handler(int16_t api_key) {
  for (const auto& h : kHandlers)
    if (h.api_key == api_key) return &h;
  return nullptr;
}

}  // namespace kib::kafka
