// DeleteRecords (key 21), v0-2: moves partitions' log start (PartitionLog::delete_records, a floor
// the bridge keeps because Iggy cannot truncate at an offset); each partition is answered with its
// new low watermark once the floor is durable. Each topic needs DELETE (its partitions
// TOPIC_AUTHORIZATION_FAILED, left alone), as KafkaApis.handleDeleteRecordsRequest.
#include <memory>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "bridge/log/partition_log.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/fan_in_answer.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/delete_records.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::PartitionLog& log, Request&& req) {
  auto body = req.decode<msg::DeleteRecordsRequest>();
  auto call = std::make_shared<FanInAnswer<msg::DeleteRecordsResponse>>(req.respond);
  call->resp.topics.resize(body.topics.size());
  for (size_t t = 0; t < body.topics.size(); ++t) {
    call->resp.topics[t].name = body.topics[t].name;
    call->resp.topics[t].partitions.resize(body.topics[t].partitions.size());
  }
  for (size_t t = 0; t < body.topics.size(); ++t) {
    const auto& topic = body.topics[t];
    const bool may_delete = req.authorized(Op::kDelete, Res::kTopic, topic.name);
    for (size_t p = 0; p < topic.partitions.size(); ++p) {
      const auto& rq = topic.partitions[p];
      call->resp.topics[t].partitions[p].partition_index = rq.partition_index;
      if (!may_delete) {
        call->resp.topics[t].partitions[p].error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
        call->resp.topics[t].partitions[p].low_watermark = -1;
        continue;
      }
      call->add();
      log.delete_records(topic.name, PartitionId(rq.partition_index), KafkaOffset(rq.offset),
                         [call, t, p, name = topic.name](bridge::DeleteRecordsResult r) {
                           auto& pr = call->resp.topics[t].partitions[p];
                           pr.error_code = to_int16(r.error);
                           pr.low_watermark = r.error == ErrorCode::kNone ? r.low_watermark() : -1;
                           if (r.error != ErrorCode::kNone)
                             spdlog::debug("DeleteRecords {}-{}: {}", name, pr.partition_index, r.message);
                           call->done();
                         });
    }
  }
  call->done();
}

}  // namespace

HandlerSpec delete_records_handler() {
  return serve<msg::DeleteRecordsRequest>(0, 2, [](const Services& s, Request&& req) {
    handle(s.log, std::move(req));
  });
}

}  // namespace kib::kafka
