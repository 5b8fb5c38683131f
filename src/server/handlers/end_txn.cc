// EndTxn (key 26): commit (the buffered records appended to Iggy, the pending offsets committed)
// or abort (discarded); answered once the commit is complete (docs/transactions.md). Served v0-4;
// v5 belongs to transaction version 2 (KIP-890), which the bridge does not advertise. Needs
// WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/end_txn.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

constexpr int16_t kFirstProducerFencedVersion = 2;  // KIP-588

void handle(bridge::TransactionCoordinator& txns, bridge::Authorizer& authorizer, Request&& req) {
  auto body = req.decode<msg::EndTxnRequest>();
  if (!authorizer.authorize(auth(req), Op::kWrite, Res::kTransactionalId, body.transactional_id)) {
    msg::EndTxnResponse resp;
    resp.error_code = to_int16(ErrorCode::kTransactionalIdAuthorizationFailed);
    return req.respond.send(resp);
  }
  txns.end_txn(body.transactional_id, ProducerId(body.producer_id), ProducerEpoch(body.producer_epoch),
               body.committed, [respond = req.respond](ErrorCode e) {
                 if (e == ErrorCode::kProducerFenced && respond.header().api_version < kFirstProducerFencedVersion)
                   e = ErrorCode::kInvalidProducerEpoch;
                 msg::EndTxnResponse resp;
                 resp.error_code = to_int16(e);
                 respond.send(resp);
               });
}

}  // namespace

HandlerSpec end_txn_handler() {
  return serve<msg::EndTxnRequest>(0, 4,
                                   [](const Services& s, Request&& req) { handle(s.transactions, s.authorizer, std::move(req)); });
}

}  // namespace kib::kafka
