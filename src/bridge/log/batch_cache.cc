#include "bridge/log/batch_cache.h"

#include <algorithm>

#include "bridge/log/fetch_records.h"

namespace kib::bridge {
namespace {

void put_be64(uint8_t* p, int64_t v) {
  for (int i = 7; i >= 0; --i, v = static_cast<int64_t>(static_cast<uint64_t>(v) >> 8)) p[i] = static_cast<uint8_t>(v);
}
void put_be32(uint8_t* p, int32_t v) {
  auto u = static_cast<uint32_t>(v);
  for (int i = 3; i >= 0; --i, u >>= 8) p[i] = static_cast<uint8_t>(u);
}

// v2 batch header: baseOffset int64 at 0, batchLength int32 at 8, partitionLeaderEpoch int32 at
// 12; the CRC (at 17) covers attributes (21) to the end.
constexpr size_t kBaseOffsetAt = 0;
constexpr size_t kLeaderEpochAt = 12;
constexpr size_t kMinBatchBytes = 61;
static_assert(kMinBatchBytes > kCachedBatchHeadBytes);
constexpr size_t kMinReferencedBatchBytes = 4096;

// What the cache changes in a batch it serves: the base offset Iggy gave it and the leader epoch.
void patch_head(uint8_t* batch, int64_t base) {
  put_be64(batch + kBaseOffsetAt, base);
  put_be32(batch + kLeaderEpochAt, kPartitionLeaderEpoch);
}

}  // namespace

bool BatchCache::cacheable(const kafka::DecodedBatch& batch) {
  const kafka::RecordBatchHeader& h = batch.header;
  if (h.is_transactional() || h.is_control()) return false;
  if (h.timestamp_type() != kafka::TimestampType::kCreateTime) return false;
  if (batch.wire.size() < kMinBatchBytes || batch.records.empty()) return false;
  // Origin 0 (a record without a timestamp) is stamped by Iggy: a rebuilt batch says "now".
  return std::all_of(batch.records.begin(), batch.records.end(),
                     [&](const kafka::Record& r) { return batch.timestamp_of(r) > 0; });
}

Bytes CachedBatch::to_bytes() const {
  Bytes out(head.bytes.begin(), head.bytes.end());
  out.insert(out.end(), rest.bytes.begin(), rest.bytes.end());
  return out;
}

void BatchCache::put(const std::string& topic, PartitionId partition, int64_t base, const kafka::DecodedBatch& batch,
                     const SharedSpan& owner) {
  const uint64_t size = batch.wire.size();
  if (max_bytes_ == 0 || size > max_bytes_ || base < 0 || !cacheable(batch)) return;
  // Small batches are copied: a reference costs more than their bytes (the patched head, and the
  // request it keeps alive), and many small entries would hold far more than the bound counts.
  const bool in_owner = size >= kMinReferencedBatchBytes && owner.owner && owner.bytes.size() <= max_bytes_ &&
                        batch.wire.data() >= owner.bytes.data() &&
                        batch.wire.data() + size <= owner.bytes.data() + owner.bytes.size();
  CachedBatch entry;
  entry.base_offset = base;
  entry.next_offset = base + static_cast<int64_t>(batch.records.size());
  entry.put_seq = ++puts_;
  uint64_t buffer_bytes = 0;  // what holding the buffer the entry refers to costs
  if (in_owner) {
    // The producer's bytes stay where they arrived; only the patched head is new.
    auto head = std::make_shared<std::array<uint8_t, kCachedBatchHeadBytes>>();
    std::copy_n(batch.wire.begin(), kCachedBatchHeadBytes, head->begin());
    patch_head(head->data(), base);
    entry.head = SharedSpan{head, ByteSpan(*head)};
    entry.rest = SharedSpan{owner.owner, batch.wire.subspan(kCachedBatchHeadBytes)};
    buffer_bytes = owner.bytes.size();
  } else {
    auto bytes = std::make_shared<Bytes>(batch.wire.begin(), batch.wire.end());
    patch_head(bytes->data(), base);
    const ByteSpan all(*bytes);
    entry.head = SharedSpan{bytes, all.first(kCachedBatchHeadBytes)};
    entry.rest = SharedSpan{bytes, all.subspan(kCachedBatchHeadBytes)};
    buffer_bytes = size;
  }
  const Key key{topic, partition()};
  Partition& part = partitions_[key];
  // An entry overlapping the new one is stale (the partition was rewritten under us): drop it.
  for (auto it = part.lower_bound(base); it != part.end() && it->first < entry.next_offset;) erase(part, it++);
  if (auto it = part.lower_bound(base); it != part.begin() && std::prev(it)->second.next_offset > base)
    erase(part, std::prev(it));
  Held& h = held_[entry.rest.owner.get()];
  if (h.batches++ == 0) {
    h.bytes = buffer_bytes;
    bytes_ += h.bytes;
  }
  part.emplace(base, std::move(entry));
  ++live_;
  fifo_.push_back(Put{key, base, puts_});
  evict_to_bound(puts_);
}

std::vector<CachedBatch> BatchCache::read(const std::string& topic, PartitionId partition, int64_t offset, int64_t end,
                                          int64_t high_watermark, uint64_t max_bytes) {
  std::vector<CachedBatch> out;
  auto pit = partitions_.find(Key{topic, partition()});
  if (pit == partitions_.end() || pit->second.empty()) {
    ++stats_.misses;
    return out;
  }
  Partition& part = pit->second;
  if (part.rbegin()->second.next_offset > high_watermark) {
    // Iggy's end is below what the bridge appended: the partition was purged or recreated.
    drop_partition(topic, partition);
    ++stats_.misses;
    return out;
  }
  auto it = part.upper_bound(offset);
  if (it == part.begin()) {
    ++stats_.misses;
    return out;
  }
  --it;
  uint64_t taken = 0;
  int64_t expect = it->first;
  for (; it != part.end(); ++it) {
    const CachedBatch& b = it->second;
    if (b.base_offset != expect || b.next_offset > end || b.next_offset <= offset) break;
    if (!out.empty() && taken + b.size() > max_bytes) break;
    taken += b.size();
    expect = b.next_offset;
    out.push_back(b);
  }
  if (out.empty()) {
    ++stats_.misses;
    return out;
  }
  ++stats_.hits;
  stats_.batches_served += out.size();
  stats_.bytes_served += taken;
  return out;
}

void BatchCache::drop_partition(const std::string& topic, PartitionId partition) {
  auto pit = partitions_.find(Key{topic, partition()});
  if (pit == partitions_.end()) return;
  for (const auto& [base, b] : pit->second) release(b);
  live_ -= pit->second.size();
  partitions_.erase(pit);
  ++stats_.invalidations;
}

void BatchCache::drop_topic(const std::string& topic) {
  for (auto it = partitions_.lower_bound(Key{topic, INT32_MIN}); it != partitions_.end() && it->first.first == topic;) {
    for (const auto& [base, b] : it->second) release(b);
    live_ -= it->second.size();
    it = partitions_.erase(it);
    ++stats_.invalidations;
  }
}

void BatchCache::erase(Partition& part, Partition::iterator it) {
  release(it->second);
  --live_;
  part.erase(it);
}

void BatchCache::release(const CachedBatch& b) {
  auto it = held_.find(b.rest.owner.get());
  if (it == held_.end()) return;
  if (--it->second.batches == 0) {
    bytes_ -= it->second.bytes;
    held_.erase(it);
  }
}

// Drops the oldest batches until the buffers held fit the bound; never the one just put (its
// buffer alone fits: put() checked).
void BatchCache::evict_to_bound(uint64_t keep_seq) {
  auto live_entry = [this](const Put& e) -> std::pair<Partition*, Partition::iterator> {
    auto pit = partitions_.find(e.key);
    if (pit == partitions_.end()) return {nullptr, {}};
    auto it = pit->second.find(e.base);
    if (it == pit->second.end() || it->second.put_seq != e.seq) return {nullptr, {}};
    return {&pit->second, it};
  };
  while (bytes_ > max_bytes_ && !fifo_.empty() && fifo_.front().seq != keep_seq) {
    Put e = std::move(fifo_.front());
    fifo_.pop_front();
    auto [part, it] = live_entry(e);
    if (!part) continue;  // dropped since
    erase(*part, it);
    ++stats_.evictions;
    if (part->empty()) partitions_.erase(e.key);
  }
  // Stale fifo entries (dropped partitions) would otherwise pile up while nothing is evicted.
  if (fifo_.size() > 2 * live_ + 1024) {
    std::deque<Put> live;
    for (auto& e : fifo_)
      if (live_entry(e).first) live.push_back(std::move(e));
    fifo_.swap(live);
  }
}

}  // namespace kib::bridge
