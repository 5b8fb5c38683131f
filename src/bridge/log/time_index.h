// A sparse, in-memory time index over one partition, built by scanning the messages once and
// extended incrementally, so ListOffsets by timestamp and max-timestamp (-3) are exact although
// Kafka timestamps (CreateTime, chosen by producers) need not grow with the offset and Iggy can
// only search by its own append time.
//
// Like Kafka's .timeindex, each entry holds the largest timestamp seen from the start of the
// index through the end of its chunk, so entries are monotonic and the first record with
// timestamp >= t lies in the first chunk whose running maximum reaches t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace kib::bridge {

class TimeIndex {
 public:
  // Messages per entry: also the most one scan step reads before a query can use the index.
  static constexpr size_t kChunkMessages = 1000;

  // Forgets everything; the next scan starts at `start` (the log start offset).
  void reset(int64_t start);

  int64_t start() const { return start_; }
  // First offset not scanned yet.
  int64_t next() const { return next_; }

  // Records one scanned message; offsets must ascend (gaps allowed) and be >= next().
  void add(int64_t offset, int64_t timestamp_ms);
  // Marks [next(), offset) as scanned even without messages (e.g. offsets nobody can read).
  void advance_to(int64_t offset);

  // Where to scan for the first record with timestamp >= `t`: the first offset of the chunk that
  // holds it, or nullopt when no scanned record reaches `t`.
  std::optional<int64_t> chunk_start_for(int64_t t) const;

  // The largest timestamp scanned and the first offset that carries it (-1/-1 when empty).
  int64_t max_timestamp() const { return max_timestamp_; }
  int64_t max_timestamp_offset() const { return max_timestamp_offset_; }

  size_t entries() const { return entries_.size(); }

 private:
  struct Entry {
    int64_t first_offset;
    int64_t running_max;  // max timestamp from start() through the end of this chunk
    size_t messages;
  };
  std::vector<Entry> entries_;
  int64_t start_ = 0;
  int64_t next_ = 0;
  int64_t max_timestamp_ = -1;
  int64_t max_timestamp_offset_ = -1;
};

}  // namespace kib::bridge
