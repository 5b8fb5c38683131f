// The handler registry: one entry per Kafka API the bridge serves, with the versions it really
// serves. Each handler file registers its own API, next to the code that serves it:
//
//   HandlerSpec heartbeat_handler() {
//     return serve<msg::HeartbeatRequest>(0, 4, [](const Services& s, Request&& req) {
//       handle(s.groups, std::move(req));
//     });
//   }
//
// The key is the generated message's kApiKey and the range is checked against the spec's at
// compile time. handler_registry() calls every handler file's registration function, so each
// is linked from libbridge.a and nothing depends on static initialisation order (a
// self-registering static in an archive member nobody references would be dropped silently).
// ApiVersions, the dispatcher's version checks and the README compatibility table come from
// this list and nothing else. Adding an API = one handler file in this folder + its
// registration function declared here and called in registry.cc + tests.
#pragma once

#include <cstdint>
#include <span>

#include "server/context/request.h"

namespace kib::kafka {

// A handler's registration hands it the services it uses, by reference.
using HandlerFn = void (*)(const Services&, Request&&);

struct HandlerSpec {
  int16_t api_key;
  int16_t min_version;     // lowest version served
  int16_t max_version;     // highest version served
  int16_t advertised_min;  // lowest version advertised
  HandlerFn handle;
};

// `RequestMsg`: the generated request message (msg::FooRequest). A range outside the spec's
// versions, or an empty one, does not compile. Advertised from the lowest served version, except
// that an API served from the spec's lowest version is advertised from where Kafka's ApiVersions
// response starts it (kApiVersionsMinVersion): Produce from v0 although v0-2 are refused
// (KAFKA-18659; the dispatcher closes the connection on them, as Kafka 4 does).
template <typename RequestMsg>
consteval HandlerSpec serve(int16_t min_version, int16_t max_version, HandlerFn handle) {
  if (min_version < RequestMsg::kMinVersion || max_version > RequestMsg::kMaxVersion || min_version > max_version)
    throw "served versions outside the spec's range";
  const int16_t advertised_min =
      min_version == RequestMsg::kMinVersion ? RequestMsg::kApiVersionsMinVersion : min_version;
  return HandlerSpec{RequestMsg::kApiKey, min_version, max_version, advertised_min, handle};
}

// Every served API, ordered by key.
std::span<const HandlerSpec> handler_registry();
const HandlerSpec* find_handler(int16_t api_key);

// The registrations, one per file in src/server/handlers/.
HandlerSpec api_versions_handler();
HandlerSpec produce_handler();
HandlerSpec fetch_handler();
HandlerSpec list_offsets_handler();
HandlerSpec metadata_handler();
HandlerSpec find_coordinator_handler();
HandlerSpec create_topics_handler();
HandlerSpec init_producer_id_handler();
HandlerSpec offset_commit_handler();
HandlerSpec offset_fetch_handler();
HandlerSpec join_group_handler();
HandlerSpec heartbeat_handler();
HandlerSpec leave_group_handler();
HandlerSpec sync_group_handler();
HandlerSpec describe_groups_handler();
HandlerSpec list_groups_handler();
HandlerSpec delete_groups_handler();
HandlerSpec offset_delete_handler();
HandlerSpec delete_records_handler();
HandlerSpec offset_for_leader_epoch_handler();
HandlerSpec describe_log_dirs_handler();
HandlerSpec describe_configs_handler();
HandlerSpec alter_configs_handler();
HandlerSpec incremental_alter_configs_handler();
HandlerSpec describe_cluster_handler();
HandlerSpec add_partitions_to_txn_handler();
HandlerSpec add_offsets_to_txn_handler();
HandlerSpec end_txn_handler();
HandlerSpec txn_offset_commit_handler();
HandlerSpec describe_transactions_handler();
HandlerSpec list_transactions_handler();
HandlerSpec list_config_resources_handler();
HandlerSpec describe_producers_handler();
HandlerSpec delete_topics_handler();
HandlerSpec create_partitions_handler();
HandlerSpec describe_topic_partitions_handler();
HandlerSpec sasl_handshake_handler();
HandlerSpec sasl_authenticate_handler();
HandlerSpec describe_user_scram_credentials_handler();
HandlerSpec alter_user_scram_credentials_handler();
HandlerSpec describe_client_quotas_handler();
// The ACL APIs (docs/security.md "Authorization").
HandlerSpec describe_acls_handler();
HandlerSpec create_acls_handler();
HandlerSpec delete_acls_handler();
HandlerSpec consumer_group_heartbeat_handler();
HandlerSpec consumer_group_describe_handler();
HandlerSpec streams_group_heartbeat_handler();
HandlerSpec streams_group_describe_handler();
HandlerSpec streams_group_topology_description_update_handler();

}  // namespace kib::kafka
