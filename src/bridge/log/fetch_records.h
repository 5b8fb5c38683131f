// Fetch's half of the data path, without I/O: which offsets are readable, how many Iggy messages
// to ask for, and how polled Iggy messages become the v2 record batches a Fetch returns.
//
// Batches are rebuilt from Iggy (which stores messages, not Kafka batches) unless the fetch offset
// is in a recently produced batch the bridge still holds (batch_cache.h). Rebuilt ones start
// exactly at the requested offset (where Iggy's poll starts), are uncompressed, CreateTime, producer id -1, partition leader epoch 0, and cover one
// contiguous run of offsets each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "bridge/mapping/record_mapping.h"
#include "common/bytes.h"
#include "common/result.h"
#include "iggy/types.h"
#include "kafka/records/record_batch.h"

namespace kib::bridge {

// Where a fetch offset stands against the partition's [log start, high watermark].
enum class FetchPosition {
  kBelowLogStart,  // OFFSET_OUT_OF_RANGE
  kReadable,       // log start <= offset < high watermark
  kAtEnd,          // offset == high watermark: empty answer, no error
  kBeyondEnd,      // OFFSET_OUT_OF_RANGE
};
FetchPosition classify_fetch_offset(int64_t offset, int64_t log_start, int64_t high_watermark);

// The bridge is the only leader a partition ever has, so its leader epoch is 0, as on a Kafka
// broker whose partition leader never changed: in fetched batches, Metadata and ListOffsets.
// Consumers commit it with their offsets (kafka-consumer-groups --describe --verbose shows it).
inline constexpr int32_t kPartitionLeaderEpoch = 0;

// Most messages one Iggy poll asks for, whatever the byte budget allows: a 1 MiB partition
// budget of 100-byte records is some 6000 messages, which one poll should cover.
inline constexpr uint32_t kMaxPollMessages = 10000;
// Keeps one poll reply well below Iggy's 64 MiB frame (it has no byte cap of its own).
inline constexpr uint64_t kMaxPollReplyBytes = 16u << 20;

// Messages to poll for `budget_bytes` when the partition's messages average `avg_message_bytes`
// (0 = unknown): enough to fill the budget, at least 1, at most kMaxPollMessages, and no more than
// kMaxPollReplyBytes worth.
uint32_t poll_count_for(uint64_t budget_bytes, uint64_t avg_message_bytes);

// One Kafka record read back from an Iggy message, at its offset. Views point into the polled
// reply buffer, which the caller keeps alive.
struct FetchedRecord {
  int64_t offset = 0;
  KafkaRecordView record;
  int64_t aborted_from = -1;  // an aborted-record marker: the first offset of its run (as polled)
};

// The records of one poll, from `from_offset` on, stopping before the first message that cannot
// be mapped (`unmappable` then says which and why). Placeholders of aborted records
// (record_mapping.h) are gaps, except the last of each run of one producer's, which stays as the
// marker encode_fetched_records turns into an ABORT control batch: every client moves past a
// control batch, so a fetch whose records are all aborted still moves the consumer on, as on
// Kafka (docs/transactions.md, "Reading").
struct PolledRecords {
  std::vector<FetchedRecord> records;
  std::optional<Error> unmappable;
  int64_t unmappable_offset = -1;
  // map_generation_messages: the Kafka offset of the last message it read (-1: none), so a read
  // that found nothing at or after its offset knows whether the generation goes on below the
  // cleaner point.
  int64_t last_generation_offset = -1;
};
PolledRecords map_polled_messages(std::span<const iggy::MessageView> messages, int64_t from_offset);
// The records of one poll of a compacted partition's generation topic (docs/compaction.md): each
// at the Kafka offset its kib.offset header names (gaps where the cleaner removed records), those
// from `from_offset` on and below `end_offset` (the cleaner point). A message without a readable
// kib.offset stops the read as an unmappable one does.
PolledRecords map_generation_messages(std::span<const iggy::MessageView> messages, int64_t from_offset,
                                      int64_t end_offset);

// Bytes `record` takes inside a v2 batch whose baseTimestamp is `base_timestamp` (ms), at
// `offset_delta`. Matches kafka::RecordBatchBuilder byte for byte.
size_t record_wire_size(const kafka::RecordToEncode& record, int64_t base_timestamp, int32_t offset_delta);

struct EncodedRecords {
  Bytes bytes;               // zero or more v2 batches back to back
  size_t records = 0;        // records encoded
  int64_t next_offset = -1;  // offset after the last encoded record (-1 when none)
  std::vector<std::pair<int64_t, int64_t>> aborted;  // producer id, first offset of each marker encoded
};

// Encodes `records` (ascending offsets) into v2 batches, a new batch wherever offsets are not
// contiguous, an aborted-record marker as a control batch of its own (one ABORT marker record,
// transactional, the aborted producer's id and epoch), cut at a record boundary so the result stays within `max_bytes`. With
// `min_one_record` (KIP-74: the first partition of a response that has data) the first record
// is returned even when it alone exceeds `max_bytes`, so a consumer never stalls on a large record.
EncodedRecords encode_fetched_records(std::span<const FetchedRecord> records, size_t max_bytes, bool min_one_record);

}  // namespace kib::bridge
