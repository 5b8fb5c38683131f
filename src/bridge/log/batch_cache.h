// The produced-batch cache: Kafka record batches this bridge appended, kept as the producer sent
// them (compression, CRC, producer id and sequence included) for the offsets Iggy gave them, so
// that a Fetch of recent data answers with those bytes instead of polling Iggy and rebuilding
// batches (fetch_records.h). Only the base offset and the partition leader epoch are patched;
// the CRC covers neither.
//
// Exact ranges only: a partition's entries are the batches the bridge appended, each at the
// offsets Iggy acknowledged. A read serves consecutive entries from the one holding the fetch
// offset and stops at the first gap (records another writer put in Iggy, an evicted batch) or at
// `end`. Kept out: batches of transactions, batches whose records carry no timestamp (Iggy stamps
// those itself, so the rebuilt batch differs), LogAppendTime batches. Dropped: a partition after
// DeleteRecords, a deleted topic's partitions, and a partition whose high watermark is found
// below a cached batch's end (purged or recreated in Iggy).
//
// Not copied: an entry refers to the batch in the buffer it arrived in (the Produce request frame,
// `owner` of put()), with its first 16 bytes (base offset, length, leader epoch) patched in a
// copy of their own. A frame stays alive while any of its batches is cached, so the cache charges
// each frame it holds once, whole, and counts that against its bound; a batch under 4 KiB, a
// frame larger than the bound, or an unknown owner makes put() copy the batch instead.
//
// Bounded by bytes ([limits] produced_batch_cache_bytes, 0 = off); the oldest batches go first.
// Loop thread only.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/bytes.h"
#include "common/ids.h"
#include "kafka/records/record_batch.h"

namespace kib::bridge {

// v2 batch header bytes the cache patches: baseOffset (0..8), batchLength, partitionLeaderEpoch.
inline constexpr size_t kCachedBatchHeadBytes = 16;

struct CachedBatch {
  int64_t base_offset = 0;
  int64_t next_offset = 0;  // base_offset + record count
  SharedSpan head;  // the batch's first kCachedBatchHeadBytes, patched
  SharedSpan rest;  // the producer's bytes after them (a view into the buffer they arrived in)
  uint64_t put_seq = 0;  // the cache's count of puts when it was put

  size_t size() const { return head.bytes.size() + rest.bytes.size(); }
  Bytes to_bytes() const;  // the batch as served, in one piece
};

struct BatchCacheStats {
  uint64_t hits = 0;          // reads answered from the cache (at least one batch)
  uint64_t misses = 0;        // reads the cache could not start
  uint64_t batches_served = 0;
  uint64_t bytes_served = 0;
  uint64_t evictions = 0;     // batches dropped for room
  uint64_t invalidations = 0; // partitions dropped (DeleteRecords, deleted topic, purge)
};

class BatchCache {
 public:
  explicit BatchCache(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // Whether `batch` may be cached at all (see the top of this file).
  static bool cacheable(const kafka::DecodedBatch& batch);

  // Keeps `batch` (as received) for offsets [base, base + record count) of the partition.
  // `owner`: the buffer `batch.wire` lies in and what keeps it alive (owner.bytes: all of it, what
  // holding it costs); without one, when it is larger than the bound, or for a batch under
  // 4 KiB, the batch is copied.
  void put(const std::string& topic, PartitionId partition, int64_t base, const kafka::DecodedBatch& batch,
           const SharedSpan& owner = {});

  // The cached batches from the one holding `offset` on, consecutive, each ending at or before
  // `end`, while their sizes stay within `max_bytes` (the first one whatever its size). Empty on
  // a miss. A batch ending past `high_watermark` means Iggy lost or replaced it: the partition
  // is dropped and the read misses.
  std::vector<CachedBatch> read(const std::string& topic, PartitionId partition, int64_t offset, int64_t end,
                                int64_t high_watermark, uint64_t max_bytes);

  void drop_partition(const std::string& topic, PartitionId partition);
  void drop_topic(const std::string& topic);

  // What the cache keeps alive: the buffers its batches lie in, each counted once.
  uint64_t bytes() const { return bytes_; }
  uint64_t max_bytes() const { return max_bytes_; }
  size_t batches() const { return live_; }
  const BatchCacheStats& stats() const { return stats_; }

 private:
  using Key = std::pair<std::string, int32_t>;
  using Partition = std::map<int64_t, CachedBatch>;  // by base offset
  struct Held {
    uint64_t bytes = 0;  // of the buffer
    size_t batches = 0;  // cached batches in it
  };

  void erase(Partition& part, Partition::iterator it);
  void release(const CachedBatch& b);
  void evict_to_bound(uint64_t keep_seq);

  uint64_t max_bytes_;
  std::unordered_map<const void*, Held> held_;  // by the buffer's owner
  uint64_t bytes_ = 0;
  size_t live_ = 0;  // batches held
  std::map<Key, Partition> partitions_;
  struct Put {
    Key key;
    int64_t base;
    uint64_t seq;  // an entry whose batch was dropped (or replaced at its base) is stale, skipped
  };
  std::deque<Put> fifo_;  // insertion order
  uint64_t puts_ = 0;
  BatchCacheStats stats_;
};

}  // namespace kib::bridge
