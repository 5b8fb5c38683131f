#include "bridge/mapping/generation_mapping.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "bridge/errors.h"
#include "iggy/user_headers.h"

namespace kib::bridge {

using iggy::HeaderEntry;
using iggy::HeaderKind;

namespace {

std::array<uint8_t, 8> le64(int64_t v) {
  std::array<uint8_t, 8> b{};
  for (size_t i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
  return b;
}

std::optional<int64_t> read_le64(const HeaderEntry& e) {
  if (e.value_kind != HeaderKind::kInt64 || e.value.size() != 8) return std::nullopt;
  uint64_t u = 0;
  for (size_t i = 0; i < 8; ++i) u |= static_cast<uint64_t>(e.value[i]) << (8 * i);
  return static_cast<int64_t>(u);
}

ByteSpan bytes_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

bool is_key(const HeaderEntry& e, std::string_view k) {
  return e.key_kind == HeaderKind::kString && e.key.size() == k.size() &&
         std::memcmp(e.key.data(), k.data(), k.size()) == 0;
}

}  // namespace

Result<Bytes> generation_header_block(ByteSpan live_headers, int64_t kafka_offset,
                                      std::optional<int64_t> delete_horizon_ms) {
  std::vector<HeaderEntry> entries;
  if (!live_headers.empty()) {
    auto parsed = iggy::parse_user_headers(live_headers);
    if (!parsed) return kafka_error(kafka::ErrorCode::kInvalidRecord, "user headers: " + parsed.error().message);
    entries = std::move(parsed.value());
  }
  for (const HeaderEntry& e : entries)
    if (is_key(e, kKeptOffsetHeader) || is_key(e, kDeleteHorizonHeader))
      return kafka_error(kafka::ErrorCode::kInvalidRecord, "the message already carries a kib.offset or kib.horizon header");
  const std::array<uint8_t, 8> offset = le64(kafka_offset), horizon = le64(delete_horizon_ms.value_or(-1));
  entries.push_back({HeaderKind::kString, bytes_of(kKeptOffsetHeader), HeaderKind::kInt64, ByteSpan(offset)});
  if (delete_horizon_ms)
    entries.push_back({HeaderKind::kString, bytes_of(kDeleteHorizonHeader), HeaderKind::kInt64, ByteSpan(horizon)});
  // Iggy's map order: key kind, then key bytes.
  std::stable_sort(entries.begin(), entries.end(), [](const HeaderEntry& a, const HeaderEntry& b) {
    if (a.key_kind != b.key_kind) return a.key_kind < b.key_kind;
    return std::lexicographical_compare(a.key.begin(), a.key.end(), b.key.begin(), b.key.end());
  });
  iggy::UserHeadersBuilder block;
  for (const HeaderEntry& e : entries)
    if (Status s = block.add(e.key_kind, e.key, e.value_kind, e.value); !s)
      return kafka_error(kafka::ErrorCode::kInvalidRecord, s.error().message);
  return block.take();
}

Result<GenerationMarkers> read_generation_markers(ByteSpan header_block) {
  auto parsed = iggy::parse_user_headers(header_block);
  if (!parsed) return kafka_error(kafka::ErrorCode::kUnknownServerError, "generation message: " + parsed.error().message);
  GenerationMarkers m;
  bool have_offset = false;
  for (const HeaderEntry& e : parsed.value()) {
    if (is_key(e, kKeptOffsetHeader)) {
      auto v = read_le64(e);
      if (!v || *v < 0) return kafka_error(kafka::ErrorCode::kUnknownServerError, "kib.offset is not an Int64 offset");
      m.kafka_offset = *v;
      have_offset = true;
    } else if (is_key(e, kDeleteHorizonHeader)) {
      auto v = read_le64(e);
      if (!v) return kafka_error(kafka::ErrorCode::kUnknownServerError, "kib.horizon is not an Int64");
      m.delete_horizon_ms = *v;
    }
  }
  if (!have_offset) return kafka_error(kafka::ErrorCode::kUnknownServerError, "generation message without kib.offset");
  return m;
}

void strip_generation_headers(KafkaRecordView& record) {
  std::erase_if(record.headers, [](const kafka::RecordHeader& h) {
    return h.key == kKeptOffsetHeader || h.key == kDeleteHorizonHeader;
  });
}

}  // namespace kib::bridge
