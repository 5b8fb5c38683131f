// Compaction's generation copies (docs/compaction.md, "The design"): a record the cleaner keeps
// is written to the partition's generation topic as the live message it was, with two more
// String-kind user headers, and read back at its Kafka offset.
//
//   kib.offset   Int64 (8 bytes little-endian): the record's Kafka offset, on every copy
//   kib.horizon  Int64: a kept tombstone's delete horizon (ms), set by the pass that first kept it
//
// Both sort after every kafka.* key, so a bridge-written block keeps its order with them appended.
#pragma once

#include <optional>
#include <string_view>

#include "bridge/mapping/record_mapping.h"
#include "common/bytes.h"
#include "common/result.h"

namespace kib::bridge {

inline constexpr std::string_view kKeptOffsetHeader = "kib.offset";
inline constexpr std::string_view kDeleteHorizonHeader = "kib.horizon";

// The copy's header block: `live_headers` (a parsable Iggy block, possibly empty) with kib.offset
// and, when given, kib.horizon, in Iggy's key order (key kind, then key bytes). A block that
// already has either key, or does not parse, is an error (INVALID_RECORD).
Result<Bytes> generation_header_block(ByteSpan live_headers, int64_t kafka_offset,
                                      std::optional<int64_t> delete_horizon_ms);

struct GenerationMarkers {
  int64_t kafka_offset = -1;
  int64_t delete_horizon_ms = -1;  // -1: none (not a tombstone, or not kept by a pass yet)
};
// The markers of a generation message's header block; an error when kib.offset is missing, not
// an 8-byte Int64 or negative.
Result<GenerationMarkers> read_generation_markers(ByteSpan header_block);

// A copy of a message written by a native Iggy client reads every header as a Kafka header:
// drops the two the cleaner added.
void strip_generation_headers(KafkaRecordView& record);

}  // namespace kib::bridge
