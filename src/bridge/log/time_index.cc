#include "bridge/log/time_index.h"

#include <algorithm>

namespace kib::bridge {

void TimeIndex::reset(int64_t start) {
  entries_.clear();
  start_ = next_ = start;
  max_timestamp_ = max_timestamp_offset_ = -1;
}

void TimeIndex::add(int64_t offset, int64_t timestamp_ms) {
  if (offset < next_) return;  // already indexed (a rescan overlapping the end)
  if (entries_.empty() || entries_.back().messages >= kChunkMessages)
    entries_.push_back({offset, entries_.empty() ? timestamp_ms : entries_.back().running_max, 0});
  Entry& e = entries_.back();
  e.running_max = std::max(e.running_max, timestamp_ms);
  ++e.messages;
  if (max_timestamp_offset_ < 0 || timestamp_ms > max_timestamp_) {
    max_timestamp_ = timestamp_ms;
    max_timestamp_offset_ = offset;
  }
  next_ = offset + 1;
}

void TimeIndex::advance_to(int64_t offset) { next_ = std::max(next_, offset); }

std::optional<int64_t> TimeIndex::chunk_start_for(int64_t t) const {
  auto it = std::partition_point(entries_.begin(), entries_.end(), [t](const Entry& e) { return e.running_max < t; });
  if (it == entries_.end()) return std::nullopt;
  return it->first_offset;
}

}  // namespace kib::bridge
