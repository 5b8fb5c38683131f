// Fetch (key 1), v4-12 (topic names; v13+ addresses topics by id). The partition log reads,
// rebuilds v2 batches at the requested offsets and long-polls; this file maps the request and
// response shapes.
//
// Fetch sessions (KIP-227) are never created: every response carries session_id 0, which tells
// clients to keep sending full requests (FetchSessionHandler), so forgotten_topics_data is
// meaningless and ignored. A request that continues a session (epoch other than 0 and -1) names
// one this bridge never issued: FETCH_SESSION_ID_NOT_FOUND, after which clients start over
// with a full request.
//
// Authorization (KafkaApis.handleFetchRequest): a consumer needs READ on each topic, else its
// partitions get TOPIC_AUTHORIZATION_FAILED and are not read; a replica (replica_id >= 0)
// needs CLUSTER_ACTION on the cluster, else every partition gets TOPIC_AUTHORIZATION_FAILED.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bridge/errors.h"
#include "bridge/log/partition_log.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/security/iggy_identity.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/fetch.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

constexpr int32_t kInitialSessionEpoch = 0;
constexpr int32_t kFinalSessionEpoch = -1;
constexpr int32_t kDenied = -1;  // a partition's result slot when it is not read

// The response mirrors the request: per topic, each partition with its slot in the partitions
// read (kDenied: answered TOPIC_AUTHORIZATION_FAILED without reading it).
using Shape = std::vector<std::pair<std::string, std::vector<std::pair<int32_t, int32_t>>>>;

// What to read, and the answer's shape. A partition named more than once is read and answered
// once, at its first position and with its last entry's parameters: Kafka's
// FetchRequest.fetchData() is a LinkedHashMap keyed by partition, so a later entry replaces an
// earlier one in place.
std::pair<std::vector<bridge::FetchPartitionRequest>, Shape> partitions_to_read(const Request& req,
                                                                                 const msg::FetchRequest& body) {
  std::vector<bridge::FetchPartitionRequest> partitions;
  Shape shape;
  std::map<std::pair<std::string_view, int32_t>, int32_t> index;
  const bool from_replica = body.replica_id >= 0 || body.replica_state.replica_id >= 0;
  const bool replica_allowed = !from_replica || req.authorized_cluster(Op::kClusterAction);
  for (const auto& topic : body.topics) {
    std::vector<std::pair<int32_t, int32_t>>* ids = nullptr;
    const bool may_read = from_replica ? replica_allowed : req.authorized(Op::kRead, Res::kTopic, topic.topic);
    for (const auto& p : topic.partitions) {
      const int32_t slot = may_read ? static_cast<int32_t>(partitions.size()) : kDenied;
      auto [it, inserted] = index.try_emplace({topic.topic, p.partition}, slot);
      if (!inserted) {
        if (it->second == kDenied) continue;
        auto& earlier = partitions[static_cast<size_t>(it->second)];
        earlier.fetch_offset = KafkaOffset(p.fetch_offset);
        earlier.max_bytes = p.partition_max_bytes;
        continue;
      }
      if (!ids) ids = &shape.emplace_back(topic.topic, std::vector<std::pair<int32_t, int32_t>>()).second;
      if (may_read)
        partitions.push_back({topic.topic, PartitionId(p.partition), KafkaOffset(p.fetch_offset), p.partition_max_bytes});
      ids->emplace_back(p.partition, slot);
    }
  }
  return {std::move(partitions), std::move(shape)};
}

// Kafka caps the response at the broker's fetch.max.bytes whatever the request asks for; the long
// poll is capped too, so a request cannot hold its waiter (and its connection's slot) for 24 days.
bridge::FetchParams fetch_params(const msg::FetchRequest& body, const config::LimitsConfig& limits) {
  bridge::FetchParams params;
  params.max_wait_ms =
      static_cast<int32_t>(std::min<int64_t>(body.max_wait_ms, static_cast<int64_t>(limits.fetch_max_wait_ms)));
  params.min_bytes = body.min_bytes;
  params.max_bytes =
      static_cast<int32_t>(std::min<int64_t>(body.max_bytes, static_cast<int64_t>(limits.fetch_max_bytes)));
  params.isolation =
      body.isolation_level == 1 ? bridge::IsolationLevel::kReadCommitted : bridge::IsolationLevel::kReadUncommitted;
  return params;
}

// One partition's answer: refused (FetchResponse.partitionResponse(tp, TOPIC_AUTHORIZATION_FAILED)),
// or what the log read. The bytes of record chunks too small to be written from where they are
// go to `copied_bytes`.
void fill_partition(msg::FetchResponse::PartitionData& pd, bridge::FetchPartitionResult* r, bool read_committed,
                    size_t& copied_bytes) {
  if (!r) {
    pd.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
    pd.high_watermark = -1;
    pd.last_stable_offset = -1;
    pd.log_start_offset = -1;
    pd.aborted_transactions.reset();
    pd.records = ChunkedBytes();
    return;
  }
  pd.error_code = to_int16(r->error);
  pd.high_watermark = r->high_watermark();
  pd.last_stable_offset = r->last_stable_offset();
  pd.log_start_offset = r->log_start_offset();
  // An aborted transaction's records are placeholders in the log, read as one ABORT marker per
  // run (docs/mapping.md, "Aborted records"); each marker's range is listed, as Kafka lists the
  // aborted transactions a read_committed fetch's records overlap. Committed ones are plain batches.
  if (read_committed) {
    pd.aborted_transactions.emplace();
    for (const auto& [producer_id, first_offset] : r->aborted) {
      msg::FetchResponse::AbortedTransaction a;
      a.producer_id = producer_id;
      a.first_offset = first_offset;
      pd.aborted_transactions->push_back(a);
    }
  } else {
    pd.aborted_transactions.reset();
  }
  for (const auto& c : r->records.chunks())
    if (c.bytes.size() < Responder::kMinSharedSpanBytes) copied_bytes += c.bytes.size();
  pd.records = std::move(r->records);
}

void answer(const Responder& respond, const Shape& shape, bool read_committed,
            std::vector<bridge::FetchPartitionResult> results) {
  msg::FetchResponse resp;
  resp.session_id = 0;
  size_t copied_bytes = 0;
  for (const auto& [topic, ids] : shape) {
    auto& tr = resp.responses.emplace_back();
    tr.topic = topic;
    for (const auto& [id, slot] : ids) {
      auto& pd = tr.partitions.emplace_back();
      pd.partition_index = id;
      fill_partition(pd, slot == kDenied ? nullptr : &results[static_cast<size_t>(slot)], read_committed, copied_bytes);
    }
  }
  // Topic names and per-partition fields are small beside the records, and larger batches are
  // written from their own buffers (Responder::kMinSharedSpanBytes).
  respond.send(resp, copied_bytes + 1024 + 64 * results.size());
}

// `identity`: the Iggy identity the polls run as, or the error every partition gets.
void handle(bridge::PartitionLog& log, const config::LimitsConfig& limits, Request&& req,
            const Result<bridge::IggyIdentityRef>& identity) {
  auto body = req.decode<msg::FetchRequest>();
  if (req.header.api_version >= 7 && body.session_epoch != kInitialSessionEpoch &&
      body.session_epoch != kFinalSessionEpoch) {
    msg::FetchResponse resp;
    resp.error_code = to_int16(ErrorCode::kFetchSessionIdNotFound);
    resp.session_id = 0;
    return req.respond.send(resp);
  }
  auto [partitions, shape] = partitions_to_read(req, body);
  bridge::FetchParams params = fetch_params(body, limits);
  auto answered = [respond = req.respond, shape = std::move(shape),
                   read_committed = params.isolation == bridge::IsolationLevel::kReadCommitted](
                      std::vector<bridge::FetchPartitionResult> results) {
    answer(respond, shape, read_committed, std::move(results));
  };
  if (!identity) {
    std::vector<bridge::FetchPartitionResult> refused(partitions.size());
    for (auto& r : refused) r.error = bridge::to_kafka_error(identity.error());
    return answered(std::move(refused));
  }
  params.as = identity.value()->pool;
  log.fetch(std::move(partitions), params, std::move(answered), req.conn ? req.conn->id() : 0);
}

}  // namespace

HandlerSpec fetch_handler() {
  return serve<msg::FetchRequest>(4, 12, [](const Services& s, Request&& req) {
    with_iggy_identity(s.identities, std::move(req), [&s](Request&& req, const Result<bridge::IggyIdentityRef>& id) {
      handle(s.log, s.config.limits, std::move(req), id);
    });
  });
}

}  // namespace kib::kafka
