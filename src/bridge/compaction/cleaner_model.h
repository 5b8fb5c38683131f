// The log cleaner's decisions without I/O (docs/compaction.md, "A pass"): when a partition is
// cleaned and up to where, the dedupe map of a pass, which records the next generation keeps,
// the sparse index of a generation and what recovery does with a pass a crash interrupted.
// Kafka's own rules where it has them: LogCleanerManager (eligibility, the cleanable end),
// SkimpyOffsetMap (the map), Cleaner.shouldRetainRecord (keep or drop), LogConfig (the roll of
// a compacted log's active segment).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/bytes.h"

namespace kib::bridge::compaction {

// A topic's configs as the cleaner reads them (Kafka's LogConfig names).
struct CleanerPolicy {
  bool compact = false;  // cleanup.policy includes compact
  bool del = false;      // ... and delete: retention applies too
  double min_cleanable_dirty_ratio = 0.5;
  int64_t min_compaction_lag_ms = 0;
  int64_t max_compaction_lag_ms = INT64_MAX;
  int64_t delete_retention_ms = 86400000;
  int64_t segment_bytes = 1073741824;
  int64_t segment_ms = 604800000;
  int64_t retention_ms = -1;  // with `del`: records older are dropped; -1 never
};

// LogConfig.maxSegmentMs: a compacted log rolls its active segment by segment.ms or, sooner,
// max.compaction.lag.ms, so a record cannot wait uncleaned past that lag.
int64_t roll_ms(const CleanerPolicy& p);

// Kafka never cleans a log's active segment. The live log's Iggy segments are not visible to the
// bridge, so it keeps a virtual one per partition, rolled as Kafka rolls (UnifiedLog.maybeRoll),
// at append time only: when an append would take it past segment.bytes, or when its first
// append is roll_ms() old. Only records before `start` are cleanable.
struct VirtualSegment {
  int64_t start = 0;              // the first offset of the active segment
  int64_t first_append_ms = -1;   // when its first append came; -1: empty
  uint64_t bytes = 0;             // bytes appended to it
  // An append of `bytes` at `base_offset`, at `now_ms`.
  void on_append(const CleanerPolicy& p, int64_t base_offset, uint64_t bytes, int64_t now_ms);
};

// What the cleaner knows of one compacted partition between passes.
struct PartitionCleanState {
  int64_t cleaner_point = 0;       // C: offsets below it are read from the generation
  uint64_t clean_bytes = 0;        // the current generation's size
  uint64_t dirty_bytes = 0;        // appended at or above C
  int64_t first_dirty_append_ms = -1;  // when the oldest record at or above C was appended; -1 none
  int64_t high_watermark = 0;      // Iggy's, never above the last stable offset
  VirtualSegment active;
};

// dirty ÷ (clean + dirty); 0 when both are 0.
double dirty_ratio(const PartitionCleanState& s);

enum class Eligibility {
  kNotCompacted,   // the policy has no compact
  kNothingToClean, // no rolled dirty record
  kBelowRatio,     // dirty ratio under min.cleanable.dirty.ratio and nothing past max lag
  kDirtyRatio,     // cleanable: the ratio reached
  kMaxLag,         // cleanable: a dirty record waited max.compaction.lag.ms
};
// LogCleanerManager.grabFilthiestCompactedLog's test for one log.
Eligibility eligibility(const CleanerPolicy& p, const PartitionCleanState& s, int64_t now_ms);
const char* eligibility_name(Eligibility e);

// The first offset a pass may not clean (Kafka's firstUncleanableDirtyOffset): the smallest of
// the high watermark, the virtual active segment's start and `first_within_min_lag`, the first
// offset whose record is newer than min.compaction.lag.ms (the time index's answer; nullopt: no
// such record). Never below the cleaner point.
int64_t cleanable_end(const PartitionCleanState& s, std::optional<int64_t> first_within_min_lag);

// A pass's key → latest offset map in a fixed memory budget (Kafka's SkimpyOffsetMap: a 128-bit
// hash of the key per slot, open addressing, filled to 90 %). Keys that hash alike are one key,
// as in Kafka (its MD5, here XXH3-128).
class OffsetMap {
 public:
  static constexpr size_t kBytesPerEntry = 24;  // 16 hash + 8 offset
  static constexpr double kLoadFactor = 0.9;

  explicit OffsetMap(size_t memory_bytes);
  // Records `offset` as the latest of `key`. False when the map is full and the key is new: the
  // pass stops mapping there (the records from this one on stay dirty).
  bool put(ByteSpan key, int64_t offset);
  // The latest offset recorded for `key`, or -1.
  int64_t get(ByteSpan key) const;
  size_t size() const { return entries_; }
  size_t capacity() const { return max_entries_; }
  // The largest offset put so far, or -1 (Kafka's latestOffset).
  int64_t latest_offset() const { return latest_; }
  void clear();

 private:
  struct Slot {
    uint64_t lo = 0, hi = 0;
    int64_t offset = -1;  // -1: empty
  };
  size_t find(uint64_t lo, uint64_t hi) const;
  std::vector<Slot> slots_;
  size_t entries_ = 0;
  size_t max_entries_ = 0;
  int64_t latest_ = -1;
};

// One record as the pass sees it, from the current generation or the dirty section.
struct CleanRecord {
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
  std::optional<ByteSpan> key;
  bool tombstone = false;            // a null value
  bool aborted_placeholder = false;  // docs/mapping.md "Aborted records"
  int64_t delete_horizon_ms = -1;    // kib.horizon of a tombstone already in a generation; -1 none
};

// What a pass does with one record.
enum class Verdict {
  kKeep,
  kKeepNewTombstone,  // keep, and give it its delete horizon (now + delete.retention.ms)
  kSuperseded,        // a later record of its key is in the map
  kExpiredTombstone,  // its delete horizon passed
  kAborted,           // an aborted transaction's placeholder
  kNoKey,             // written before the topic was compacted (Kafka drops them too)
  kRetention,         // compact,delete: older than retention.ms, or below the log start
};
// The pass's context: the map of the dirty section, the clock, the log start, the policy.
struct PassContext {
  const OffsetMap* map = nullptr;
  int64_t now_ms = 0;
  int64_t log_start = 0;
  CleanerPolicy policy;
};
// Cleaner.shouldRetainRecord and its tombstone horizon, plus the bridge's placeholders and the
// retention of compact,delete. A record above the map's range is kept as is.
Verdict verdict(const PassContext& c, const CleanRecord& r);
bool kept(Verdict v);

// Every `interval` kept records one entry: the Kafka offset and generation offset of the block's
// first record and the largest timestamp in the block, for Fetch and ListOffsets by time below
// the cleaner point.
struct IndexEntry {
  int64_t kafka_offset = 0;
  uint64_t generation_offset = 0;
  int64_t max_timestamp_ms = -1;
  bool operator==(const IndexEntry&) const = default;
};
class SparseIndexBuilder {
 public:
  explicit SparseIndexBuilder(uint32_t interval) : interval_(interval ? interval : 1) {}
  // The next kept record, written at generation offset `written` (0, 1, 2...).
  void add(int64_t kafka_offset, int64_t timestamp_ms);
  const std::vector<IndexEntry>& entries() const { return entries_; }

 private:
  uint32_t interval_;
  uint64_t written_ = 0;
  std::vector<IndexEntry> entries_;
};
// The entry to start a read of `kafka_offset` from: the last block starting at or before it
// (nullopt: before the first block, read from generation offset 0).
std::optional<IndexEntry> index_floor(std::span<const IndexEntry> index, int64_t kafka_offset);
// The first block that may hold a record with a timestamp at or after `timestamp_ms`.
std::optional<IndexEntry> index_for_timestamp(std::span<const IndexEntry> index, int64_t timestamp_ms);

// A pass found in SQLite at startup, and what recovery does with it (docs/compaction.md,
// "Crashes, at every step").
enum class PassState { kWriting, kCommitted, kDone };
enum class Recovery {
  kDropNextGeneration,  // writing: delete the half-written generation topic and the pass row
  kFinishRetire,        // committed: store the barrier, DeleteSegments, delete the old generation
  kNothing,             // done
};
Recovery recovery_for(PassState s);
std::optional<PassState> pass_state_from(std::string_view s);
const char* pass_state_name(PassState s);

// What reads need of a partition's cleaned head (docs/compaction.md, "What each reader sees"):
// Kafka offsets below `cleaner_point` are read from the generation topic `topic` of the Iggy
// stream `stream`, where `index` says which generation offset to start from. Shared by the reads
// in flight, so a replaced generation stays readable until the last read of it ends.
struct CleanedHead {
  int64_t generation = 0;
  std::string stream;
  std::string topic;
  int64_t cleaner_point = 0;
  int64_t log_start = 0;  // the log start as Kafka keeps it (unchanged by cleaning)
  std::vector<IndexEntry> index;
};

// The generation topic's Iggy name: `<topic id hex>-<partition>-<generation>`.
std::string generation_topic_name(std::span<const uint8_t, 16> topic_id, int32_t partition, int64_t generation);

}  // namespace kib::bridge::compaction
