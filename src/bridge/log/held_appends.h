// The held side of the Produce path (docs/transactions.md, "Real offsets at produce time"): a
// partition holds from its first transactional batch until every transaction with records in it
// is decided. While it holds, every batch to it, plain or transactional, takes its offsets in
// the partition's HeldTail on arrival, is kept in the HeldStore and answered with them; the
// drain appends the decided prefix to Iggy in offset order (aborted batches as placeholders)
// through the appender, one batch at a time, and deletes each row once Iggy has it. A partition
// that does not hold never comes here.
//
// Loop thread only. Callbacks never run inside the call that was given them.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "bridge/log/appender.h"
#include "bridge/log/held_store.h"
#include "bridge/log/held_tail.h"
#include "bridge/log/log_types.h"
#include "bridge/log/partition_offsets.h"
#include "bridge/producers/idempotence.h"
#include "common/liveness.h"
#include "uvx/tasks.h"
#include "uvx/timer.h"

namespace kib::bridge {

struct HeldStats {
  uint64_t offset_shifts = 0;  // kib_transaction_offset_shifts_total: native appends moved held offsets
  uint64_t placeholders = 0;   // placeholder messages appended for aborted or lost records
  uint64_t refused_full = 0;   // batches refused past [transactions] max_held_bytes_per_partition
};

class HeldAppends {
 public:
  HeldAppends(uv_loop_t* loop, OffsetsTable& offsets, Appender& appender, Idempotence& idempotence, uv::Tasks& tasks,
              uint64_t max_held_bytes_per_partition);
  ~HeldAppends();
  HeldAppends(const HeldAppends&) = delete;
  HeldAppends& operator=(const HeldAppends&) = delete;

  // Without one, nothing holds: transactional offsets cannot be reserved (unit tests of the
  // plain path).
  void set_store(HeldStore* store) { store_ = store; }

  // Whether appends to the partition take the held path (it holds, or is starting to).
  bool holding(const PartitionOffsets& p) const;
  // A prepared plain batch (prepare_append) to a holding partition: answered once its row is
  // durable, with the offsets it took.
  void append_plain(PartitionOffsets& p, std::shared_ptr<AppendJob> job);
  // A transactional batch of `count` records, `bytes` on the wire, of transaction `txn`: the
  // offsets it takes (the partition starts holding if it did not). The caller stores its row and
  // calls lose() if that fails. NOT_ENOUGH_REPLICAS (retriable) past the bound.
  void reserve(PartitionOffsets& p, int32_t count, uint64_t bytes, HeldTxn txn, AbortedRecordMarker producer,
               std::function<void(Result<KafkaOffset>)> cb);
  // The row of the batch at `base` was not stored: its offsets become placeholders.
  void lose(PartitionOffsets& p, KafkaOffset base);
  // Transaction `txn` ended: its batches on `p` are decided and the drain goes on.
  void decide(PartitionOffsets& p, HeldTxn txn, bool committed);
  // Runs `settled` once no batch of `txn` is held in `p`, or the first held batch belongs to an
  // undecided transaction (the rest waits for it, as Kafka's last stable offset does): EndTxn is
  // answered then, so a consumer started after a commit returned sees it unless another
  // transaction holds the partition.
  void when_settled(PartitionOffsets& p, HeldTxn txn, std::function<void()> settled);
  // Startup, before the first Produce: the partition's stored rows against Iggy's high
  // watermark (HeldTail::restore); rows already in Iggy are erased, and the drain starts.
  void restore(PartitionOffsets& p, std::vector<HeldBatch> rows, std::function<void(Status)> done);

  // The partition's topic was deleted (its rows go with its state): the tail is forgotten, a
  // retry stops, and arrivals parked on it are answered retriably.
  void forget(PartitionOffsets& p);

  const HeldStats& stats() const { return stats_; }
  const HeldTail* tail(const PartitionOffsets& p) const;

 private:
  struct Partition {
    PartitionOffsets* offsets = nullptr;
    HeldTail tail;
    bool starting = false;                     // waiting for the append queue to empty
    std::deque<std::function<void()>> parked;  // arrivals while starting, in order
    std::unique_ptr<uv::Timer> retry;          // a failed append tried again
    bool draining = false;                     // a batch is on its way to Iggy
    // Committed transactions whose batches of the partition are part in Iggy: the last stable
    // offset each holds at its first (read_committed readers see such a transaction at once).
    std::map<HeldTxn, KafkaOffset> txn_holds;
    std::vector<std::pair<HeldTxn, std::function<void()>>> settle_waiters;  // when_settled
  };
  bool settled(const Partition& part, HeldTxn txn) const;
  void wake_settled(Partition& part);

  Partition& at(PartitionOffsets& p);
  // Runs `then` once the partition holds (now, or when its append queue has emptied).
  void when_holding(Partition& part, std::function<void()> then);
  void take_plain(Partition& part, std::shared_ptr<AppendJob> job);
  void drain(Partition& part);
  void append_batch(Partition& part, const HeldBatch& b, std::shared_ptr<AppendJob> job);
  void appended(Partition& part, const HeldBatch& b, const ProduceResult& r);
  void append_failed(Partition& part, const HeldBatch& b, const std::string& why);
  // Before the send of `b`: a committed transaction with more batches behind it holds the last
  // stable offset at its first; after the acknowledgement of its last, the hold goes.
  void hold_transaction(Partition& part, const HeldBatch& b);
  void release_transaction(Partition& part, HeldTxn txn);

  uv_loop_t* loop_;
  OffsetsTable& offsets_;
  Appender& appender_;
  Idempotence& idempotence_;
  uv::Tasks& tasks_;
  uint64_t max_held_bytes_;
  HeldStore* store_ = nullptr;
  std::map<const PartitionOffsets*, std::unique_ptr<Partition>> partitions_;
  HeldStats stats_;
  Liveness alive_;
};

}  // namespace kib::bridge
