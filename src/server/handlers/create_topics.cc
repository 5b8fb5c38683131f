// CreateTopics (key 19): Kafka topics become Iggy topics in the bridge's stream. CREATE on the
// cluster or on each topic (TOPIC_AUTHORIZATION_FAILED "Authorization failed.", not created); a
// created topic's configs, partitions and replication factor only with DESCRIBE_CONFIGS on it
// (topic_config_error_code TOPIC_AUTHORIZATION_FAILED otherwise), as ControllerApis.createTopics.
#include <memory>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "common/text.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/fan_in_answer.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/create_topics.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::TopicCatalog& catalog, Request&& req) {
  auto body = req.decode<msg::CreateTopicsRequest>();
  auto call = std::make_shared<FanInAnswer<msg::CreateTopicsResponse>>(req.respond);
  call->resp.topics.resize(body.topics.size());
  const bool cluster_create = req.authorized_cluster(Op::kCreate, bridge::Audit::kFilter);
  for (size_t i = 0; i < body.topics.size(); ++i) {
    const auto& ct = body.topics[i];
    auto& out = call->resp.topics[i];
    out.name = ct.name;
    out.error_message = std::nullopt;
    out.configs = std::nullopt;
    if (!cluster_create && !req.authorized(Op::kCreate, Res::kTopic, ct.name)) {
      out.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
      out.error_message = "Authorization failed.";
      continue;
    }
    const bool may_describe_configs =
        req.authorized(Op::kDescribeConfigs, Res::kTopic, ct.name, bridge::Audit::kFilter);
    bridge::CreateTopicRequest cr;
    cr.name = ct.name;
    cr.partitions = ct.num_partitions;
    cr.replication_factor = ct.replication_factor;
    cr.validate_only = body.validate_only;
    for (const auto& c : ct.configs) cr.configs.emplace_back(c.name, c.value);
    if (!ct.assignments.empty()) {
      if (ct.num_partitions != -1 || ct.replication_factor != -1) {
        out.error_code = to_int16(ErrorCode::kInvalidRequest);
        out.error_message = "Both numPartitions or replicationFactor and replicasAssignments were set.";
        continue;
      }
      cr.partitions = static_cast<int32_t>(ct.assignments.size());
      cr.replication_factor = static_cast<int16_t>(ct.assignments.front().broker_ids.size());
    }
    call->add();
    catalog.create(cr, [call, i, &catalog, may_describe_configs](Result<bridge::TopicMetadata> r) {
      auto& o = call->resp.topics[i];
      if (r && !may_describe_configs) {
        o.error_code = to_int16(ErrorCode::kNone);
        o.topic_id = r->topic_id;
        o.topic_config_error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
      } else if (r) {
        o.error_code = to_int16(ErrorCode::kNone);
        o.topic_id = r->topic_id;
        o.num_partitions = r->partitions;
        o.replication_factor = 1;
        // v5+: every config of the new topic, as DescribeConfigs reports it.
        o.configs = std::vector<msg::CreateTopicsResponse::CreatableTopicConfigs>{};
        for (const auto& e : catalog.config_entries(*r)) {
          msg::CreateTopicsResponse::CreatableTopicConfigs c;
          c.name = e.name;
          c.value = e.value;
          c.read_only = e.read_only;
          c.config_source = static_cast<int8_t>(e.source);
          c.is_sensitive = e.sensitive;
          o.configs->push_back(std::move(c));
        }
      } else {
        o.error_code = to_int16(bridge::to_kafka_error(r.error()));
        // Catalog messages quote client input (names, config keys and values).
        o.error_message = truncate_message(r.error().message);
      }
      call->done();
    });
  }
  call->done();
}

}  // namespace

HandlerSpec create_topics_handler() {
  return serve<msg::CreateTopicsRequest>(2, 7, [](const Services& s, Request&& req) {
    handle(s.catalog, std::move(req));
  });
}

}  // namespace kib::kafka
