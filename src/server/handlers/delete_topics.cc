// DeleteTopics (key 20): deletes the Iggy topic and the bridge's state of it (TopicCatalog::remove).
// v1-5 name topics in topic_names; v6 (Kafka 4 tools) sends entries with a name or a topic id.
// The request is checked as the KRaft controller checks it (ControllerApis.deleteTopics):
// a name and an id in one entry, neither, or a name or id given twice is INVALID_REQUEST with
// Kafka's texts; an unknown id is UNKNOWN_TOPIC_ID, an unknown name UNKNOWN_TOPIC_OR_PARTITION.
// Every result carries the name and the topic id (the name filled in for a topic given by id).
// Authorization as ControllerApis.deleteTopics: DELETE on the cluster, or DELETE on each topic;
// a topic the principal may not delete is answered TOPIC_AUTHORIZATION_FAILED and kept, without
// its name (given by id) or its id (given by name) unless the principal may DESCRIBE it, and a
// name it may not DESCRIBE is refused before anyone looks whether it exists.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "common/text.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/delete_topics.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

using TopicResult = msg::DeleteTopicsResponse::DeletableTopicResult;

TopicResult result(std::optional<std::string> name, const msg::Uuid& id, ErrorCode code,
               std::optional<std::string> message) {
  TopicResult r;
  r.name = std::move(name);
  r.topic_id = id;
  r.error_code = to_int16(code);
  r.error_message = std::move(message);
  return r;
}

void handle(bridge::TopicCatalog& catalog, bridge::Authorizer& authorizer, Request&& req) {
  auto body = req.decode<msg::DeleteTopicsRequest>();
  struct Call {
    Request req;
    msg::DeleteTopicsResponse resp;
    size_t pending = 0;
  };
  auto call = std::make_shared<Call>();
  auto& out = call->resp.responses;

  // Gathered as ControllerApis does: names and ids to resolve, duplicates answered (once per
  // repeat) and never deleted.
  std::vector<std::string> names;  // in request order
  std::set<std::string> name_set, dup_names;
  std::vector<msg::Uuid> ids;
  std::set<msg::Uuid> id_set, dup_ids;
  auto add_name = [&](const std::string& n) {
    if (dup_names.count(n) || !name_set.insert(n).second) {
      out.push_back(result(n, msg::Uuid{}, ErrorCode::kInvalidRequest, "Duplicate topic name."));
      name_set.erase(n);
      dup_names.insert(n);
      return;
    }
    names.push_back(n);
  };
  auto add_id = [&](const msg::Uuid& id) {
    if (dup_ids.count(id) || !id_set.insert(id).second) {
      out.push_back(result(std::nullopt, id, ErrorCode::kInvalidRequest, "Duplicate topic id."));
      id_set.erase(id);
      dup_ids.insert(id);
      return;
    }
    ids.push_back(id);
  };
  for (const auto& n : body.topic_names) add_name(n);
  for (const auto& t : body.topics) {
    const bool no_id = t.topic_id == msg::Uuid{};
    if (!t.name) {
      if (no_id)
        out.push_back(result(std::nullopt, msg::Uuid{}, ErrorCode::kInvalidRequest,
                             "Neither topic name nor id were specified."));
      else
        add_id(t.topic_id);
    } else if (no_id) {
      add_name(*t.name);
    } else {
      out.push_back(result(*t.name, t.topic_id, ErrorCode::kInvalidRequest,
                           "You may not specify both topic name and topic id."));
    }
  }

  const bool cluster_delete =
      !authorizer.enabled() || authorizer.authorize_cluster(auth(req), Op::kDelete, bridge::Audit::kFilter);
  auto deletable = [&](const std::string& n) {
    return cluster_delete || authorizer.authorize(auth(req), Op::kDelete, Res::kTopic, n);
  };
  auto describable = [&](const std::string& n) {
    return cluster_delete || authorizer.authorize(auth(req), Op::kDescribe, Res::kTopic, n);
  };
  const std::string kDenied = error_message(ErrorCode::kTopicAuthorizationFailed);

  // Ids resolve through the catalog's cache (every topic id was minted there); a topic named
  // both ways is deleted once.
  std::vector<std::string> to_delete;
  std::map<std::string, msg::Uuid> known_ids;  // of topics given by id: answered even if the delete fails
  std::set<std::string> seen;
  for (const auto& id : ids) {
    if (!id_set.count(id)) continue;  // turned out a duplicate
    const bridge::TopicMetadata* t = catalog.find(id);
    if (const bridge::TopicMetadata* o = catalog.offsets_topic(); !t && o && o->topic_id == id) t = o;
    if (!t) {
      out.push_back(result(std::nullopt, id, ErrorCode::kUnknownTopicId, error_message(ErrorCode::kUnknownTopicId)));
      continue;
    }
    if (!deletable(t->name)) {
      out.push_back(result(describable(t->name) ? std::optional<std::string>(t->name) : std::nullopt, id,
                           ErrorCode::kTopicAuthorizationFailed, kDenied));
      continue;
    }
    if (seen.insert(t->name).second) to_delete.push_back(t->name);
    known_ids[t->name] = id;
  }
  for (const auto& n : names) {
    if (!name_set.count(n) || seen.count(n)) continue;
    if (!deletable(n)) {
      // Whether it exists is said only to a principal that may DESCRIBE it.
      const bool unknown = describable(n) && !catalog.find(n);
      out.push_back(result(n, msg::Uuid{}, unknown ? ErrorCode::kUnknownTopicOrPartition : ErrorCode::kTopicAuthorizationFailed,
                           unknown ? error_message(ErrorCode::kUnknownTopicOrPartition) : kDenied));
      continue;
    }
    seen.insert(n);
    to_delete.push_back(n);
  }

  const size_t first = out.size();
  out.resize(first + to_delete.size());
  call->pending = to_delete.size();
  call->req = std::move(req);
  if (call->pending == 0) return call->req.respond.send(call->resp);
  for (size_t i = 0; i < to_delete.size(); ++i) {
    out[first + i].name = to_delete[i];
    if (auto k = known_ids.find(to_delete[i]); k != known_ids.end()) out[first + i].topic_id = k->second;
    catalog.remove(to_delete[i], [call, k = first + i](Result<bridge::RemovedTopic> r) {
      auto& o = call->resp.responses[k];
      if (r) {
        o.topic_id = r->topic_id;
        o.error_code = to_int16(ErrorCode::kNone);
        o.error_message = std::nullopt;
      } else {
        ErrorCode code = bridge::to_kafka_error(r.error());
        o.error_code = to_int16(code);
        o.error_message = code == ErrorCode::kUnknownTopicOrPartition
                              ? std::string(error_message(code))
                              : truncate_message(r.error().message);
      }
      if (--call->pending == 0) call->req.respond.send(call->resp);
    });
  }
}

}  // namespace

HandlerSpec delete_topics_handler() {
  return serve<msg::DeleteTopicsRequest>(1, 6, [](const Services& s, Request&& req) {
    handle(s.catalog, s.authorizer, std::move(req));
  });
}

}  // namespace kib::kafka
