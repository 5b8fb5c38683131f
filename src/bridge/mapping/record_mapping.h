// Kafka record <-> Iggy message mapping (docs/mapping.md is the contract users read).
//
// Follows upstream Iggy's Kafka-gateway convention (kafka.v, kafka.key, kafka.h.<name>,
// kafka.value, kafka.ts, kafka.envelope + envelope layout v1) so data written by either gateway
// reads back through the other, and deviates where Kafka fidelity demands: records whose
// headers repeat a name or are not in the order Iggy would store them (sorted by name) take the
// envelope, so header order and duplicates survive (upstream refuses repeats and sorts).
#pragma once

#include <optional>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "iggy/types.h"
#include "kafka/records/record_batch.h"

namespace kib::bridge {

// The Iggy messages for the records of one Kafka batch. Message spans point either into the
// DecodedBatch the records came from (payloads) or into `arena` (header blocks, envelopes), so
// both must outlive the send.
struct MappedMessages {
  std::vector<iggy::OutgoingMessage> messages;
  Bytes arena;
  size_t envelopes = 0;  // how many records took the envelope form (for metrics)
};

// Errors carry ErrorDomain::kKafka and the Kafka error code in `code`
// (MESSAGE_TOO_LARGE = 10, INVALID_RECORD = 87, INVALID_TIMESTAMP = 32).
Result<MappedMessages> map_batch_to_iggy(const kafka::DecodedBatch& batch);

// One Kafka record read back from an Iggy message. Views point into the message's buffer,
// except header names/values in `headers` which also point into that buffer.
struct KafkaRecordView {
  int64_t timestamp_ms = -1;
  std::optional<ByteSpan> key;
  std::optional<ByteSpan> value;
  std::vector<kafka::RecordHeader> headers;
};

// Fails (built with kafka_error(UNKNOWN_SERVER_ERROR); to_kafka_error() gives -1) for messages that
// claim the mapping (kafka.v) but are malformed, or use an unknown mapping version.
Result<KafkaRecordView> map_iggy_to_record(const iggy::MessageView& message);

}  // namespace kib::bridge
