// Produce (key 0): decodes each partition's record batches within the request's decompression
// budget and hands them to the partition log, which applies Kafka's append rules. Served v3-12
// (v12: transaction version 2, a transactional batch adds its partition to the transaction),
// advertised from v0 (KAFKA-18659: librdkafka < 2.11 disables compression otherwise); a v0-2
// request (legacy message sets, removed by KIP-896) has its connection closed by the dispatcher,
// as Kafka 4 closes it.
//
// Authorization (KafkaApis.handleProduceRequest): a request whose partitions carry
// transactional batches needs WRITE on its transactional id, else every partition gets
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; each topic needs WRITE, else its partitions get
// TOPIC_AUTHORIZATION_FAILED and are not decoded.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge/errors.h"
#include "bridge/log/partition_log.h"
#include "bridge/security/authorizer.h"
#include "bridge/transactions/transaction_coordinator.h"
#include "common/fan_in.h"
#include "common/text.h"
#include "server/security/authorization.h"
#include "server/security/iggy_identity.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/produce.h"
#include "kafka/records/record_batch.h"
#include "server/context/services.h"
#include "metrics/bridge_metrics.h"

namespace kib::kafka {
namespace {

constexpr int16_t kFirstZstdVersion = 7;  // KIP-110
// Transaction version 2 (KIP-890): a transactional batch adds its partition to the transaction.
constexpr int16_t kFirstImplicitAddVersion = 12;

ErrorCode produce_error_for(RecordError e) {
  switch (e) {
    case RecordError::kCorrupt:
      return ErrorCode::kCorruptMessage;
    case RecordError::kTooLarge:
      return ErrorCode::kMessageTooLarge;
    case RecordError::kUnsupportedCompression:
      return ErrorCode::kUnsupportedCompressionType;
    case RecordError::kInvalidRecord:
    case RecordError::kUnsupportedMagic:  // Kafka answers INVALID_RECORD for v0/v1 sets in Produce v3+
      return ErrorCode::kInvalidRecord;
  }
  return ErrorCode::kInvalidRecord;
}

// RequestUtils.hasTransactionalRecords: the first batch of some partition is transactional.
bool has_transactional_records(const msg::ProduceRequest& body) {
  for (const auto& topic : body.topic_data)
    for (const auto& data : topic.partition_data)
      if (data.records && first_batch_is_transactional(ByteSpan(*data.records))) return true;
  return false;
}

// One Produce request's answer, sent (or, for acks=0, not) when the last partition is in. Held by
// shared_ptr and never moved: its FanIn points back at it.
struct ProduceCall {
  msg::ProduceResponse resp;
  Responder respond;
  bool acks_zero = false;
  std::string first_error;  // acks=0: the connection is closed instead of answering
  FanIn<> parts{[this] { answer(); }};

  void fail(msg::ProduceResponse::PartitionProduceResponse& pr, ErrorCode code, const std::string& message) {
    respond.count_error(to_int16(code));  // kib_request_errors_total{api="Produce",code=...}, per partition
    pr.error_code = to_int16(code);
    pr.base_offset = -1;
    pr.log_append_time_ms = -1;
    pr.log_start_offset = -1;
    if (!message.empty()) pr.error_message = truncate_message(message);
    if (first_error.empty()) first_error = std::string(error_name(code)) + ": " + message;
  }

  void answer() {
    if (!acks_zero) return respond.send(resp);
    // KafkaApis: an acks=0 produce that failed closes the connection, the only way the client learns.
    if (!first_error.empty()) return respond.close("acks=0 produce failed: " + first_error);
    respond.no_response();
  }
};

// A partition entry is 8 bytes on the wire and 144 in memory once decoded and answered (request +
// response structs): the request's decode budget pays for them first. A request naming more
// partitions than the budget can hold is hostile; it gets a clean close rather than gigabytes of
// per-partition answers. The bytes charged, or nullopt when the connection was closed.
std::optional<size_t> charge_partitions(const msg::ProduceRequest& body, const Responder& respond, uint64_t budget) {
  size_t partitions = 0;
  for (const auto& topic : body.topic_data) partitions += topic.partition_data.size();
  const size_t bytes = partitions * (sizeof(msg::ProduceRequest::PartitionProduceData) +
                                     sizeof(msg::ProduceResponse::PartitionProduceResponse));
  if (bytes > budget) {
    metrics::record_request_error("Produce", "too_many_partitions");
    respond.close(fmt::format("Produce names {} partitions; their decoded structs ({} bytes) pass "
                              "[limits] max_decompressed_bytes_per_request ({} bytes)",
                              partitions, bytes, budget));
    return std::nullopt;
  }
  respond.charge(bytes);  // in flight until answered, like the records
  return bytes;
}

// The answer's shape: every topic and partition of the request, in its order.
std::shared_ptr<ProduceCall> new_call(const msg::ProduceRequest& body, const Responder& respond) {
  auto call = std::make_shared<ProduceCall>();
  call->respond = respond;
  call->acks_zero = body.acks == 0;
  call->resp.responses.resize(body.topic_data.size());
  for (size_t t = 0; t < body.topic_data.size(); ++t) {
    call->resp.responses[t].name = body.topic_data[t].name;
    call->resp.responses[t].partition_responses.resize(body.topic_data[t].partition_data.size());
    for (size_t p = 0; p < body.topic_data[t].partition_data.size(); ++p)
      call->resp.responses[t].partition_responses[p].index = body.topic_data[t].partition_data[p].index;
  }
  return call;
}

// One request's partitions, each checked, decoded within the request's budget and handed to the
// partition log (or, transactional, to the transaction's buffer).
struct ProduceRun {
  bridge::PartitionLog& log;
  bridge::TransactionCoordinator& txns;
  const Request& req;
  const Result<bridge::IggyIdentityRef>& identity;
  std::shared_ptr<msg::ProduceRequest> body;
  SharedSpan input;
  std::shared_ptr<ProduceCall> call;
  DecompressionBudget budget;
  size_t refused_at_decode = 0;  // logged once per request, with the count when there are more

  // Why partition (t, p) is refused before its records are decoded, if it is.
  std::optional<Error> refused_before_decode(const std::string& topic, const msg::ProduceRequest::PartitionProduceData& data) {
    if (!identity) return identity.error();
    // A partition that cannot be appended to is answered before its records are decoded:
    // decompressing them would only spend the request's budget (and the loop's time).
    if (Status target = log.precheck_produce(topic, PartitionId(data.index)); !target) return target.error();
    if (req.header.api_version < kFirstZstdVersion && data.records &&
        any_batch_compressed_with(ByteSpan(*data.records), Compression::kZstd))
      return bridge::kafka_error(ErrorCode::kUnsupportedCompressionType, "zstd needs Produce v7 or later");
    return std::nullopt;
  }

  // An idempotent batch under a producer id that a transactional id owns: that producer writes
  // only transactionally, so this is another client using its id and sequence.
  std::optional<Error> refused_idempotent(const std::vector<DecodedBatch>& decoded) const {
    if (decoded.empty() || decoded.front().header.is_transactional() || decoded.front().header.producer_id < 0)
      return std::nullopt;
    const int64_t pid = decoded.front().header.producer_id;
    if (const ErrorCode e = txns.check_non_transactional(ProducerId(pid)); e != ErrorCode::kNone)
      return bridge::kafka_error(e, "producer id " + std::to_string(pid) +
                                        " belongs to a transactional id: its batches must be transactional, under that id");
    return std::nullopt;
  }

  void partition(size_t t, size_t p) {
    const auto& topic = body->topic_data[t];
    const auto& data = topic.partition_data[p];
    auto& pr = call->resp.responses[t].partition_responses[p];
    if (auto e = refused_before_decode(topic.name, data))
      return call->fail(pr, bridge::to_kafka_error(*e), e->message);
    auto decoded = decode_record_batches(data.records ? ByteSpan(*data.records) : ByteSpan(), budget);
    if (!decoded) {
      const ErrorCode code = produce_error_for(record_error(decoded.error()));
      if (refused_at_decode++ == 0)
        spdlog::warn("client={} produce to {}-{} refused: {}: {}", req.header.client_id, topic.name, data.index,
                     error_name(code), decoded.error().message);
      return call->fail(pr, code, decoded.error().message);
    }
    if (auto e = refused_idempotent(*decoded)) return call->fail(pr, bridge::to_kafka_error(*e), e->message);
    // Decompressed records and the decoded record structs stay in memory until Iggy has them:
    // they count as in flight.
    size_t held = 0;
    for (const DecodedBatch& b : *decoded) held += b.memory_bytes();
    if (held) req.respond.charge(held);
    call->parts.add();
    auto answered = [call = call, t, p](bridge::ProduceResult r) {
      auto& pr = call->resp.responses[t].partition_responses[p];
      if (r.error != ErrorCode::kNone) {
        call->fail(pr, r.error, r.message);
        // v8+ (older versions drop the field when encoded): the records at fault, as Kafka lists them.
        for (bridge::ProduceRecordError& e : r.record_errors)
          pr.record_errors.push_back({e.batch_index, std::move(e.message)});
      } else {
        pr.base_offset = r.base_offset();
        pr.log_append_time_ms = r.log_append_time_ms();
        pr.log_start_offset = r.log_start_offset();
      }
      call->parts.done();
    };
    // A transactional batch waits in the transaction's buffer until EndTxn (docs/transactions.md).
    if (!decoded->empty() && decoded->front().header.is_transactional())
      txns.produce(body->transactional_id, topic.name, PartitionId(data.index), std::move(decoded.value()), body,
                   req.header.api_version >= kFirstImplicitAddVersion, std::move(answered));
    else
      log.produce(topic.name, PartitionId(data.index), std::move(decoded.value()), input, body->acks,
                  std::move(answered), identity.value()->pool);
  }
};

// `identity`: the Iggy identity the appends run as, or the error every partition gets.
void handle(bridge::PartitionLog& log, bridge::TransactionCoordinator& txns, bridge::Authorizer& authorizer,
            const config::LimitsConfig& limits, Request&& req, const Result<bridge::IggyIdentityRef>& identity) {
  // The log keeps the decoded request alive while it appends: uncompressed batches point into it
  // (its records are views into the request frame, which the produced-batch cache then keeps).
  auto body = std::make_shared<msg::ProduceRequest>(req.decode<msg::ProduceRequest>());
  const uint64_t budget_bytes = limits.max_decompressed_bytes_per_request;
  const std::optional<size_t> partition_bytes = charge_partitions(*body, req.respond, budget_bytes);
  if (!partition_bytes) return;
  auto call = new_call(*body, req.respond);

  if (authorizer.enabled() && has_transactional_records(*body) &&
      (!body->transactional_id || !req.authorized(Op::kWrite, Res::kTransactionalId, *body->transactional_id))) {
    for (auto& topic : call->resp.responses)
      for (auto& pr : topic.partition_responses) call->fail(pr, ErrorCode::kTransactionalIdAuthorizationFailed, "");
    return call->parts.done();
  }

  const SharedSpan input{body, req.frame ? ByteSpan(*req.frame) : ByteSpan()};
  ProduceRun run{log, txns, req, identity, body, input, call, DecompressionBudget{budget_bytes - *partition_bytes}};
  for (size_t t = 0; t < body->topic_data.size(); ++t) {
    // Each topic needs WRITE, else its partitions are refused and not decoded.
    const bool may_write = req.authorized(Op::kWrite, Res::kTopic, body->topic_data[t].name);
    for (size_t p = 0; p < body->topic_data[t].partition_data.size(); ++p) {
      if (may_write) run.partition(t, p);
      else call->fail(call->resp.responses[t].partition_responses[p], ErrorCode::kTopicAuthorizationFailed, "");
    }
  }
  if (run.refused_at_decode > 1)
    spdlog::warn("client={} produce: {} partitions of the request refused at decode", req.header.client_id,
                 run.refused_at_decode);
  call->parts.done();
}

}  // namespace

HandlerSpec produce_handler() {
  // Served from v3, the spec's lowest version, so advertised from v0 like Kafka (KAFKA-18659).
  return serve<msg::ProduceRequest>(3, 12, [](const Services& s, Request&& req) {
    with_iggy_identity(s.identities, std::move(req), [&s](Request&& req, const Result<bridge::IggyIdentityRef>& id) {
      handle(s.log, s.transactions, s.authorizer, s.config.limits, std::move(req), id);
    });
  });
}

}  // namespace kib::kafka
