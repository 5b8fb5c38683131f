// Produce (key 0): decodes each partition's record batches within the request's decompression
// budget and hands them to the partition log, which applies Kafka's append rules. Served v3-11,
// advertised from v0 (GOTCHAS: librdkafka < 2.11 disables compression otherwise); v0-2
// requests (legacy message sets, removed by KIP-896) get UNSUPPORTED_VERSION per partition.
//
// A request with at least kOffloadCompressedBytes of gzip/zstd batches is decompressed in the
// libuv thread pool; the connection's later Produce requests wait behind it (ProduceOrder), so
// each partition still receives one client's appends in the order they were sent.
#include <spdlog/spdlog.h>

#include <uv.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge/errors.h"
#include "bridge/log/partition_log.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/produce.h"
#include "kafka/records/record_batch.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

constexpr int16_t kFirstZstdVersion = 7;  // KIP-110
constexpr int16_t kFirstServedVersion = 3;  // record batch v2 (KIP-896 removed v0-2)

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

struct ProduceCall {
  msg::ProduceResponse resp;
  Responder respond;
  bool acks_zero = false;
  size_t pending = 1;       // one per partition sent to the log, +1 until all are sent
  std::string first_error;  // acks=0: the connection is closed instead of answering

  void fail(msg::ProduceResponse::PartitionProduceResponse& pr, ErrorCode code, const std::string& message) {
    pr.error_code = to_int16(code);
    pr.base_offset = -1;
    pr.log_append_time_ms = -1;
    pr.log_start_offset = -1;
    if (!message.empty()) pr.error_message = message;
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

// Bytes of gzip or zstd batches in one request from which decompression leaves the loop thread
// for the libuv thread pool (DESIGN.md §2: nothing CPU-heavy on the loop). Below it, the hop to
// a worker and back costs more than the decompression itself. lz4 and snappy decompress at
// several GB/s and stay on the loop: offloaded, 1 MB lz4 requests on 8 partitions measured
// 0.91x the inline throughput (bench A/B, 2 cores), zstd 1.07x.
constexpr size_t kOffloadCompressedBytes = 64 * 1024;

bool slow_codec(int16_t attributes) {
  const int16_t codec = attributes & BatchAttributes::kCompressionMask;
  return codec == static_cast<int16_t>(Compression::kGzip) || codec == static_cast<int16_t>(Compression::kZstd);
}

// Bytes of gzip and zstd batches in `records`, read from the batch headers.
size_t slow_compressed_bytes(ByteSpan records) {
  size_t at = 0, total = 0;
  while (records.size() - at >= kRecordBatchHeaderSize) {
    ByteReader r(records.subspan(at));
    r.skip(8, "baseOffset");
    const int32_t batch_length = r.be<int32_t>("batchLength");
    r.skip(9, "partitionLeaderEpoch, magic, crc");
    const int16_t attributes = r.be<int16_t>("attributes");
    if (batch_length <= 0) break;
    if (slow_codec(attributes)) total += static_cast<size_t>(batch_length);
    at += kRecordBatchLogOverhead + static_cast<size_t>(batch_length);
    if (at > records.size()) break;
  }
  return total;
}

// One request between decoding and the log. `decoded[t][p]` is filled by decode_all (on the
// loop or a worker), read by dispatch on the loop.
struct PendingProduce {
  std::shared_ptr<msg::ProduceRequest> body;
  std::shared_ptr<ProduceCall> call;
  int16_t version = 0;
  size_t max_decompressed = 0;
  std::vector<std::vector<std::optional<Result<std::vector<DecodedBatch>>>>> decoded;
  bool in_pool = false;  // being decoded by a worker (loop-thread flag)
  bool ready = false;    // decoded, waiting only for the requests before it
  std::string worker_error;  // an exception in the worker (out of memory): every partition fails
};

// Per connection (Session::produce_order): requests in arrival order while one is offloaded.
struct ProduceOrder {
  std::deque<std::shared_ptr<PendingProduce>> queue;
};

struct DecodeWork {
  uv_work_t req;
  std::shared_ptr<PendingProduce> pending;
  std::weak_ptr<ProduceOrder> order;
  Services* services;
};

// Decodes every partition's batches within the request's decompression budget; a partition
// whose zstd its version may not use stays empty. Touches only `pp`: runs on workers too.
void decode_all(PendingProduce& pp) {
  const auto& body = *pp.body;
  DecompressionBudget budget{pp.max_decompressed};
  pp.decoded.resize(body.topic_data.size());
  for (size_t t = 0; t < body.topic_data.size(); ++t) {
    const auto& topic = body.topic_data[t];
    pp.decoded[t].resize(topic.partition_data.size());
    for (size_t p = 0; p < topic.partition_data.size(); ++p) {
      const auto& data = topic.partition_data[p];
      const ByteSpan records = data.records ? ByteSpan(*data.records) : ByteSpan();
      if (pp.version < kFirstZstdVersion && names_zstd(records)) continue;  // refused in dispatch
      pp.decoded[t][p] = decode_record_batches(records, budget);
    }
  }
}

// Hands each decoded partition to the log (or fails it), then answers once all are done.
void dispatch(Services& s, PendingProduce& pp) {
  auto& body = pp.body;
  auto& call = pp.call;
  for (size_t t = 0; t < body->topic_data.size(); ++t) {
    const auto& topic = body->topic_data[t];
    for (size_t p = 0; p < topic.partition_data.size(); ++p) {
      const auto& data = topic.partition_data[p];
      auto& pr = call->resp.responses[t].partition_responses[p];
      if (!pp.worker_error.empty()) {
        call->fail(pr, ErrorCode::kUnknownServerError, pp.worker_error);
        continue;
      }
      auto& decoded = pp.decoded[t][p];
      if (!decoded) {
        call->fail(pr, ErrorCode::kUnsupportedCompressionType, "zstd needs Produce v7 or later");
        continue;
      }
      if (!*decoded) {
        call->fail(pr, produce_error_for(record_error(decoded->error())), decoded->error().message);
        continue;
      }
      if (!s.log) {
        call->fail(pr, ErrorCode::kUnknownServerError, "the partition log is not running");
        continue;
      }
      ++call->pending;
      s.log->produce(topic.name, data.index, std::move(decoded->value()), body, body->acks,
                     [call, t, p](bridge::ProduceResult r) {
                       auto& pr = call->resp.responses[t].partition_responses[p];
                       if (r.error != ErrorCode::kNone) {
                         call->fail(pr, r.error, r.message);
                       } else {
                         pr.base_offset = r.base_offset;
                         pr.log_append_time_ms = r.log_append_time_ms;
                         pr.log_start_offset = r.log_start_offset;
                       }
                       call->done();
                     });
    }
  }
  call->done();
}

// Dispatches the queue's decoded head requests in order; a request queued behind an offloaded
// one (and not offloaded itself) is decoded here, when its turn comes.
void drain(Services& s, ProduceOrder& order) {
  while (!order.queue.empty()) {
    std::shared_ptr<PendingProduce> head = order.queue.front();
    if (!head->ready) {
      if (head->in_pool) return;
      decode_all(*head);
      head->ready = true;
    }
    order.queue.pop_front();
    dispatch(s, *head);
  }
}

}  // namespace

void handle_produce(Services& s, Request&& req) {
  // The log keeps the decoded request alive while it appends: uncompressed batches point into it.
  auto body = std::make_shared<msg::ProduceRequest>(req.decode<msg::ProduceRequest>());
  const int16_t version = req.header.api_version;
  auto call = std::make_shared<ProduceCall>();
  call->respond = req.respond;
  call->acks_zero = body->acks == 0;

  call->resp.responses.resize(body->topic_data.size());
  size_t compressed = 0;
  for (size_t t = 0; t < body->topic_data.size(); ++t) {
    call->resp.responses[t].name = body->topic_data[t].name;
    call->resp.responses[t].partition_responses.resize(body->topic_data[t].partition_data.size());
    for (size_t p = 0; p < body->topic_data[t].partition_data.size(); ++p) {
      auto& pr = call->resp.responses[t].partition_responses[p];
      const auto& data = body->topic_data[t].partition_data[p];
      pr.index = data.index;
      if (version < kFirstServedVersion)
        call->fail(pr, ErrorCode::kUnsupportedVersion, "Produce v0-2 (message format v0/v1) is not supported; use v3+");
      else if (data.records)
        compressed += slow_compressed_bytes(*data.records);
    }
  }
  if (version < kFirstServedVersion) {
    spdlog::warn("client={} sent Produce v{}; answered UNSUPPORTED_VERSION", req.header.client_id, version);
    return call->done();
  }

  auto pending = std::make_shared<PendingProduce>();
  pending->body = std::move(body);
  pending->call = std::move(call);
  pending->version = version;
  pending->max_decompressed = s.config->limits.max_decompressed_bytes_per_request;

  std::shared_ptr<ProduceOrder> order;
  if (req.session) {
    if (!req.session->produce_order) req.session->produce_order = std::make_shared<ProduceOrder>();
    order = std::static_pointer_cast<ProduceOrder>(req.session->produce_order);
  }
  const bool offload = order && s.loop && compressed >= kOffloadCompressedBytes;
  if (!offload && (!order || order->queue.empty())) {
    decode_all(*pending);
    return dispatch(s, *pending);
  }
  order->queue.push_back(pending);
  if (!offload) return;
  pending->in_pool = true;
  auto* work = new DecodeWork{};
  work->req.data = work;
  work->pending = pending;
  work->order = order;
  work->services = &s;
  int rc = uv_queue_work(
      s.loop, &work->req,
      [](uv_work_t* w) {
        auto& pp = *static_cast<DecodeWork*>(w->data)->pending;
        try {
          decode_all(pp);
        } catch (const std::exception& e) {
          pp.worker_error = std::string("decompression failed: ") + e.what();
        }
      },
      [](uv_work_t* w, int) {
        std::unique_ptr<DecodeWork> work(static_cast<DecodeWork*>(w->data));
        work->pending->in_pool = false;
        work->pending->ready = true;
        // A closed connection drops its queue: nobody is left to answer.
        if (auto order = work->order.lock()) drain(*work->services, *order);
      });
  if (rc != 0) {
    delete work;
    pending->in_pool = false;
    drain(s, *order);  // decodes it here instead
  }
}

}  // namespace kib::kafka
