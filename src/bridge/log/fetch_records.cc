#include "bridge/log/fetch_records.h"

#include <algorithm>
#include <array>

#include "bridge/mapping/generation_mapping.h"

namespace kib::bridge {
namespace {

size_t uvarint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
size_t varint_size(int64_t v) { return uvarint_size(zigzag_encode64(v)); }
size_t nullable_size(const std::optional<ByteSpan>& b) { return b ? varint_size(static_cast<int64_t>(b->size())) + b->size() : 1; }

kafka::RecordToEncode to_encode(const FetchedRecord& r) {
  return {r.record.timestamp_ms, r.record.key, r.record.value, r.record.headers};
}

// Kafka's EndTransactionMarker: key = version 0, type 0 (ABORT); value = version 0, coordinator
// epoch 0 (the bridge's transaction coordinator never moves).
constexpr std::array<uint8_t, 4> kAbortMarkerKey = {0, 0, 0, 0};
constexpr std::array<uint8_t, 6> kAbortMarkerValue = {0, 0, 0, 0, 0, 0};

kafka::RecordToEncode abort_marker_record(const FetchedRecord& r) {
  return {r.record.timestamp_ms, ByteSpan(kAbortMarkerKey), ByteSpan(kAbortMarkerValue), {}};
}

// The control batch that stands for a run of aborted records ending at `r`.
size_t encode_abort_marker(ByteWriter& w, const FetchedRecord& r) {
  kafka::BatchSettings settings;
  settings.base_offset = r.offset;
  settings.partition_leader_epoch = kPartitionLeaderEpoch;
  settings.transactional = true;
  settings.control = true;
  settings.producer_id = r.record.aborted->producer_id;
  settings.producer_epoch = r.record.aborted->producer_epoch;
  kafka::RecordBatchBuilder builder(w, settings);
  builder.add(abort_marker_record(r));
  return builder.finish();
}

}  // namespace

FetchPosition classify_fetch_offset(int64_t offset, int64_t log_start, int64_t high_watermark) {
  if (offset < log_start) return FetchPosition::kBelowLogStart;
  if (offset > high_watermark) return FetchPosition::kBeyondEnd;
  if (offset == high_watermark) return FetchPosition::kAtEnd;
  return FetchPosition::kReadable;
}

uint32_t poll_count_for(uint64_t budget_bytes, uint64_t avg_message_bytes) {
  // Unknown sizes: assume 1 KiB messages, which keeps a 1000-message reply around 1 MiB.
  const uint64_t avg = std::max<uint64_t>(avg_message_bytes == 0 ? 1024 : avg_message_bytes, 1);
  uint64_t count = budget_bytes / avg;
  if (count < UINT64_MAX) ++count;  // the record that crosses the budget may be smaller than average
  count = std::min<uint64_t>(count, kMaxPollReplyBytes / avg);
  return static_cast<uint32_t>(std::clamp<uint64_t>(count, 1, kMaxPollMessages));
}

PolledRecords map_polled_messages(std::span<const iggy::MessageView> messages, int64_t from_offset) {
  PolledRecords out;
  out.records.reserve(messages.size());
  for (const iggy::MessageView& m : messages) {
    const auto offset = static_cast<int64_t>(m.offset);
    if (offset < from_offset) continue;
    auto mapped = map_iggy_to_record(m);
    if (!mapped) {
      out.unmappable = mapped.error();
      out.unmappable_offset = offset;
      break;
    }
    int64_t run_from = offset;
    if (mapped->aborted && !out.records.empty()) {
      // The run goes on: only its last placeholder stays (the offsets before it become a gap).
      const FetchedRecord& prev = out.records.back();
      if (prev.record.aborted == mapped->aborted && prev.offset + 1 == offset) {
        run_from = prev.aborted_from;
        out.records.pop_back();
      }
    }
    out.records.push_back({offset, std::move(mapped.value()), mapped->aborted ? run_from : -1});
  }
  return out;
}

PolledRecords map_generation_messages(std::span<const iggy::MessageView> messages, int64_t from_offset,
                                      int64_t end_offset) {
  PolledRecords out;
  out.records.reserve(messages.size());
  for (const iggy::MessageView& m : messages) {
    auto markers = read_generation_markers(m.user_headers);
    if (!markers) {
      out.unmappable = markers.error();
      out.unmappable_offset = out.records.empty() ? from_offset : out.records.back().offset + 1;
      break;
    }
    const int64_t offset = markers->kafka_offset;
    out.last_generation_offset = offset;
    if (offset < from_offset) continue;
    if (offset >= end_offset) break;
    auto mapped = map_iggy_to_record(m);
    if (!mapped) {
      out.unmappable = mapped.error();
      out.unmappable_offset = offset;
      break;
    }
    strip_generation_headers(mapped.value());
    out.records.push_back({offset, std::move(mapped.value()), -1});
  }
  return out;
}

size_t record_wire_size(const kafka::RecordToEncode& record, int64_t base_timestamp, int32_t offset_delta) {
  size_t body = 1 + varint_size(record.timestamp - base_timestamp) + varint_size(offset_delta) +
                nullable_size(record.key) + nullable_size(record.value) +
                varint_size(static_cast<int64_t>(record.headers.size()));
  for (const kafka::RecordHeader& h : record.headers)
    body += varint_size(static_cast<int64_t>(h.key.size())) + h.key.size() + nullable_size(h.value);
  return varint_size(static_cast<int64_t>(body)) + body;
}

EncodedRecords encode_fetched_records(std::span<const FetchedRecord> records, size_t max_bytes, bool min_one_record) {
  EncodedRecords out;
  ByteWriter w;
  size_t used = 0;
  size_t i = 0;
  while (i < records.size()) {
    if (records[i].record.aborted) {
      const size_t size =
          kafka::kRecordBatchHeaderSize + record_wire_size(abort_marker_record(records[i]), records[i].record.timestamp_ms, 0);
      if (used + size > max_bytes && !(min_one_record && out.records == 0)) break;
      used += encode_abort_marker(w, records[i]);
      out.aborted.emplace_back(records[i].record.aborted->producer_id, records[i].aborted_from);
      ++out.records;
      out.next_offset = records[i].offset + 1;
      ++i;
      continue;
    }
    const int64_t base_offset = records[i].offset;
    const int64_t base_timestamp = records[i].record.timestamp_ms;
    size_t batch_bytes = kafka::kRecordBatchHeaderSize;
    size_t j = i;
    bool cut_by_budget = false;
    for (; j < records.size(); ++j) {
      // A gap, or an aborted-record marker (a control batch of its own): next batch.
      if (j > i && (records[j].offset != records[j - 1].offset + 1 || records[j].record.aborted)) break;
      const size_t size =
          record_wire_size(to_encode(records[j]), base_timestamp, static_cast<int32_t>(records[j].offset - base_offset));
      const bool first_of_response = out.records == 0 && j == i;
      if (used + batch_bytes + size > max_bytes && !(min_one_record && first_of_response)) {
        cut_by_budget = true;
        break;
      }
      batch_bytes += size;
    }
    if (j == i) break;

    w.reserve(w.size() + batch_bytes);  // sizes are exact: one allocation, no regrowth copies
    kafka::BatchSettings settings;
    settings.base_offset = base_offset;
    settings.partition_leader_epoch = kPartitionLeaderEpoch;
    kafka::RecordBatchBuilder builder(w, settings);
    for (size_t k = i; k < j; ++k) builder.add(to_encode(records[k]));
    used += builder.finish();
    out.records += j - i;
    out.next_offset = records[j - 1].offset + 1;
    if (cut_by_budget) break;
    i = j;
  }
  out.bytes = w.take();
  return out;
}

}  // namespace kib::bridge
