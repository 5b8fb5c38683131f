#include "bridge/mapping/record_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "bridge/errors.h"
#include "iggy/user_headers.h"

namespace kib::bridge {
namespace {

using iggy::HeaderKind;
using kafka::ErrorCode;

// Header names and values of upstream's mapping version 1 (docs/mapping.md, User headers).
constexpr std::string_view kVersionHeader = "kafka.v";
constexpr uint8_t kMappingVersion = 1;
constexpr std::string_view kKeyHeader = "kafka.key";
constexpr std::string_view kValueMarkerHeader = "kafka.value";
constexpr std::string_view kTimestampHeader = "kafka.ts";
constexpr std::string_view kHeaderPrefix = "kafka.h.";
constexpr std::string_view kEnvelopeHeader = "kafka.envelope";
constexpr uint8_t kEnvelopeVersion = 1;
constexpr std::string_view kMarkerNull = "null";
constexpr std::string_view kMarkerEmpty = "empty";
constexpr std::string_view kAbortedHeader = "kib.aborted";

constexpr int64_t kNoTimestamp = -1;
constexpr int64_t kEpochTimestamp = 0;
// One Iggy send stores each origin timestamp as a u32 µs delta from the batch's first.
constexpr uint64_t kMaxSendSpanUs = std::numeric_limits<uint32_t>::max();
// Iggy's MAX_PAYLOAD_SIZE: a decimal constant, not 61 MiB.
constexpr size_t kMaxPayloadBytes = 64'000'000;
constexpr size_t kMaxField = iggy::kMaxHeaderFieldLength;
constexpr size_t kMaxHeadersBytes = iggy::kMaxUserHeadersBytes;
// Key kind, key length, value kind, value length of one TLV entry.
constexpr size_t kTlvEntryOverhead = 10;
// The value stored as the payload of a null or empty Kafka value (Iggy refuses empty payloads).
constexpr uint8_t kPlaceholder = 0x00;

constexpr uint8_t kFlagKey = 0x01;
constexpr uint8_t kFlagValue = 0x02;
// flags u8 + key_len u32 + value_len u32 + header_count u32.
constexpr size_t kEnvelopeOverhead = 13;
// name_len u32 + value_present u8 + value_len u32.
constexpr size_t kEnvelopeHeaderOverhead = 9;

constexpr size_t tlv_entry_size(size_t key, size_t value) { return kTlvEntryOverhead + key + value; }
constexpr size_t kVersionEntryBytes = tlv_entry_size(kVersionHeader.size(), 1);
constexpr size_t kTimestampEntryBytes = tlv_entry_size(kTimestampHeader.size(), sizeof(int64_t));

ByteSpan as_bytes(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

// Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF): what Rust's
// str::from_utf8 accepts, so both gateways agree on which names are text.
bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char* end = p + s.size();
  while (p < end) {
    unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (static_cast<size_t>(end - p) <= n) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (size_t i = 2; i <= n; ++i)
      if (p[i] < 0x80 || p[i] > 0xBF) return false;
    p += n + 1;
  }
  return true;
}

// Iggy orders header keys by kind, then bytes (unsigned, shorter prefix first).
bool bytes_less(std::string_view a, std::string_view b) {
  int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
  return c < 0 || (c == 0 && a.size() < b.size());
}

Error too_large(size_t index, size_t size) {
  return kafka_error(ErrorCode::kMessageTooLarge,
                     fmt::format("record {} needs a {} byte Iggy payload, over Iggy's {} byte limit", index, size,
                                 kMaxPayloadBytes));
}

Error internal(std::string message) { return kafka_error(ErrorCode::kUnknownServerError, std::move(message)); }

// ---- timestamps (docs/mapping.md, Timestamps) -----------------------------------------------

// Kafka ms to Iggy µs; -1 ("none") is 0. Callers have already refused < -1 and overflow.
uint64_t native_us(int64_t ms) { return ms == kNoTimestamp ? 0 : static_cast<uint64_t>(ms) * 1000; }

Status check_timestamp(size_t index, int64_t ms) {
  if (ms < kNoTimestamp)
    return kafka_error(ErrorCode::kInvalidTimestamp,
                       fmt::format("record {} timestamp {} ms is below -1", index, ms));
  if (ms > std::numeric_limits<int64_t>::max() / 1000)
    return kafka_error(ErrorCode::kInvalidTimestamp,
                       fmt::format("record {} timestamp {} ms does not fit Iggy's microsecond field", index, ms));
  return ok_status();
}

// Where one record's timestamp is stored: origin_timestamp, plus kafka.ts when the origin does
// not read back as the record's own timestamp (clamped, or the epoch which reads as "none").
struct Stamp {
  uint64_t origin_us = 0;
  bool has_header = false;
  int64_t header_ms = 0;
};

struct TimestampWindow {
  uint64_t start_us = 0;
  Stamp stamp(int64_t ms) const {
    uint64_t native = native_us(ms);
    uint64_t end = start_us + kMaxSendSpanUs;  // start <= INT64_MAX, no overflow
    Stamp s;
    s.origin_us = std::clamp(native, start_us, end);
    s.has_header = s.origin_us != native || ms == kEpochTimestamp;
    s.header_ms = ms;
    return s;
  }
};

// ---- write path -----------------------------------------------------------------------------

enum class PayloadSource : uint8_t { kValue, kPlaceholder, kEnvelope };

// Where one message's bytes went; spans are set once the arena stops growing.
struct MessagePlan {
  size_t headers_at = 0;
  size_t headers_len = 0;
  PayloadSource payload = PayloadSource::kValue;
  size_t envelope_at = 0;
  size_t envelope_len = 0;
};

// Whether a field does not fit Iggy's header rules (the 100,000-byte block budget is checked
// separately).
bool needs_envelope(const kafka::Record& r) {
  if (r.key && (r.key->empty() || r.key->size() > kMaxField)) return true;
  const kafka::RecordHeader* prev = nullptr;
  for (const kafka::RecordHeader& h : r.headers) {
    if (kHeaderPrefix.size() + h.key.size() > kMaxField) return true;
    if (!h.value || h.value->empty() || h.value->size() > kMaxField) return true;
    // Our deviation: Iggy would hand these back sorted and deduplicated, losing Kafka's order.
    if (prev && !bytes_less(prev->key, h.key)) return true;
    prev = &h;
  }
  return false;
}

size_t native_headers_size(const kafka::Record& r, const Stamp& stamp) {
  size_t n = kVersionEntryBytes;
  if (r.key) n += tlv_entry_size(kKeyHeader.size(), r.key->size());
  if (!r.value) n += tlv_entry_size(kValueMarkerHeader.size(), kMarkerNull.size());
  else if (r.value->empty()) n += tlv_entry_size(kValueMarkerHeader.size(), kMarkerEmpty.size());
  if (stamp.has_header) n += kTimestampEntryBytes;
  for (const kafka::RecordHeader& h : r.headers)
    n += tlv_entry_size(kHeaderPrefix.size() + h.key.size(), h.value ? h.value->size() : 0);
  return n;
}

size_t envelope_size(const kafka::Record& r) {
  size_t n = kEnvelopeOverhead + (r.key ? r.key->size() : 0) + (r.value ? r.value->size() : 0);
  for (const kafka::RecordHeader& h : r.headers)
    n += kEnvelopeHeaderOverhead + h.key.size() + (h.value ? h.value->size() : 0);
  return n;
}

Status add_version(iggy::UserHeadersBuilder& b) {
  const uint8_t v = kMappingVersion;
  return b.add_raw(kVersionHeader, ByteSpan(&v, 1));
}

Status add_timestamp(iggy::UserHeadersBuilder& b, int64_t ms) {
  std::array<uint8_t, 8> le{};
  for (size_t i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(static_cast<uint64_t>(ms) >> (8 * i));
  return b.add(HeaderKind::kString, as_bytes(kTimestampHeader), HeaderKind::kInt64, le);
}

// The native block, in Iggy's map order: kafka.h.* (already sorted), kafka.key, kafka.ts,
// kafka.v, kafka.value.
Status add_native_headers(iggy::UserHeadersBuilder& b, const kafka::Record& r, const Stamp& stamp) {
  std::array<uint8_t, kMaxField> name{};
  std::memcpy(name.data(), kHeaderPrefix.data(), kHeaderPrefix.size());
  for (const kafka::RecordHeader& h : r.headers) {
    std::memcpy(name.data() + kHeaderPrefix.size(), h.key.data(), h.key.size());
    if (auto s = b.add(HeaderKind::kString, ByteSpan(name.data(), kHeaderPrefix.size() + h.key.size()),
                       HeaderKind::kRaw, *h.value);
        !s)
      return s;
  }
  if (r.key)
    if (auto s = b.add_raw(kKeyHeader, *r.key); !s) return s;
  if (stamp.has_header)
    if (auto s = add_timestamp(b, stamp.header_ms); !s) return s;
  if (auto s = add_version(b); !s) return s;
  if (!r.value || r.value->empty())
    return b.add_raw(kValueMarkerHeader, as_bytes(r.value ? kMarkerEmpty : kMarkerNull));
  return ok_status();
}

// kafka.envelope, kafka.ts, kafka.v: map order again.
Status add_envelope_headers(iggy::UserHeadersBuilder& b, const Stamp& stamp) {
  const uint8_t v = kEnvelopeVersion;
  if (auto s = b.add_raw(kEnvelopeHeader, ByteSpan(&v, 1)); !s) return s;
  if (stamp.has_header)
    if (auto s = add_timestamp(b, stamp.header_ms); !s) return s;
  return add_version(b);
}

void put_u32(Bytes& out, size_t v) {
  const auto u = static_cast<uint32_t>(v);
  const uint8_t le[4] = {static_cast<uint8_t>(u), static_cast<uint8_t>(u >> 8), static_cast<uint8_t>(u >> 16),
                         static_cast<uint8_t>(u >> 24)};
  out.insert(out.end(), le, le + 4);
}

void put_field(Bytes& out, const std::optional<ByteSpan>& field) {
  put_u32(out, field ? field->size() : 0);
  if (field) out.insert(out.end(), field->begin(), field->end());
}

// Layout v1 (docs/mapping.md, Envelope payload, layout v1): headers in Kafka order, names without the prefix.
void write_envelope(Bytes& out, const kafka::Record& r) {
  out.push_back(static_cast<uint8_t>((r.key ? kFlagKey : 0) | (r.value ? kFlagValue : 0)));
  put_field(out, r.key);
  put_field(out, r.value);
  put_u32(out, r.headers.size());
  for (const kafka::RecordHeader& h : r.headers) {
    put_u32(out, h.key.size());
    out.insert(out.end(), h.key.begin(), h.key.end());
    out.push_back(h.value ? 1 : 0);
    put_field(out, h.value);
  }
}

// ---- read path ------------------------------------------------------------------------------

Error unreadable(uint64_t offset, std::string why) {
  return internal(fmt::format("Iggy message at offset {} cannot be read as a Kafka record: {}", offset, why));
}

int64_t server_ms(const iggy::MessageView& m) { return static_cast<int64_t>(m.timestamp_us / 1000); }
int64_t origin_or_server_ms(const iggy::MessageView& m) {
  return m.origin_timestamp_us == 0 ? server_ms(m) : static_cast<int64_t>(m.origin_timestamp_us / 1000);
}

ByteSpan take_field(ByteReader& r) {
  uint32_t len = r.le<uint32_t>("envelope field length");
  return r.take(len, "envelope field");
}

// Layout v1, validated as upstream does: every length fits, header_count is checked against the
// bytes left before reserving, names are UTF-8, nothing follows the last header. Returns why not.
std::optional<std::string> decode_envelope(ByteSpan payload, KafkaRecordView& out) {
  try {
    ByteReader r(payload);
    uint8_t flags = r.le<uint8_t>("envelope flags");
    ByteSpan key = take_field(r);
    ByteSpan value = take_field(r);
    uint32_t count = r.le<uint32_t>("envelope header count");
    // A 13-byte payload may claim 4 billion headers: charge the 9-byte floor before reserving.
    r.check_count(count, kEnvelopeHeaderOverhead, "envelope header count");
    out.headers.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t name_len = r.le<uint32_t>("envelope header name length");
      std::string_view name = r.take_string(name_len, "envelope header name");
      if (!valid_utf8(name)) return fmt::format("envelope header {} name is not UTF-8", i);
      bool present = r.le<uint8_t>("envelope header value_present") != 0;
      ByteSpan header_value = take_field(r);
      out.headers.push_back({name, present ? std::optional<ByteSpan>(header_value) : std::nullopt});
    }
    if (!r.empty()) return fmt::format("{} bytes follow the envelope's last header", r.remaining());
    if (flags & kFlagKey) out.key = key;
    if (flags & kFlagValue) out.value = value;
  } catch (const DecodeError& ex) {
    return fmt::format("malformed envelope ({})", ex.what());
  }
  return std::nullopt;
}

// Names of the kafka.h.* entries must be unique on a kafka.v message: upstream refuses two keys
// with the same bytes under different kinds. Blocks we (and upstream) write are sorted String
// keys, checked in one pass; anything else is sorted on the side.
bool has_repeated_name(const std::vector<kafka::RecordHeader>& headers, bool all_string_kind) {
  if (headers.size() < 2) return false;
  if (all_string_kind) {
    bool sorted = true;
    for (size_t i = 1; i < headers.size() && sorted; ++i) sorted = bytes_less(headers[i - 1].key, headers[i].key);
    if (sorted) return false;
  }
  std::vector<std::string_view> names;
  names.reserve(headers.size());
  for (const auto& h : headers) names.push_back(h.key);
  std::sort(names.begin(), names.end(), bytes_less);
  return std::adjacent_find(names.begin(), names.end()) != names.end();
}

// "<producer id>/<epoch>", both decimal, as map_aborted_placeholders writes it.
std::optional<AbortedRecordMarker> parse_aborted_marker(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  AbortedRecordMarker m;
  const std::string_view pid = text.substr(0, slash), epoch = text.substr(slash + 1);
  auto [p_end, p_ec] = std::from_chars(pid.data(), pid.data() + pid.size(), m.producer_id);
  auto [e_end, e_ec] = std::from_chars(epoch.data(), epoch.data() + epoch.size(), m.producer_epoch);
  if (p_ec != std::errc() || p_end != pid.data() + pid.size() || pid.empty()) return std::nullopt;
  if (e_ec != std::errc() || e_end != epoch.data() + epoch.size() || epoch.empty()) return std::nullopt;
  return m;
}

}  // namespace

namespace {

// The window starts at the earliest real timestamp; -1 and the epoch do not move it.
Result<TimestampWindow> timestamp_window(const kafka::DecodedBatch& batch) {
  TimestampWindow window;
  bool have_start = false;
  for (size_t i = 0; i < batch.records.size(); ++i) {
    int64_t ms = batch.timestamp_of(batch.records[i]);
    if (auto s = check_timestamp(i, ms); !s) return s.error();
    if (ms > kEpochTimestamp && (!have_start || native_us(ms) < window.start_us)) {
      window.start_us = native_us(ms);
      have_start = true;
    }
  }
  return window;
}

// Plans record `i`'s message: its header block (the shared kafka.v-only block at 0, or one of its
// own appended to `headers`) and where its payload comes from (the record's value, an envelope of
// `plan.envelope_len` bytes, or the placeholder byte).
Status plan_message(size_t i, const kafka::Record& r, const Stamp& stamp, size_t shared_version_len,
                    iggy::UserHeadersBuilder& headers, iggy::OutgoingMessage& m, MessagePlan& plan) {
  m.origin_timestamp_us = stamp.origin_us;
  for (const kafka::RecordHeader& h : r.headers)
    if (!valid_utf8(h.key))
      return kafka_error(ErrorCode::kInvalidRecord, fmt::format("record {} has a header name that is not UTF-8", i));
  if (!r.key && r.headers.empty() && !stamp.has_header && r.value && !r.value->empty()) {
    if (r.value->size() > kMaxPayloadBytes) return too_large(i, r.value->size());
    m.payload = *r.value;
    plan.headers_at = 0;
    plan.headers_len = shared_version_len;
    return ok_status();
  }
  const bool envelope = needs_envelope(r) || native_headers_size(r, stamp) > kMaxHeadersBytes;
  plan.headers_at = headers.size();
  if (envelope) {
    const size_t size = envelope_size(r);
    if (size > kMaxPayloadBytes) return too_large(i, size);
    if (auto s = add_envelope_headers(headers, stamp); !s) return internal(s.error().message);
    plan.payload = PayloadSource::kEnvelope;
    plan.envelope_len = size;
  } else {
    if (r.value && r.value->size() > kMaxPayloadBytes) return too_large(i, r.value->size());
    if (auto s = add_native_headers(headers, r, stamp); !s) return internal(s.error().message);
    if (r.value && !r.value->empty()) m.payload = *r.value;
    else plan.payload = PayloadSource::kPlaceholder;
  }
  plan.headers_len = headers.size() - plan.headers_at;
  return ok_status();
}

// The arena: [header blocks][placeholder byte][envelopes]. Spans into it are set only once it is
// final (appending would move it).
Status lay_out_arena(MappedMessages& out, iggy::UserHeadersBuilder& headers, std::vector<MessagePlan>& plans,
                     const std::vector<kafka::Record>& records, size_t envelope_bytes) {
  out.arena = headers.take();
  out.arena.reserve(out.arena.size() + 1 + envelope_bytes);
  const size_t placeholder_at = out.arena.size();
  out.arena.push_back(kPlaceholder);
  for (size_t i = 0; i < records.size(); ++i) {
    if (plans[i].payload != PayloadSource::kEnvelope) continue;
    plans[i].envelope_at = out.arena.size();
    write_envelope(out.arena, records[i]);
    if (out.arena.size() - plans[i].envelope_at != plans[i].envelope_len)
      return internal(fmt::format("record {} envelope size mismatch", i));
  }
  const uint8_t* base = out.arena.data();
  for (size_t i = 0; i < records.size(); ++i) {
    const MessagePlan& plan = plans[i];
    iggy::OutgoingMessage& m = out.messages[i];
    m.user_headers = ByteSpan(base + plan.headers_at, plan.headers_len);
    if (plan.payload == PayloadSource::kPlaceholder) m.payload = ByteSpan(base + placeholder_at, 1);
    else if (plan.payload == PayloadSource::kEnvelope) m.payload = ByteSpan(base + plan.envelope_at, plan.envelope_len);
  }
  return ok_status();
}

}  // namespace

Result<MappedMessages> map_batch_to_iggy(const kafka::DecodedBatch& batch) {
  MappedMessages out;
  const auto& records = batch.records;
  if (records.empty()) return out;
  auto window = timestamp_window(batch);
  if (!window) return window.error();
  out.messages.resize(records.size());
  std::vector<MessagePlan> plans(records.size());
  iggy::UserHeadersBuilder headers;
  // One kafka.v-only block, shared by every record that needs no other header (the common case).
  if (auto s = add_version(headers); !s) return internal(s.error().message);
  const size_t shared_version_len = headers.size();
  size_t envelope_bytes = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const Stamp stamp = window->stamp(batch.timestamp_of(records[i]));
    if (auto s = plan_message(i, records[i], stamp, shared_version_len, headers, out.messages[i], plans[i]); !s)
      return s.error();
    if (plans[i].payload == PayloadSource::kEnvelope) {
      envelope_bytes += plans[i].envelope_len;
      ++out.envelopes;
    }
  }
  if (auto s = lay_out_arena(out, headers, plans, records, envelope_bytes); !s) return s.error();
  return out;
}

MappedMessages map_aborted_placeholders(const AbortedRecordMarker& marker, size_t count,
                                        uint64_t origin_timestamp_us) {
  MappedMessages out;
  if (count == 0) return out;
  iggy::UserHeadersBuilder headers;
  // Iggy's map order: kafka.v, kafka.value, kib.aborted. Fixed-size fields: no add can fail.
  const std::string text = std::to_string(marker.producer_id) + "/" + std::to_string(marker.producer_epoch);
  (void)add_version(headers);
  (void)headers.add_raw(kValueMarkerHeader, as_bytes(kMarkerNull));
  (void)headers.add(HeaderKind::kString, as_bytes(kAbortedHeader), HeaderKind::kString, as_bytes(text));
  out.arena = headers.take();
  const size_t block = out.arena.size();
  out.arena.push_back(kPlaceholder);
  out.messages.resize(count);
  for (iggy::OutgoingMessage& m : out.messages) {
    m.origin_timestamp_us = origin_timestamp_us;
    m.user_headers = ByteSpan(out.arena.data(), block);
    m.payload = ByteSpan(out.arena.data() + block, 1);
  }
  return out;
}

// The exact user-header block of a record with a value and nothing else (no key, no headers, its
// own timestamp): kafka.v = 1 alone, as map_batch_to_iggy shares it. Most records look like this.
constexpr std::array<uint8_t, 18> kVersionOnlyBlock = {
    static_cast<uint8_t>(HeaderKind::kString), 7, 0, 0, 0, 'k', 'a', 'f', 'k', 'a', '.', 'v',
    static_cast<uint8_t>(HeaderKind::kRaw),    1, 0, 0, 0, kMappingVersion};

namespace {

// The kafka.* marker headers of a message (String-kind keys, as upstream looks them up).
struct Markers {
  const iggy::HeaderEntry* version = nullptr;
  const iggy::HeaderEntry* key = nullptr;
  const iggy::HeaderEntry* value = nullptr;
  const iggy::HeaderEntry* timestamp = nullptr;
  const iggy::HeaderEntry* envelope = nullptr;
  const iggy::HeaderEntry* aborted = nullptr;
  bool repeated = false;
};

Markers find_markers(const std::vector<iggy::HeaderEntry>& entries) {
  Markers m;
  for (const iggy::HeaderEntry& e : entries) {
    if (e.key_kind != HeaderKind::kString) continue;
    std::string_view k = e.key_string();
    const iggy::HeaderEntry** slot = k == kVersionHeader      ? &m.version
                                     : k == kKeyHeader         ? &m.key
                                     : k == kValueMarkerHeader ? &m.value
                                     : k == kTimestampHeader   ? &m.timestamp
                                     : k == kEnvelopeHeader    ? &m.envelope
                                     : k == kAbortedHeader     ? &m.aborted
                                                               : nullptr;
    if (!slot) continue;
    if (*slot) m.repeated = true;
    *slot = &e;
  }
  return m;
}

// Key, value and kafka.h.* headers of a message written without an envelope; why not, if it
// cannot be read.
std::optional<std::string> read_fields(const iggy::MessageView& message, const std::vector<iggy::HeaderEntry>& entries,
                                       const Markers& markers, KafkaRecordView& out) {
  if (markers.key) out.key = markers.key->value;
  if (!markers.value) {
    out.value = message.payload;
  } else if (markers.value->value_string() == kMarkerNull) {
    out.value = std::nullopt;
  } else if (markers.value->value_string() == kMarkerEmpty) {
    out.value = ByteSpan(message.payload.data(), 0);
  } else {
    return "kafka.value is neither \"null\" nor \"empty\"";
  }
  bool all_string_kind = true;
  for (const iggy::HeaderEntry& e : entries) {
    std::string_view k = e.key_string();
    if (k.size() < kHeaderPrefix.size() || k.substr(0, kHeaderPrefix.size()) != kHeaderPrefix) continue;
    if (!valid_utf8(k)) continue;
    all_string_kind = all_string_kind && e.key_kind == HeaderKind::kString;
    out.headers.push_back({k.substr(kHeaderPrefix.size()), e.value});
  }
  if (has_repeated_name(out.headers, all_string_kind)) return "two stored headers map to the same Kafka header name";
  return std::nullopt;
}

// The record's timestamp: kafka.ts when the record had its own, else the message's origin (or
// Iggy's) time; why not, if it cannot be read.
std::optional<std::string> read_timestamp(const iggy::MessageView& message, const iggy::HeaderEntry* timestamp,
                                          KafkaRecordView& out) {
  if (!timestamp) {
    out.timestamp_ms = origin_or_server_ms(message);
    return std::nullopt;
  }
  if (timestamp->value_kind != HeaderKind::kInt64 || timestamp->value.size() != sizeof(int64_t))
    return "kafka.ts is not an Int64";
  uint64_t u = 0;
  for (size_t i = 0; i < 8; ++i) u |= static_cast<uint64_t>(timestamp->value[i]) << (8 * i);
  const auto ms = static_cast<int64_t>(u);
  if (ms == kNoTimestamp) out.timestamp_ms = server_ms(message);
  else if (ms >= kEpochTimestamp) out.timestamp_ms = ms;
  else return fmt::format("kafka.ts {} is below -1", ms);
  return std::nullopt;
}

}  // namespace

Result<KafkaRecordView> map_iggy_to_record(const iggy::MessageView& message) {
  KafkaRecordView out;
  if (message.user_headers.size() == kVersionOnlyBlock.size() &&
      std::memcmp(message.user_headers.data(), kVersionOnlyBlock.data(), kVersionOnlyBlock.size()) == 0) {
    // What the general path below yields for this block, without parsing it into a vector.
    out.value = message.payload;
    out.timestamp_ms = origin_or_server_ms(message);
    return out;
  }
  // An unparsable block is an error, never "no headers": that would serve an envelope as a value.
  auto parsed = iggy::parse_user_headers(message.user_headers);
  if (!parsed) return unreadable(message.offset, "user headers: " + parsed.error().message);
  const std::vector<iggy::HeaderEntry>& entries = parsed.value();
  const Markers markers = find_markers(entries);
  if (!markers.version) {
    // Written by a native Iggy client: no marker means anything.
    out.value = message.payload;
    out.headers.reserve(entries.size());
    for (const iggy::HeaderEntry& e : entries)
      if (valid_utf8(e.key_string())) out.headers.push_back({e.key_string(), e.value});
    out.timestamp_ms = origin_or_server_ms(message);
    return out;
  }
  const iggy::HeaderEntry& version = *markers.version;
  if (version.value.size() != 1 || version.value[0] != kMappingVersion)
    return unreadable(message.offset, fmt::format("kafka.v is {} byte(s) starting 0x{:02x}, this bridge reads 0x01",
                                                  version.value.size(), version.value[0]));
  if (markers.repeated) return unreadable(message.offset, "a kafka.* marker header appears twice");
  if (markers.aborted) {
    auto marker = parse_aborted_marker(markers.aborted->value_string());
    if (!marker) return unreadable(message.offset, "kib.aborted is not <producer id>/<epoch>");
    out.aborted = *marker;
    out.timestamp_ms = origin_or_server_ms(message);
    return out;
  }
  if (markers.envelope) {
    if (markers.envelope->value.size() != 1 || markers.envelope->value[0] != kEnvelopeVersion)
      return unreadable(message.offset,
                        fmt::format("kafka.envelope layout 0x{:02x} is not 0x01", markers.envelope->value[0]));
    if (auto why = decode_envelope(message.payload, out)) return unreadable(message.offset, *why);
  } else if (auto why = read_fields(message, entries, markers, out)) {
    return unreadable(message.offset, *why);
  }
  if (auto why = read_timestamp(message, markers.timestamp, out)) return unreadable(message.offset, *why);
  return out;
}

}  // namespace kib::bridge
