// TxnOffsetCommit (key 28): offsets a transaction commits when it commits (Kafka Streams and
// sendOffsetsToTransaction), pending until EndTxn (docs/transactions.md). Served v0-5; v5 is
// transaction version 2 (KIP-890), whose client sends no AddOffsetsToTxn: the commit adds the
// group. v3+ is fenced by the group (KIP-447). Needs WRITE on the transactional id, then READ on
// the group (every partition gets TRANSACTIONAL_ID_ or GROUP_AUTHORIZATION_FAILED), then READ on
// each topic (its partitions TOPIC_AUTHORIZATION_FAILED, not committed).
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/producer_fenced.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/txn_offset_commit.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::TransactionCoordinator& txns, Request&& req) {
  auto body = std::make_shared<msg::TxnOffsetCommitRequest>(req.decode<msg::TxnOffsetCommitRequest>());
  // Per topic: kNone, or the error its partitions get without being committed.
  std::vector<ErrorCode> denied(body->topics.size(), ErrorCode::kNone);
  ErrorCode all = ErrorCode::kNone;
  if (!req.authorized(Op::kWrite, Res::kTransactionalId, body->transactional_id))
    all = ErrorCode::kTransactionalIdAuthorizationFailed;
  else if (!req.authorized(Op::kRead, Res::kGroup, body->group_id))
    all = ErrorCode::kGroupAuthorizationFailed;
  std::vector<bridge::TxnOffset> offsets;
  for (size_t t = 0; t < body->topics.size(); ++t) {
    const auto& topic = body->topics[t];
    denied[t] = all != ErrorCode::kNone ? all
                : req.authorized(Op::kRead, Res::kTopic, topic.name)
                    ? ErrorCode::kNone
                    : ErrorCode::kTopicAuthorizationFailed;
    if (denied[t] != ErrorCode::kNone) continue;
    for (const auto& p : topic.partitions)
      offsets.push_back({topic.name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata});
  }
  auto answer = [body, denied](const Responder& respond, const std::vector<ErrorCode>& errors) {
    msg::TxnOffsetCommitResponse resp;
    size_t i = 0;
    for (size_t t = 0; t < body->topics.size(); ++t) {
      msg::TxnOffsetCommitResponse::TxnOffsetCommitResponseTopic tr;
      tr.name = body->topics[t].name;
      for (const auto& p : body->topics[t].partitions) {
        ErrorCode e = denied[t];
        if (e == ErrorCode::kNone) {
          e = fenced_as_known(i < errors.size() ? errors[i] : ErrorCode::kUnknownServerError, respond,
                              kProducerFencedNever);
          ++i;
        }
        if (e != ErrorCode::kNone) respond.count_error(to_int16(e));
        tr.partitions.push_back({p.partition_index, to_int16(e)});
      }
      resp.topics.push_back(std::move(tr));
    }
    respond.send(resp);
  };
  // Nothing the principal may commit: answered without the coordinator, as Kafka.
  if (offsets.empty() && !body->topics.empty()) return answer(req.respond, {});
  bridge::TxnGroupMember member{body->generation_id_or_member_epoch, body->member_id, body->group_instance_id};
  txns.txn_offset_commit(
      body->transactional_id, body->group_id, ProducerId(body->producer_id), ProducerEpoch(body->producer_epoch),
      member, std::move(offsets), req.header.api_version >= 5,
      [respond = req.respond, answer](std::vector<ErrorCode> errors) { answer(respond, errors); });
}

}  // namespace

HandlerSpec txn_offset_commit_handler() {
  return serve<msg::TxnOffsetCommitRequest>(
      0, 5, [](const Services& s, Request&& req) { handle(s.transactions, std::move(req)); });
}

}  // namespace kib::kafka
