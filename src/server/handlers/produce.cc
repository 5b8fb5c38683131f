// Produce (key 0): decodes each partition's record batches within the request's decompression
// budget and hands them to the partition log, which applies Kafka's append rules. Served v3-11,
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
#include <string>

#include "bridge/errors.h"
#include "bridge/log/partition_log.h"
#include "bridge/security/authorizer.h"
#include "bridge/transactions/transaction_coordinator.h"
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

// Whether any batch header names zstd. Read before decoding, so refusing it costs no
// decompression; malformed framing is left for the decoder to report.
bool names_zstd(ByteSpan records) {
  size_t at = 0;
  while (records.size() - at >= kRecordBatchHeaderSize) {
    ByteReader r(records.subspan(at));
    r.skip(8, "baseOffset");
    const int32_t batch_length = r.be<int32_t>("batchLength");
    r.skip(9, "partitionLeaderEpoch, magic, crc");
    const int16_t attributes = r.be<int16_t>("attributes");
    if ((attributes & BatchAttributes::kCompressionMask) == static_cast<int16_t>(Compression::kZstd)) return true;
    if (batch_length <= 0) return false;
    at += kRecordBatchLogOverhead + static_cast<size_t>(batch_length);
    if (at > records.size()) return false;
  }
  return false;
}

// RequestUtils.hasTransactionalRecords: the first batch of some partition is transactional.
bool has_transactional_records(const msg::ProduceRequest& body) {
  constexpr size_t kAttributesAt = 21;  // baseOffset, batchLength, partitionLeaderEpoch, magic, crc
  for (const auto& topic : body.topic_data)
    for (const auto& data : topic.partition_data) {
      if (!data.records || data.records->size() < kRecordBatchHeaderSize) continue;
      ByteReader r(ByteSpan(*data.records).subspan(kAttributesAt));
      if (r.be<int16_t>("attributes") & BatchAttributes::kTransactional) return true;
    }
  return false;
}

struct ProduceCall {
  msg::ProduceResponse resp;
  Responder respond;
  bool acks_zero = false;
  size_t pending = 1;       // one per partition sent to the log, +1 until all are sent
  std::string first_error;  // acks=0: the connection is closed instead of answering

  void fail(msg::ProduceResponse::PartitionProduceResponse& pr, ErrorCode code, const std::string& message) {
    respond.count_error(to_int16(code));  // kib_request_errors_total{api="Produce",code=...}, per partition
    pr.error_code = to_int16(code);
    pr.base_offset = -1;
    pr.log_append_time_ms = -1;
    pr.log_start_offset = -1;
    if (!message.empty()) pr.error_message = truncate_message(message);
    if (first_error.empty()) first_error = std::string(error_name(code)) + ": " + message;
  }

  void done() {
    if (--pending > 0) return;
    if (!acks_zero) return respond.send(resp);
    // KafkaApis: an acks=0 produce that failed closes the connection, the only way the client learns.
    if (!first_error.empty()) return respond.close("acks=0 produce failed: " + first_error);
    respond.no_response();
  }
};

// `identity`: the Iggy identity the appends run as, or the error every partition gets.
void handle(bridge::PartitionLog& log, bridge::TransactionCoordinator& txns, bridge::Authorizer& authorizer,
            const config::LimitsConfig& limits, Request&& req, const Result<bridge::IggyIdentityRef>& identity) {
  // The log keeps the decoded request alive while it appends: uncompressed batches point into it
  // (its records are views into the request frame, which the produced-batch cache then keeps).
  auto body = std::make_shared<msg::ProduceRequest>(req.decode<msg::ProduceRequest>());
  const SharedSpan input{body, req.frame ? ByteSpan(*req.frame) : ByteSpan()};
  const int16_t version = req.header.api_version;
  // A partition entry is 8 bytes on the wire and 144 in memory once decoded and answered
  // (request + response structs): the request's decode budget pays for them first. A request
  // naming more partitions than the budget can hold is hostile; it gets a clean close rather
  // than gigabytes of per-partition answers.
  size_t partitions = 0;
  for (const auto& topic : body->topic_data) partitions += topic.partition_data.size();
  const size_t partition_bytes = partitions * (sizeof(msg::ProduceRequest::PartitionProduceData) +
                                               sizeof(msg::ProduceResponse::PartitionProduceResponse));
  const uint64_t budget_bytes = limits.max_decompressed_bytes_per_request;
  if (partition_bytes > budget_bytes) {
    metrics::record_request_error("Produce", "too_many_partitions");
    return req.respond.close(fmt::format("Produce names {} partitions; their decoded structs ({} bytes) pass "
                                         "[limits] max_decompressed_bytes_per_request ({} bytes)",
                                         partitions, partition_bytes, budget_bytes));
  }
  req.respond.charge(partition_bytes);  // in flight until answered, like the records

  auto call = std::make_shared<ProduceCall>();
  call->respond = req.respond;
  call->acks_zero = body->acks == 0;

  call->resp.responses.resize(body->topic_data.size());
  for (size_t t = 0; t < body->topic_data.size(); ++t) {
    call->resp.responses[t].name = body->topic_data[t].name;
    call->resp.responses[t].partition_responses.resize(body->topic_data[t].partition_data.size());
    for (size_t p = 0; p < body->topic_data[t].partition_data.size(); ++p) {
      auto& pr = call->resp.responses[t].partition_responses[p];
      pr.index = body->topic_data[t].partition_data[p].index;
    }
  }

  if (authorizer.enabled() && has_transactional_records(*body) &&
      (!body->transactional_id || !req.authorized(Op::kWrite, Res::kTransactionalId,
                                                        *body->transactional_id))) {
    for (auto& topic : call->resp.responses)
      for (auto& pr : topic.partition_responses) call->fail(pr, ErrorCode::kTransactionalIdAuthorizationFailed, "");
    return call->done();
  }

  DecompressionBudget budget{budget_bytes - partition_bytes};
  size_t refused_at_decode = 0;  // logged once per request, with the count when there are more
  for (size_t t = 0; t < body->topic_data.size(); ++t) {
    const auto& topic = body->topic_data[t];
    const bool may_write = req.authorized(Op::kWrite, Res::kTopic, topic.name);
    for (size_t p = 0; p < topic.partition_data.size(); ++p) {
      const auto& data = topic.partition_data[p];
      auto& pr = call->resp.responses[t].partition_responses[p];
      if (!may_write) {
        call->fail(pr, ErrorCode::kTopicAuthorizationFailed, "");
        continue;
      }
      const ByteSpan records = data.records ? ByteSpan(*data.records) : ByteSpan();
      if (!identity) {
        call->fail(pr, bridge::to_kafka_error(identity.error()), identity.error().message);
        continue;
      }
      // A partition that cannot be appended to is answered before its records are decoded:
      // decompressing them would only spend the request's budget (and the loop's time).
      if (Status target = log.precheck_produce(topic.name, PartitionId(data.index)); !target) {
        call->fail(pr, bridge::to_kafka_error(target.error()), target.error().message);
        continue;
      }
      if (version < kFirstZstdVersion && names_zstd(records)) {
        call->fail(pr, ErrorCode::kUnsupportedCompressionType, "zstd needs Produce v7 or later");
        continue;
      }
      auto decoded = decode_record_batches(records, budget);
      if (!decoded) {
        const ErrorCode code = produce_error_for(record_error(decoded.error()));
        if (refused_at_decode++ == 0)
          spdlog::warn("client={} produce to {}-{} refused: {}: {}", req.header.client_id, topic.name, data.index,
                       error_name(code), decoded.error().message);
        call->fail(pr, code, decoded.error().message);
        continue;
      }
      // An idempotent batch under a producer id that a transactional id owns: that producer
      // writes only transactionally, so this is another client using its id and sequence.
      if (const bool idempotent = !decoded->empty() && !decoded->front().header.is_transactional() &&
                                  decoded->front().header.producer_id >= 0;
          idempotent) {
        const int64_t pid = decoded->front().header.producer_id;
        if (const ErrorCode e = txns.check_non_transactional(ProducerId(pid)); e != ErrorCode::kNone) {
          call->fail(pr, e, "producer id " + std::to_string(pid) + " belongs to a transactional id: its batches "
                            "must be transactional, under that id");
          continue;
        }
      }
      // Decompressed records and the decoded record structs stay in memory until Iggy has them:
      // they count as in flight.
      size_t held = 0;
      for (const DecodedBatch& b : *decoded) held += b.memory_bytes();
      if (held) req.respond.charge(held);
      ++call->pending;
      auto answered = [call, t, p](bridge::ProduceResult r) {
        auto& pr = call->resp.responses[t].partition_responses[p];
        if (r.error != ErrorCode::kNone) {
          call->fail(pr, r.error, r.message);
        } else {
          pr.base_offset = r.base_offset();
          pr.log_append_time_ms = r.log_append_time_ms();
          pr.log_start_offset = r.log_start_offset();
        }
        call->done();
      };
      // A transactional batch waits in the transaction's buffer until EndTxn (docs/transactions.md).
      if (!decoded->empty() && decoded->front().header.is_transactional()) {
        txns.produce(body->transactional_id, topic.name, PartitionId(data.index), std::move(decoded.value()), body,
                     std::move(answered));
      } else
        log.produce(topic.name, PartitionId(data.index), std::move(decoded.value()), input, body->acks,
                    std::move(answered), identity.value()->pool);
    }
  }
  if (refused_at_decode > 1)
    spdlog::warn("client={} produce: {} partitions of the request refused at decode", req.header.client_id,
                 refused_at_decode);
  call->done();
}

}  // namespace

HandlerSpec produce_handler() {
  // Served from v3, the spec's lowest version, so advertised from v0 like Kafka (KAFKA-18659).
  return serve<msg::ProduceRequest>(3, 11, [](const Services& s, Request&& req) {
    with_iggy_identity(s.identities, std::move(req), [&s](Request&& req, const Result<bridge::IggyIdentityRef>& id) {
      handle(s.log, s.transactions, s.authorizer, s.config.limits, std::move(req), id);
    });
  });
}

}  // namespace kib::kafka
