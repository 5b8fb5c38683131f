#include "server/handlers/registry.h"

#include <algorithm>
#include <vector>

namespace kib::kafka {
namespace {

std::vector<HandlerSpec> collect() {
  std::vector<HandlerSpec> specs{
      api_versions_handler(), produce_handler(), fetch_handler(), list_offsets_handler(), metadata_handler(),
      find_coordinator_handler(), create_topics_handler(), init_producer_id_handler(), offset_commit_handler(),
      offset_fetch_handler(), join_group_handler(), heartbeat_handler(), leave_group_handler(), sync_group_handler(),
      describe_groups_handler(), list_groups_handler(), delete_groups_handler(), offset_delete_handler(),
      delete_records_handler(),
      offset_for_leader_epoch_handler(),
      describe_log_dirs_handler(),
      describe_configs_handler(),
      alter_configs_handler(),
      incremental_alter_configs_handler(),
      list_config_resources_handler(),
      describe_cluster_handler(),
      add_partitions_to_txn_handler(),
      add_offsets_to_txn_handler(),
      end_txn_handler(),
      txn_offset_commit_handler(),
      describe_transactions_handler(),
      list_transactions_handler(),
      describe_producers_handler(),
      delete_topics_handler(),
      create_partitions_handler(),
      describe_topic_partitions_handler(),
      sasl_handshake_handler(),
      sasl_authenticate_handler(),
      describe_user_scram_credentials_handler(),
      alter_user_scram_credentials_handler(),
      describe_client_quotas_handler(),
      // The ACL APIs (docs/security.md "Authorization").
      describe_acls_handler(),
      create_acls_handler(),
      delete_acls_handler(),
      // KIP-848 consumer groups (docs/groups.md).
      consumer_group_heartbeat_handler(),
      consumer_group_describe_handler(),
      // KIP-1071 streams groups (docs/groups.md).
      streams_group_heartbeat_handler(),
      streams_group_describe_handler(),
      streams_group_topology_description_update_handler(),
  };
  std::sort(specs.begin(), specs.end(), [](const HandlerSpec& a, const HandlerSpec& b) { return a.api_key < b.api_key; });
  return specs;
}

}  // namespace

std::span<const HandlerSpec> handler_registry() {
  static const std::vector<HandlerSpec> specs = collect();  // built on first use, not at static init
  return specs;
}

const HandlerSpec* find_handler(int16_t api_key) {
  for (const auto& h : handler_registry())
    if (h.api_key == api_key) return &h;
  return nullptr;
}

}  // namespace kib::kafka
