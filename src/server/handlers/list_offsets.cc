// ListOffsets (key 2), v1-8: latest (-1), earliest (-2), max timestamp (-3, v7+), earliest
// local (-4, v8+; no tiered storage, so = earliest) and by timestamp, answered by the partition log.
// Each topic needs DESCRIBE, else its partitions get TOPIC_AUTHORIZATION_FAILED
// (KafkaApis.handleListOffsetRequest). A fan-out request (server/handlers/fanout.h): partitions
// are looked up a slice at a time, and one naming more than [limits] max_response_bytes can
// answer closes the connection.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bridge/log/fetch_records.h"
#include "bridge/log/partition_log.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/fanout.h"
#include "server/handlers/fan_in_answer.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/list_offsets.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::PartitionLog& log, uint64_t max_response_bytes, Request&& req) {
  auto body = std::make_shared<msg::ListOffsetsRequest>(req.decode<msg::ListOffsetsRequest>());
  auto call = std::make_shared<FanInAnswer<msg::ListOffsetsResponse>>(req.respond);

  // Kafka answers INVALID_REQUEST for every occurrence of a partition listed twice.
  std::map<std::pair<std::string_view, int32_t>, int> seen;
  size_t entries = 0;
  for (const auto& t : body->topics)
    for (const auto& p : t.partitions) {
      ++seen[{t.name, p.partition_index}];
      ++entries;
    }
  // The answer's structs, known before any lookup starts (server/handlers/fanout.h).
  AnswerBudget budget(max_response_bytes);
  budget.add(entries * sizeof(msg::ListOffsetsResponse::ListOffsetsPartitionResponse));
  for (const auto& t : body->topics) budget.add(sizeof(msg::ListOffsetsResponse::ListOffsetsTopicResponse) + t.name.size());
  if (budget.over())
    return refuse_oversized_answer(req.respond, fmt::format("ListOffsets naming {} partitions", entries), budget);

  struct Entry {
    size_t t, p;
    bool may_describe, duplicate;
  };
  auto todo = std::make_shared<std::vector<Entry>>();
  todo->reserve(entries);
  call->resp.topics.resize(body->topics.size());
  for (size_t t = 0; t < body->topics.size(); ++t) {
    const auto& topic = body->topics[t];
    call->resp.topics[t].name = topic.name;
    call->resp.topics[t].partitions.resize(topic.partitions.size());
    const bool may_describe = req.authorized(Op::kDescribe, Res::kTopic, topic.name);
    for (size_t p = 0; p < topic.partitions.size(); ++p)
      todo->push_back({t, p, may_describe, seen[{topic.name, topic.partitions[p].partition_index}] > 1});
  }
  const auto isolation = body->isolation_level == 1 ? bridge::IsolationLevel::kReadCommitted
                                                     : bridge::IsolationLevel::kReadUncommitted;
  auto lookup = [call, body, todo, &log, isolation](size_t i) {
    const Entry& e = (*todo)[i];
    const auto& topic = body->topics[e.t];
    const auto& rq = topic.partitions[e.p];
    auto& pr = call->resp.topics[e.t].partitions[e.p];
    pr.partition_index = rq.partition_index;
    if (!e.may_describe) {
      pr.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
      pr.timestamp = -1;
      pr.offset = -1;
      return;
    }
    if (e.duplicate) {
      pr.error_code = to_int16(ErrorCode::kInvalidRequest);
      return;
    }
    call->add();
    const size_t t = e.t, p = e.p;
    log.list_offsets(topic.name, PartitionId(rq.partition_index), TimestampMs(rq.timestamp),
                     [call, t, p](bridge::OffsetLookup r) {
                       auto& pr = call->resp.topics[t].partitions[p];
                       pr.error_code = to_int16(r.error);
                       pr.offset = r.error == ErrorCode::kNone ? r.offset() : -1;
                       pr.timestamp = r.error == ErrorCode::kNone ? r.timestamp() : -1;
                       // Kafka: the epoch of the offset found, -1 with the offset when none is (by timestamp).
                       pr.leader_epoch = r.error == ErrorCode::kNone && r.offset() >= 0 ? bridge::kPartitionLeaderEpoch : -1;
                       call->done();
                     },
                     isolation);
  };
  std::weak_ptr<net::Connection> conn = req.conn;
  in_slices(
      req.conn ? req.conn->loop() : nullptr, todo->size(), lookup, [call] { call->done(); },
      [conn] {
        auto c = conn.lock();
        return c && !c->closed();
      });
}

}  // namespace

HandlerSpec list_offsets_handler() {
  return serve<msg::ListOffsetsRequest>(1, 8, [](const Services& s, Request&& req) {
    handle(s.log, s.config.limits.max_response_bytes, std::move(req));
  });
}

}  // namespace kib::kafka
