#include "iggy/user_headers.h"

#include <fmt/format.h>

#include "iggy/errors.h"

namespace kib::iggy {
namespace {

ByteSpan as_bytes(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

bool known_kind(uint8_t k) { return k >= 1 && k <= 15; }

Status check_field(const char* what, HeaderKind kind, ByteSpan bytes) {
  if (!known_kind(static_cast<uint8_t>(kind)))
    return invalid_argument(fmt::format("header {} kind {} is not 1..15", what, static_cast<int>(kind)));
  if (bytes.empty() || bytes.size() > kMaxHeaderFieldLength)
    return invalid_argument(fmt::format("header {} length {} is not 1..{}", what, bytes.size(), kMaxHeaderFieldLength));
  size_t width = header_kind_width(kind);
  if (width != 0 && bytes.size() != width)
    return invalid_argument(fmt::format("header {} of kind {} must be {} bytes, got {}", what,
                                        static_cast<int>(kind), width, bytes.size()));
  return ok_status();
}

}  // namespace

size_t header_kind_width(HeaderKind kind) {
  switch (kind) {
    case HeaderKind::kBool:
    case HeaderKind::kInt8:
    case HeaderKind::kUint8: return 1;
    case HeaderKind::kInt16:
    case HeaderKind::kUint16: return 2;
    case HeaderKind::kInt32:
    case HeaderKind::kUint32:
    case HeaderKind::kFloat32: return 4;
    case HeaderKind::kInt64:
    case HeaderKind::kUint64:
    case HeaderKind::kFloat64: return 8;
    case HeaderKind::kInt128:
    case HeaderKind::kUint128: return 16;
    default: return 0;
  }
}

Status UserHeadersBuilder::add(HeaderKind key_kind, ByteSpan key, HeaderKind value_kind, ByteSpan value) {
  if (auto s = check_field("key", key_kind, key); !s) return s;
  if (auto s = check_field("value", value_kind, value); !s) return s;
  out_.le<uint8_t>(static_cast<uint8_t>(key_kind));
  out_.le<uint32_t>(static_cast<uint32_t>(key.size()));
  out_.bytes(key);
  out_.le<uint8_t>(static_cast<uint8_t>(value_kind));
  out_.le<uint32_t>(static_cast<uint32_t>(value.size()));
  out_.bytes(value);
  return ok_status();
}

Status UserHeadersBuilder::add_string(std::string_view key, std::string_view value) {
  return add(HeaderKind::kString, as_bytes(key), HeaderKind::kString, as_bytes(value));
}

Status UserHeadersBuilder::add_raw(std::string_view key, ByteSpan value) {
  return add(HeaderKind::kString, as_bytes(key), HeaderKind::kRaw, value);
}

Status UserHeadersBuilder::add_bool(std::string_view key, bool value) {
  uint8_t b = value ? 1 : 0;
  return add(HeaderKind::kString, as_bytes(key), HeaderKind::kBool, ByteSpan(&b, 1));
}

Status UserHeadersBuilder::add_uint64(std::string_view key, uint64_t value) {
  ByteWriter w;
  w.le(value);
  return add(HeaderKind::kString, as_bytes(key), HeaderKind::kUint64, w.buffer());
}

Status UserHeadersBuilder::add_uint32(std::string_view key, uint32_t value) {
  ByteWriter w;
  w.le(value);
  return add(HeaderKind::kString, as_bytes(key), HeaderKind::kUint32, w.buffer());
}

Status UserHeadersBuilder::add_uint8(std::string_view key, uint8_t value) {
  return add(HeaderKind::kString, as_bytes(key), HeaderKind::kUint8, ByteSpan(&value, 1));
}

Result<std::vector<HeaderEntry>> parse_user_headers(ByteSpan tlv) {
  std::vector<HeaderEntry> out;
  ByteReader r(tlv);
  try {
    while (!r.empty()) {
      HeaderEntry e;
      uint8_t kk = r.le<uint8_t>("header key kind");
      uint32_t kl = r.le<uint32_t>("header key length");
      if (!known_kind(kk) || kl == 0 || kl > kMaxHeaderFieldLength)
        return protocol_error(fmt::format("header key kind {} length {} out of range", kk, kl));
      e.key_kind = static_cast<HeaderKind>(kk);
      e.key = r.take(kl, "header key");
      uint8_t vk = r.le<uint8_t>("header value kind");
      uint32_t vl = r.le<uint32_t>("header value length");
      if (!known_kind(vk) || vl == 0 || vl > kMaxHeaderFieldLength)
        return protocol_error(fmt::format("header value kind {} length {} out of range", vk, vl));
      e.value_kind = static_cast<HeaderKind>(vk);
      e.value = r.take(vl, "header value");
      out.push_back(e);
    }
  } catch (const DecodeError& ex) {
    return protocol_error(ex.what());
  }
  return out;
}

}  // namespace kib::iggy
