// The handler registry: one entry per Kafka API the bridge serves, with the versions it really
// serves. ApiVersions is built from this list and nothing else. Adding an API = one handler
// file in this folder + one line in registry.cc + tests.
#pragma once

#include <cstdint>
#include <span>

#include "kafka/request.h"

namespace kib::kafka {

using HandlerFn = void (*)(Services&, Request&&);

struct HandlerSpec {
  int16_t api_key;
  int16_t min_version;     // lowest version served
  int16_t max_version;     // highest version served
  int16_t advertised_min;  // lowest version advertised (Produce: 0, KAFKA-18659)
  HandlerFn handle;
};

std::span<const HandlerSpec> handler_registry();
const HandlerSpec* find_handler(int16_t api_key);

// Handlers, one per file in src/kafka/handlers/.
void handle_api_versions(Services&, Request&&);
void handle_produce(Services&, Request&&);
void handle_fetch(Services&, Request&&);
void handle_list_offsets(Services&, Request&&);
void handle_metadata(Services&, Request&&);
void handle_find_coordinator(Services&, Request&&);
void handle_create_topics(Services&, Request&&);
void handle_init_producer_id(Services&, Request&&);
void handle_offset_commit(Services&, Request&&);
void handle_offset_fetch(Services&, Request&&);
void handle_join_group(Services&, Request&&);
void handle_heartbeat(Services&, Request&&);
void handle_leave_group(Services&, Request&&);
void handle_sync_group(Services&, Request&&);
void handle_describe_groups(Services&, Request&&);
void handle_list_groups(Services&, Request&&);
void handle_delete_groups(Services&, Request&&);
void handle_offset_delete(Services&, Request&&);

}  // namespace kib::kafka
