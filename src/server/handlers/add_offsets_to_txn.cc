// AddOffsetsToTxn (key 25): the group whose offsets the transaction will commit
// (TxnOffsetCommit), committed or dropped with it (docs/transactions.md). Needs WRITE on the
// transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ on the group
// (GROUP_AUTHORIZATION_FAILED).
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/producer_fenced.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/add_offsets_to_txn.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::TransactionCoordinator& txns, Request&& req) {
  auto body = req.decode<msg::AddOffsetsToTxnRequest>();
  ErrorCode denied = ErrorCode::kNone;
  if (!req.authorized(Op::kWrite, Res::kTransactionalId, body.transactional_id))
    denied = ErrorCode::kTransactionalIdAuthorizationFailed;
  else if (!req.authorized(Op::kRead, Res::kGroup, body.group_id))
    denied = ErrorCode::kGroupAuthorizationFailed;
  if (denied != ErrorCode::kNone) {
    msg::AddOffsetsToTxnResponse resp;
    resp.error_code = to_int16(denied);
    return req.respond.send(resp);
  }
  txns.add_offsets(body.transactional_id, ProducerId(body.producer_id), ProducerEpoch(body.producer_epoch),
                   body.group_id, [respond = req.respond](ErrorCode e) {
                     msg::AddOffsetsToTxnResponse resp;
                     resp.error_code = to_int16(fenced_as_known(e, respond, kProducerFencedSinceV2));
                     respond.send(resp);
                   });
}

}  // namespace

HandlerSpec add_offsets_to_txn_handler() {
  return serve<msg::AddOffsetsToTxnRequest>(
      0, 4, [](const Services& s, Request&& req) { handle(s.transactions, std::move(req)); });
}

}  // namespace kib::kafka
