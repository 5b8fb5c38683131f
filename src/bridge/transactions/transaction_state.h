// The state machine of a transactional id, Kafka's TransactionMetadata: the in-memory `Txn` (its
// producer id and epoch, the state of its transaction, what the open transaction touched), the
// checks Kafka makes of a request's producer id, epoch and state before a transition, and the
// transitions themselves. `TxnTable` holds every transactional id, by name and by producer id,
// and answers the views kafka-transactions.sh reads.
//
// Nothing here does I/O or keeps time: the coordinator (transaction_coordinator_impl.h) writes a
// transition to SQLite and applies it here once the write is durable. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bridge/log/held_tail.h"
#include "bridge/transactions/transaction_coordinator.h"
#include "state/transaction_store.h"

namespace kib::bridge {

// Epochs go up to Short.MAX_VALUE - 1; past it the transactional id gets a new producer id
// (Kafka's TransactionMetadata.prepareIncrementProducerEpoch).
inline constexpr int16_t kMaxTxnEpoch = 32766;

// One partition of the open transaction.
struct TxnPartitionState {
  int64_t start_offset = -1;  // high watermark when its first batch was buffered
  int64_t append_from = -1;   // PrepareCommit: its appends start at or after this offset
  bool has_batches = false;
  bool appended = false;  // this commit's batches of the partition are all in Iggy
  bool held = false;      // holds the partition's last stable offset at append_from
};

using TxnOffsetKey = std::tuple<std::string, std::string, int32_t>;  // group, topic, partition

struct Txn {
  std::string id;
  int64_t pid = -1;
  int16_t epoch = -1;
  int64_t last_pid = -1;
  int16_t last_epoch = -1;
  int32_t timeout_ms = 60000;
  TxnState state = TxnState::kEmpty;
  int64_t started_ms = -1;
  int64_t updated_ms = 0;
  std::map<TxnTopicPartition, TxnPartitionState> partitions;
  std::set<std::string> groups;
  std::map<TxnOffsetKey, TxnOffset> offsets;
  int64_t buffered_bytes = 0;
  int64_t next_seq = 1;
  // The open transaction's number in the partitions' held tails (kPlainBatch: no batch yet).
  HeldTxn held_txn = kPlainBatch;
  // Buffered by a bridge before held batches (transaction_batches): recovery completes a decided
  // commit of it the old way and aborts an open one.
  bool legacy_batches = false;
  bool busy = false;    // a state change is being written or a commit completed
  bool ending = false;  // EndTxn, an abort or InitProducerId began: no more records
  uint64_t generation = 0;  // bumped when a transaction ends: late completions see it
  // Transaction version 2 (EndTxn v5): the transaction being ended bumps the producer's epoch
  // when it completes (to `next_pid` at epoch 0 once the epoch is exhausted).
  bool bump_at_end = false;
  int64_t next_pid = -1;
  std::vector<std::function<void(kafka::ErrorCode)>> end_waiters;  // EndTxn answers once the commit completes

  // A state change is in flight or a transaction is being prepared: another request waits
  // (CONCURRENT_TRANSACTIONS, the retriable answer Kafka gives while a transition is pending).
  bool in_transition() const {
    return busy || state == TxnState::kPrepareCommit || state == TxnState::kPrepareAbort;
  }
  // The open transaction takes records and offsets: no EndTxn, abort or InitProducerId began.
  bool open_for_writes() const { return state == TxnState::kOngoing && !ending; }
  // The epoch cannot go up again: InitProducerId issues a new producer id.
  bool epoch_exhausted() const { return pid < 0 || epoch >= kMaxTxnEpoch; }

  // ---- transitions, applied once they are durable ----

  // Forgets what the open transaction touched. started_ms stays: DescribeTransactions shows the
  // last transaction's start, as Kafka does.
  void clear_open();
  // AddPartitionsToTxn or AddOffsetsToTxn stored: Ongoing, a new transaction when `starts`.
  void become_ongoing(bool starts, int64_t started_at_ms, int64_t updated_at_ms);
  // InitProducerId: the open transaction discarded, no transaction open.
  void become_empty(int64_t now_ms);
  // InitProducerId: the next epoch of the same producer id (fences the previous incarnation).
  void bump_epoch();
  // An abort stored as `row` (whose epoch is bumped when the coordinator aborted on its own).
  void complete_abort(const state::TransactionRow& row);
};

// The row of `t` as state/transaction_store.h stores it.
state::TransactionRow row_of(const Txn& t);

// ---- Kafka's checks before a transition (TransactionCoordinator.handle*) ----

// AddPartitionsToTxn, AddOffsetsToTxn: the producer id, its epoch, a transition in flight.
kafka::ErrorCode check_producer(const Txn* t, ProducerId producer_id, ProducerEpoch epoch);

// EndTxn: nullopt when the transaction ends now (it is Ongoing); otherwise the answer, given
// without a transition (kNone for a retry of the EndTxn that completed it).
std::optional<kafka::ErrorCode> check_end_txn(const Txn* t, ProducerId producer_id, ProducerEpoch epoch,
                                              bool commit);

// EndTxn v5 (transaction version 2), Kafka 4.x's table for it (TransactionCoordinator
// .endTransaction): a transaction already ended is answered kNone only for a retry of the EndTxn
// that ended it (the producer id and epoch it had before its bump); with the epoch it bumped to,
// a commit has nothing to end (INVALID_TXN_STATE) and an abort ends an empty transaction with the
// epoch bumped again (nullopt), as from Empty: a version 2 client aborts when it cannot tell
// whether a Produce added a partition.
std::optional<kafka::ErrorCode> check_end_txn_v2(const Txn* t, ProducerId producer_id, ProducerEpoch epoch,
                                                 bool commit);

// Transaction version 2: the row of `t` after its transaction ended with the producer's epoch
// bumped, or a new producer id (`t.next_pid`) at epoch 0 once the epoch is exhausted.
void bump_producer(const Txn& t, state::TransactionRow& row);

// TxnOffsetCommit, the group coordinator's checks (Kafka's GroupMetadataManager.storeOffsets for
// transactional commits): an unknown producer, a fenced epoch, no AddOffsetsToTxn for the group.
kafka::ErrorCode check_txn_offset_commit(const Txn* t, ProducerId producer_id, ProducerEpoch epoch,
                                         const std::string& group_id);

// InitProducerId for a transactional id that exists.
enum class InitProducerCheck {
  kBump,        // a new epoch (an open transaction is aborted first)
  kConcurrent,  // a transition is in flight
  kRetried,     // a retry of the InitProducerId that bumped the epoch: the same answer again
  kFenced,      // `existing` (KIP-360) is not the current producer id and epoch
};
InitProducerCheck check_init_producer(const Txn& t, std::optional<std::pair<ProducerId, ProducerEpoch>> existing);

// ---- every transactional id ----

class TxnTable {
 public:
  using Map = std::map<std::string, std::unique_ptr<Txn>>;

  Txn* find(const std::string& id) const {
    auto it = txns_.find(id);
    return it == txns_.end() ? nullptr : it->second.get();
  }
  // The transactional id that owns a producer id.
  Txn* by_pid(int64_t pid) const {
    auto it = by_pid_.find(pid);
    return it == by_pid_.end() ? nullptr : find(it->second);
  }
  // The Txn still is the one a callback started with.
  Txn* current(const std::string& id, uint64_t generation) const {
    Txn* t = find(id);
    return t && t->generation == generation ? t : nullptr;
  }
  const Map& all() const { return txns_; }
  size_t size() const { return txns_.size(); }

  // Takes `t` in, indexed by its producer id if it has one.
  Txn& add(std::unique_ptr<Txn> t);
  void erase(const std::string& id);
  void clear();
  void set_pid(Txn& t, int64_t pid);

  size_t open_transactions() const;
  // Whether `t` may be Ongoing: it is already, or fewer than `max_open` transactions are.
  bool may_begin(const Txn& t, size_t max_open) const {
    return t.state == TxnState::kOngoing || open_transactions() < max_open;
  }

  // ---- views (transaction_coordinator.h) ----
  bool has_pending_offset(const std::string& group_id, const std::string& topic, int32_t partition) const;
  std::optional<TransactionDescription> describe(const std::string& id) const;
  std::vector<TransactionListing> list() const;
  std::vector<OpenTransactionOnPartition> open_on_partition(const std::string& topic, PartitionId partition) const;

 private:
  Map txns_;
  std::unordered_map<int64_t, std::string> by_pid_;
};

}  // namespace kib::bridge
