// Iggy's typed key/value TLV (docs/iggy-protocol.md §3), used for message user headers and options blocks:
// each pair is [key_kind:u8][key_len:u32][key][value_kind:u8][value_len:u32][value], lengths
// 1..255, kinds 1..15. The server does not validate message headers; native Rust consumers do, so
// only valid TLV is produced here.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"

namespace kib::iggy {

enum class HeaderKind : uint8_t {
  kRaw = 1,
  kString = 2,
  kBool = 3,
  kInt8 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kInt128 = 8,
  kUint8 = 9,
  kUint16 = 10,
  kUint32 = 11,
  kUint64 = 12,
  kUint128 = 13,
  kFloat32 = 14,
  kFloat64 = 15,
};

inline constexpr size_t kMaxHeaderFieldLength = 255;
inline constexpr size_t kMaxUserHeadersBytes = 100000;  // Rust SDK limit per message

// A parsed pair; spans point into the parsed buffer.
struct HeaderEntry {
  HeaderKind key_kind = HeaderKind::kString;
  ByteSpan key;
  HeaderKind value_kind = HeaderKind::kRaw;
  ByteSpan value;
  std::string_view key_string() const { return {reinterpret_cast<const char*>(key.data()), key.size()}; }
  std::string_view value_string() const {
    return {reinterpret_cast<const char*>(value.data()), value.size()};
  }
};

// Builds a TLV block. Each add validates lengths and fixed-width kinds.
class UserHeadersBuilder {
 public:
  Status add(HeaderKind key_kind, ByteSpan key, HeaderKind value_kind, ByteSpan value);
  Status add_string(std::string_view key, std::string_view value);
  Status add_raw(std::string_view key, ByteSpan value);
  Status add_bool(std::string_view key, bool value);
  Status add_uint64(std::string_view key, uint64_t value);
  Status add_uint32(std::string_view key, uint32_t value);
  Status add_uint8(std::string_view key, uint8_t value);

  size_t size() const { return out_.size(); }
  const Bytes& bytes() const { return out_.buffer(); }
  Bytes take() { return out_.take(); }

 private:
  ByteWriter out_;
};

// Parses a TLV block without copying. Empty input = no headers.
Result<std::vector<HeaderEntry>> parse_user_headers(ByteSpan tlv);

// Bytes a value of a fixed-width kind must have, 0 for variable-width kinds (Raw, String).
size_t header_kind_width(HeaderKind kind);

}  // namespace kib::iggy
