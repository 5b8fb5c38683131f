#include "bridge/producers/producer_registry_impl.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "bridge/errors.h"
#include "state/producer_store.h"
#include "state/state_store.h"

namespace kib::bridge {
namespace {

constexpr int64_t kSequenceSpace = int64_t{std::numeric_limits<int32_t>::max()} + 1;  // 2^31

// Kafka's DefaultRecordBatch.incrementSequence: sequences wrap from INT32_MAX to 0.
int32_t last_sequence_of(int32_t first_sequence, int32_t count) {
  return static_cast<int32_t>((int64_t{first_sequence} + count - 1) % kSequenceSpace);
}

int32_t sequence_after(int32_t last_sequence) {
  return last_sequence == std::numeric_limits<int32_t>::max() ? 0 : last_sequence + 1;
}

}  // namespace

size_t PersistentProducerRegistry::PartitionKeyHash::operator()(const PartitionKey& k) const {
  size_t h = std::hash<std::string>{}(k.topic);
  h ^= std::hash<int64_t>{}(k.producer_id) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= std::hash<int32_t>{}(k.partition) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

PersistentProducerRegistry::PersistentProducerRegistry(state::StateStore& store, uv_loop_t* loop,
                                                       ProducerRegistryOptions options)
    : store_(store), options_(std::move(options)), sweep_timer_(loop, "producer expiry sweep") {
  sweep_timer_.unref();  // never keeps the loop alive
}

PersistentProducerRegistry::~PersistentProducerRegistry() = default;

int64_t PersistentProducerRegistry::now() const {
  if (options_.now_ms) return options_.now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status PersistentProducerRegistry::load() {
  state::ProducerSnapshot snap;
  state::ProducerIdBlock block;
  int64_t idle_since = now() - options_.idle_expiry_ms;
  int64_t block_size = options_.id_block_size;
  Status st = store_.run_blocking([&](SQLite::Database& db) {
    state::expire_idle_producers(db, idle_since);
    snap = state::load_producer_snapshot(db);
    block = state::reserve_producer_ids(db, snap.id_high_water, block_size);
  });
  if (!st) return st;

  partitions_.clear();
  // Rows come ordered by producer, topic, partition and base offset.
  for (const auto& row : snap.batches) {
    PartitionState& s = partitions_[PartitionKey{row.producer_id, row.topic, row.partition}];
    if (!s.appended.empty() && row.producer_epoch != s.epoch) {
      // Only one epoch survives record_producer_batch(); keep the newest if rows disagree.
      if (row.producer_epoch < s.epoch) continue;
      s.appended.clear();
    }
    s.epoch = row.producer_epoch;
    s.appended.push_back({row.producer_epoch, row.first_sequence, row.last_sequence, row.base_offset});
    if (s.appended.size() > static_cast<size_t>(kBatchesToRetain)) s.appended.pop_front();
    s.next_sequence = sequence_after(row.last_sequence);
    s.last_active_ms = std::max(s.last_active_ms, row.appended_at_ms);
  }
  next_id_ = block.first;
  reserved_end_ = block.end;
  spdlog::info("producers: loaded {} producer-partitions, next producer id {}", partitions_.size(), next_id_);

  if (options_.expiry_sweep_interval_ms > 0)
    sweep_timer_.start_repeating(std::chrono::milliseconds(options_.expiry_sweep_interval_ms),
                                 [this] { expire_idle(); });
  return ok_status();
}

void PersistentProducerRegistry::forget_topic(const std::string& topic) {
  size_t dropped = 0;
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    if (it->first.topic == topic && it->second.in_flight.empty()) {
      it = partitions_.erase(it);
      ++dropped;
    } else {
      ++it;
    }
  }
  if (dropped) spdlog::info("producers: forgot {} producer-partitions of deleted topic {}", dropped, topic);
}

std::vector<ProducerOnPartition> PersistentProducerRegistry::producers_on(const std::string& topic,
                                                                          PartitionId partition) const {
  std::vector<ProducerOnPartition> out;
  for (const auto& [key, s] : partitions_) {
    if (key.topic != topic || key.partition != partition() || !s.next_sequence) continue;
    const int32_t last = *s.next_sequence == 0 ? std::numeric_limits<int32_t>::max() : *s.next_sequence - 1;
    out.push_back({ProducerId(key.producer_id), ProducerEpoch(s.epoch), last, TimestampMs(s.last_active_ms)});
  }
  std::sort(out.begin(), out.end(),
            [](const ProducerOnPartition& a, const ProducerOnPartition& b) { return a.producer_id() < b.producer_id(); });
  return out;
}

// ---- producer ids ----

void PersistentProducerRegistry::init_producer(std::optional<ProducerIdAndEpoch> /*existing*/,
                                               std::function<void(Result<ProducerIdAndEpoch>)> done) {
  if (next_id_ < reserved_end_ && pending_inits_.empty()) return issue(done);
  pending_inits_.push_back(std::move(done));
  reserve_next_block();
}

void PersistentProducerRegistry::issue(const std::function<void(Result<ProducerIdAndEpoch>)>& done) {
  ProducerIdAndEpoch issued{ProducerId(next_id_++), ProducerEpoch(0)};
  int64_t at = now();
  // The id is already durable through its block; the row is for operators and expiry.
  store_.write([issued, at](SQLite::Database& db) { state::insert_producer(db, issued.producer_id(), 0, at); },
               [id = issued.producer_id](Status st) {
                 if (!st) spdlog::warn("producers: producer_id={} not recorded: {}", id, st.error().message);
               });
  // Fetch the next block before this one runs out, as Kafka's ProducerIdManager prefetches.
  if (reserved_end_ - next_id_ <= options_.id_block_size / 10) reserve_next_block();
  done(issued);
}

void PersistentProducerRegistry::reserve_next_block() {
  if (reserving_) return;
  reserving_ = true;
  auto block = std::make_shared<state::ProducerIdBlock>();
  int64_t from = reserved_end_;
  int64_t count = options_.id_block_size;
  store_.write([block, from, count](SQLite::Database& db) { *block = state::reserve_producer_ids(db, from, count); },
               [this, alive = alive_.token(), block](Status st) {
                 if (!alive) return;
                 reserving_ = false;
                 if (!st) {
                   spdlog::error("producers: cannot reserve producer ids: {}", st.error().message);
                   std::deque<std::function<void(Result<ProducerIdAndEpoch>)>> waiting;
                   waiting.swap(pending_inits_);
                   // Kafka answers COORDINATOR_LOAD_IN_PROGRESS while its id block is missing:
                   // retriable, and unlike COORDINATOR_NOT_AVAILABLE it does not send an
                   // idempotent Java producer to FindCoordinator with a null key.
                   for (auto& d : waiting)
                     d(kafka_error(kafka::ErrorCode::kCoordinatorLoadInProgress,
                                   "producer ids could not be reserved in the state database: " + st.error().message));
                   return;
                 }
                 if (block->first != reserved_end_) next_id_ = std::max(next_id_, block->first);
                 reserved_end_ = block->end;
                 serve_pending_inits();
               });
}

void PersistentProducerRegistry::serve_pending_inits() {
  while (!pending_inits_.empty() && next_id_ < reserved_end_) {
    auto done = std::move(pending_inits_.front());
    pending_inits_.pop_front();
    issue(done);
  }
  if (!pending_inits_.empty()) reserve_next_block();
}

// ---- sequences ----

SequenceCheck PersistentProducerRegistry::check(ProducerId pid, ProducerEpoch producer_epoch, const std::string& topic,
                                                PartitionId partition_id, int32_t first_sequence, int32_t count) {
  const int64_t producer_id = pid();
  const int16_t epoch = producer_epoch();
  const int32_t partition = partition_id();
  if (producer_id < 0) return {SequenceVerdict::kAppend, kNoOffset};
  if (producer_id >= next_id_) return {SequenceVerdict::kUnknownProducer, kNoOffset};
  // Kafka refuses these earlier, as INVALID_RECORD; never reserve them.
  if (first_sequence < 0 || count < 1) return {SequenceVerdict::kOutOfOrder, kNoOffset};
  int32_t last_sequence = last_sequence_of(first_sequence, count);

  PartitionState& s = partitions_[PartitionKey{producer_id, topic, partition}];
  // Kafka looks for a duplicate first (ProducerStateEntry.findDuplicateBatch): same epoch,
  // exactly the same sequence range as one of the retained batches.
  for (const auto& b : s.appended)
    if (b.epoch == epoch && b.first_sequence == first_sequence && b.last_sequence == last_sequence)
      return {SequenceVerdict::kDuplicate, KafkaOffset(b.base_offset)};
  for (const auto& r : s.in_flight)
    if (r.epoch == epoch && r.first_sequence == first_sequence && r.last_sequence == last_sequence)
      return {SequenceVerdict::kInFlight, kNoOffset};

  // ProducerAppendInfo.checkProducerEpoch, then checkSequence. No state (new or expired
  // producer-partition): any epoch and sequence start it, as in Kafka 2.5+.
  if (s.next_sequence) {
    if (epoch < s.epoch) return {SequenceVerdict::kInvalidEpoch, kNoOffset};
    bool in_sequence = epoch > s.epoch ? first_sequence == 0 : first_sequence == *s.next_sequence;
    if (!in_sequence) return {SequenceVerdict::kOutOfOrder, kNoOffset};
  }
  s.in_flight.push_back({epoch, first_sequence, last_sequence, s.epoch, s.next_sequence});
  s.epoch = epoch;
  s.next_sequence = sequence_after(last_sequence);
  return {SequenceVerdict::kAppend, kNoOffset};
}

bool PersistentProducerRegistry::is_reserved(ProducerId pid, const std::string& topic, PartitionId partition_id,
                                             int32_t first_sequence) const {
  const int64_t producer_id = pid();
  const int32_t partition = partition_id();
  if (producer_id < 0) return true;
  auto it = partitions_.find(PartitionKey{producer_id, topic, partition});
  if (it == partitions_.end()) return false;
  for (const auto& r : it->second.in_flight)
    if (r.first_sequence == first_sequence) return true;
  return false;
}

void PersistentProducerRegistry::record_append(ProducerId pid, ProducerEpoch producer_epoch, const std::string& topic,
                                               PartitionId partition_id, int32_t first_sequence, int32_t count,
                                               KafkaOffset offset, std::function<void(Status)> durable) {
  const int64_t producer_id = pid();
  const int16_t epoch = producer_epoch();
  const int32_t partition = partition_id();
  const int64_t base_offset = offset();
  if (producer_id < 0 || first_sequence < 0 || count < 1) {
    if (durable) durable(ok_status());
    return;
  }
  int32_t last_sequence = last_sequence_of(first_sequence, count);
  PartitionState& s = partitions_[PartitionKey{producer_id, topic, partition}];
  auto res = std::find_if(s.in_flight.begin(), s.in_flight.end(), [&](const Reservation& r) {
    return r.epoch == epoch && r.first_sequence == first_sequence && r.last_sequence == last_sequence;
  });
  if (res != s.in_flight.end()) {
    s.in_flight.erase(res);
  } else {
    // Appended without a live reservation: its check was cancelled by an earlier abort while the
    // append was already under way. It is in the log now, so remember it; ordering for this
    // producer is no longer guaranteed (the produce path must serialize appends per partition).
    spdlog::warn("producers: producer_id={} epoch={} {}-{} seq={}..{} appended at offset {} without a reservation",
                 producer_id, epoch, topic, partition, first_sequence, last_sequence, base_offset);
    if (s.in_flight.empty() && epoch >= s.epoch) {
      s.epoch = epoch;
      s.next_sequence = sequence_after(last_sequence);
    }
  }

  int16_t appended_epoch = s.appended.empty() ? int16_t{-1} : s.appended.back().epoch;
  if (epoch < appended_epoch) {
    // A newer epoch was appended meanwhile; Kafka forgot this epoch's batches at that point.
    if (durable) durable(ok_status());
    return;
  }
  if (epoch > appended_epoch) s.appended.clear();
  s.appended.push_back({epoch, first_sequence, last_sequence, base_offset});
  std::optional<int32_t> evicted;  // first sequence of the batch this one displaces
  if (s.appended.size() > static_cast<size_t>(kBatchesToRetain)) {
    evicted = s.appended.front().first_sequence;
    s.appended.pop_front();
  }
  state::ProducerBatchWrite how;
  if (!s.pruned || epoch > appended_epoch) {
    how.prune = state::ProducerBatchWrite::Prune::kFull;  // also forgets the older epoch's rows
    s.pruned = true;
  } else if (evicted) {
    how.prune = state::ProducerBatchWrite::Prune::kExact;
    how.evicted_first_sequence = *evicted;
  } else {
    how.prune = state::ProducerBatchWrite::Prune::kNone;
  }
  s.last_active_ms = now();
  how.touch_producer = touch_producer(producer_id, epoch, s.last_active_ms);

  state::ProducerBatchRow row;
  row.producer_id = producer_id;
  row.topic = topic;
  row.partition = partition;
  row.producer_epoch = epoch;
  row.first_sequence = first_sequence;
  row.last_sequence = last_sequence;
  row.base_offset = base_offset;
  row.appended_at_ms = s.last_active_ms;
  persist(row, how, std::move(durable));
}

bool PersistentProducerRegistry::touch_producer(int64_t producer_id, int16_t epoch, int64_t now_ms) {
  auto [it, fresh] = touched_.try_emplace(producer_id);
  ProducerTouch& t = it->second;
  if (!fresh && t.epoch == epoch && now_ms - t.at_ms < kProducerTouchIntervalMs) return false;
  t = {epoch, now_ms};
  return true;
}

void PersistentProducerRegistry::persist(const state::ProducerBatchRow& row, const state::ProducerBatchWrite& how,
                                         std::function<void(Status)> durable) {
  // Recoverable (state_store.h): a batch row lost to a power loss is in Iggy, where the record
  // ids carry producer, epoch and sequence and the tail is re-read before the next append
  // (idempotence.h), or in the transaction's buffered rows. A crash of the bridge keeps it.
  store_.write([row, how](SQLite::Database& db) { state::record_producer_batch(db, row, kBatchesToRetain, how); },
               [id = row.producer_id, durable = std::move(durable)](Status st) {
                 // Memory already has the batch: retries are still detected until a restart.
                 if (!st) spdlog::warn("producers: batch of producer_id={} not persisted: {}", id, st.error().message);
                 if (durable) durable(std::move(st));
               },
               state::Durability::kRecoverable);
}

void PersistentProducerRegistry::abort_append(ProducerId pid, const std::string& topic, PartitionId partition_id,
                                              int32_t first_sequence) {
  const int64_t producer_id = pid();
  const int32_t partition = partition_id();
  if (producer_id < 0) return;
  auto it = partitions_.find(PartitionKey{producer_id, topic, partition});
  if (it == partitions_.end()) return;
  PartitionState& s = it->second;
  // The oldest match: appends of a partition complete in check() order.
  auto res = std::find_if(s.in_flight.begin(), s.in_flight.end(),
                          [&](const Reservation& r) { return r.first_sequence == first_sequence; });
  if (res == s.in_flight.end()) return;
  // Back to the state this batch was checked against. Later reservations were checked as if
  // this batch had succeeded: cancel them, the client retries them after this one.
  s.epoch = res->epoch_before;
  s.next_sequence = res->next_sequence_before;
  size_t cancelled = static_cast<size_t>(s.in_flight.end() - res) - 1;
  s.in_flight.erase(res, s.in_flight.end());
  if (cancelled > 0)
    spdlog::debug("producers: producer_id={} {}-{} seq={} aborted, {} later batches cancelled", producer_id, topic,
                  partition, first_sequence, cancelled);
  if (!s.next_sequence && s.appended.empty() && s.in_flight.empty()) partitions_.erase(it);
}

// ---- expiry ----

void PersistentProducerRegistry::expire_idle() {
  int64_t idle_since = now() - options_.idle_expiry_ms;
  size_t dropped = std::erase_if(partitions_, [&](const auto& kv) {
    const PartitionState& s = kv.second;
    return s.in_flight.empty() && s.last_active_ms <= idle_since;
  });
  std::erase_if(touched_, [&](const auto& kv) { return kv.second.at_ms <= idle_since; });
  if (dropped > 0) spdlog::info("producers: forgot {} producer-partitions idle since {}", dropped, idle_since);
  store_.write([idle_since](SQLite::Database& db) { state::expire_idle_producers(db, idle_since); },
               [](Status st) {
                 if (!st) spdlog::warn("producers: expiring idle producers failed: {}", st.error().message);
               });
}

std::unique_ptr<ProducerRegistry> make_producer_registry(state::StateStore& store, uv_loop_t* loop,
                                                         ProducerRegistryOptions options) {
  return std::make_unique<PersistentProducerRegistry>(store, loop, std::move(options));
}

}  // namespace kib::bridge
