// EndTxn (key 26): commit (the buffered records appended to Iggy, the pending offsets committed)
// or abort (discarded); answered once the commit is complete (docs/transactions.md). Served v0-4;
// v5 belongs to transaction version 2 (KIP-890), which the bridge does not advertise. Needs
// WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/producer_fenced.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/end_txn.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::TransactionCoordinator& txns, Request&& req) {
  auto body = req.decode<msg::EndTxnRequest>();
  if (!req.authorized(Op::kWrite, Res::kTransactionalId, body.transactional_id)) {
    msg::EndTxnResponse resp;
    resp.error_code = to_int16(ErrorCode::kTransactionalIdAuthorizationFailed);
    return req.respond.send(resp);
  }
  txns.end_txn(body.transactional_id, ProducerId(body.producer_id), ProducerEpoch(body.producer_epoch),
               body.committed, [respond = req.respond](ErrorCode e) {
                 msg::EndTxnResponse resp;
                 resp.error_code = to_int16(fenced_as_known(e, respond, kProducerFencedSinceV2));
                 respond.send(resp);
               });
}

}  // namespace

HandlerSpec end_txn_handler() {
  return serve<msg::EndTxnRequest>(0, 4,
                                   [](const Services& s, Request&& req) { handle(s.transactions, std::move(req)); });
}

}  // namespace kib::kafka
