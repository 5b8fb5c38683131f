// EndTxn (key 26): commit (the buffered records appended to Iggy, the pending offsets committed)
// or abort (discarded); answered once the commit is complete (docs/transactions.md). Served v0-5;
// v5 is transaction version 2 (KIP-890): the transaction ends with the producer's epoch bumped,
// and the answer carries the producer id and epoch of its next transaction. Needs WRITE on the
// transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/producer_fenced.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/end_txn.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

constexpr int16_t kFirstBumpingVersion = 5;  // transaction version 2

void handle(bridge::TransactionCoordinator& txns, Request&& req) {
  auto body = req.decode<msg::EndTxnRequest>();
  if (!req.authorized(Op::kWrite, Res::kTransactionalId, body.transactional_id)) {
    msg::EndTxnResponse resp;
    resp.error_code = to_int16(ErrorCode::kTransactionalIdAuthorizationFailed);
    return req.respond.send(resp);
  }
  if (req.header.api_version >= kFirstBumpingVersion)
    return txns.end_txn_v2(body.transactional_id, ProducerId(body.producer_id), ProducerEpoch(body.producer_epoch),
                           body.committed, [respond = req.respond](bridge::EndTxnResult r) {
                             msg::EndTxnResponse resp;
                             resp.error_code = to_int16(r.error);
                             resp.producer_id = r.producer_id();
                             resp.producer_epoch = r.producer_epoch();
                             respond.send(resp);
                           });
  txns.end_txn(body.transactional_id, ProducerId(body.producer_id), ProducerEpoch(body.producer_epoch),
               body.committed, [respond = req.respond](ErrorCode e) {
                 msg::EndTxnResponse resp;
                 resp.error_code = to_int16(fenced_as_known(e, respond, kProducerFencedSinceV2));
                 respond.send(resp);
               });
}

}  // namespace

HandlerSpec end_txn_handler() {
  return serve<msg::EndTxnRequest>(0, 5,
                                   [](const Services& s, Request&& req) { handle(s.transactions, std::move(req)); });
}

}  // namespace kib::kafka
