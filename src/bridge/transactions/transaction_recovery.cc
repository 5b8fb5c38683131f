#include "bridge/transactions/transaction_recovery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <memory>

#include "bridge/log/partition_log.h"
#include "bridge/producers/producer_registry.h"
#include "common/text.h"
#include "state/held_batch_store.h"
#include "state/transaction_store.h"

namespace kib::bridge {

using kafka::ErrorCode;

Status TransactionRecovery::load() {
  state::TransactionSnapshot snap;
  std::vector<state::HeldBatchRow> held;
  Status st = ctx_.s.store.run_blocking([&](SQLite::Database& db) {
    snap = state::load_transactions(db);
    held = state::load_held_batch_rows(db);
  });
  if (!st) return st;
  restore(snap);
  restore_held(held);
  hold_interrupted();
  spdlog::info("transactions: loaded {} transactional ids, {} held batches", ctx_.txns.size(), held.size());
  return ok_status();
}

// The held batches back into the partitions' held tails (the log parks each partition's
// arrivals until Iggy's high watermark is read), and each open transaction its number.
void TransactionRecovery::restore_held(const std::vector<state::HeldBatchRow>& rows) {
  std::map<std::pair<std::string, int32_t>, std::vector<HeldBatch>> by_partition;
  for (const auto& r : rows) {
    ctx_.next_held_txn = std::max(ctx_.next_held_txn, r.txn + 1);
    HeldBatch b;
    b.base = KafkaOffset(r.base_offset);
    b.count = r.record_count;
    b.bytes = static_cast<uint64_t>(r.bytes);
    b.txn = r.txn;
    b.producer = {r.producer_id, static_cast<int16_t>(r.producer_epoch)};
    b.outcome = r.outcome == state::HeldOutcomeCode::kCommitted  ? HeldOutcome::kCommitted
                : r.outcome == state::HeldOutcomeCode::kAborted ? HeldOutcome::kAborted
                                                                 : HeldOutcome::kUndecided;
    if (b.outcome == HeldOutcome::kUndecided) {
      Txn* t = r.transactional_id ? ctx_.txns.find(*r.transactional_id) : nullptr;
      if (t && t->state == TxnState::kOngoing && (t->held_txn == kPlainBatch || t->held_txn == r.txn)) {
        t->held_txn = r.txn;
        TxnPartitionState& ps = t->partitions[{r.topic, PartitionId(r.partition)}];
        if (!ps.has_batches || ps.start_offset < 0 || r.base_offset < ps.start_offset) ps.start_offset = r.base_offset;
        ps.has_batches = true;
        t->buffered_bytes += r.bytes;
        level_producer(*t, r.topic, r.partition, r.base_sequence, r.record_count, KafkaOffset(r.base_offset));
      } else {
        // Its transaction is not open (the decision and the rows are one SQLite transaction, so
        // this is a row no transaction will ever decide): aborted, so the offsets after it stay.
        spdlog::warn("transactions: held batch of {}-{} at {} belongs to no open transaction; aborted", r.topic,
                     r.partition, r.base_offset);
        b.outcome = HeldOutcome::kAborted;
      }
    }
    by_partition[{r.topic, r.partition}].push_back(b);
  }
  for (auto& [tp, batches] : by_partition)
    ctx_.s.log.restore_held(tp.first, PartitionId(tp.second), std::move(batches), nullptr);
}

// The table as SQLite has it.
void TransactionRecovery::restore(const state::TransactionSnapshot& snap) {
  ctx_.txns.clear();
  for (const auto& r : snap.transactions) {
    auto t = std::make_unique<Txn>();
    t->id = r.transactional_id;
    t->pid = r.producer_id;
    t->epoch = static_cast<int16_t>(r.producer_epoch);
    t->last_pid = r.last_producer_id;
    t->last_epoch = static_cast<int16_t>(r.last_epoch);
    t->timeout_ms = r.timeout_ms;
    t->state = txn_state_from_name(r.state).value_or(TxnState::kEmpty);
    t->started_ms = r.started_at_ms;
    t->updated_ms = r.updated_at_ms;
    ctx_.txns.add(std::move(t));
  }
  for (const auto& p : snap.partitions)
    if (Txn* t = ctx_.txns.find(p.transactional_id)) {
      TxnPartitionState& ps = t->partitions[{p.topic, PartitionId(p.partition)}];
      ps.start_offset = p.start_offset;
      ps.append_from = p.append_from;
    }
  for (const auto& [id, group] : snap.groups)
    if (Txn* t = ctx_.txns.find(id)) t->groups.insert(group);
  for (const auto& o : snap.offsets)
    if (Txn* t = ctx_.txns.find(o.transactional_id))
      t->offsets[{o.group_id, o.topic, o.partition}] =
          TxnOffset{o.topic, o.partition, o.committed_offset, o.leader_epoch, o.metadata};
  for (const auto& b : snap.batches)
    if (Txn* t = ctx_.txns.find(b.transactional_id)) {
      t->partitions[{b.topic, PartitionId(b.partition)}].has_batches = true;
      t->buffered_bytes += b.bytes;
      t->next_seq = std::max(t->next_seq, b.seq + 1);
      t->legacy_batches = true;
      level_producer(*t, b.topic, b.partition, b.base_sequence, b.record_count, kNoOffset);
    }
}

// A crash between the batch's row and the producer registry's leaves the registry behind the
// buffer: the client's retry of that batch must still be a duplicate, and its next batch follow it.
void TransactionRecovery::level_producer(const Txn& t, const std::string& topic, int32_t partition,
                                         int32_t base_sequence, int32_t record_count, KafkaOffset base) {
  const ProducerId pid(t.pid);
  const ProducerEpoch epoch(t.epoch);
  const SequenceCheck check =
      ctx_.s.producers.check(pid, epoch, topic, PartitionId(partition), base_sequence, record_count);
  if (check.verdict == SequenceVerdict::kAppend)
    ctx_.s.producers.record_append(pid, epoch, topic, PartitionId(partition), base_sequence, record_count, base);
}

void TransactionRecovery::hold_interrupted() {
  for (auto& [id, t] : ctx_.txns.all()) {
    if (t->state == TxnState::kPrepareCommit) {
      // Decided before the crash: read_committed consumers must not see the part of it that
      // reached Iggy until recover() appended the rest.
      t->busy = t->ending = true;
      for (auto& [tp, ps] : t->partitions)
        if (ps.has_batches && ps.append_from >= 0) {
          ctx_.s.log.hold_stable_at(tp.topic, tp.partition, KafkaOffset(ps.append_from));
          ps.held = true;
        }
    } else if (t->state == TxnState::kPrepareAbort) {
      t->busy = t->ending = true;  // aborted by recover()
    }
    // Ongoing stays open, as on Kafka, whose coordinator keeps a transaction across a restart:
    // its batches are on disk, its producer carries on (or its timeout aborts it).
  }
}

void TransactionRecovery::recover(std::function<void()> done) {
  auto pending = std::make_shared<size_t>(1);
  auto one_done = [pending, done = std::move(done)]() {
    if (--*pending == 0) done();
  };
  for (auto& [id, t] : ctx_.txns.all()) {
    if (t->state == TxnState::kPrepareCommit) {
      // Decided before the crash (load() put the holds in place): append what is missing.
      spdlog::info("transactions: completing the commit of transactional id '{}' decided before the restart",
                   esc(id));
      ++*pending;
      committer_.resume(*t, [one_done](ErrorCode) { one_done(); });
    } else if (t->state == TxnState::kPrepareAbort) {
      spdlog::info("transactions: aborting transactional id '{}', aborting when the bridge stopped", esc(id));
      ++*pending;
      committer_.abort(*t, false, [one_done](ErrorCode) { one_done(); });
    } else if (t->state == TxnState::kOngoing && t->legacy_batches) {
      // Buffered by an older bridge, without offsets: aborted (the producer's commit fails with
      // an abortable error and its transaction is retried).
      spdlog::warn("transactions: aborting transactional id '{}', open across an upgrade of the bridge", esc(id));
      ++*pending;
      committer_.abort(*t, true, [one_done](ErrorCode) { one_done(); });
    } else if (t->state == TxnState::kOngoing) {
      spdlog::info("transactions: transactional id '{}' still open after the restart ({} bytes held)", esc(id),
                   t->buffered_bytes);
    }
  }
  ctx_.tasks.post(one_done);
}

}  // namespace kib::bridge
