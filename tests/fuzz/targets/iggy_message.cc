// Iggy messages read back as Kafka records (the Fetch path): the first byte picks the form.
// Even: the rest is a PollMessages reply payload, decoded with decode_polled_messages, and
// every message goes through map_iggy_to_record. Odd: the rest is one message, a 2-byte
// little-endian user-header length, the header block, then the payload. Whatever Iggy holds
// (written by this bridge, upstream's gateway or a native client) must map or be refused. Each
// header block also goes through compaction's generation copy (bridge/mapping/generation_mapping.h):
// its markers are read or refused, and a block the cleaner may copy reads back with the offset
// and horizon it was given.
#include <memory>
#include <optional>

#include "bridge/mapping/generation_mapping.h"
#include "bridge/mapping/record_mapping.h"
#include "iggy/protocol.h"
#include "fuzz/targets/fuzz_targets.h"

namespace kib::fuzz {
namespace {

bool inside(ByteSpan view, ByteSpan buffer) {
  return view.empty() || (view.data() >= buffer.data() && view.data() + view.size() <= buffer.data() + buffer.size());
}

void copy_one(const iggy::MessageView& m) {
  (void)bridge::read_generation_markers(m.user_headers);
  const bool tombstone = !m.payload.empty() && (m.payload[0] & 1);
  const std::optional<int64_t> horizon = tombstone ? std::optional<int64_t>(1'700'000'000'000) : std::nullopt;
  auto block = bridge::generation_header_block(m.user_headers, 42, horizon);
  if (!block.ok()) return;
  auto markers = bridge::read_generation_markers(*block);
  FUZZ_CHECK(markers.ok(), "a generation block the cleaner wrote does not read back");
  FUZZ_CHECK(markers->kafka_offset == 42, "kib.offset does not read back");
  FUZZ_CHECK(markers->delete_horizon_ms == horizon.value_or(-1), "kib.horizon does not read back");
}

void map_one(const iggy::MessageView& m) {
  copy_one(m);
  auto r = bridge::map_iggy_to_record(m);
  if (!r.ok()) return;
  FUZZ_CHECK(!r->key || inside(*r->key, m.payload) || inside(*r->key, m.user_headers), "a key points outside the message");
  FUZZ_CHECK(!r->value || inside(*r->value, m.payload), "a value points outside the payload");
  for (const auto& h : r->headers) {
    ByteSpan name(reinterpret_cast<const uint8_t*>(h.key.data()), h.key.size());
    FUZZ_CHECK(inside(name, m.payload) || inside(name, m.user_headers), "a header name points outside the message");
    FUZZ_CHECK(!h.value || inside(*h.value, m.payload) || inside(*h.value, m.user_headers),
               "a header value points outside the message");
  }
}

}  // namespace

int fuzz_iggy_message(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if ((data[0] & 1) == 0) {
    auto buffer = std::make_shared<const Bytes>(data + 1, data + size);
    auto polled = iggy::wire::decode_polled_messages(buffer, *buffer);
    if (!polled.ok()) return 0;
    for (const iggy::MessageView& m : polled->messages) map_one(m);
    return 0;
  }
  if (size < 3) return 0;
  const size_t header_len = std::min<size_t>(size - 3, size_t{data[1]} | size_t{data[2]} << 8);
  // Copies, so ASan sees reads past either part.
  const Bytes headers(data + 3, data + 3 + header_len);
  const Bytes payload(data + 3 + header_len, data + size);
  iggy::MessageView m;
  m.offset = 7;
  m.timestamp_us = 1'700'000'000'000'000ull;
  m.origin_timestamp_us = data[0] & 2 ? 0 : 1'700'000'000'123'000ull;
  m.user_headers = headers;
  m.payload = payload;
  map_one(m);
  return 0;
}

}  // namespace kib::fuzz
