// Shared by the targets that take a Produce partition's `records`: the input with each batch's
// CRC32C recomputed, so the fuzzer explores what lies behind the CRC check (a wrong CRC is
// refused at once and is covered by the unit tests) instead of spending its time guessing it.
#pragma once

#include <algorithm>
#include <optional>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "kafka/records/record_batch.h"

namespace kib::fuzz {

inline Bytes with_valid_crcs(const uint8_t* data, size_t size) {
  Bytes b(data, data + size);
  size_t at = 0;
  while (b.size() - at >= kafka::kRecordBatchHeaderSize) {
    int32_t length = static_cast<int32_t>((uint32_t{b[at + 8]} << 24) | (uint32_t{b[at + 9]} << 16) |
                                          (uint32_t{b[at + 10]} << 8) | uint32_t{b[at + 11]});
    if (length < static_cast<int32_t>(kafka::kRecordBatchHeaderSize - kafka::kRecordBatchLogOverhead)) break;
    size_t end = std::min(b.size(), at + kafka::kRecordBatchLogOverhead + static_cast<size_t>(length));
    uint32_t crc = crc32c(b.data() + at + 21, end - (at + 21));
    for (int i = 0; i < 4; ++i) b[at + 17 + static_cast<size_t>(i)] = static_cast<uint8_t>(crc >> (24 - 8 * i));
    at = end;
  }
  return b;
}

// Equal presence and bytes: a null key or value reads back null, an empty one empty.
inline bool same(const std::optional<ByteSpan>& a, const std::optional<ByteSpan>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || std::equal(a->begin(), a->end(), b->begin(), b->end());
}

// A budget well above the seeds' needs and below libFuzzer's -rss_limit_mb.
inline constexpr size_t kFuzzDecompressionBudget = 16u << 20;

}  // namespace kib::fuzz
