// The produced-batch cache's rules (bridge/log/batch_cache.h) on batches built and decoded by the
// bridge's own record codec; tests/system/test_batch_cache.py checks the same against Iggy.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "bridge/log/batch_cache.h"
#include "bridge/log/partition_offsets.h"
#include "bridge/log/reader.h"
#include "common/bytes.h"
#include "kafka/records/record_batch.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::kafka;

namespace {

// A decoded batch of `n` records (timestamps from `ts`) that stays valid with its input.
struct Built {
  std::shared_ptr<Bytes> wire;
  DecodedBatch batch;
};

Built build(int n, BatchSettings s = {}, int64_t ts = 1'700'000'000'000, size_t value_bytes = 0) {
  std::vector<std::string> values;
  for (int i = 0; i < n; ++i) {
    values.push_back("v" + std::to_string(i));
    values.back().resize(std::max(values.back().size(), value_bytes), 'x');
  }
  std::vector<RecordToEncode> recs;
  for (int i = 0; i < n; ++i) {
    RecordToEncode r;
    r.timestamp = ts + i;
    r.value = ByteSpan(reinterpret_cast<const uint8_t*>(values[static_cast<size_t>(i)].data()),
                       values[static_cast<size_t>(i)].size());
    recs.push_back(r);
  }
  ByteWriter w;
  encode_record_batch(w, s, recs);
  Built b;
  b.wire = std::make_shared<Bytes>(w.buffer().begin(), w.buffer().end());
  DecompressionBudget budget{1u << 20};
  auto decoded = decode_record_batches(*b.wire, budget);
  BOOST_REQUIRE(decoded.ok());
  b.batch = std::move(decoded->front());
  return b;
}

int64_t base_of(const CachedBatch& c) {
  int64_t v = 0;
  const Bytes bytes = c.to_bytes();
  for (int i = 0; i < 8; ++i) v = (v << 8) | bytes[static_cast<size_t>(i)];
  return v;
}

const PartitionId kP0{0};

}  // namespace

BOOST_AUTO_TEST_SUITE(batch_cache)

BOOST_AUTO_TEST_CASE(consecutive_batches_are_read_from_the_one_holding_the_offset_with_patched_offsets) {
  BatchCache c(1 << 20);
  Built a = build(3), b = build(2), d = build(4);
  c.put("t", kP0, 10, a.batch);
  c.put("t", kP0, 13, b.batch);
  c.put("t", kP0, 15, d.batch);
  auto r = c.read("t", kP0, 14, 19, 19, 1 << 20);
  BOOST_REQUIRE_EQUAL(r.size(), 2u);
  BOOST_TEST(r[0].base_offset == 13);
  BOOST_TEST(base_of(r[0]) == 13);  // patched; the producer's said 0
  BOOST_TEST(base_of(r[1]) == 15);
  // The rest of each batch is the producer's bytes, CRC and all (the CRC does not cover 0..16).
  const Bytes served = r[1].to_bytes();
  BOOST_TEST(std::equal(served.begin() + 17, served.end(), d.wire->begin() + 17));
  DecompressionBudget budget{1u << 20};
  auto again = decode_record_batches(served, budget);
  BOOST_REQUIRE(again.ok());  // still a valid batch: the CRC checks
  BOOST_TEST(again->front().header.base_offset == 15);
  BOOST_TEST(again->front().header.partition_leader_epoch == 0);
  BOOST_TEST(c.stats().hits == 1u);
}

// Two batches in one buffer, as two partitions of one Produce request arrive.
struct SharedFrame {
  std::shared_ptr<Bytes> frame;
  std::vector<DecodedBatch> batches;
  SharedSpan owner() const { return SharedSpan{frame, *frame}; }
};

// Batches of at least 4 KiB: smaller ones are copied, whatever their owner.
SharedFrame two_in_one(int n1, int n2, size_t padding = 0, size_t value_bytes = 2500) {
  Built a = build(n1, {}, 1'700'000'000'000, value_bytes), b = build(n2, {}, 1'700'000'000'000, value_bytes);
  SharedFrame f;
  f.frame = std::make_shared<Bytes>(padding, 0);
  f.frame->insert(f.frame->end(), a.wire->begin(), a.wire->end());
  f.frame->insert(f.frame->end(), b.wire->begin(), b.wire->end());
  DecompressionBudget budget{1u << 20};
  const ByteSpan all(*f.frame);
  auto da = decode_record_batches(all.subspan(padding, a.wire->size()), budget);
  auto db = decode_record_batches(all.subspan(padding + a.wire->size()), budget);
  BOOST_REQUIRE(da.ok() && db.ok());
  f.batches.push_back(std::move(da->front()));
  f.batches.push_back(std::move(db->front()));
  return f;
}

bool points_into(const CachedBatch& c, const Bytes& buffer) {
  return c.rest.bytes.data() >= buffer.data() && c.rest.bytes.data() + c.rest.bytes.size() <= buffer.data() + buffer.size();
}

BOOST_AUTO_TEST_CASE(a_batch_is_served_from_the_buffer_it_arrived_in_byte_for_byte_as_a_copy_would_be) {
  SharedFrame f = two_in_one(3, 4, 100);
  BatchCache viewed(1 << 20), copied(1 << 20);
  viewed.put("t", kP0, 10, f.batches[0], f.owner());
  viewed.put("t", kP0, 13, f.batches[1], f.owner());
  copied.put("t", kP0, 10, f.batches[0]);
  copied.put("t", kP0, 13, f.batches[1]);
  auto v = viewed.read("t", kP0, 10, 17, 17, 1 << 20);
  auto c = copied.read("t", kP0, 10, 17, 17, 1 << 20);
  BOOST_REQUIRE_EQUAL(v.size(), 2u);
  BOOST_REQUIRE_EQUAL(c.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    BOOST_TEST(points_into(v[i], *f.frame));   // not copied
    BOOST_TEST(!points_into(c[i], *f.frame));  // copied: no owner given
    BOOST_TEST(v[i].to_bytes() == c[i].to_bytes());
    BOOST_TEST(v[i].size() == f.batches[i].wire.size());
  }
  BOOST_TEST(base_of(v[1]) == 13);
  // The producer's frame is not patched: its batches still say base offset 0.
  BOOST_TEST(f.batches[1].wire[7] == 0);
  DecompressionBudget budget{1u << 20};
  auto again = decode_record_batches(v[1].to_bytes(), budget);
  BOOST_REQUIRE(again.ok());
  BOOST_TEST(again->front().header.base_offset == 13);
}

BOOST_AUTO_TEST_CASE(a_batch_under_4_KiB_is_copied_whatever_its_owner) {
  SharedFrame f = two_in_one(2, 2, 0, 10);
  BOOST_REQUIRE(f.batches[0].wire.size() < 4096);
  BatchCache c(1 << 20);
  c.put("t", kP0, 0, f.batches[0], f.owner());
  auto r = c.read("t", kP0, 0, 2, 2, 1 << 20);
  BOOST_REQUIRE_EQUAL(r.size(), 1u);
  BOOST_TEST(!points_into(r[0], *f.frame));
  BOOST_TEST(c.bytes() == f.batches[0].wire.size());  // the copy, not the frame
}

BOOST_AUTO_TEST_CASE(a_buffer_is_charged_once_whole_until_its_last_batch_goes) {
  SharedFrame f = two_in_one(2, 2, 1000);
  const uint64_t frame = f.frame->size();
  BatchCache c(1 << 20);
  c.put("t", kP0, 0, f.batches[0], f.owner());
  BOOST_TEST(c.bytes() == frame);  // the whole buffer stays alive, padding and all
  c.put("t", PartitionId(1), 0, f.batches[1], f.owner());
  BOOST_TEST(c.bytes() == frame);  // once
  BOOST_TEST(c.batches() == 2u);
  c.drop_partition("t", kP0);
  BOOST_TEST(c.bytes() == frame);  // the other batch still holds it
  c.drop_partition("t", PartitionId(1));
  BOOST_TEST(c.bytes() == 0u);
  // The frame is released with its last batch.
  std::weak_ptr<Bytes> weak = f.frame;
  {
    BatchCache d(1 << 20);
    d.put("t", kP0, 0, f.batches[0], f.owner());
    f.frame.reset();
    BOOST_TEST(!weak.expired());
    d.drop_topic("t");
    BOOST_TEST(weak.expired());
  }
}

BOOST_AUTO_TEST_CASE(buffers_count_against_the_bound_and_one_larger_than_it_is_not_held) {
  SharedFrame f = two_in_one(2, 2, 5000);
  const uint64_t frame = f.frame->size();
  // Room for the batches but not for their buffer: copied instead.
  BatchCache small(frame - 1);
  small.put("t", kP0, 0, f.batches[0], f.owner());
  auto r = small.read("t", kP0, 0, 2, 2, 1 << 20);
  BOOST_REQUIRE_EQUAL(r.size(), 1u);
  BOOST_TEST(!points_into(r[0], *f.frame));
  BOOST_TEST(small.bytes() == f.batches[0].wire.size());
  // Room for two buffers: a third evicts the oldest buffer's batches until it fits.
  BatchCache c(2 * frame + frame / 2);
  SharedFrame g = two_in_one(2, 2, 5000), h = two_in_one(2, 2, 5000);
  c.put("t", kP0, 0, f.batches[0], f.owner());
  c.put("t", kP0, 2, f.batches[1], f.owner());
  c.put("t", kP0, 4, g.batches[0], g.owner());
  c.put("t", kP0, 6, g.batches[1], g.owner());
  BOOST_TEST(c.bytes() == 2 * frame);
  c.put("t", kP0, 8, h.batches[0], h.owner());
  BOOST_TEST(c.bytes() == 2 * frame);
  BOOST_TEST(c.bytes() <= c.max_bytes());
  BOOST_TEST(c.stats().evictions == 2u);  // both of f's batches, to free f
  BOOST_TEST(c.read("t", kP0, 0, 10, 10, 1 << 20).empty());
  BOOST_TEST(c.read("t", kP0, 4, 10, 10, 1 << 20).size() == 3u);
}

BOOST_AUTO_TEST_CASE(a_gap_an_end_and_the_byte_budget_stop_a_read) {
  BatchCache c(1 << 20);
  Built a = build(3), b = build(3), d = build(3);
  c.put("t", kP0, 0, a.batch);
  c.put("t", kP0, 5, b.batch);  // 3..4 written by someone else
  BOOST_TEST(c.read("t", kP0, 0, 8, 8, 1 << 20).size() == 1u);
  BOOST_TEST(c.read("t", kP0, 3, 8, 8, 1 << 20).empty());  // in the gap: Iggy's
  BOOST_TEST(c.stats().misses == 1u);
  c.put("t", kP0, 8, d.batch);
  BOOST_TEST(c.read("t", kP0, 5, 11, 11, 1 << 20).size() == 2u);
  BOOST_TEST(c.read("t", kP0, 5, 10, 11, 1 << 20).size() == 1u);  // a batch past `end` (the LSO) stops it
  // The first batch whatever its size, then only what fits.
  BOOST_TEST(c.read("t", kP0, 5, 11, 11, 1).size() == 1u);
  BOOST_TEST(c.read("t", kP0, 20, 30, 30, 1 << 20).empty());
  BOOST_TEST(c.read("t", PartitionId(1), 0, 8, 8, 1 << 20).empty());
}

BOOST_AUTO_TEST_CASE(a_high_watermark_below_the_cache_drops_the_partition) {
  BatchCache c(1 << 20);
  Built a = build(5);
  c.put("t", kP0, 0, a.batch);
  BOOST_TEST(c.read("t", kP0, 0, 3, 3, 1 << 20).empty());  // purged and 3 records written again
  BOOST_TEST(c.batches() == 0u);
  BOOST_TEST(c.bytes() == 0u);
  BOOST_TEST(c.stats().invalidations == 1u);
}

BOOST_AUTO_TEST_CASE(dropping_a_partition_or_a_topic_forgets_only_it) {
  BatchCache c(1 << 20);
  Built a = build(2), b = build(2), d = build(2);
  c.put("t", kP0, 0, a.batch);
  c.put("t", PartitionId(1), 0, b.batch);
  c.put("u", kP0, 0, d.batch);
  c.drop_partition("t", kP0);
  BOOST_TEST(c.read("t", kP0, 0, 2, 2, 1 << 20).empty());
  BOOST_TEST(c.read("t", PartitionId(1), 0, 2, 2, 1 << 20).size() == 1u);
  c.drop_topic("t");
  BOOST_TEST(c.read("t", PartitionId(1), 0, 2, 2, 1 << 20).empty());
  BOOST_TEST(c.read("u", kP0, 0, 2, 2, 1 << 20).size() == 1u);
  BOOST_TEST(c.batches() == 1u);
  BOOST_TEST(c.bytes() == d.wire->size());
}

BOOST_AUTO_TEST_CASE(the_oldest_batches_are_evicted_to_stay_within_the_budget) {
  Built one = build(10);
  const uint64_t size = one.wire->size();
  BatchCache c(3 * size);
  std::vector<Built> keep;
  for (int i = 0; i < 5; ++i) {
    keep.push_back(build(10));
    c.put("t", kP0, i * 10, keep.back().batch);
  }
  BOOST_TEST(c.bytes() <= 3 * size);
  BOOST_TEST(c.batches() == 3u);
  BOOST_TEST(c.stats().evictions == 2u);
  BOOST_TEST(c.read("t", kP0, 5, 50, 50, 1 << 20).empty());
  BOOST_TEST(c.read("t", kP0, 20, 50, 50, 1 << 20).size() == 3u);
  BatchCache off(0);
  off.put("t", kP0, 0, one.batch);
  BOOST_TEST(off.batches() == 0u);
}

BOOST_AUTO_TEST_CASE(transactional_log_append_time_and_untimed_batches_are_not_cached) {
  BatchSettings txn;
  txn.transactional = true;
  txn.producer_id = 7;
  txn.producer_epoch = 0;
  txn.base_sequence = 0;
  BOOST_TEST(!BatchCache::cacheable(build(2, txn).batch));
  BatchSettings lat;
  lat.timestamp_type = TimestampType::kLogAppendTime;
  lat.log_append_time = 1'700'000'000'000;
  BOOST_TEST(!BatchCache::cacheable(build(2, lat).batch));
  BOOST_TEST(!BatchCache::cacheable(build(2, {}, -1).batch));  // no timestamp: Iggy stamps its own
  BatchSettings zstd;
  zstd.compression = Compression::kZstd;
  BOOST_TEST(BatchCache::cacheable(build(2, zstd).batch));
}

BOOST_AUTO_TEST_CASE(a_pass_answers_cached_batches_whole_within_budget_and_below_the_stable_offset) {
  BatchCache c(1 << 20);
  Built a = build(4), b = build(4);
  c.put("t", kP0, 0, a.batch);
  c.put("t", kP0, 4, b.batch);
  const int32_t one = static_cast<int32_t>(a.wire->size());
  std::vector<FetchPartitionRequest> rq = {{"t", kP0, KafkaOffset(0), 1 << 20}, {"t", PartitionId(1), KafkaOffset(0), 1 << 20}};
  std::vector<PartitionRead> reads(2);
  reads[0].cached = c.read("t", kP0, 0, 8, 8, 1 << 20);
  reads[1].cached = c.read("t", kP0, 0, 8, 8, 1 << 20);  // the same batches, as a second partition's
  PartitionOffsets p0;
  p0.topic = "t";
  p0.high_watermark = KafkaOffset(8);
  std::vector<PartitionOffsets*> states = {&p0, nullptr};
  // Room for one batch and a half: the first partition gets one whole batch, the second none
  // (not the first with data), as Kafka answers whole batches.
  PassResults r = assemble_pass(rq, reads, states, one + one / 2);
  BOOST_TEST(r.results[0].records.size() == a.wire->size());
  BOOST_TEST(r.results[1].records.empty());
  // A fetch with no room still gets the first partition's first batch (KIP-74).
  r = assemble_pass(rq, reads, states, 1);
  BOOST_TEST(r.results[0].records.size() == a.wire->size());
  // read_committed: nothing at or above a held last stable offset.
  p0.stable_holds.insert(6);
  r = assemble_pass(rq, reads, states, 1 << 20, IsolationLevel::kReadCommitted);
  BOOST_TEST(r.results[0].records.size() == a.wire->size());
  p0.stable_holds.clear();
  r = assemble_pass(rq, reads, states, 1 << 20, IsolationLevel::kReadCommitted);
  BOOST_TEST(r.results[0].records.size() == a.wire->size() + b.wire->size());
}

BOOST_AUTO_TEST_SUITE_END()
