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

// One record of an aborted transaction as the bridge keeps it in Iggy (docs/mapping.md,
// "Aborted records"; docs/transactions.md, "An abort occupies its offsets"): its offset stays
// taken, its data is gone. The message carries kafka.v, kafka.value = null and
// kib.aborted = "<producer id>/<epoch>" over the placeholder payload byte.
struct AbortedRecordMarker {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  bool operator==(const AbortedRecordMarker&) const = default;
};

// `count` placeholder messages for the records of an aborted batch, stamped `origin_timestamp_us`
// (0: Iggy's append time).
MappedMessages map_aborted_placeholders(const AbortedRecordMarker& marker, size_t count,
                                        uint64_t origin_timestamp_us);

// One Kafka record read back from an Iggy message. Views point into the message's buffer,
// except header names/values in `headers` which also point into that buffer.
struct KafkaRecordView {
  int64_t timestamp_ms = -1;
  std::optional<ByteSpan> key;
  std::optional<ByteSpan> value;
  std::vector<kafka::RecordHeader> headers;
  // Set for a placeholder of an aborted record: no key, value or headers then.
  std::optional<AbortedRecordMarker> aborted;
};

// Fails (built with kafka_error(UNKNOWN_SERVER_ERROR); to_kafka_error() gives -1) for messages that
// claim the mapping (kafka.v) but are malformed, or use an unknown mapping version.
Result<KafkaRecordView> map_iggy_to_record(const iggy::MessageView& message);

}  // namespace kib::bridge
