#include "bridge/transactions/transaction_recovery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

#include "bridge/log/partition_log.h"
#include "bridge/producers/producer_registry.h"
#include "common/text.h"
#include "state/transaction_store.h"

namespace kib::bridge {

using kafka::ErrorCode;

Status TransactionRecovery::load() {
  state::TransactionSnapshot snap;
  Status st = ctx_.s.store.run_blocking([&](SQLite::Database& db) { snap = state::load_transactions(db); });
  if (!st) return st;
  restore(snap);
  hold_interrupted();
  spdlog::info("transactions: loaded {} transactional ids", ctx_.txns.size());
  return ok_status();
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
      level_producer(*t, b);
    }
}

// A crash between the batch's row and the producer registry's leaves the registry behind the
// buffer: the client's retry of that batch must still be a duplicate, and its next batch follow it.
void TransactionRecovery::level_producer(const Txn& t, const state::TransactionBatchInfo& b) {
  const ProducerId pid(t.pid);
  const ProducerEpoch epoch(t.epoch);
  const SequenceCheck check =
      ctx_.s.producers.check(pid, epoch, b.topic, PartitionId(b.partition), b.base_sequence, b.record_count);
  if (check.verdict == SequenceVerdict::kAppend)
    ctx_.s.producers.record_append(pid, epoch, b.topic, PartitionId(b.partition), b.base_sequence, b.record_count,
                                   kNoOffset);
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
    } else if (t->state == TxnState::kOngoing) {
      spdlog::info("transactions: transactional id '{}' still open after the restart ({} bytes buffered)", esc(id),
                   t->buffered_bytes);
    }
  }
  ctx_.tasks.post(one_done);
}

}  // namespace kib::bridge
