// InitProducerId (key 22): producer ids for idempotent producers. Transactions are not served
// yet: a transactional id gets INVALID_REQUEST, which every client treats as fatal (the Java
// producer: "Unexpected error in InitProducerIdResponse; ... sent to an incompatible broker"),
// instead of a retriable code that would make initTransactions() hang until max.block.ms.
#include <spdlog/spdlog.h>

#include "bridge/errors.h"
#include "bridge/producers/producer_registry.h"
#include "common/text.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/init_producer_id.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

void reply_error(const Responder& respond, ErrorCode code) {
  msg::InitProducerIdResponse resp;
  resp.error_code = to_int16(code);
  resp.producer_id = -1;
  resp.producer_epoch = -1;
  respond.send(resp);
}

void handle(bridge::ProducerRegistry& producers, Request&& req) {
  auto body = req.decode<msg::InitProducerIdRequest>();
  if (body.transactional_id) {
    spdlog::warn("client={} api=InitProducerId v={} transactional_id='{}': transactions are not supported yet",
                 esc(req.header.client_id), req.header.api_version, esc(*body.transactional_id));
    return reply_error(req.respond, ErrorCode::kInvalidRequest);
  }
  // KafkaApis.handleInitProducerIdRequest: id and epoch are both -1 or both set.
  std::optional<bridge::ProducerIdAndEpoch> existing;
  if (req.header.api_version >= 3 && (body.producer_id != -1 || body.producer_epoch != -1)) {
    if (body.producer_id == -1 || body.producer_epoch == -1) return reply_error(req.respond, ErrorCode::kInvalidRequest);
    existing = bridge::ProducerIdAndEpoch{ProducerId(body.producer_id), ProducerEpoch(body.producer_epoch)};
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
    handle(s.producers, std::move(req));
  });
}

}  // namespace kib::kafka
