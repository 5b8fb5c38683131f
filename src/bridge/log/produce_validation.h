// Kafka's rules for what a client may append to one partition, checked before anything reaches
// Iggy. Pure: the caller has already decoded the batches (CRC, structure, decompression budget).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "common/result.h"
#include "bridge/log/log_types.h"
#include "kafka/records/record_batch.h"

namespace kib::bridge {

// Iggy refuses frames above 64 MiB (docs/iggy-protocol.md §5); what one send may carry after the VSR
// header, the metadata section and the batch header, with room to spare.
inline constexpr uint64_t kMaxIggySendBytes = (64u << 20) - 64 * 1024;
// Per-message overhead of Iggy's send layout (message frame header).
inline constexpr uint64_t kIggyMessageFrameBytes = 48;

// One partition's batches from a Produce v3+ request. Errors carry Kafka codes (bridge/errors.h):
//   not exactly one batch, zero records, a control batch, or an idempotent batch without a
//     sequence                                                     -> INVALID_RECORD
//   a transactional batch, unless `transactional` (the transaction coordinator's own checks
//     and appends; a Produce reaches the log with one only when the bridge routes it wrongly)
//                                                                  -> INVALID_TXN_STATE
//   a transactional batch without a producer id                    -> INVALID_RECORD
//   the batch as sent is larger than the topic's max.message.bytes -> MESSAGE_TOO_LARGE
Status validate_produce_batches(std::span<const kafka::DecodedBatch> batches, int32_t max_message_bytes,
                                bool transactional = false);

// Kafka's LogValidator.validateKey on a compacted topic (cleanup.policy includes compact): every
// record without a key is a record error "Compacted topic cannot accept message without key in
// topic partition <topic>-<partition>", and the batch is refused INVALID_RECORD with Kafka's
// summary message (the count and at most the first three errors). nullopt: every record has a key.
std::optional<ProduceResult> refuse_keyless_records(std::span<const kafka::DecodedBatch> batches,
                                                    const std::string& topic, int32_t partition);

}  // namespace kib::bridge
