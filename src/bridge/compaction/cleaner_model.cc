#include "bridge/compaction/cleaner_model.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

namespace kib::bridge::compaction {

int64_t roll_ms(const CleanerPolicy& p) {
  if (p.compact && p.max_compaction_lag_ms > 0) return std::min(p.max_compaction_lag_ms, p.segment_ms);
  return p.segment_ms;
}

void VirtualSegment::on_append(const CleanerPolicy& p, int64_t base_offset, uint64_t appended, int64_t now_ms) {
  // UnifiedLog.maybeRoll: full (the append would not fit) or old (its first append roll_ms ago).
  const bool full = bytes > 0 && static_cast<int64_t>(bytes) > p.segment_bytes - static_cast<int64_t>(appended);
  const bool old = first_append_ms >= 0 && now_ms - first_append_ms > roll_ms(p);
  if (full || old) {
    start = base_offset;
    bytes = 0;
    first_append_ms = -1;
  }
  if (first_append_ms < 0) first_append_ms = now_ms;
  bytes += appended;
}

double dirty_ratio(const PartitionCleanState& s) {
  const double total = static_cast<double>(s.clean_bytes) + static_cast<double>(s.dirty_bytes);
  return total > 0 ? static_cast<double>(s.dirty_bytes) / total : 0.0;
}

Eligibility eligibility(const CleanerPolicy& p, const PartitionCleanState& s, int64_t now_ms) {
  if (!p.compact) return Eligibility::kNotCompacted;
  // Only rolled records are cleanable: nothing between the cleaner point and the active segment.
  if (std::min(s.active.start, s.high_watermark) <= s.cleaner_point) return Eligibility::kNothingToClean;
  if (s.first_dirty_append_ms >= 0 && p.max_compaction_lag_ms >= 0 &&
      now_ms - s.first_dirty_append_ms > p.max_compaction_lag_ms)
    return Eligibility::kMaxLag;
  return dirty_ratio(s) >= p.min_cleanable_dirty_ratio ? Eligibility::kDirtyRatio : Eligibility::kBelowRatio;
}

const char* eligibility_name(Eligibility e) {
  switch (e) {
    case Eligibility::kNotCompacted: return "not_compacted";
    case Eligibility::kNothingToClean: return "nothing_to_clean";
    case Eligibility::kBelowRatio: return "below_ratio";
    case Eligibility::kDirtyRatio: return "dirty_ratio";
    case Eligibility::kMaxLag: return "max_lag";
  }
  return "?";
}

int64_t cleanable_end(const PartitionCleanState& s, std::optional<int64_t> first_within_min_lag) {
  int64_t end = std::min(s.high_watermark, s.active.start);
  if (first_within_min_lag) end = std::min(end, *first_within_min_lag);
  return std::max(end, s.cleaner_point);
}

// ---- OffsetMap ---------------------------------------------------------------------------------

OffsetMap::OffsetMap(size_t memory_bytes) {
  const size_t slots = std::max<size_t>(memory_bytes / kBytesPerEntry, 2);
  slots_.resize(slots);
  max_entries_ = std::max<size_t>(static_cast<size_t>(static_cast<double>(slots) * kLoadFactor), 1);
}

size_t OffsetMap::find(uint64_t lo, uint64_t hi) const {
  // Linear probing from the hash's slot: the slot holding the key, or the empty one it would take.
  size_t i = static_cast<size_t>(lo % slots_.size());
  while (slots_[i].offset >= 0 && (slots_[i].lo != lo || slots_[i].hi != hi)) i = (i + 1) % slots_.size();
  return i;
}

bool OffsetMap::put(ByteSpan key, int64_t offset) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  const size_t i = find(h.low64, h.high64);
  if (slots_[i].offset < 0) {
    if (entries_ >= max_entries_) return false;
    slots_[i].lo = h.low64;
    slots_[i].hi = h.high64;
    ++entries_;
  }
  slots_[i].offset = offset;
  latest_ = std::max(latest_, offset);
  return true;
}

int64_t OffsetMap::get(ByteSpan key) const {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  return slots_[find(h.low64, h.high64)].offset;
}

void OffsetMap::clear() {
  std::fill(slots_.begin(), slots_.end(), Slot{});
  entries_ = 0;
  latest_ = -1;
}

// ---- verdicts ----------------------------------------------------------------------------------

Verdict verdict(const PassContext& c, const CleanRecord& r) {
  // The bridge's own rules first: placeholders carry no data, and what retention or a
  // DeleteRecords floor removed is gone whatever the map says.
  if (r.aborted_placeholder) return Verdict::kAborted;
  if (r.offset < c.log_start) return Verdict::kRetention;
  if (c.policy.del && c.policy.retention_ms >= 0 && r.timestamp_ms < c.now_ms - c.policy.retention_ms)
    return Verdict::kRetention;
  // Cleaner.shouldRetainRecord: beyond what the map covers, kept as is.
  if (!c.map || r.offset > c.map->latest_offset()) return Verdict::kKeep;
  if (!r.key) return Verdict::kNoKey;
  if (r.offset < c.map->get(*r.key)) return Verdict::kSuperseded;
  if (!r.tombstone) return Verdict::kKeep;
  // A tombstone: kept until its delete horizon, which its first pass sets (KIP-534).
  if (r.delete_horizon_ms < 0) return Verdict::kKeepNewTombstone;
  return c.now_ms < r.delete_horizon_ms ? Verdict::kKeep : Verdict::kExpiredTombstone;
}

bool kept(Verdict v) { return v == Verdict::kKeep || v == Verdict::kKeepNewTombstone; }

// ---- the sparse index --------------------------------------------------------------------------

void SparseIndexBuilder::add(int64_t kafka_offset, int64_t timestamp_ms) {
  if (written_ % interval_ == 0) entries_.push_back({kafka_offset, written_, timestamp_ms});
  entries_.back().max_timestamp_ms = std::max(entries_.back().max_timestamp_ms, timestamp_ms);
  ++written_;
}

std::optional<IndexEntry> index_floor(std::span<const IndexEntry> index, int64_t kafka_offset) {
  auto it = std::upper_bound(index.begin(), index.end(), kafka_offset,
                             [](int64_t o, const IndexEntry& e) { return o < e.kafka_offset; });
  if (it == index.begin()) return std::nullopt;
  return *(it - 1);
}

std::optional<IndexEntry> index_for_timestamp(std::span<const IndexEntry> index, int64_t timestamp_ms) {
  // Timestamps need not grow with offsets: the first block whose largest timestamp reaches it.
  for (const IndexEntry& e : index)
    if (e.max_timestamp_ms >= timestamp_ms) return e;
  return std::nullopt;
}

// ---- recovery ----------------------------------------------------------------------------------

Recovery recovery_for(PassState s) {
  switch (s) {
    case PassState::kWriting: return Recovery::kDropNextGeneration;
    case PassState::kCommitted: return Recovery::kFinishRetire;
    case PassState::kDone: return Recovery::kNothing;
  }
  return Recovery::kNothing;
}

std::optional<PassState> pass_state_from(std::string_view s) {
  if (s == "writing") return PassState::kWriting;
  if (s == "committed") return PassState::kCommitted;
  if (s == "done") return PassState::kDone;
  return std::nullopt;
}

const char* pass_state_name(PassState s) {
  switch (s) {
    case PassState::kWriting: return "writing";
    case PassState::kCommitted: return "committed";
    case PassState::kDone: return "done";
  }
  return "?";
}

std::string generation_topic_name(std::span<const uint8_t, 16> topic_id, int32_t partition, int64_t generation) {
  std::string name;
  name.reserve(64);
  char hex[3];
  for (uint8_t b : topic_id) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    name += hex;
  }
  return name + "-" + std::to_string(partition) + "-" + std::to_string(generation);
}

}  // namespace kib::bridge::compaction
