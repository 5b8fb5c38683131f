// Kafka record batches, message format v2 (magic 2): decoding what producers send and encoding
// what Fetch returns.
//
// Batch layout (big-endian; 61-byte header):
//   baseOffset i64 | batchLength i32 | partitionLeaderEpoch i32 | magic i8 | crc u32 |
//   attributes i16 | lastOffsetDelta i32 | baseTimestamp i64 | maxTimestamp i64 |
//   producerId i64 | producerEpoch i16 | baseSequence i32 | recordCount i32 | records...
// batchLength counts the bytes after itself; crc is CRC32C of attributes..end; records are
// compressed as one stream when attributes bits 0-2 name a codec.
//
// Record: length varint | attributes i8 | timestampDelta varlong | offsetDelta varint |
//   key (varint length, -1 = null) | value (same) | header count varint |
//   headers: key (varint length + UTF-8, never null) | value (varint length, -1 = null)
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "kafka/records/compression.h"

namespace kib::kafka {

inline constexpr int8_t kRecordBatchMagic = 2;
inline constexpr size_t kRecordBatchHeaderSize = 61;
// Bytes before the part batchLength counts (baseOffset + batchLength).
inline constexpr size_t kRecordBatchLogOverhead = 12;

// base + delta as Kafka computes it (Java long arithmetic wraps): both come from the client, so
// a signed addition could overflow, which is undefined behaviour in C++.
constexpr int64_t wrapping_add(int64_t base, int64_t delta) {
  return static_cast<int64_t>(static_cast<uint64_t>(base) + static_cast<uint64_t>(delta));
}

// Error::code of a failed decode (Error::domain is kProtocol); read it with record_error().
// The caller maps these to Kafka codes, e.g. kCorrupt -> CORRUPT_MESSAGE, kInvalidRecord ->
// INVALID_RECORD, kTooLarge -> RECORD_LIST_TOO_LARGE / MESSAGE_TOO_LARGE, kUnsupportedMagic ->
// UNSUPPORTED_FOR_MESSAGE_FORMAT (Kafka itself answers INVALID_RECORD for produce v3+),
// kUnsupportedCompression -> UNSUPPORTED_COMPRESSION_TYPE.
enum class RecordError : uint32_t {
  kCorrupt = 1,                 // CRC mismatch, batchLength below the header size, undecodable compressed payload
  kInvalidRecord = 2,           // structure: truncation, lengths, counts, offset deltas, trailing bytes
  kTooLarge = 3,                // decompressed records would pass the decompression budget
  kUnsupportedMagic = 4,        // magic 0/1 (legacy message sets) or > 2
  kUnsupportedCompression = 5,  // codec id 5-7 in the attributes
};
RecordError record_error(const Error& e);

enum class TimestampType : uint8_t { kCreateTime = 0, kLogAppendTime = 1 };

struct BatchAttributes {
  static constexpr int16_t kCompressionMask = 0x07;
  static constexpr int16_t kLogAppendTime = 0x08;
  static constexpr int16_t kTransactional = 0x10;
  static constexpr int16_t kControl = 0x20;
  static constexpr int16_t kDeleteHorizon = 0x40;
};

struct RecordBatchHeader {
  int64_t base_offset = 0;
  int32_t batch_length = 0;
  int32_t partition_leader_epoch = -1;
  int8_t magic = kRecordBatchMagic;
  uint32_t crc = 0;
  int16_t attributes = 0;
  int32_t last_offset_delta = 0;
  int64_t base_timestamp = 0;
  int64_t max_timestamp = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  int32_t record_count = 0;

  // Valid for any decoded header: decoding rejects codec ids 5-7.
  Compression compression() const { return static_cast<Compression>(attributes & BatchAttributes::kCompressionMask); }
  TimestampType timestamp_type() const {
    return (attributes & BatchAttributes::kLogAppendTime) ? TimestampType::kLogAppendTime : TimestampType::kCreateTime;
  }
  bool is_transactional() const { return attributes & BatchAttributes::kTransactional; }
  bool is_control() const { return attributes & BatchAttributes::kControl; }
  bool has_delete_horizon() const { return attributes & BatchAttributes::kDeleteHorizon; }
  // Wraps rather than overflows: baseOffset is the client's (Kafka assigns its own).
  int64_t last_offset() const { return wrapping_add(base_offset, last_offset_delta); }
};

// Nullable bytes are std::optional<ByteSpan>: nullopt is Kafka's null (length -1), an empty span
// is a present, empty value.
struct RecordHeader {
  std::string_view key;
  std::optional<ByteSpan> value;
};

// A decoded record. Its spans are views (see DecodedBatch for what they point into).
struct Record {
  int8_t attributes = 0;
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  std::optional<ByteSpan> key;
  std::optional<ByteSpan> value;
  std::span<const RecordHeader> headers;
};

// One decoded batch. Ownership: keys, values and header views point either into the input the
// batch was decoded from (uncompressed batches; the caller keeps that buffer alive) or into
// this object's own decompressed buffer (compressed batches). Moving a DecodedBatch keeps every
// view valid; copying is disabled because a copy's views would point into the original.
class DecodedBatch {
 public:
  DecodedBatch() = default;
  DecodedBatch(DecodedBatch&&) = default;
  DecodedBatch& operator=(DecodedBatch&&) = default;
  DecodedBatch(const DecodedBatch&) = delete;
  DecodedBatch& operator=(const DecodedBatch&) = delete;

  RecordBatchHeader header;
  ByteSpan wire;  // the whole batch as received, header included (a view into the input)
  std::vector<Record> records;

  // Wraps rather than overflows (baseOffset is the client's); offsetDelta is checked on decode.
  int64_t offset_of(const Record& r) const { return wrapping_add(header.base_offset, r.offset_delta); }
  // Bytes this batch owns beyond the input it was decoded from (its decompressed records).
  size_t decompressed_bytes() const { return decompressed_.size(); }
  // Memory this batch holds: decompressed bytes plus the decoded record and header structs.
  size_t memory_bytes() const {
    return decompressed_.capacity() + records.capacity() * sizeof(Record) +
           header_storage_.capacity() * sizeof(RecordHeader);
  }
  // LogAppendTime batches carry the append time in maxTimestamp for every record. A CreateTime
  // sum wraps, as Kafka's Java long does, instead of being undefined; the Produce mapping refuses
  // the times Iggy cannot hold (below -1 or past its microsecond range) with INVALID_TIMESTAMP.
  int64_t timestamp_of(const Record& r) const {
    return header.timestamp_type() == TimestampType::kLogAppendTime ? header.max_timestamp
                                                                     : wrapping_add(header.base_timestamp, r.timestamp_delta);
  }

 private:
  friend struct BatchDecoder;
  std::vector<RecordHeader> header_storage_;
  Bytes decompressed_;
};

// Memory one request's decoding may still take, shared by all of its batches: each compressed
// batch subtracts what its decompression reserved (also when it fails), and every batch the
// decoded record and header structs it allocates (sizeof(Record) per record, sizeof(RecordHeader)
// per header; a minimal record is 7 bytes on the wire and 88 in memory). Past it a batch is
// refused with RecordError::kTooLarge before the memory is allocated.
struct DecompressionBudget {
  size_t remaining;
};

// Decodes a Produce partition's `records`: one or more whole v2 batches, nothing else. Checks
// magic, batchLength against the bytes present, CRC32C, codec, lastOffsetDelta == recordCount-1,
// recordCount against the bytes that can hold it and against the budget (before reserving
// anything), every record's length, offsetDelta == its index, and that the records fill the batch
// exactly.
Result<std::vector<DecodedBatch>> decode_record_batches(ByteSpan records, DecompressionBudget& budget);

// Checks on a Produce partition's raw `records` that read batch headers only, so a request can be
// refused before any decompression; malformed framing is left for decode_record_batches to report.
//   * whether any batch names `codec` (Produce refuses zstd below v7, KIP-110);
bool any_batch_compressed_with(ByteSpan records, Compression codec);
//   * whether the first batch is transactional (Kafka's RequestUtils.hasTransactionalRecords
//     asks it of every partition: such a request needs WRITE on its transactional id).
bool first_batch_is_transactional(ByteSpan records);

// ---- encoding -------------------------------------------------------------------------------

struct BatchSettings {
  int64_t base_offset = 0;
  int32_t partition_leader_epoch = -1;
  Compression compression = Compression::kNone;
  TimestampType timestamp_type = TimestampType::kCreateTime;
  int64_t log_append_time = -1;  // maxTimestamp when timestamp_type is kLogAppendTime
  bool transactional = false;
  bool control = false;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
};

struct RecordToEncode {
  int64_t timestamp = 0;  // absolute, milliseconds
  std::optional<ByteSpan> key;
  std::optional<ByteSpan> value;
  std::span<const RecordHeader> headers;
};

// Appends one v2 batch to `out`. Records get offsetDelta 0, 1, 2...; baseTimestamp is the first
// record's timestamp and maxTimestamp the largest. Uncompressed records are written straight into
// `out` and batchLength/CRC patched at finish(); compressed ones go to a scratch buffer that is
// compressed into `out` at finish(). Nothing is written until the first add(), so a builder
// that receives no records leaves `out` untouched.
class RecordBatchBuilder {
 public:
  RecordBatchBuilder(ByteWriter& out, const BatchSettings& settings);

  void add(const RecordToEncode& record);
  int32_t record_count() const { return count_; }
  // Completes the batch; returns its size in bytes (0 when no record was added).
  size_t finish();

 private:
  void write_header();
  void write_record(ByteWriter& w, const RecordToEncode& record);

  ByteWriter& out_;
  BatchSettings settings_;
  ByteWriter scratch_;  // records before compression
  size_t start_ = 0;    // where the batch begins in out_
  int32_t count_ = 0;
  int64_t base_timestamp_ = 0;
  int64_t max_timestamp_ = 0;
  bool finished_ = false;
};

// One-call form of RecordBatchBuilder.
size_t encode_record_batch(ByteWriter& out, const BatchSettings& settings, std::span<const RecordToEncode> records);

}  // namespace kib::kafka
