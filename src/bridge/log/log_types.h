// The values PartitionLog's services exchange with the Kafka handlers: what an append, a fetch
// and an offset lookup answer (partition_log.h has the semantics).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/chunked_bytes.h"
#include "common/ids.h"
#include "common/result.h"
#include "kafka/protocol/error_code.h"

namespace kib::iggy {
class IggyPool;
}

namespace kib::bridge {

// ListOffsets' special timestamps.
inline constexpr TimestampMs kLatestTimestamp{-1};
inline constexpr TimestampMs kEarliestTimestamp{-2};
inline constexpr TimestampMs kMaxTimestamp{-3};            // v7+
inline constexpr TimestampMs kEarliestLocalTimestamp{-4};  // v8+ (tiered storage; = earliest here)

// One record a Produce refused (Produce v8+ record_errors): its index in the batch and why.
struct ProduceRecordError {
  int32_t batch_index = 0;
  std::string message;
};

struct ProduceResult {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  std::string message;  // why, for errors (Produce v8+ error_message)
  std::vector<ProduceRecordError> record_errors;  // INVALID_RECORD: the records at fault
  KafkaOffset base_offset = kNoOffset;
  TimestampMs log_append_time_ms = kNoTimestamp;  // -1: CreateTime
  KafkaOffset log_start_offset = kNoOffset;
};

enum class IsolationLevel : int8_t { kReadUncommitted = 0, kReadCommitted = 1 };

struct FetchPartitionRequest {
  std::string topic;
  PartitionId partition;
  KafkaOffset fetch_offset;
  int32_t max_bytes = 0;  // partition_max_bytes
};

struct FetchParams {
  int32_t max_wait_ms = 0;
  int32_t min_bytes = 1;
  int32_t max_bytes = INT32_MAX;  // whole response (KIP-74)
  IsolationLevel isolation = IsolationLevel::kReadUncommitted;
  // The Iggy identity the polls run as ([principals] per_principal: the principal's own pool);
  // nullptr: the bridge's [iggy] user.
  iggy::IggyPool* as = nullptr;
};

struct FetchPartitionResult {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  KafkaOffset high_watermark = kNoOffset;
  KafkaOffset last_stable_offset = kNoOffset;  // the high watermark unless a commit holds it (hold_stable)
  KafkaOffset log_start_offset = kNoOffset;
  ChunkedBytes records;  // v2 batches, empty when none: cached ones shared, not copied
  // The aborted ranges whose ABORT markers `records` carries (Fetch v4+ aborted_transactions at
  // read_committed): producer id and first offset of each, as Kafka lists them.
  std::vector<std::pair<int64_t, int64_t>> aborted;
};

// One result per requested partition, in request order.
using FetchCallback = std::function<void(std::vector<FetchPartitionResult>)>;

struct OffsetLookup {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  KafkaOffset offset = kNoOffset;
  TimestampMs timestamp = kNoTimestamp;
};

// Whether `topic` has `partition`, from the catalog (asking Iggy when it does not know the topic):
// the error is the one Produce, Fetch and ListOffsets report for the partition.
using PartitionLookup =
    std::function<void(const std::string& topic, PartitionId partition, std::function<void(Status)>)>;

}  // namespace kib::bridge
