// AddOffsetsToTxn (key 25): the group whose offsets the transaction will commit
// (TxnOffsetCommit), committed or dropped with it (docs/transactions.md).
#include "bridge/transactions/transaction_coordinator.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/add_offsets_to_txn.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

constexpr int16_t kFirstProducerFencedVersion = 2;  // KIP-588

void handle(bridge::TransactionCoordinator& txns, Request&& req) {
  auto body = req.decode<msg::AddOffsetsToTxnRequest>();
  txns.add_offsets(body.transactional_id, ProducerId(body.producer_id), ProducerEpoch(body.producer_epoch),
                   body.group_id, [respond = req.respond](ErrorCode e) {
                     if (e == ErrorCode::kProducerFenced && respond.header().api_version < kFirstProducerFencedVersion)
                       e = ErrorCode::kInvalidProducerEpoch;
                     msg::AddOffsetsToTxnResponse resp;
                     resp.error_code = to_int16(e);
                     respond.send(resp);
                   });
}

}  // namespace

HandlerSpec add_offsets_to_txn_handler() {
  return serve<msg::AddOffsetsToTxnRequest>(
      0, 4, [](const Services& s, Request&& req) { handle(s.transactions, std::move(req)); });
}

}  // namespace kib::kafka
