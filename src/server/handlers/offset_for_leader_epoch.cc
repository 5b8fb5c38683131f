// OffsetForLeaderEpoch (key 23), v2-4, consumer form: the end offset of a leader epoch
// (PartitionLog::end_offset_for_epoch; the bridge's partitions are always at epoch 0). Java
// consumers send it to validate their positions once it is advertised (v3+). CLUSTER_ACTION on
// the cluster, or DESCRIBE on each topic (its partitions TOPIC_AUTHORIZATION_FAILED), as
// KafkaApis.handleOffsetForLeaderEpochRequest.
#include <memory>
#include <utility>

#include <spdlog/spdlog.h>

#include "bridge/log/partition_log.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/fan_in_answer.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/offset_for_leader_epoch.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::PartitionLog& log, Request&& req) {
  auto body = req.decode<msg::OffsetForLeaderEpochRequest>();
  const bool cluster_action =
      req.authorized_cluster(Op::kClusterAction, bridge::Audit::kFilter);
  auto call = std::make_shared<FanInAnswer<msg::OffsetForLeaderEpochResponse>>(req.respond);
  call->resp.topics.resize(body.topics.size());
  for (size_t t = 0; t < body.topics.size(); ++t) {
    call->resp.topics[t].topic = body.topics[t].topic;
    call->resp.topics[t].partitions.resize(body.topics[t].partitions.size());
  }
  for (size_t t = 0; t < body.topics.size(); ++t) {
    const auto& topic = body.topics[t];
    const bool may_describe =
        cluster_action || req.authorized(Op::kDescribe, Res::kTopic, topic.topic);
    for (size_t p = 0; p < topic.partitions.size(); ++p) {
      const auto& rq = topic.partitions[p];
      call->resp.topics[t].partitions[p].partition = rq.partition;
      if (!may_describe) {
        auto& pr = call->resp.topics[t].partitions[p];
        pr.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
        pr.leader_epoch = -1;
        pr.end_offset = -1;
        continue;
      }
      call->add();
      log.end_offset_for_epoch(topic.topic, PartitionId(rq.partition), rq.current_leader_epoch, rq.leader_epoch,
                               [call, t, p, rq, name = topic.topic](bridge::EpochEndOffset r) {
                                 spdlog::debug("OffsetForLeaderEpoch {}-{} epoch {} (current {}): error {}, epoch {}, end {}",
                                               name, rq.partition, rq.leader_epoch, rq.current_leader_epoch,
                                               to_int16(r.error), r.leader_epoch, r.end_offset());
                                 auto& pr = call->resp.topics[t].partitions[p];
                                 pr.error_code = to_int16(r.error);
                                 pr.leader_epoch = r.leader_epoch;
                                 pr.end_offset = r.end_offset();
                                 call->done();
                               });
    }
  }
  call->done();
}

}  // namespace

HandlerSpec offset_for_leader_epoch_handler() {
  return serve<msg::OffsetForLeaderEpochRequest>(2, 4, [](const Services& s, Request&& req) {
    handle(s.log, std::move(req));
  });
}

}  // namespace kib::kafka
