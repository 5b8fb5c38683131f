#include "bridge/log/held_appends.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "bridge/errors.h"
#include "bridge/mapping/record_mapping.h"

namespace kib::bridge {

using kafka::ErrorCode;

namespace {

// A held append that failed (Iggy down) is tried again after this long.
constexpr auto kHeldRetry = std::chrono::milliseconds(1000);
// Placeholders per Iggy send; a longer aborted range takes several.
constexpr int32_t kPlaceholdersPerSend = 10000;
// A held batch decompresses within this, as it did when its Produce request was decoded.
constexpr size_t kReplayBudget = size_t{1} << 30;

uint64_t now_us() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

// A job that appends `count` placeholders naming `producer`: its one "batch" has a header only
// (producer -1: no message ids are stamped) and no records.
std::shared_ptr<AppendJob> placeholder_job(const AbortedRecordMarker& producer, int32_t count) {
  auto job = std::make_shared<AppendJob>();
  job->batches.emplace_back();
  job->batches.front().header.producer_id = -1;
  job->mapped = map_aborted_placeholders(producer, static_cast<size_t>(count), now_us());
  job->send_bytes = iggy_send_bytes(job->mapped);
  job->min_origin_us = job->max_origin_us = job->mapped.messages.empty() ? 0 : job->mapped.messages.front().origin_timestamp_us;
  job->committed = true;
  return job;
}

}  // namespace

HeldAppends::HeldAppends(uv_loop_t* loop, OffsetsTable& offsets, Appender& appender, Idempotence& idempotence,
                         uv::Tasks& tasks, uint64_t max_held_bytes_per_partition)
    : loop_(loop),
      offsets_(offsets),
      appender_(appender),
      idempotence_(idempotence),
      tasks_(tasks),
      max_held_bytes_(max_held_bytes_per_partition) {}

HeldAppends::~HeldAppends() { alive_.end(); }

HeldAppends::Partition& HeldAppends::at(PartitionOffsets& p) {
  auto& slot = partitions_[&p];
  if (!slot) {
    slot = std::make_unique<Partition>();
    slot->offsets = &p;
  }
  return *slot;
}

bool HeldAppends::holding(const PartitionOffsets& p) const {
  auto it = partitions_.find(&p);
  return it != partitions_.end() && (it->second->starting || it->second->tail.holding());
}

const HeldTail* HeldAppends::tail(const PartitionOffsets& p) const {
  auto it = partitions_.find(&p);
  return it == partitions_.end() ? nullptr : &it->second->tail;
}

void HeldAppends::when_holding(Partition& part, std::function<void()> then) {
  if (part.tail.holding() && !part.starting) return tasks_.post(std::move(then));
  part.parked.push_back(std::move(then));
  if (part.starting) return;
  part.starting = true;
  PartitionOffsets& p = *part.offsets;
  // Nothing of the partition may be in Iggy's queue when its offsets are counted from its high
  // watermark; the partition's offsets must be loaded (an append queue loads them, a fresh
  // partition may not have been read yet).
  appender_.when_idle(p, [this, alive = alive_.token(), pp = &part] {
    tasks_.post([this, alive, pp] {
      if (!alive) return;
      auto begin = [pp] {
        spdlog::debug("held appends: {}-{} holds from {}", pp->offsets->topic, pp->offsets->id,
                      pp->offsets->high_watermark);
        pp->starting = false;
        pp->tail.begin(pp->offsets->high_watermark);
        auto parked = std::move(pp->parked);
        pp->parked.clear();
        for (auto& f : parked) f();
      };
      if (pp->offsets->loaded) return begin();
      offsets_.refresh(*pp->offsets, [this, alive, pp, begin](Status s) {
        if (!alive) return;
        if (s) return begin();
        // Offsets unknown: the parked arrivals are answered retriably and the start is tried
        // again by the next arrival.
        spdlog::warn("held appends: offsets of {}-{} not readable: {}", pp->offsets->topic, pp->offsets->id,
                     s.error().message);
        pp->starting = false;
        auto parked = std::move(pp->parked);
        pp->parked.clear();
        for (auto& f : parked) f();
      });
    });
  });
}

void HeldAppends::append_plain(PartitionOffsets& p, std::shared_ptr<AppendJob> job) {
  Partition& part = at(p);
  when_holding(part, [this, alive = alive_.token(), pp = &part, job] {
    if (!alive) return;
    if (!pp->tail.holding()) return job->cb(produce_error(ErrorCode::kNotEnoughReplicas, "partition offsets unknown; retry"));
    take_plain(*pp, job);
  });
}

void HeldAppends::take_plain(Partition& part, std::shared_ptr<AppendJob> job) {
  PartitionOffsets& p = *part.offsets;
  const kafka::RecordBatchHeader h = job->header();
  const bool idempotent = idempotence_.applies_to(h);
  if (idempotent) {
    IdempotenceVerdict v = idempotence_.check(p.topic, p.id, h);
    if (v.kind == IdempotenceVerdict::Kind::kDuplicate) {
      ProduceResult dup;
      dup.base_offset = v.duplicate_base_offset;
      dup.log_start_offset = p.log_start;
      return job->cb(dup);
    }
    if (v.kind == IdempotenceVerdict::Kind::kRefused) return job->cb(produce_error(v.error, std::move(v.message)));
  }
  const uint64_t bytes = job->batches.front().wire.size();
  if (!part.tail.fits(bytes, max_held_bytes_)) {
    if (idempotent) idempotence_.abort(p.topic, p.id, h);
    ++stats_.refused_full;
    return job->cb(produce_error(ErrorCode::kNotEnoughReplicas,
                                 "the partition holds " + std::to_string(part.tail.held_bytes()) +
                                     " bytes behind an open transaction, [transactions] max_held_bytes_per_partition; retry"));
  }
  HeldBatch b;
  b.count = static_cast<int32_t>(job->mapped.messages.size());
  b.bytes = bytes;
  b.producer = {h.producer_id, h.producer_epoch};
  b.base = part.tail.take(b.count, bytes, kPlainBatch, b.producer);
  auto wire = std::make_shared<const Bytes>(job->batches.front().wire.begin(), job->batches.front().wire.end());
  store_->insert_plain(p.topic, p.id, b, wire, [this, alive = alive_.token(), pp = &part, job, b, h, idempotent](Status st) {
    if (!alive) return;
    PartitionOffsets& p = *pp->offsets;
    if (!st) {
      pp->tail.lose(b.base);
      if (idempotent) idempotence_.abort(p.topic, p.id, h);
      spdlog::warn("held appends: batch for {}-{} at {} not stored: {}", p.topic, p.id, b.base, st.error().message);
      job->cb(produce_error(ErrorCode::kKafkaStorageError, st.error().message));
      return drain(*pp);
    }
    ProduceResult ok;
    ok.base_offset = b.base;
    ok.log_start_offset = p.log_start;
    if (idempotent)
      idempotence_.record(p.topic, p.id, h, b.base, [cb = job->cb, ok] { cb(ok); });
    else
      job->cb(ok);
    drain(*pp);
  });
}

void HeldAppends::reserve(PartitionOffsets& p, int32_t count, uint64_t bytes, HeldTxn txn,
                          AbortedRecordMarker producer, std::function<void(Result<KafkaOffset>)> cb) {
  if (!store_) {
    tasks_.post([cb] { cb(kafka_error(ErrorCode::kKafkaStorageError, "no store for held batches")); });
    return;
  }
  Partition& part = at(p);
  spdlog::debug("held appends: {}-{}: {} offsets for transaction {} (holding: {}, starting: {})", p.topic, p.id, count,
                txn, part.tail.holding(), part.starting);
  when_holding(part, [this, alive = alive_.token(), pp = &part, count, bytes, txn, producer, cb] {
    if (!alive) return;
    if (!pp->tail.holding())
      return cb(kafka_error(ErrorCode::kNotEnoughReplicas, "partition offsets unknown; retry"));
    if (!pp->tail.fits(bytes, max_held_bytes_)) {
      ++stats_.refused_full;
      return cb(kafka_error(ErrorCode::kNotEnoughReplicas,
                            "the partition holds " + std::to_string(pp->tail.held_bytes()) +
                                " bytes behind an open transaction, [transactions] max_held_bytes_per_partition; retry"));
    }
    cb(pp->tail.take(count, bytes, txn, producer));
  });
}

void HeldAppends::lose(PartitionOffsets& p, KafkaOffset base) {
  Partition& part = at(p);
  if (part.tail.lose(base)) drain(part);
}

void HeldAppends::decide(PartitionOffsets& p, HeldTxn txn, bool committed) {
  Partition& part = at(p);
  if (part.tail.decide(txn, committed) > 0) drain(part);
}

bool HeldAppends::settled(const Partition& part, HeldTxn txn) const {
  const auto& batches = part.tail.batches();
  if (batches.empty()) return true;
  if (!batches.front().decided()) return true;  // blocked behind an open transaction
  return std::none_of(batches.begin(), batches.end(), [&](const HeldBatch& b) { return b.txn == txn; });
}

void HeldAppends::wake_settled(Partition& part) {
  if (part.settle_waiters.empty()) return;
  std::vector<std::function<void()>> ready;
  auto& w = part.settle_waiters;
  for (auto it = w.begin(); it != w.end();) {
    if (settled(part, it->first)) {
      ready.push_back(std::move(it->second));
      it = w.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& f : ready) tasks_.post(std::move(f));
}

void HeldAppends::when_settled(PartitionOffsets& p, HeldTxn txn, std::function<void()> done) {
  Partition& part = at(p);
  part.settle_waiters.emplace_back(txn, std::move(done));
  wake_settled(part);
}

void HeldAppends::restore(PartitionOffsets& p, std::vector<HeldBatch> rows, std::function<void(Status)> done) {
  Partition& part = at(p);
  // Arrivals wait from now until the rows are back in the tail: a plain batch must not reach
  // Iggy before offsets answered before the restart.
  part.starting = true;
  auto shared_rows = std::make_shared<std::vector<HeldBatch>>(std::move(rows));
  offsets_.refresh(p, [this, alive = alive_.token(), pp = &part, shared_rows, done](Status s) mutable {
    if (!alive) return;
    if (!s) {
      // Iggy not reachable yet: tried again, the partition's arrivals waiting meanwhile.
      spdlog::warn("held appends: {}-{}: offsets not readable for the restart of its held batches ({}); retrying",
                   pp->offsets->topic, pp->offsets->id, s.error().message);
      pp->retry = std::make_unique<uv::Timer>(loop_, "held restore retry");
      pp->retry->start(kHeldRetry, [this, alive, pp, shared_rows, done] {
        if (!alive) return;
        tasks_.post([this, alive, pp, shared_rows, done] {
          if (!alive) return;
          pp->retry.reset();
          restore(*pp->offsets, std::move(*shared_rows), done);
        });
      });
      return;
    }
    PartitionOffsets& p = *pp->offsets;
    HeldRestore r = pp->tail.restore(std::move(*shared_rows), p.high_watermark);
    for (KafkaOffset base : r.already_appended) store_->erase(p.topic, p.id, base);
    if (r.filled_ranges > 0)
      spdlog::warn("held appends: {}-{}: {} range(s) of offsets taken before a restart had no row (largest {}); they "
                   "become placeholders",
                   p.topic, p.id, r.filled_ranges, r.largest_gap);
    pp->starting = false;
    if (!pp->tail.holding() && !pp->parked.empty()) pp->tail.begin(p.high_watermark);
    auto parked = std::move(pp->parked);
    pp->parked.clear();
    for (auto& f : parked) f();
    drain(*pp);
    if (done) done(ok_status());
  });
}

void HeldAppends::forget(PartitionOffsets& p) {
  auto it = partitions_.find(&p);
  if (it == partitions_.end()) return;
  Partition& part = *it->second;
  part.retry.reset();
  part.tail.restore({}, p.high_watermark);
  for (const auto& [txn, at] : part.txn_holds)
    if (auto h = p.stable_holds.find(at()); h != p.stable_holds.end()) p.stable_holds.erase(h);
  part.txn_holds.clear();
  for (auto& [txn, f] : part.settle_waiters) tasks_.post(std::move(f));
  part.settle_waiters.clear();
  part.starting = false;
  part.draining = false;
  auto parked = std::move(part.parked);
  part.parked.clear();
  for (auto& f : parked) tasks_.post(std::move(f));
}

// The first held batch, when decided, goes to Iggy: its data loaded from the store, or its
// placeholders made here.
void HeldAppends::drain(Partition& part) {
  if (part.draining || part.retry) return;
  // A long aborted range goes in several sends, each within Iggy's frame.
  if (!part.tail.batches().empty() && part.tail.batches().front().outcome == HeldOutcome::kAborted)
    part.tail.split_front(kPlaceholdersPerSend);
  auto b = part.tail.next_ready();
  if (!b) return wake_settled(part);
  part.draining = true;
  PartitionOffsets& p = *part.offsets;
  if (b->outcome == HeldOutcome::kAborted) {
    stats_.placeholders += static_cast<uint64_t>(b->count);
    return append_batch(part, *b, placeholder_job(b->producer, b->count));
  }
  store_->load(p.topic, p.id, b->base,
               [this, alive = alive_.token(), pp = &part, b = *b](Result<std::shared_ptr<Bytes>> bytes) {
                 if (!alive) return;
                 if (!bytes) return append_failed(*pp, b, bytes.error().message);
                 kafka::DecompressionBudget budget{kReplayBudget};
                 auto decoded = kafka::decode_record_batches(**bytes, budget);
                 auto job = std::make_shared<AppendJob>();
                 if (decoded) {
                   job->batches = std::move(*decoded);
                   job->input = SharedSpan{*bytes, ByteSpan(**bytes)};
                 }
                 if (!decoded || prepare_append(*job, pp->offsets->topic, pp->offsets->id, -1, /*transactional=*/true)) {
                   // Decoded and mapped once already when it was produced: a row that no longer
                   // does is lost data, which must be loud; its offsets stay taken.
                   spdlog::error("held appends: batch of {}-{} at {} does not decode or map; its offsets become "
                                 "placeholders",
                                 pp->offsets->topic, pp->offsets->id, b.base);
                   stats_.placeholders += static_cast<uint64_t>(b.count);
                   return append_batch(*pp, b, placeholder_job(kNoProducer, b.count));
                 }
                 job->committed = true;
                 append_batch(*pp, b, job);
               });
}

void HeldAppends::hold_transaction(Partition& part, const HeldBatch& b) {
  if (b.txn == kPlainBatch || b.outcome != HeldOutcome::kCommitted || part.txn_holds.count(b.txn)) return;
  const auto& batches = part.tail.batches();
  const bool more = std::any_of(batches.begin() + 1, batches.end(), [&](const HeldBatch& x) { return x.txn == b.txn; });
  if (!more) return;
  part.offsets->stable_holds.insert(b.base());
  part.txn_holds[b.txn] = b.base;
}

void HeldAppends::release_transaction(Partition& part, HeldTxn txn) {
  auto it = part.txn_holds.find(txn);
  if (it == part.txn_holds.end()) return;
  const auto& batches = part.tail.batches();
  if (std::any_of(batches.begin(), batches.end(), [&](const HeldBatch& x) { return x.txn == txn; })) return;
  auto& holds = part.offsets->stable_holds;
  if (auto h = holds.find(it->second()); h != holds.end()) holds.erase(h);
  part.txn_holds.erase(it);
}

void HeldAppends::append_batch(Partition& part, const HeldBatch& b, std::shared_ptr<AppendJob> job) {
  hold_transaction(part, b);
  job->cb = [this, alive = alive_.token(), pp = &part, b](ProduceResult r) {
    if (!alive) return;
    if (r.error != ErrorCode::kNone) return append_failed(*pp, b, r.message);
    appended(*pp, b, r);
  };
  appender_.append(*part.offsets, std::move(job));
}

void HeldAppends::appended(Partition& part, const HeldBatch& b, const ProduceResult& r) {
  PartitionOffsets& p = *part.offsets;
  part.draining = false;
  KafkaOffset at = b.base;
  if (r.base_offset >= KafkaOffset(0) && r.base_offset != b.base) {
    if (r.base_offset > b.base) {
      const int64_t by = part.tail.shift_to(r.base_offset);
      ++stats_.offset_shifts;
      spdlog::warn("held appends: {}-{}: Iggy stored the batch held at {} at {}: {} offset(s) appended outside the "
                   "bridge; the held batches move up by as many",
                   p.topic, p.id, b.base, r.base_offset, by);
      at = r.base_offset;
    } else {
      spdlog::error("held appends: {}-{}: Iggy stored the batch held at {} at {}, below it", p.topic, p.id, b.base,
                    r.base_offset);
    }
  }
  if (b.stored) store_->erase(p.topic, p.id, b.base);
  part.tail.appended(at);
  release_transaction(part, b.txn);
  wake_settled(part);
  drain(part);
}

void HeldAppends::append_failed(Partition& part, const HeldBatch& b, const std::string& why) {
  PartitionOffsets& p = *part.offsets;
  spdlog::warn("held appends: append of {}-{} at {} failed ({}); retrying in {} ms", p.topic, p.id, b.base, why,
               kHeldRetry.count());
  part.tail.append_failed(b.base);
  part.retry = std::make_unique<uv::Timer>(loop_, "held append retry");
  part.retry->start(kHeldRetry, [this, alive = alive_.token(), pp = &part, b] {
    if (!alive) return;
    tasks_.post([this, alive, pp, b] {
      if (!alive) return;
      pp->retry.reset();
      // Iggy may have stored the failed send: its high watermark says.
      offsets_.refresh(*pp->offsets, [this, alive, pp, b](Status s) {
        if (!alive) return;
        pp->draining = false;
        if (s && pp->offsets->high_watermark >= b.end()) {
          ProduceResult stored;
          stored.base_offset = b.base;
          return appended(*pp, b, stored);
        }
        drain(*pp);
      });
    });
  });
}

}  // namespace kib::bridge
