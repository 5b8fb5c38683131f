// CreatePartitions (key 37): grows Iggy topics (TopicCatalog::create_partitions). A topic named
// twice in one request is answered once with INVALID_REQUEST "Duplicate topic name." and not
// grown, as the KRaft controller does (ControllerApis.createPartitions); the others are
// answered in request order. Each topic needs ALTER (TOPIC_AUTHORIZATION_FAILED, not grown).
#include <memory>
#include <optional>
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
#include "kafka/protocol/generated/create_partitions.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::TopicCatalog& catalog, Request&& req) {
  auto body = req.decode<msg::CreatePartitionsRequest>();
  auto call = std::make_shared<FanInAnswer<msg::CreatePartitionsResponse>>(req.respond);
  auto& out = call->resp.results;

  std::set<std::string> names, duplicates;
  for (const auto& t : body.topics)
    if (!names.insert(t.name).second) duplicates.insert(t.name);
  for (const auto& d : duplicates) {
    msg::CreatePartitionsResponse::CreatePartitionsTopicResult r;
    r.name = d;
    r.error_code = to_int16(ErrorCode::kInvalidRequest);
    r.error_message = "Duplicate topic name.";
    out.push_back(std::move(r));
  }
  std::vector<const msg::CreatePartitionsRequest::CreatePartitionsTopic*> todo;
  for (const auto& t : body.topics)
    if (!duplicates.count(t.name)) todo.push_back(&t);

  const size_t first = out.size();
  out.resize(first + todo.size());
  const bool validate_only = body.validate_only;
  for (size_t i = 0; i < todo.size(); ++i) {
    const auto& t = *todo[i];
    out[first + i].name = t.name;
    if (!req.authorized(Op::kAlter, Res::kTopic, t.name)) {
      out[first + i].error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
      out[first + i].error_message = std::nullopt;
      continue;
    }
    std::optional<std::vector<std::vector<int32_t>>> assignments;
    if (t.assignments) {
      assignments.emplace();
      for (const auto& a : *t.assignments) assignments->push_back(a.broker_ids);
    }
    call->add();
    catalog.create_partitions(
        t.name, t.count, validate_only,
        [call, k = first + i](Status s) {
          auto& o = call->resp.results[k];
          if (s) {
            o.error_code = to_int16(ErrorCode::kNone);
            o.error_message = std::nullopt;
          } else {
            ErrorCode code = bridge::to_kafka_error(s.error());
            o.error_code = to_int16(code);
            // Kafka answers an unknown topic without a message.
            o.error_message = code == ErrorCode::kUnknownTopicOrPartition
                                  ? std::nullopt
                                  : std::optional<std::string>(truncate_message(s.error().message));
          }
          call->done();
        },
        std::move(assignments));
  }
  call->done();
}

}  // namespace

HandlerSpec create_partitions_handler() {
  return serve<msg::CreatePartitionsRequest>(0, 3, [](const Services& s, Request&& req) {
    handle(s.catalog, std::move(req));
  });
}

}  // namespace kib::kafka
