// The four Kafka record-batch codecs, byte-compatible with what the Java client and librdkafka
// write and read:
//   gzip   RFC 1952 members (concatenated members accepted)
//   snappy xerial framing, as the Java client writes it: magic 82 'SNAPPY' 00, BE int32 version 1,
//          BE int32 compatible-version 1, then [BE int32 length][raw snappy block]... On input a
//          plain raw snappy block (librdkafka's output) is accepted too.
//   lz4    LZ4 frame format (KIP-57), independent 64 KiB blocks, no checksums, as Java writes it
//   zstd   zstd frames; the decoder streams, so frames without a content size are fine
//
// decompress() is fed peer bytes, so its output is bounded: it stops as soon as the output would
// pass `max_output`, and its output buffer never exceeds max_output + 1 bytes. No length a
// header claims (a zstd frame content size, a raw snappy varint) makes it reserve memory: the
// buffer starts at a small reserve (at most 1 MiB, from the input's size) and doubles only as
// decoded bytes fill it, and a snappy block's length is proven by a validating pass before
// anything is reserved for it. So a 20-byte frame claiming 256 MiB costs a few KiB. Codec
// working memory is bounded too: a zstd frame whose window exceeds max(8 MiB, max_output) is
// refused as over budget, and LZ4 frames use at most 4 MiB blocks.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/bytes.h"
#include "common/result.h"

namespace kib::kafka {

// Values are the codec ids in bits 0-2 of a record batch's attributes.
enum class Compression : uint8_t { kNone = 0, kGzip = 1, kSnappy = 2, kLz4 = 3, kZstd = 4 };

// The codec for a batch's attribute bits 0-2, or nullopt for the unassigned ids 5-7.
std::optional<Compression> compression_from_id(int id);
std::string_view compression_name(Compression c);

// Error::code of a failed decompress() (Error::domain is kProtocol).
enum class DecompressFailure : uint32_t {
  kCorrupt = 1,     // not a valid stream of the codec, or truncated
  kOverBudget = 2,  // the output would pass max_output (or a zstd window would)
};

// Never fails for a batch-sized input (< 2 GiB); throws std::runtime_error only if a codec
// library itself fails (allocation), which is out of memory or a bug, not bad input.
Bytes compress(Compression codec, ByteSpan input);

// `reserved`, when given, receives the most output memory the call reserved (success or failure):
// what a caller charges to its budget, so failed attempts cost the budget too.
Result<Bytes> decompress(Compression codec, ByteSpan input, size_t max_output, size_t* reserved = nullptr);

}  // namespace kib::kafka
