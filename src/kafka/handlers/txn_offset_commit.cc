// TxnOffsetCommit (key 28): offsets a transaction commits when it commits (Kafka Streams and
// sendOffsetsToTransaction), pending until EndTxn (docs/transactions.md). Served v0-4; v5 is
// transaction version 2 (KIP-890).
#include "bridge/transactions/transaction_coordinator.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/txn_offset_commit.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::TransactionCoordinator& txns, Request&& req) {
  auto body = std::make_shared<msg::TxnOffsetCommitRequest>(req.decode<msg::TxnOffsetCommitRequest>());
  std::vector<bridge::TxnOffset> offsets;
  for (const auto& t : body->topics)
    for (const auto& p : t.partitions)
      offsets.push_back({t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata});
  bridge::TxnGroupMember member{body->generation_id, body->member_id, body->group_instance_id};
  txns.txn_offset_commit(
      body->transactional_id, body->group_id, ProducerId(body->producer_id), ProducerEpoch(body->producer_epoch),
      member, std::move(offsets), [respond = req.respond, body](std::vector<ErrorCode> errors) {
        msg::TxnOffsetCommitResponse resp;
        size_t i = 0;
        for (const auto& t : body->topics) {
          msg::TxnOffsetCommitResponse::TxnOffsetCommitResponseTopic tr;
          tr.name = t.name;
          for (const auto& p : t.partitions) {
            ErrorCode e = i < errors.size() ? errors[i] : ErrorCode::kUnknownServerError;
            ++i;
            // The group coordinator's answer to a fenced producer (GroupMetadataManager).
            if (e == ErrorCode::kProducerFenced) e = ErrorCode::kInvalidProducerEpoch;
            if (e != ErrorCode::kNone) respond.count_error(to_int16(e));
            tr.partitions.push_back({p.partition_index, to_int16(e)});
          }
          resp.topics.push_back(std::move(tr));
        }
        respond.send(resp);
      });
}

}  // namespace

HandlerSpec txn_offset_commit_handler() {
  return serve<msg::TxnOffsetCommitRequest>(
      0, 4, [](const Services& s, Request&& req) { handle(s.transactions, std::move(req)); });
}

}  // namespace kib::kafka
