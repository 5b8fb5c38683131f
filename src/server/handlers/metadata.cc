// Metadata (key 3): the bridge is the only broker and the controller; topics come from the
// topic catalog, auto-created when the config and the request allow it.
//
// Authorization (KafkaApis.handleTopicMetadataRequest): a topic the principal may not DESCRIBE
// is left out of an all-topics answer and answered TOPIC_AUTHORIZATION_FAILED (without its id)
// when named; auto-creating a topic needs CREATE on the cluster or on the topic, else
// TOPIC_AUTHORIZATION_FAILED. The authorized-operations fields (v8+) are filled when asked.
#include <memory>
#include <set>
#include <string_view>
#include <vector>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "bridge/log/fetch_records.h"
#include "bridge/security/authorizer.h"
#include "common/fan_in.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/metadata.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

// A topic asked for by id (v10+). The Java client's MetadataRequest.Builder(topicIds) leaves the
// name at the generated default, "" (not null), so a non-zero id decides, as in KafkaApis
// (`useTopicId = topicIds.nonEmpty` over the non-zero ids).
bool by_id(const msg::MetadataRequest::MetadataRequestTopic& rt) {
  return !rt.name.has_value() || (rt.name->empty() && rt.topic_id != msg::Uuid{});
}

// One Metadata request's answer, sent when the last topic is in. Held by shared_ptr and never
// moved: its FanIn points back at it.
struct MetadataCall {
  explicit MetadataCall(bridge::Authorizer& a) : authorizer(a) {}
  bridge::Authorizer& authorizer;
  Request req;
  msg::MetadataResponse resp;
  int32_t node = 0;
  bool topic_operations = false;  // include_topic_authorized_operations (v8+)
  // Who asks, kept for the answers that come after the request's connection may have gone.
  security::KafkaPrincipal principal;
  std::string host;
  int16_t api_key = 0;
  FanIn<> parts{[this] { req.respond.send(resp); }};

  bridge::AuthContext auth() const { return {principal, host, api_key}; }
  // Every answered topic the principal may see gets its operations when asked.
  void operations(msg::MetadataResponse::MetadataResponseTopic& out) const {
    if (topic_operations && out.name)
      out.topic_authorized_operations = authorizer.authorized_operations(auth(), Res::kTopic, *out.name);
  }
};

void fill_topic(int32_t node, msg::MetadataResponse::MetadataResponseTopic& out, const bridge::TopicMetadata& t) {
  out.error_code = to_int16(ErrorCode::kNone);
  out.name = t.name;
  out.topic_id = t.topic_id;
  out.is_internal = t.internal;
  out.partitions.clear();
  for (int32_t p = 0; p < t.partitions; ++p) {
    msg::MetadataResponse::MetadataResponsePartition mp;
    mp.partition_index = p;
    mp.leader_id = node;
    mp.leader_epoch = bridge::kPartitionLeaderEpoch;
    mp.replica_nodes = {node};
    mp.isr_nodes = {node};
    out.partitions.push_back(std::move(mp));
  }
}

// A topic the principal may not see or create (MetadataResponseTopic with no partitions).
void deny(msg::MetadataResponse::MetadataResponseTopic& out, std::optional<std::string> name, msg::Uuid id,
          bool internal) {
  out.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
  out.name = std::move(name);
  out.topic_id = id;
  out.is_internal = internal;
  out.partitions.clear();
}

// The answer's broker, cluster and controller; the cluster's authorized operations when asked.
void describe_cluster(MetadataCall& call, const config::Config& config, const std::string& cluster_id,
                      const Request& req, const msg::MetadataRequest& body) {
  const int16_t v = req.header.api_version;
  // Kafka fills the cluster's only for v8-10 (v11 dropped the field for DescribeCluster).
  if (v >= 8 && v <= 10 && body.include_cluster_authorized_operations)
    call.resp.cluster_authorized_operations =
        req.authorized_cluster(Op::kDescribe)
            ? call.authorizer.authorized_operations(call.auth(), Res::kCluster, security::kClusterName)
            : 0;
  auto advertised = config.advertised(req.session->listener);
  msg::MetadataResponse::MetadataResponseBroker broker;
  broker.node_id = call.node;
  broker.host = advertised.host;
  broker.port = advertised.port;
  broker.rack = std::nullopt;
  call.resp.brokers.push_back(broker);
  call.resp.cluster_id = cluster_id;
  call.resp.controller_id = call.node;
}

// Every topic the principal may DESCRIBE; the others are not listed (not even as errors).
void list_all(const std::shared_ptr<MetadataCall>& call, bridge::TopicCatalog& catalog) {
  catalog.list_all([call, offsets_topic = catalog.offsets_topic()](std::vector<const bridge::TopicMetadata*> topics) {
    if (const bridge::TopicMetadata* o = offsets_topic) topics.push_back(o);
    for (const auto* t : topics) {
      if (!call->authorizer.authorize(call->auth(), Op::kDescribe, Res::kTopic, t->name, bridge::Audit::kFilter))
        continue;
      msg::MetadataResponse::MetadataResponseTopic mt;
      fill_topic(call->node, mt, *t);
      call->operations(mt);
      call->resp.topics.push_back(std::move(mt));
    }
    call->parts.done();
  });
}

// A topic named more than once is answered once, as Kafka does (KafkaApis takes the requested
// names as a set): 350,000 repeats of a 1,000-partition topic in one 1 MiB request would
// otherwise build 3.5e8 partition entries. Kept in first-request order.
std::vector<const msg::MetadataRequest::MetadataRequestTopic*> distinct_topics(const msg::MetadataRequest& body) {
  std::vector<const msg::MetadataRequest::MetadataRequestTopic*> topics;
  std::set<std::string_view> names;
  std::set<msg::Uuid> ids;
  for (const auto& rt : *body.topics) {
    const bool first = by_id(rt) ? ids.insert(rt.topic_id).second : names.insert(std::string_view(*rt.name)).second;
    if (first) topics.push_back(&rt);
  }
  return topics;
}

// v10+: lookup by topic id. Topic ids are not secret: a denied one is answered with its id and
// without its name.
void answer_by_id(MetadataCall& call, bridge::TopicCatalog& catalog, const msg::Uuid& id,
                  msg::MetadataResponse::MetadataResponseTopic& out) {
  const bridge::TopicMetadata* t = catalog.find(id);
  if (const bridge::TopicMetadata* o = catalog.offsets_topic(); !t && o && o->topic_id == id) t = o;
  if (!t) {
    out.error_code = to_int16(ErrorCode::kUnknownTopicId);
  } else if (!call.authorizer.authorize(call.auth(), Op::kDescribe, Res::kTopic, t->name)) {
    deny(out, std::nullopt, id, false);
  } else {
    fill_topic(call.node, out, *t);
    call.operations(out);
  }
}

// Topic i, asked for by name: refused, __consumer_offsets, or the catalog's (created when
// `auto_create` and the principal may create it).
void answer_by_name(const std::shared_ptr<MetadataCall>& call, bridge::TopicCatalog& catalog, bool auto_create,
                    size_t i) {
  auto& out = call->resp.topics[i];
  const std::string& name = *out.name;
  bridge::Authorizer& authorizer = call->authorizer;
  // Whether the topic exists or not is not disclosed to a principal that may not DESCRIBE it.
  if (!authorizer.authorize(call->auth(), Op::kDescribe, Res::kTopic, name))
    return deny(out, name, msg::Uuid{}, false);
  if (name == bridge::TopicCatalog::kOffsetsTopic) {
    // Never an Iggy topic: listed once used, else unknown (and never auto-created).
    if (const bridge::TopicMetadata* o = catalog.offsets_topic()) fill_topic(call->node, out, *o);
    else out.error_code = to_int16(ErrorCode::kUnknownTopicOrPartition);
    return call->operations(out);
  }
  // Auto-creation needs CREATE on the cluster or on the topic; without it a topic the bridge
  // does not know is answered TOPIC_AUTHORIZATION_FAILED instead of being created.
  const bool may_create = !auto_create || !authorizer.enabled() || catalog.find(name) ||
                          authorizer.authorize_cluster(call->auth(), Op::kCreate, bridge::Audit::kFilter) ||
                          authorizer.authorize(call->auth(), Op::kCreate, Res::kTopic, name);
  call->parts.add();
  catalog.ensure(name, auto_create && may_create, [call, i, auto_create, may_create](Result<const bridge::TopicMetadata*> r) {
    auto& o = call->resp.topics[i];
    if (r) {
      fill_topic(call->node, o, **r);
      call->operations(o);
    } else if (auto_create && !may_create && bridge::to_kafka_error(r.error()) == ErrorCode::kUnknownTopicOrPartition) {
      deny(o, o.name, msg::Uuid{}, false);
    } else {
      o.error_code = to_int16(bridge::to_kafka_metadata_error(r.error()));
      call->operations(o);
    }
    call->parts.done();
  });
}

void handle(const config::Config& config, bridge::TopicCatalog& catalog, bridge::Authorizer& authorizer,
            const std::string& cluster_id, Request&& req) {
  auto body = req.decode<msg::MetadataRequest>();
  const int16_t v = req.header.api_version;
  auto call = std::make_shared<MetadataCall>(authorizer);
  call->principal = req.session->principal;
  call->host = req.session->client_host;
  call->api_key = req.header.api_key;
  call->node = config.kafka.node_id;
  call->topic_operations = v >= 8 && body.include_topic_authorized_operations;
  describe_cluster(*call, config, cluster_id, req, body);
  call->req = std::move(req);
  if (!body.topics.has_value() || (v == 0 && body.topics->empty())) return list_all(call, catalog);

  const auto topics = distinct_topics(body);
  const bool auto_create = config.kafka.auto_create_topics && (v < 4 || body.allow_auto_topic_creation);
  call->resp.topics.resize(topics.size());
  for (size_t i = 0; i < topics.size(); ++i) {
    const auto& rt = *topics[i];
    auto& out = call->resp.topics[i];
    out.topic_id = rt.topic_id;
    out.name = rt.name;
    if (by_id(rt)) answer_by_id(*call, catalog, rt.topic_id, out);
    else answer_by_name(call, catalog, auto_create, i);
  }
  call->parts.done();
}

}  // namespace

HandlerSpec metadata_handler() {
  return serve<msg::MetadataRequest>(0, 12, [](const Services& s, Request&& req) {
    handle(s.config, s.catalog, s.authorizer, s.cluster_id, std::move(req));
  });
}

}  // namespace kib::kafka
