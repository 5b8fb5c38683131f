#include "kafka/handlers/registry.h"

#include <array>

namespace kib::kafka {
namespace {

// api key, min served, max served, min advertised, handler
constexpr std::array kHandlers{
    HandlerSpec{0, 0, 11, 0, &handle_produce},  // advertised from v0: librdkafka < 2.11 (KAFKA-18659)
    HandlerSpec{1, 4, 12, 4, &handle_fetch},
    HandlerSpec{2, 1, 8, 1, &handle_list_offsets},
    HandlerSpec{3, 0, 12, 0, &handle_metadata},
    HandlerSpec{8, 2, 9, 2, &handle_offset_commit},  // Kafka 4 serves OffsetCommit from v2 (KIP-896)
    HandlerSpec{9, 1, 9, 1, &handle_offset_fetch},
    HandlerSpec{10, 0, 6, 0, &handle_find_coordinator},
    HandlerSpec{11, 0, 9, 0, &handle_join_group},
    HandlerSpec{12, 0, 4, 0, &handle_heartbeat},
    HandlerSpec{13, 0, 5, 0, &handle_leave_group},
    HandlerSpec{14, 0, 5, 0, &handle_sync_group},
    HandlerSpec{15, 0, 6, 0, &handle_describe_groups},
    HandlerSpec{16, 0, 5, 0, &handle_list_groups},
    HandlerSpec{18, 0, 4, 0, &handle_api_versions},
    HandlerSpec{19, 2, 7, 2, &handle_create_topics},
    HandlerSpec{22, 0, 4, 0, &handle_init_producer_id},
    HandlerSpec{42, 0, 2, 0, &handle_delete_groups},
    HandlerSpec{47, 0, 0, 0, &handle_offset_delete},
};

}  // namespace

std::span<const HandlerSpec> handler_registry() { return kHandlers; }

const HandlerSpec* find_handler(int16_t api_key) {
  for (const auto& h : kHandlers)
    if (h.api_key == api_key) return &h;
  return nullptr;
}

}  // namespace kib::kafka
