// InitProducerId (key 22): producer ids for idempotent producers (the producer registry) and,
// with a transactional id, for transactional ones (the transaction coordinator: epoch bumped on
// every call, fencing the previous incarnation; docs/transactions.md).
// Authorization as KafkaApis.handleInitProducerIdRequest: WRITE on the transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); without one, IDEMPOTENT_WRITE on the cluster or WRITE on
// some topic (authorizeByResourceType), else CLUSTER_AUTHORIZATION_FAILED.
#include <spdlog/spdlog.h>

#include "bridge/errors.h"
#include "bridge/producers/producer_registry.h"
#include "bridge/transactions/transaction_coordinator.h"
#include "common/text.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/producer_fenced.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/init_producer_id.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void reply_error(const Responder& respond, ErrorCode code) {
  msg::InitProducerIdResponse resp;
  resp.error_code = to_int16(fenced_as_known(code, respond, kProducerFencedSinceV4));
  resp.producer_id = -1;
  resp.producer_epoch = -1;
  respond.send(resp);
}

void handle(bridge::ProducerRegistry& producers, bridge::TransactionCoordinator& transactions,
            bridge::Authorizer& authorizer, Request&& req) {
  auto body = req.decode<msg::InitProducerIdRequest>();
  if (body.transactional_id) {
    if (!req.authorized(Op::kWrite, Res::kTransactionalId, *body.transactional_id))
      return reply_error(req.respond, ErrorCode::kTransactionalIdAuthorizationFailed);
  } else if (authorizer.enabled() &&
             !req.authorized_cluster(Op::kIdempotentWrite, bridge::Audit::kFilter) &&
             !authorizer.authorize_by_resource_type(auth(req), Op::kWrite, Res::kTopic)) {
    // Asked again only to log and count the refusal the client gets.
    req.authorized_cluster(Op::kIdempotentWrite);
    return reply_error(req.respond, ErrorCode::kClusterAuthorizationFailed);
  }
  // KafkaApis.handleInitProducerIdRequest: id and epoch are both -1 or both set.
  std::optional<bridge::ProducerIdAndEpoch> existing;
  if (req.header.api_version >= 3 && (body.producer_id != -1 || body.producer_epoch != -1)) {
    if (body.producer_id == -1 || body.producer_epoch == -1) return reply_error(req.respond, ErrorCode::kInvalidRequest);
    existing = bridge::ProducerIdAndEpoch{ProducerId(body.producer_id), ProducerEpoch(body.producer_epoch)};
  }
  if (body.transactional_id) {
    // Kafka refuses an empty transactional id the same way (KafkaApis: INVALID_REQUEST).
    if (body.transactional_id->empty()) return reply_error(req.respond, ErrorCode::kInvalidRequest);
    std::optional<std::pair<ProducerId, ProducerEpoch>> had;
    if (existing) had = std::make_pair(existing->producer_id, existing->producer_epoch);
    transactions.init_producer(
        *body.transactional_id, body.transaction_timeout_ms, had,
        [respond = req.respond, id = *body.transactional_id](bridge::TxnInitResult r) {
          if (r.error != ErrorCode::kNone) {
            spdlog::info("client={} api=InitProducerId transactional_id='{}': {}: {}",
                         esc(respond.header().client_id), esc(id), error_name(r.error), esc(r.message, 512));
            return reply_error(respond, r.error);
          }
          msg::InitProducerIdResponse resp;
          resp.producer_id = r.producer_id();
          resp.producer_epoch = r.producer_epoch();
          respond.send(resp);
        });
    return;
  }
  producers.init_producer(existing, [respond = req.respond](Result<bridge::ProducerIdAndEpoch> r) {
    if (!r) {
      spdlog::warn("client={} api=InitProducerId: {}", esc(respond.header().client_id), esc(r.error().message, 1024));
      return reply_error(respond, bridge::to_kafka_error(r.error()));
    }
    msg::InitProducerIdResponse resp;
    resp.producer_id = r->producer_id();
    resp.producer_epoch = r->producer_epoch();
    respond.send(resp);
  });
}

}  // namespace

HandlerSpec init_producer_id_handler() {
  return serve<msg::InitProducerIdRequest>(0, 4, [](const Services& s, Request&& req) {
    handle(s.producers, s.transactions, s.authorizer, std::move(req));
  });
}

}  // namespace kib::kafka
