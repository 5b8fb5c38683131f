#include "kafka/records/record_batch.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/crc32c.h"

namespace kib::kafka {
namespace {

// Field offsets inside the 61-byte batch header.
constexpr size_t kBatchLengthAt = 8;
constexpr size_t kMagicAt = 16;
constexpr size_t kCrcAt = 17;
constexpr size_t kAttributesAt = 21;  // CRC32C covers from here to the end of the batch
constexpr size_t kLastOffsetDeltaAt = 23;
constexpr size_t kBaseTimestampAt = 27;
constexpr size_t kMaxTimestampAt = 35;
constexpr size_t kRecordCountAt = 57;
constexpr int32_t kMinBatchLength = static_cast<int32_t>(kRecordBatchHeaderSize - kRecordBatchLogOverhead);
// Smallest record: length, attributes, timestampDelta, offsetDelta, key length, value length and
// header count, one byte each.
constexpr size_t kMinRecordSize = 7;
// Smallest header: key length and value length.
constexpr size_t kMinHeaderSize = 2;

// Internal: the reason a batch is refused; decode_record_batches turns it into an Error.
struct BatchRejected {
  RecordError kind;
  std::string message;
};

[[noreturn]] void reject(RecordError kind, std::string message) { throw BatchRejected{kind, std::move(message)}; }

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::optional<ByteSpan> read_nullable_bytes(ByteReader& r, const char* what) {
  int32_t len = r.varint(what);
  if (len == -1) return std::nullopt;
  if (len < -1) reject(RecordError::kInvalidRecord, std::string(what) + ": negative length " + std::to_string(len));
  return r.take(static_cast<size_t>(len), what);
}

size_t uvarint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
size_t varint_size(int32_t v) { return uvarint_size(zigzag_encode32(v)); }
size_t varlong_size(int64_t v) { return uvarint_size(zigzag_encode64(v)); }

int32_t checked_length(size_t n, const char* what) {
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw std::length_error(std::string(what) + " longer than 2^31-1 bytes");
  return static_cast<int32_t>(n);
}
size_t nullable_size(const std::optional<ByteSpan>& b) {
  if (!b) return varint_size(-1);
  return varint_size(checked_length(b->size(), "record field")) + b->size();
}
void write_nullable(ByteWriter& w, const std::optional<ByteSpan>& b) {
  if (!b) {
    w.varint(-1);
    return;
  }
  w.varint(static_cast<int32_t>(b->size()));
  w.bytes(*b);
}

}  // namespace

RecordError record_error(const Error& e) { return static_cast<RecordError>(e.code); }

struct BatchDecoder {
  // `batch` is exactly one batch: 12 + batchLength bytes, magic already checked to be 2.
  static DecodedBatch decode(ByteSpan batch, DecompressionBudget& budget) {
    DecodedBatch out;
    out.wire = batch;
    RecordBatchHeader& h = out.header;
    ByteReader r(batch);
    h.base_offset = r.be<int64_t>("baseOffset");
    h.batch_length = r.be<int32_t>("batchLength");
    h.partition_leader_epoch = r.be<int32_t>("partitionLeaderEpoch");
    h.magic = r.be<int8_t>("magic");
    h.crc = r.be<uint32_t>("crc");
    uint32_t computed = crc32c(batch.data() + kAttributesAt, batch.size() - kAttributesAt);
    if (computed != h.crc)
      reject(RecordError::kCorrupt, "record batch at baseOffset " + std::to_string(h.base_offset) + ": CRC32C " +
                                        hex32(computed) + " does not match the batch's " + hex32(h.crc));
    h.attributes = r.be<int16_t>("attributes");
    h.last_offset_delta = r.be<int32_t>("lastOffsetDelta");
    h.base_timestamp = r.be<int64_t>("baseTimestamp");
    h.max_timestamp = r.be<int64_t>("maxTimestamp");
    h.producer_id = r.be<int64_t>("producerId");
    h.producer_epoch = r.be<int16_t>("producerEpoch");
    h.base_sequence = r.be<int32_t>("baseSequence");
    h.record_count = r.be<int32_t>("recordCount");

    int codec_id = h.attributes & BatchAttributes::kCompressionMask;
    auto codec = compression_from_id(codec_id);
    if (!codec)
      reject(RecordError::kUnsupportedCompression,
             "record batch names compression codec " + std::to_string(codec_id) + " (known: 0-4)");
    if (h.record_count < 0)
      reject(RecordError::kInvalidRecord, "recordCount " + std::to_string(h.record_count) + " is negative");
    if (static_cast<int64_t>(h.last_offset_delta) != static_cast<int64_t>(h.record_count) - 1)
      reject(RecordError::kInvalidRecord, "lastOffsetDelta " + std::to_string(h.last_offset_delta) +
                                              " does not match recordCount " + std::to_string(h.record_count));

    ByteSpan body = r.rest();
    if (*codec != Compression::kNone) {
      size_t reserved = 0;
      auto plain = decompress(*codec, body, budget.remaining, &reserved);
      if (!plain) {
        // A failed attempt costs the budget what it reserved: otherwise every partition of a
        // request could decompress up to the whole budget and fail, one after the other.
        budget.remaining -= std::min(reserved, budget.remaining);
        auto failure = static_cast<DecompressFailure>(plain.error().code);
        reject(failure == DecompressFailure::kOverBudget ? RecordError::kTooLarge : RecordError::kCorrupt,
               "record batch at baseOffset " + std::to_string(h.base_offset) + ": " + plain.error().message);
      }
      out.decompressed_ = std::move(plain.value());
      budget.remaining -= std::min(out.decompressed_.capacity(), budget.remaining);
      body = out.decompressed_;
    }
    decode_records(body, out, budget);
    return out;
  }

  // Takes `bytes` of decoded-structure memory from the budget before it is allocated.
  static void charge(DecompressionBudget& budget, size_t bytes, const char* what, int32_t count) {
    if (bytes > budget.remaining)
      reject(RecordError::kTooLarge, std::to_string(count) + " " + what + " take " + std::to_string(bytes) +
                                         " bytes decoded, above the " + std::to_string(budget.remaining) +
                                         " bytes left of the request's decode budget");
    budget.remaining -= bytes;
  }

  static void decode_records(ByteSpan body, DecodedBatch& out, DecompressionBudget& budget) {
    const int32_t count = out.header.record_count;
    ByteReader r(body);
    r.check_count(static_cast<uint64_t>(count), kMinRecordSize, "recordCount");
    // A 7-byte record decodes to a sizeof(Record) (88-byte) struct: charge that, not the wire.
    charge(budget, static_cast<size_t>(count) * sizeof(Record), "records", count);
    out.records.reserve(static_cast<size_t>(count));
    std::vector<uint32_t> header_counts;  // filled only once some record has headers
    for (int32_t i = 0; i < count; ++i) {
      int32_t length = r.varint("record length");
      if (length < 0) reject(RecordError::kInvalidRecord, "record " + std::to_string(i) + " has negative length");
      ByteReader rec(r.take(static_cast<size_t>(length), "record"));
      Record& record = out.records.emplace_back();
      record.attributes = rec.be<int8_t>("record attributes");
      record.timestamp_delta = rec.varlong("timestampDelta");
      // baseTimestamp + timestampDelta wraps as Kafka's Java long does (timestamp_of); the Produce
      // mapping refuses what Iggy cannot hold with INVALID_TIMESTAMP, as Kafka's validator does.
      record.offset_delta = rec.varint("offsetDelta");
      if (record.offset_delta != i)
        reject(RecordError::kInvalidRecord,
               "record " + std::to_string(i) + " has offsetDelta " + std::to_string(record.offset_delta));
      record.key = read_nullable_bytes(rec, "record key");
      record.value = read_nullable_bytes(rec, "record value");
      int32_t headers = rec.varint("header count");
      if (headers < 0)
        reject(RecordError::kInvalidRecord, "record " + std::to_string(i) + " has header count " + std::to_string(headers));
      rec.check_count(static_cast<uint64_t>(headers), kMinHeaderSize, "header count");
      if (headers > 0 && header_counts.empty()) {
        charge(budget, static_cast<size_t>(count) * sizeof(uint32_t), "header counts", count);
        header_counts.resize(static_cast<size_t>(count));
      }
      // A 2-byte header decodes to a sizeof(RecordHeader) (40-byte) struct; the storage grows
      // by doubling and each growth is charged before it is allocated.
      const size_t needed = out.header_storage_.size() + static_cast<size_t>(headers);
      if (needed > out.header_storage_.capacity()) {
        const size_t grown = std::max({needed, out.header_storage_.capacity() * 2, size_t{16}});
        charge(budget, (grown - out.header_storage_.capacity()) * sizeof(RecordHeader), "headers",
               static_cast<int32_t>(std::min<size_t>(needed, INT32_MAX)));
        out.header_storage_.reserve(grown);
      }
      for (int32_t k = 0; k < headers; ++k) {
        int32_t key_len = rec.varint("header key length");
        if (key_len < 0)
          reject(RecordError::kInvalidRecord, "record " + std::to_string(i) + " has a header with a null key");
        RecordHeader& hdr = out.header_storage_.emplace_back();
        hdr.key = rec.take_string(static_cast<size_t>(key_len), "header key");
        hdr.value = read_nullable_bytes(rec, "header value");
      }
      if (headers > 0) header_counts[static_cast<size_t>(i)] = static_cast<uint32_t>(headers);
      if (!rec.empty())
        reject(RecordError::kInvalidRecord, "record " + std::to_string(i) + " declares " + std::to_string(length) +
                                                " bytes but its fields end " + std::to_string(rec.remaining()) +
                                                " bytes early");
    }
    if (!r.empty())
      reject(RecordError::kInvalidRecord, std::to_string(r.remaining()) + " bytes follow the last of recordCount " +
                                              std::to_string(count) + " records");
    // Headers were appended in record order; the storage no longer moves, so point at it now.
    if (!header_counts.empty()) {
      const RecordHeader* next = out.header_storage_.data();
      for (size_t i = 0; i < out.records.size(); ++i) {
        out.records[i].headers = {next, header_counts[i]};
        next += header_counts[i];
      }
    }
  }
};

bool any_batch_compressed_with(ByteSpan records, Compression codec) {
  size_t at = 0;
  while (records.size() - at >= kRecordBatchHeaderSize) {
    ByteReader r(records.subspan(at));
    r.skip(kBatchLengthAt, "baseOffset");
    const int32_t batch_length = r.be<int32_t>("batchLength");
    r.skip(kAttributesAt - (kBatchLengthAt + 4), "partitionLeaderEpoch, magic, crc");
    const int16_t attributes = r.be<int16_t>("attributes");
    if ((attributes & BatchAttributes::kCompressionMask) == static_cast<int16_t>(codec)) return true;
    if (batch_length <= 0) return false;
    at += kRecordBatchLogOverhead + static_cast<size_t>(batch_length);
    if (at > records.size()) return false;
  }
  return false;
}

bool first_batch_is_transactional(ByteSpan records) {
  if (records.size() < kRecordBatchHeaderSize) return false;
  ByteReader r(records.subspan(kAttributesAt));
  return (r.be<int16_t>("attributes") & BatchAttributes::kTransactional) != 0;
}

Result<std::vector<DecodedBatch>> decode_record_batches(ByteSpan records, DecompressionBudget& budget) {
  std::vector<DecodedBatch> batches;
  size_t pos = 0;
  try {
    while (pos < records.size()) {
      ByteSpan rest = records.subspan(pos);
      if (rest.size() <= kMagicAt)
        reject(RecordError::kInvalidRecord, "truncated record batch: " + std::to_string(rest.size()) +
                                                " bytes left, a batch header needs " +
                                                std::to_string(kRecordBatchHeaderSize));
      int8_t magic = static_cast<int8_t>(rest[kMagicAt]);
      if (magic != kRecordBatchMagic)
        reject(RecordError::kUnsupportedMagic,
               "record batch has magic " + std::to_string(magic) +
                   (magic == 0 || magic == 1 ? " (legacy message set); only message format v2 is supported"
                                             : "; only magic 2 is supported"));
      if (rest.size() < kRecordBatchHeaderSize)
        reject(RecordError::kInvalidRecord, "truncated record batch header: " + std::to_string(rest.size()) +
                                                " of " + std::to_string(kRecordBatchHeaderSize) + " bytes");
      ByteReader len_reader(rest.subspan(kBatchLengthAt, 4));
      int32_t batch_length = len_reader.be<int32_t>();
      if (batch_length < kMinBatchLength)
        reject(RecordError::kCorrupt, "batchLength " + std::to_string(batch_length) + " is below the minimum " +
                                          std::to_string(kMinBatchLength));
      size_t total = kRecordBatchLogOverhead + static_cast<size_t>(batch_length);
      if (total > rest.size())
        reject(RecordError::kInvalidRecord, "batchLength " + std::to_string(batch_length) + " but only " +
                                                std::to_string(rest.size() - kRecordBatchLogOverhead) +
                                                " bytes follow it");
      batches.push_back(BatchDecoder::decode(rest.first(total), budget));
      pos += total;
    }
  } catch (const BatchRejected& e) {
    return Error{ErrorDomain::kProtocol, static_cast<uint32_t>(e.kind), e.message};
  } catch (const DecodeError& e) {
    return Error{ErrorDomain::kProtocol, static_cast<uint32_t>(RecordError::kInvalidRecord),
                 std::string("invalid record: ") + e.what()};
  }
  return batches;
}

// ---- encoding -------------------------------------------------------------------------------

RecordBatchBuilder::RecordBatchBuilder(ByteWriter& out, const BatchSettings& settings)
    : out_(out), settings_(settings) {}

void RecordBatchBuilder::write_header() {
  start_ = out_.size();
  int16_t attributes = static_cast<int16_t>(settings_.compression);
  if (settings_.timestamp_type == TimestampType::kLogAppendTime) attributes |= BatchAttributes::kLogAppendTime;
  if (settings_.transactional) attributes |= BatchAttributes::kTransactional;
  if (settings_.control) attributes |= BatchAttributes::kControl;
  out_.be<int64_t>(settings_.base_offset);
  out_.be<int32_t>(0);  // batchLength, patched
  out_.be<int32_t>(settings_.partition_leader_epoch);
  out_.be<int8_t>(kRecordBatchMagic);
  out_.be<uint32_t>(0);  // crc, patched
  out_.be<int16_t>(attributes);
  out_.be<int32_t>(0);  // lastOffsetDelta, patched
  out_.be<int64_t>(0);  // baseTimestamp, patched
  out_.be<int64_t>(0);  // maxTimestamp, patched
  out_.be<int64_t>(settings_.producer_id);
  out_.be<int16_t>(settings_.producer_epoch);
  out_.be<int32_t>(settings_.base_sequence);
  out_.be<int32_t>(0);  // recordCount, patched
}

void RecordBatchBuilder::write_record(ByteWriter& w, const RecordToEncode& record) {
  // Wrapping, not overflowing: timestamps read back from Iggy are anyone's, and a reader's
  // baseTimestamp + timestampDelta (Java's long arithmetic) wraps back to the same value.
  const int64_t timestamp_delta =
      static_cast<int64_t>(static_cast<uint64_t>(record.timestamp) - static_cast<uint64_t>(base_timestamp_));
  const int32_t offset_delta = count_;
  size_t body = 1 + varlong_size(timestamp_delta) + varint_size(offset_delta) + nullable_size(record.key) +
                nullable_size(record.value) + varint_size(checked_length(record.headers.size(), "header list"));
  for (const RecordHeader& h : record.headers)
    body += varint_size(checked_length(h.key.size(), "header key")) + h.key.size() + nullable_size(h.value);
  // The fields around the key and the value go through a local block, appended once (a varint
  // appended byte by byte was the fetch path's largest cost for small records).
  uint8_t block[5 + 1 + 10 + 5 + 5 + 5];  // length, attributes, deltas, key and value lengths
  size_t n = put_uvarint(block, zigzag_encode32(checked_length(body, "record")));
  block[n++] = 0;  // record attributes: unused in v2
  n += put_uvarlong(block + n, zigzag_encode64(timestamp_delta));
  n += put_uvarint(block + n, zigzag_encode32(offset_delta));
  n += put_uvarint(block + n, zigzag_encode32(record.key ? static_cast<int32_t>(record.key->size()) : -1));
  if (record.key) {
    w.bytes(block, n);
    w.bytes(*record.key);
    n = 0;
  }
  n += put_uvarint(block + n, zigzag_encode32(record.value ? static_cast<int32_t>(record.value->size()) : -1));
  w.bytes(block, n);
  if (record.value) w.bytes(*record.value);
  w.varint(static_cast<int32_t>(record.headers.size()));
  for (const RecordHeader& h : record.headers) {
    w.varint(static_cast<int32_t>(h.key.size()));
    w.string(h.key);
    write_nullable(w, h.value);
  }
}

void RecordBatchBuilder::add(const RecordToEncode& record) {
  if (finished_) throw std::logic_error("RecordBatchBuilder::add after finish");
  if (count_ == std::numeric_limits<int32_t>::max()) throw std::length_error("record batch holds 2^31-1 records");
  if (count_ == 0) {
    base_timestamp_ = max_timestamp_ = record.timestamp;
    if (settings_.compression == Compression::kNone) write_header();
  }
  max_timestamp_ = std::max(max_timestamp_, record.timestamp);
  write_record(settings_.compression == Compression::kNone ? out_ : scratch_, record);
  ++count_;
}

size_t RecordBatchBuilder::finish() {
  if (finished_) throw std::logic_error("RecordBatchBuilder::finish called twice");
  finished_ = true;
  if (count_ == 0) return 0;
  if (settings_.compression != Compression::kNone) {
    write_header();
    out_.bytes(compress(settings_.compression, scratch_.buffer()));
    scratch_ = ByteWriter();
  }
  const size_t size = out_.size() - start_;
  const int64_t max_timestamp =
      settings_.timestamp_type == TimestampType::kLogAppendTime ? settings_.log_append_time : max_timestamp_;
  out_.patch_be<int32_t>(start_ + kBatchLengthAt, checked_length(size - kRecordBatchLogOverhead, "record batch"));
  out_.patch_be<int32_t>(start_ + kLastOffsetDeltaAt, count_ - 1);
  out_.patch_be<int64_t>(start_ + kBaseTimestampAt, base_timestamp_);
  out_.patch_be<int64_t>(start_ + kMaxTimestampAt, max_timestamp);
  out_.patch_be<int32_t>(start_ + kRecordCountAt, count_);
  out_.patch_be<uint32_t>(start_ + kCrcAt, crc32c(out_.data() + start_ + kAttributesAt, size - kAttributesAt));
  return size;
}

size_t encode_record_batch(ByteWriter& out, const BatchSettings& settings, std::span<const RecordToEncode> records) {
  RecordBatchBuilder builder(out, settings);
  for (const RecordToEncode& r : records) builder.add(r);
  return builder.finish();
}

}  // namespace kib::kafka
