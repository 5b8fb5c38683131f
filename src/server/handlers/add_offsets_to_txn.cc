// AddOffsetsToTxn (key 25): the group whose offsets the transaction will commit
// (TxnOffsetCommit), committed or dropped with it (docs/transactions.md). Needs WRITE on the
// transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ on the group
// (GROUP_AUTHORIZATION_FAILED).
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/add_offsets_to_txn.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

constexpr int16_t kFirstProducerFencedVersion = 2;  // KIP-588

void handle(bridge::TransactionCoordinator& txns, bridge::Authorizer& authorizer, Request&& req) {
  auto body = req.decode<msg::AddOffsetsToTxnRequest>();
  ErrorCode denied = ErrorCode::kNone;
  if (!authorizer.authorize(auth(req), Op::kWrite, Res::kTransactionalId, body.transactional_id))
    denied = ErrorCode::kTransactionalIdAuthorizationFailed;
  else if (!authorizer.authorize(auth(req), Op::kRead, Res::kGroup, body.group_id))
    denied = ErrorCode::kGroupAuthorizationFailed;
  if (denied != ErrorCode::kNone) {
    msg::AddOffsetsToTxnResponse resp;
    resp.error_code = to_int16(denied);
    return req.respond.send(resp);
  }
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
      0, 4, [](const Services& s, Request&& req) { handle(s.transactions, s.authorizer, std::move(req)); });
}

}  // namespace kib::kafka
