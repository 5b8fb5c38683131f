// DescribeTopicPartitions (key 75): what Kafka 4's admin client (kafka-topics --describe) asks
// instead of Metadata, paginated. As Kafka's DescribeTopicPartitionsRequestHandler and
// KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse answer:
//   * an empty topic list means every topic (unknown topics cannot occur then);
//   * topics are sorted by name, from the cursor's topic (and, in it, the cursor's partition);
//   * response_partition_limit is clamped to [1, 2000]; a topic cut by the limit, or the first
//     topic left out once it is reached, is named in next_cursor;
//   * a cursor whose topic is not in a non-empty list, or with a negative partition, fails the
//     request: every requested topic gets INVALID_REQUEST;
//   * an unknown named topic: UNKNOWN_TOPIC_OR_PARTITION with topic id zero (it does not count
//     against the limit);
//   * a topic the principal may not DESCRIBE is left out of an all-topics answer; named, it is
//     answered TOPIC_AUTHORIZATION_FAILED after the page (outside the limit), without its id;
//   * every answered topic carries its authorized operations (always, unlike Metadata).
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "bridge/log/fetch_records.h"
#include "bridge/security/authorizer.h"
#include "common/fan_in.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/describe_topic_partitions.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

using Resp = msg::DescribeTopicPartitionsResponse;

constexpr int32_t kMaxPartitionLimit = 2000;  // Kafka: max.request.partition.size.limit default

struct Found {
  std::string name;
  std::optional<bridge::TopicMetadata> topic;  // a copy (the cache may change meanwhile); none = `error`
  ErrorCode error = ErrorCode::kUnknownTopicOrPartition;
  bool denied = false;  // named, but the principal may not DESCRIBE it
};

// Who asks, kept for answers that come after the request's connection may have gone.
struct Asker {
  security::KafkaPrincipal principal;
  std::string host;
  int16_t api_key = 0;
  bridge::AuthContext auth() const { return {principal, host, api_key}; }
};

Resp build(int32_t node, const std::vector<Found>& topics, const std::optional<msg::DescribeTopicPartitionsRequest::Cursor>& cursor,
           int32_t limit, bridge::Authorizer& authorizer, const Asker& asker) {
  Resp resp;
  int32_t remaining = limit;
  for (const auto& f : topics) {
    if (f.denied) continue;
    if (remaining <= 0) {
      if (!resp.next_cursor) resp.next_cursor = Resp::Cursor{f.name, 0};
      break;
    }
    Resp::DescribeTopicPartitionsResponseTopic out;
    out.name = f.name;
    // Unknown topics too, as Kafka (all of a topic's operations when authorization is off).
    out.topic_authorized_operations = authorizer.authorized_operations(asker.auth(), Res::kTopic, f.name);
    if (!f.topic) {
      out.error_code = to_int16(f.error);
      out.topic_id = msg::Uuid{};
      out.is_internal = false;
      resp.topics.push_back(std::move(out));
      continue;
    }
    const bridge::TopicMetadata& t = *f.topic;
    out.error_code = to_int16(ErrorCode::kNone);
    out.topic_id = t.topic_id;
    out.is_internal = t.internal;
    int32_t p = cursor && cursor->topic_name == f.name ? cursor->partition_index : 0;
    for (; p < t.partitions && static_cast<int32_t>(out.partitions.size()) < remaining; ++p) {
      Resp::DescribeTopicPartitionsResponsePartition mp;
      mp.error_code = to_int16(ErrorCode::kNone);
      mp.partition_index = p;
      mp.leader_id = node;
      mp.leader_epoch = bridge::kPartitionLeaderEpoch;
      mp.replica_nodes = {node};
      mp.isr_nodes = {node};
      mp.eligible_leader_replicas = std::vector<int32_t>{};
      mp.last_known_elr = std::vector<int32_t>{};
      out.partitions.push_back(std::move(mp));
    }
    remaining -= static_cast<int32_t>(out.partitions.size());
    if (p < t.partitions) resp.next_cursor = Resp::Cursor{f.name, p};
    resp.topics.push_back(std::move(out));
  }
  for (const auto& f : topics) {
    if (!f.denied) continue;
    Resp::DescribeTopicPartitionsResponseTopic out;
    out.name = f.name;
    out.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
    out.topic_id = msg::Uuid{};
    out.is_internal = false;
    resp.topics.push_back(std::move(out));
  }
  return resp;
}

// What one answer's page is cut by, and who it is for.
struct Page {
  int32_t node = 0;
  std::optional<msg::DescribeTopicPartitionsRequest::Cursor> cursor;
  int32_t limit = 0;
  bridge::Authorizer* authorizer = nullptr;
  Asker asker;
  Resp answer(const std::vector<Found>& topics) const { return build(node, topics, cursor, limit, *authorizer, asker); }
};

// A cursor whose topic is not in a non-empty list, or with a negative partition: every requested
// topic gets INVALID_REQUEST. True when the request was answered so.
bool refused_cursor(const msg::DescribeTopicPartitionsRequest& body, const std::set<std::string>& names,
                    const Responder& respond) {
  if (!body.cursor) return false;
  if ((body.topics.empty() || names.count(body.cursor->topic_name)) && body.cursor->partition_index >= 0) return false;
  Resp resp;
  for (const auto& t : body.topics) {
    Resp::DescribeTopicPartitionsResponseTopic out;
    out.name = t.name;
    out.error_code = to_int16(ErrorCode::kInvalidRequest);
    out.topic_id = msg::Uuid{};
    resp.topics.push_back(std::move(out));
  }
  respond.send(resp);
  return true;
}

// Every topic from the cursor's on that the principal may DESCRIBE (the others are left out).
void describe_all(bridge::TopicCatalog& catalog, Request&& req, Page page, std::string from) {
  auto shared = std::make_shared<Request>(std::move(req));
  std::optional<bridge::TopicMetadata> offsets_topic;
  if (const auto* o = catalog.offsets_topic()) offsets_topic = *o;
  catalog.list_all([shared, page = std::move(page), from = std::move(from),
                    offsets_topic](std::vector<const bridge::TopicMetadata*> topics) {
    std::vector<Found> found;
    auto may_describe = [&](const std::string& name) {
      return page.authorizer->authorize(page.asker.auth(), Op::kDescribe, Res::kTopic, name, bridge::Audit::kFilter);
    };
    for (const auto* t : topics)
      if (t->name >= from && may_describe(t->name)) found.push_back({t->name, *t, ErrorCode::kNone});
    if (offsets_topic && offsets_topic->name >= from && may_describe(offsets_topic->name))
      found.push_back({offsets_topic->name, *offsets_topic, ErrorCode::kNone});
    std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.name < b.name; });
    shared->respond.send(page.answer(found));
  });
}

// Named topics: the cache, or Iggy for a topic created natively that the cache has not seen.
// Held by shared_ptr and never moved: its FanIn points back at it.
struct NamedCall {
  explicit NamedCall(Page p) : page(std::move(p)) {}
  Page page;
  Responder respond;
  std::vector<Found> found;
  FanIn<> parts{[this] { respond.send(page.answer(found)); }};
};

void describe_named(bridge::TopicCatalog& catalog, const Request& req, Page page, const std::set<std::string>& names) {
  auto call = std::make_shared<NamedCall>(std::move(page));
  call->respond = req.respond;
  for (const auto& n : names) call->found.push_back({n, std::nullopt, ErrorCode::kUnknownTopicOrPartition});  // sorted
  for (size_t i = 0; i < call->found.size(); ++i) {
    Found& f = call->found[i];
    // Whether it exists is not disclosed to a principal that may not DESCRIBE it.
    if (!req.authorized(Op::kDescribe, Res::kTopic, f.name)) {
      f.denied = true;
      continue;
    }
    if (f.name == bridge::TopicCatalog::kOffsetsTopic) {
      if (const auto* o = catalog.offsets_topic()) f.topic = *o;
      continue;
    }
    call->parts.add();
    catalog.ensure(f.name, /*auto_create=*/false, [call, i](Result<const bridge::TopicMetadata*> r) {
      if (r) {
        call->found[i].topic = **r;
      } else {
        // Iggy unreachable is not "unknown": the retriable error says so.
        ErrorCode e = bridge::to_kafka_error(r.error());
        if (e != ErrorCode::kInvalidTopicException) call->found[i].error = e;
      }
      call->parts.done();
    });
  }
  call->parts.done();
}

void handle(const config::Config& config, bridge::TopicCatalog& catalog, bridge::Authorizer& authorizer,
            Request&& req) {
  auto body = req.decode<msg::DescribeTopicPartitionsRequest>();
  Page page{config.kafka.node_id, body.cursor, std::clamp(body.response_partition_limit, 1, kMaxPartitionLimit),
            &authorizer, Asker{req.session->principal, req.session->client_host, req.header.api_key}};
  std::string from = body.cursor ? body.cursor->topic_name : std::string();
  std::set<std::string> names;
  for (const auto& t : body.topics)
    if (t.name >= from) names.insert(t.name);
  if (refused_cursor(body, names, req.respond)) return;
  if (body.topics.empty()) return describe_all(catalog, std::move(req), std::move(page), std::move(from));
  describe_named(catalog, req, std::move(page), names);
}

}  // namespace

HandlerSpec describe_topic_partitions_handler() {
  return serve<msg::DescribeTopicPartitionsRequest>(0, 0, [](const Services& s, Request&& req) {
    handle(s.config, s.catalog, s.authorizer, std::move(req));
  });
}

}  // namespace kib::kafka
