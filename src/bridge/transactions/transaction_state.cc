#include "bridge/transactions/transaction_state.h"

namespace kib::bridge {

using kafka::ErrorCode;

// ---- transitions ----

void Txn::clear_open() {
  partitions.clear();
  groups.clear();
  offsets.clear();
  buffered_bytes = 0;
  held_txn = kPlainBatch;
  legacy_batches = false;
  ++generation;
}

void Txn::become_ongoing(bool starts, int64_t started_at_ms, int64_t updated_at_ms) {
  if (starts) {
    clear_open();
    started_ms = started_at_ms;
  }
  state = TxnState::kOngoing;
  updated_ms = updated_at_ms;
}

void Txn::become_empty(int64_t now_ms) {
  clear_open();
  started_ms = -1;
  state = TxnState::kEmpty;
  updated_ms = now_ms;
}

void Txn::bump_epoch() {
  last_pid = pid;
  last_epoch = epoch;
  ++epoch;
}

void Txn::complete_abort(const state::TransactionRow& row) {
  clear_open();
  state = TxnState::kCompleteAbort;
  epoch = static_cast<int16_t>(row.producer_epoch);
  last_pid = row.last_producer_id;
  last_epoch = static_cast<int16_t>(row.last_epoch);
  updated_ms = row.updated_at_ms;
}

state::TransactionRow row_of(const Txn& t) {
  state::TransactionRow r;
  r.transactional_id = t.id;
  r.producer_id = t.pid;
  r.producer_epoch = t.epoch;
  r.last_producer_id = t.last_pid;
  r.last_epoch = t.last_epoch;
  r.timeout_ms = t.timeout_ms;
  r.state = std::string(txn_state_name(t.state));
  r.started_at_ms = t.started_ms;
  r.updated_at_ms = t.updated_ms;
  return r;
}

// ---- checks ----

ErrorCode check_producer(const Txn* t, ProducerId producer_id, ProducerEpoch epoch) {
  if (!t || t->pid != producer_id()) return ErrorCode::kInvalidProducerIdMapping;
  if (t->epoch != epoch()) return ErrorCode::kProducerFenced;
  if (t->in_transition()) return ErrorCode::kConcurrentTransactions;
  return ErrorCode::kNone;
}

std::optional<ErrorCode> check_end_txn(const Txn* t, ProducerId producer_id, ProducerEpoch epoch, bool commit) {
  if (!t || t->pid != producer_id()) return ErrorCode::kInvalidProducerIdMapping;
  if (t->epoch != epoch()) return ErrorCode::kProducerFenced;
  if (t->busy) return ErrorCode::kConcurrentTransactions;
  switch (t->state) {
    case TxnState::kOngoing:
      return std::nullopt;
    case TxnState::kCompleteCommit:  // a retry of the EndTxn that completed it
      return commit ? ErrorCode::kNone : ErrorCode::kInvalidTxnState;
    case TxnState::kCompleteAbort:
      return commit ? ErrorCode::kInvalidTxnState : ErrorCode::kNone;
    case TxnState::kPrepareCommit:
    case TxnState::kPrepareAbort:
      return ErrorCode::kConcurrentTransactions;
    default:
      return ErrorCode::kInvalidTxnState;
  }
}

std::optional<ErrorCode> check_end_txn_v2(const Txn* t, ProducerId producer_id, ProducerEpoch epoch, bool commit) {
  if (!t) return ErrorCode::kInvalidProducerIdMapping;
  const bool ended = t->state == TxnState::kCompleteCommit || t->state == TxnState::kCompleteAbort;
  if (ended && !t->busy && t->last_epoch >= 0 && t->last_pid == producer_id() && t->last_epoch == epoch())
    return (t->state == TxnState::kCompleteCommit) == commit ? ErrorCode::kNone : ErrorCode::kInvalidTxnState;
  if (t->pid != producer_id()) return ErrorCode::kInvalidProducerIdMapping;
  if (t->epoch != epoch()) return ErrorCode::kProducerFenced;
  if (t->busy) return ErrorCode::kConcurrentTransactions;
  switch (t->state) {
    case TxnState::kOngoing:
      return std::nullopt;
    case TxnState::kEmpty:
    case TxnState::kCompleteCommit:
    case TxnState::kCompleteAbort:
      // An abort of a transaction that added nothing (a client that cannot tell whether its
      // Produce v12 reached the partition aborts anyway): it ends with the epoch bumped.
      if (!commit) return std::nullopt;
      return ErrorCode::kInvalidTxnState;
    case TxnState::kPrepareCommit:
    case TxnState::kPrepareAbort:
      return ErrorCode::kConcurrentTransactions;
    default:
      return ErrorCode::kInvalidTxnState;
  }
}

void bump_producer(const Txn& t, state::TransactionRow& row) {
  row.last_producer_id = t.pid;
  row.last_epoch = t.epoch;
  if (t.epoch < kMaxTxnEpoch) {
    row.producer_epoch = t.epoch + 1;
  } else {
    row.producer_id = t.next_pid;
    row.producer_epoch = 0;
  }
}

ErrorCode check_txn_offset_commit(const Txn* t, ProducerId producer_id, ProducerEpoch epoch,
                                  const std::string& group_id) {
  if (!t || t->pid != producer_id()) return ErrorCode::kInvalidProducerIdMapping;
  if (t->epoch != epoch()) return ErrorCode::kProducerFenced;
  if (!t->open_for_writes() || !t->groups.count(group_id)) return ErrorCode::kInvalidTxnState;
  return ErrorCode::kNone;
}

InitProducerCheck check_init_producer(const Txn& t, std::optional<std::pair<ProducerId, ProducerEpoch>> existing) {
  if (t.in_transition()) return InitProducerCheck::kConcurrent;
  if (!existing) return InitProducerCheck::kBump;
  const bool is_current = existing->first() == t.pid && existing->second() == t.epoch;
  const bool is_retry = existing->first() == t.last_pid && existing->second() == t.last_epoch;
  if (is_retry && !is_current && t.state != TxnState::kOngoing) return InitProducerCheck::kRetried;
  return is_current ? InitProducerCheck::kBump : InitProducerCheck::kFenced;
}

// ---- the table ----

Txn& TxnTable::add(std::unique_ptr<Txn> t) {
  Txn& ref = *t;
  const int64_t pid = t->pid;
  t->pid = -1;
  txns_[ref.id] = std::move(t);
  set_pid(ref, pid);
  return ref;
}

void TxnTable::erase(const std::string& id) {
  if (Txn* t = find(id)) by_pid_.erase(t->pid);
  txns_.erase(id);
}

void TxnTable::clear() {
  txns_.clear();
  by_pid_.clear();
}

void TxnTable::set_pid(Txn& t, int64_t pid) {
  if (t.pid >= 0) by_pid_.erase(t.pid);
  t.pid = pid;
  if (pid >= 0) by_pid_[pid] = t.id;
}

size_t TxnTable::open_transactions() const {
  size_t n = 0;
  for (const auto& [id, t] : txns_) n += t->state == TxnState::kOngoing;
  return n;
}

bool TxnTable::has_pending_offset(const std::string& group_id, const std::string& topic, int32_t partition) const {
  const TxnOffsetKey key{group_id, topic, partition};
  for (const auto& [id, t] : txns_)
    if (t->offsets.count(key)) return true;
  return false;
}

std::optional<TransactionDescription> TxnTable::describe(const std::string& id) const {
  const Txn* t = find(id);
  if (!t || t->pid < 0) return std::nullopt;
  TransactionDescription d;
  d.transactional_id = t->id;
  d.state = t->state;
  d.producer_id = ProducerId(t->pid);
  d.producer_epoch = ProducerEpoch(t->epoch);
  d.timeout_ms = t->timeout_ms;
  d.start_ms = TimestampMs(t->started_ms);
  for (const auto& [tp, ps] : t->partitions) d.partitions.push_back(tp);
  return d;
}

std::vector<TransactionListing> TxnTable::list() const {
  std::vector<TransactionListing> out;
  for (const auto& [id, t] : txns_)
    if (t->pid >= 0) out.push_back({id, ProducerId(t->pid), t->state, TimestampMs(t->started_ms)});
  return out;
}

std::vector<OpenTransactionOnPartition> TxnTable::open_on_partition(const std::string& topic,
                                                                    PartitionId partition) const {
  std::vector<OpenTransactionOnPartition> out;
  const TxnTopicPartition tp{topic, partition};
  for (const auto& [id, t] : txns_) {
    if (t->state != TxnState::kOngoing && t->state != TxnState::kPrepareCommit) continue;
    auto it = t->partitions.find(tp);
    if (it == t->partitions.end() || !it->second.has_batches) continue;
    out.push_back({ProducerId(t->pid), ProducerEpoch(t->epoch), KafkaOffset(it->second.start_offset)});
  }
  return out;
}

}  // namespace kib::bridge
