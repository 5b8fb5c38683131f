// The producer registry kept in memory, persisted through the StateStore. Kafka's rules
// (ProducerStateManager, ProducerAppendInfo.checkSequence, ProducerStateEntry) with one
// addition: batches checked but not yet appended hold a reservation, so a pipelined producer
// (up to five requests in flight) is checked as if the earlier batches had already succeeded.
// Design: docs and the reply to the lead; tests: tests/unit/producer_registry_test.cc.
#pragma once

#include <uv.h>

#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "bridge/producers/producer_registry.h"
#include "common/liveness.h"
#include "uvx/timer.h"

namespace kib::state {
class StateStore;
struct ProducerBatchRow;
struct ProducerBatchWrite;
}  // namespace kib::state

namespace kib::bridge {

struct ProducerRegistryOptions {
  // Kafka drops a producer's state after producer.id.expiration.ms (1 day) without appends;
  // the bridge waits a week so producers paused over a weekend or a holiday resume quietly.
  // Even after expiry a producer does not fail: with no state any sequence is accepted.
  int64_t idle_expiry_ms = 7LL * 24 * 60 * 60 * 1000;
  int64_t expiry_sweep_interval_ms = 60 * 60 * 1000;
  // Ids are reserved in SQLite this many at a time (Kafka's ProducerIdsBlock size): one fsync
  // per block, not per InitProducerId. Ids left in a block at shutdown are skipped, never reused.
  int64_t id_block_size = 1000;
  // Wall clock, ms since the epoch (appended_at/updated_at columns); the system clock if empty.
  std::function<int64_t()> now_ms;
};

// Batches remembered per producer and partition for duplicate detection
// (Kafka: ProducerStateEntry.NUM_BATCHES_TO_RETAIN).
inline constexpr int kBatchesToRetain = 5;
// A producers row's updated_at is rewritten by a batch at most this often (idle expiry is days).
inline constexpr int64_t kProducerTouchIntervalMs = 60 * 1000;

class PersistentProducerRegistry final : public ProducerRegistry {
 public:
  PersistentProducerRegistry(state::StateStore& store, uv_loop_t* loop, ProducerRegistryOptions options = {});
  ~PersistentProducerRegistry() override;
  PersistentProducerRegistry(const PersistentProducerRegistry&) = delete;
  PersistentProducerRegistry& operator=(const PersistentProducerRegistry&) = delete;

  Status load() override;
  void init_producer(std::optional<ProducerIdAndEpoch> existing,
                     std::function<void(Result<ProducerIdAndEpoch>)> done) override;
  SequenceCheck check(ProducerId producer_id, ProducerEpoch epoch, const std::string& topic, PartitionId partition,
                      int32_t first_sequence, int32_t count) override;
  bool is_reserved(ProducerId producer_id, const std::string& topic, PartitionId partition,
                   int32_t first_sequence) const override;
  void record_append(ProducerId producer_id, ProducerEpoch epoch, const std::string& topic, PartitionId partition,
                     int32_t first_sequence, int32_t count, KafkaOffset base_offset,
                     std::function<void(Status)> durable = nullptr) override;
  void abort_append(ProducerId producer_id, const std::string& topic, PartitionId partition,
                    int32_t first_sequence) override;
  void forget_topic(const std::string& topic) override;
  std::vector<ProducerOnPartition> producers_on(const std::string& topic, PartitionId partition) const override;

  // Forgets producer-partitions idle for idle_expiry_ms (memory now, SQLite in the next batch).
  // Runs every expiry_sweep_interval_ms once load() succeeded.
  void expire_idle();

  // The next id InitProducerId hands out; ids at or above it were never issued.
  ProducerId next_producer_id() const { return ProducerId(next_id_); }
  size_t tracked_partitions() const { return partitions_.size(); }

 private:
  struct PartitionKey {
    int64_t producer_id;
    std::string topic;
    int32_t partition;
    bool operator==(const PartitionKey&) const = default;
  };
  struct PartitionKeyHash {
    size_t operator()(const PartitionKey& k) const;
  };
  struct AppendedBatch {
    int16_t epoch;
    int32_t first_sequence;
    int32_t last_sequence;
    int64_t base_offset;
  };
  // A batch checked with kAppend and not yet appended or aborted. Aborting it restores the
  // state it was checked against.
  struct Reservation {
    int16_t epoch;
    int32_t first_sequence;
    int32_t last_sequence;
    int16_t epoch_before;
    std::optional<int32_t> next_sequence_before;
  };
  // Kafka's ProducerStateEntry for one producer and partition, plus the reservations.
  struct PartitionState {
    int16_t epoch = -1;                    // of the newest reservation or append
    std::optional<int32_t> next_sequence;  // expected next first sequence; empty: no state yet
    std::deque<AppendedBatch> appended;    // newest last, all of one epoch, at most five
    std::deque<Reservation> in_flight;     // in check() order
    int64_t last_active_ms = 0;
    // This process has pruned the key's rows in full once: from then on SQLite holds the batches
    // of `appended` (and possibly leftovers the loader ignores), so a new batch deletes exactly
    // the one it displaces.
    bool pruned = false;
  };
  // When this process last wrote a producer's producers row, and with which epoch.
  struct ProducerTouch {
    int16_t epoch = -1;
    int64_t at_ms = 0;
  };

  int64_t now() const;
  void reserve_next_block();
  void serve_pending_inits();
  void issue(const std::function<void(Result<ProducerIdAndEpoch>)>& done);
  void persist(const state::ProducerBatchRow& row, const state::ProducerBatchWrite& how,
               std::function<void(Status)> durable);
  // Whether a batch of this producer also writes its producers row: a new epoch, or the row's
  // updated_at older than kProducerTouchIntervalMs (expiry counts in days).
  bool touch_producer(int64_t producer_id, int16_t epoch, int64_t now_ms);

  state::StateStore& store_;
  ProducerRegistryOptions options_;
  uv::Timer sweep_timer_;
  // Callbacks from the StateStore check this before touching the registry.
  Liveness alive_;

  int64_t next_id_ = 0;       // next id to issue
  int64_t reserved_end_ = 0;  // ids below this are durably reserved
  bool reserving_ = false;
  std::deque<std::function<void(Result<ProducerIdAndEpoch>)>> pending_inits_;

  std::unordered_map<PartitionKey, PartitionState, PartitionKeyHash> partitions_;
  std::unordered_map<int64_t, ProducerTouch> touched_;
};

std::unique_ptr<ProducerRegistry> make_producer_registry(state::StateStore& store, uv_loop_t* loop,
                                                         ProducerRegistryOptions options = {});

}  // namespace kib::bridge
