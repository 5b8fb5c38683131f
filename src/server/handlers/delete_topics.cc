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
#include "server/handlers/fan_in_answer.h"
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

// What a request names, gathered as ControllerApis does: names and ids to resolve (each set
// holds those named once), duplicates and malformed entries answered into `out` (once per
// repeat) and never deleted.
struct Named {
  std::vector<std::string> names;  // in request order
  std::set<std::string> name_set, dup_names;
  std::vector<msg::Uuid> ids;
  std::set<msg::Uuid> id_set, dup_ids;
};

Named gather(const msg::DeleteTopicsRequest& body, std::vector<TopicResult>& out) {
  Named n;
  auto add_name = [&](const std::string& name) {
    if (n.dup_names.count(name) || !n.name_set.insert(name).second) {
      out.push_back(result(name, msg::Uuid{}, ErrorCode::kInvalidRequest, "Duplicate topic name."));
      n.name_set.erase(name);
      n.dup_names.insert(name);
      return;
    }
    n.names.push_back(name);
  };
  auto add_id = [&](const msg::Uuid& id) {
    if (n.dup_ids.count(id) || !n.id_set.insert(id).second) {
      out.push_back(result(std::nullopt, id, ErrorCode::kInvalidRequest, "Duplicate topic id."));
      n.id_set.erase(id);
      n.dup_ids.insert(id);
      return;
    }
    n.ids.push_back(id);
  };
  for (const auto& name : body.topic_names) add_name(name);
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
  return n;
}

// The topics to delete, in order: ids resolve through the catalog's cache (every topic id was
// minted there), a topic named both ways is deleted once, and the refused and unknown ones are
// answered into `out`. `known_ids`: the ids of topics given by id, answered even if the delete fails.
std::vector<std::string> resolve(const Named& named, const bridge::TopicCatalog& catalog, const Request& req,
                                 std::vector<TopicResult>& out, std::map<std::string, msg::Uuid>& known_ids) {
  const bool cluster_delete = req.authorized_cluster(Op::kDelete, bridge::Audit::kFilter);
  auto deletable = [&](const std::string& n) { return cluster_delete || req.authorized(Op::kDelete, Res::kTopic, n); };
  auto describable = [&](const std::string& n) {
    return cluster_delete || req.authorized(Op::kDescribe, Res::kTopic, n);
  };
  const std::string kDenied = error_message(ErrorCode::kTopicAuthorizationFailed);
  std::vector<std::string> to_delete;
  std::set<std::string> seen;
  for (const auto& id : named.ids) {
    if (!named.id_set.count(id)) continue;  // turned out a duplicate
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
  for (const auto& n : named.names) {
    if (!named.name_set.count(n) || seen.count(n)) continue;
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
  return to_delete;
}

void handle(bridge::TopicCatalog& catalog, Request&& req) {
  auto body = req.decode<msg::DeleteTopicsRequest>();
  auto call = std::make_shared<FanInAnswer<msg::DeleteTopicsResponse>>(req.respond);
  auto& out = call->resp.responses;
  const Named named = gather(body, out);
  std::map<std::string, msg::Uuid> known_ids;
  const std::vector<std::string> to_delete = resolve(named, catalog, req, out, known_ids);

  const size_t first = out.size();
  out.resize(first + to_delete.size());
  for (size_t i = 0; i < to_delete.size(); ++i) {
    out[first + i].name = to_delete[i];
    if (auto k = known_ids.find(to_delete[i]); k != known_ids.end()) out[first + i].topic_id = k->second;
    call->add();
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
      call->done();
    });
  }
  call->done();
}

}  // namespace

HandlerSpec delete_topics_handler() {
  return serve<msg::DeleteTopicsRequest>(1, 6, [](const Services& s, Request&& req) {
    handle(s.catalog, std::move(req));
  });
}

}  // namespace kib::kafka
