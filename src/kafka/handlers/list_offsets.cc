// ListOffsets (key 2), v1-8: latest (-1), earliest (-2), max timestamp (-3, v7+), earliest
// local (-4, v8+; no tiered storage, so = earliest) and by timestamp, answered by the partition log.
// Each topic needs DESCRIBE, else its partitions get TOPIC_AUTHORIZATION_FAILED
// (KafkaApis.handleListOffsetRequest).
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "bridge/log/fetch_records.h"
#include "bridge/log/partition_log.h"
#include "bridge/security/authorizer.h"
#include "kafka/handlers/authorization.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/list_offsets.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

struct ListOffsetsCall {
  msg::ListOffsetsResponse resp;
  Responder respond;
  size_t pending = 1;  // +1 until every lookup has started

  void done() {
    if (--pending == 0) respond.send(resp);
  }
};

void handle(bridge::PartitionLog& log, bridge::Authorizer& authorizer, Request&& req) {
  auto body = req.decode<msg::ListOffsetsRequest>();
  auto call = std::make_shared<ListOffsetsCall>();
  call->respond = req.respond;

  // Kafka answers INVALID_REQUEST for every occurrence of a partition listed twice.
  std::map<std::pair<std::string, int32_t>, int> seen;
  for (const auto& t : body.topics)
    for (const auto& p : t.partitions) ++seen[{t.name, p.partition_index}];

  call->resp.topics.resize(body.topics.size());
  for (size_t t = 0; t < body.topics.size(); ++t) {
    call->resp.topics[t].name = body.topics[t].name;
    call->resp.topics[t].partitions.resize(body.topics[t].partitions.size());
  }
  for (size_t t = 0; t < body.topics.size(); ++t) {
    const auto& topic = body.topics[t];
    const bool may_describe = authorizer.authorize(auth(req), Op::kDescribe, Res::kTopic, topic.name);
    for (size_t p = 0; p < topic.partitions.size(); ++p) {
      const auto& rq = topic.partitions[p];
      auto& pr = call->resp.topics[t].partitions[p];
      pr.partition_index = rq.partition_index;
      if (!may_describe) {
        pr.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
        pr.timestamp = -1;
        pr.offset = -1;
        continue;
      }
      if (seen[{topic.name, rq.partition_index}] > 1) {
        pr.error_code = to_int16(ErrorCode::kInvalidRequest);
        continue;
      }
      ++call->pending;
      const PartitionId partition_id(rq.partition_index);
      const auto isolation = body.isolation_level == 1 ? bridge::IsolationLevel::kReadCommitted
                                                       : bridge::IsolationLevel::kReadUncommitted;
      log.list_offsets(topic.name, partition_id, TimestampMs(rq.timestamp), [call, t, p](bridge::OffsetLookup r) {
        auto& pr = call->resp.topics[t].partitions[p];
        pr.error_code = to_int16(r.error);
        pr.offset = r.error == ErrorCode::kNone ? r.offset() : -1;
        pr.timestamp = r.error == ErrorCode::kNone ? r.timestamp() : -1;
        // Kafka: the epoch of the offset found, -1 with the offset when none is (by timestamp).
        pr.leader_epoch = r.error == ErrorCode::kNone && r.offset() >= 0 ? bridge::kPartitionLeaderEpoch : -1;
        call->done();
      }, isolation);
    }
  }
  call->done();
}

}  // namespace

HandlerSpec list_offsets_handler() {
  return serve<msg::ListOffsetsRequest>(1, 8, [](const Services& s, Request&& req) {
    handle(s.log, s.authorizer, std::move(req));
  });
}

}  // namespace kib::kafka
