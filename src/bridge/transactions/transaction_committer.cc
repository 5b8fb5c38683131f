// The commit pipeline and the abort (transaction_committer.h; docs/transactions.md, "A commit").
// Every step finds its Txn again by id and generation: a step whose transaction ended meanwhile
// does nothing.
#include "bridge/transactions/transaction_committer.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "bridge/errors.h"
#include "bridge/groups/committed_offsets.h"
#include "bridge/log/appender.h"
#include "bridge/log/partition_log.h"
#include "common/text.h"
#include "state/group_store.h"
#include "state/held_batch_store.h"
#include "state/transaction_store.h"
#include "uvx/timer.h"

namespace kib::bridge {
namespace {

using kafka::ErrorCode;

// Buffered batches are read back for a commit this many bytes at a time.
constexpr int64_t kCommitChunkBytes = 4 << 20;
// A commit whose append failed (Iggy down) is retried after this long, reading Iggy first to
// find what the failed send stored.
constexpr auto kCommitRetry = std::chrono::milliseconds(1000);
// A transactional batch decompresses within this, as it did when its Produce request was decoded.
constexpr size_t kReplayBudget = size_t{1} << 30;

// What the commit's deciding SQLite transaction writes besides the state.
struct Decision {
  std::vector<std::pair<TxnTopicPartition, int64_t>> starts;  // where each partition's appends start
  std::map<std::string, std::vector<OffsetCommitEntry>> by_group;
  std::vector<state::CommittedOffsetRow> offset_rows;
};

Decision decision_of(const Txn& t, int64_t commit_time) {
  Decision d;
  for (const auto& [tp, ps] : t.partitions)
    if (ps.has_batches) d.starts.emplace_back(tp, ps.append_from);
  for (const auto& [key, o] : t.offsets) {
    const std::string& group = std::get<0>(key);
    d.by_group[group].push_back({o.topic, o.partition, o.offset, o.leader_epoch, o.metadata});
    d.offset_rows.push_back(
        {group, o.topic, o.partition, o.offset, o.leader_epoch, o.metadata.value_or(""), commit_time, std::nullopt});
  }
  return d;
}

bool all_appended(const Txn& t) {
  for (const auto& [tp, ps] : t.partitions)
    if (ps.has_batches && !ps.appended) return false;
  return true;
}

}  // namespace

// A commit is one SQLite transaction: the transaction's held batches take the outcome, the
// pending offsets are written into committed_offsets, and the state is CompleteCommit (with the
// producer's next epoch at transaction version 2). EndTxn is answered then, as on Kafka where the
// markers are written without waiting for other transactions; the batches reach Iggy as the
// partitions' held tails drain (behind any older undecided transaction, which holds read_committed
// readers there as Kafka's last stable offset does).
void TransactionCommitter::commit(Txn& t, std::function<void(ErrorCode)> done) {
  t.busy = t.ending = true;
  t.end_waiters.push_back(std::move(done));
  state::TransactionRow row = row_of(t);
  row.state = "CompleteCommit";
  row.updated_at_ms = ctx_.now();
  if (t.bump_at_end) bump_producer(t, row);
  const int64_t commit_time = ctx_.s.offsets.now_ms();
  Decision d = decision_of(t, commit_time);
  const HeldTxn txn = t.held_txn;
  ctx_.write(
      [row, offset_rows = std::move(d.offset_rows), commit_time, txn](SQLite::Database& db) {
        std::set<std::string> groups;
        for (const auto& r : offset_rows)
          if (groups.insert(r.group_id).second) state::ensure_group_row(db, r.group_id, commit_time);
        state::upsert_committed_offsets(db, offset_rows);
        state::clear_transaction(db, row.transactional_id);
        state::save_transaction(db, row);
        if (txn != kPlainBatch) state::decide_held_batches(db, txn, state::HeldOutcomeCode::kCommitted);
      },
      [this, id = t.id, generation = t.generation, row, by_group = std::move(d.by_group), commit_time,
       txn](Status st) {
        Txn* t = ctx_.txns.current(id, generation);
        if (!t) return;
        if (!st) {
          spdlog::warn("transactions: commit of '{}' not decided: {}", esc(id), st.error().message);
          return commit_failed(*t);
        }
        for (const auto& [group, entries] : by_group) ctx_.s.offsets.adopt(group, entries, commit_time);
        decide_partitions(*t, txn, true);
        // EndTxn is answered once the transaction's batches are in Iggy (or wait behind another
        // open transaction), so a consumer started after the commit returned sees it.
        std::vector<TxnTopicPartition> parts;
        for (const auto& [tp, ps] : t->partitions)
          if (ps.has_batches && txn != kPlainBatch) parts.push_back(tp);
        auto pending = std::make_shared<size_t>(parts.size() + 1);
        auto one = [this, id, generation, row, pending] {
          if (--*pending > 0) return;
          Txn* t = ctx_.txns.current(id, generation);
          if (!t) return;
          complete_commit(*t, row);
          end_commit(*t, ErrorCode::kNone);
        };
        for (const auto& tp : parts) ctx_.s.log.when_held_settled(tp.topic, tp.partition, txn, one);
        one();
      });
}

void TransactionCommitter::decide_partitions(const Txn& t, HeldTxn txn, bool committed) {
  if (txn == kPlainBatch) return;
  for (const auto& [tp, ps] : t.partitions)
    if (ps.has_batches) ctx_.s.log.decide_held(tp.topic, tp.partition, txn, committed);
}

// The commit is stored as `row`: the transaction is CompleteCommit, with the producer's next
// epoch (or id) when it bumped (transaction version 2).
void TransactionCommitter::complete_commit(Txn& t, const state::TransactionRow& row) {
  const bool bumped = t.bump_at_end;
  if (bumped) {
    t.last_pid = row.last_producer_id;
    t.last_epoch = static_cast<int16_t>(row.last_epoch);
    if (row.producer_id != t.pid) ctx_.txns.set_pid(t, row.producer_id);
    t.epoch = static_cast<int16_t>(row.producer_epoch);
    t.bump_at_end = false;
    t.next_pid = -1;
  }
  t.clear_open();
  t.state = TxnState::kCompleteCommit;
  t.updated_ms = row.updated_at_ms;
}

void TransactionCommitter::resume(Txn& t, std::function<void(ErrorCode)> done) {
  t.end_waiters.push_back(std::move(done));
  append_all(t.id, t.generation, true);
}

// 3. Appends every partition's batches; `scan`: read Iggy first for those already there.
void TransactionCommitter::append_all(const std::string& id, uint64_t generation, bool scan) {
  Txn* t = ctx_.txns.current(id, generation);
  if (!t) return;
  bool all = true;
  for (const auto& [tp, ps] : t->partitions)
    if (ps.has_batches && !ps.appended) {
      all = false;
      append_partition(id, generation, tp, scan);
    }
  if (all) finish(id, generation);
}

void TransactionCommitter::append_partition(const std::string& id, uint64_t generation, const TxnTopicPartition& tp,
                                            bool scan) {
  Txn* t = ctx_.txns.current(id, generation);
  if (!t) return;
  const TxnPartitionState& ps = t->partitions[tp];
  if (!scan || ps.append_from < 0)
    return append_chunk(id, generation, tp, std::make_shared<std::set<int32_t>>(), 0);
  ctx_.s.log.producer_batches_since(
      tp.topic, tp.partition, KafkaOffset(ps.append_from), ProducerId(t->pid), ProducerEpoch(t->epoch),
      [this, alive = ctx_.alive.token(), id, generation, tp](Result<std::vector<int32_t>> found) {
        if (!alive) return;
        if (!found) return partition_failed(id, generation, tp, found.error());
        append_chunk(id, generation, tp, std::make_shared<std::set<int32_t>>(found->begin(), found->end()), 0);
      });
}

// The partition's buffered batches after `after_seq`, one chunk at a time, each appended once
// the previous chunk is; `present`: base sequences already in Iggy, skipped.
void TransactionCommitter::append_chunk(const std::string& id, uint64_t generation, const TxnTopicPartition& tp,
                                        std::shared_ptr<std::set<int32_t>> present, int64_t after_seq) {
  auto rows = std::make_shared<std::vector<state::TransactionBatchRow>>();
  ctx_.write(
      [rows, id, tp, after_seq](SQLite::Database& db) {
        *rows = state::load_transaction_batches(db, id, tp.topic, tp.partition(), after_seq, kCommitChunkBytes);
      },
      [this, id, generation, tp, present, rows](Status st) {
        Txn* t = ctx_.txns.current(id, generation);
        if (!t) return;
        if (!st) return partition_failed(id, generation, tp, st.error());
        if (rows->empty()) {
          t->partitions[tp].appended = true;
          if (all_appended(*t)) finish(id, generation);
          return;
        }
        const int64_t last_seq = rows->back().seq;
        auto pending = std::make_shared<size_t>(1);
        auto failure = std::make_shared<std::optional<Error>>();
        auto one_done = [this, id, generation, tp, present, pending, failure, last_seq]() {
          if (--*pending > 0) return;
          if (*failure) return partition_failed(id, generation, tp, **failure);
          append_chunk(id, generation, tp, present, last_seq);
        };
        for (auto& row : *rows) {
          if (present->count(row.base_sequence)) continue;  // stored before a crash or a failed send
          auto bytes = std::make_shared<Bytes>(std::move(row.batch));
          kafka::DecompressionBudget budget{kReplayBudget};
          auto decoded = kafka::decode_record_batches(*bytes, budget);
          if (!decoded) {
            // Decoded once already when it was produced; a row that no longer decodes is lost
            // data, which must be loud, and the rest of the commit still goes on.
            spdlog::error("transactions: buffered batch {} of '{}' for {}-{} does not decode: {}; skipped", row.seq,
                          esc(id), tp.topic, tp.partition(), decoded.error().message);
            continue;
          }
          ++*pending;
          ctx_.s.log.append_committed(tp.topic, tp.partition, std::move(*decoded), bytes,
                                      [failure, one_done](ProduceResult r) {
                                        if (r.error != ErrorCode::kNone && !*failure)
                                          *failure = kafka_error(r.error, r.message);
                                        one_done();
                                      });
        }
        one_done();
      });
}

void TransactionCommitter::partition_failed(const std::string& id, uint64_t generation, const TxnTopicPartition& tp,
                                            const Error& e) {
  spdlog::warn("transactions: appending the commit of '{}' to {}-{} failed ({}); retrying in {} ms", esc(id),
               tp.topic, tp.partition(), e.message, kCommitRetry.count());
  auto timer = std::make_shared<uv::Timer>(ctx_.s.loop, "transaction commit retry");
  timer->start(kCommitRetry, [this, alive = ctx_.alive.token(), id, generation, tp, timer]() mutable {
    if (!alive) return;
    ctx_.tasks.post([timer] {});  // the timer is released outside its own callback
    timer.reset();
    if (ctx_.stopped) return;
    spdlog::debug("transactions: retrying the commit of '{}' on {}-{}", esc(id), tp.topic, tp.partition());
    append_partition(id, generation, tp, true);
  });
}

// 4. Every partition is appended: the holds go (read_committed consumers see the whole
//    transaction at once), the buffered batches are deleted, the state is CompleteCommit.
void TransactionCommitter::finish(const std::string& id, uint64_t generation) {
  Txn* t = ctx_.txns.current(id, generation);
  if (!t) return;
  release_holds(*t);
  state::TransactionRow row = row_of(*t);
  row.state = "CompleteCommit";
  row.updated_at_ms = ctx_.now();
  if (t->bump_at_end) bump_producer(*t, row);
  complete_commit(*t, row);
  ctx_.write(
      [row](SQLite::Database& db) {
        state::clear_transaction(db, row.transactional_id);
        state::save_transaction(db, row);
      },
      [this, id](Status st) {
        Txn* t = ctx_.txns.find(id);
        // Not stored: the row still says PrepareCommit, and a restart reads Iggy, finds every
        // batch there and appends nothing. The commit is complete either way.
        if (!st) spdlog::warn("transactions: completion of '{}' not stored: {}", esc(id), st.error().message);
        if (t) end_commit(*t, ErrorCode::kNone);
      });
}

void TransactionCommitter::release_holds(Txn& t) {
  for (auto& [tp, ps] : t.partitions)
    if (ps.held) {
      ctx_.s.log.release_stable(tp.topic, tp.partition, KafkaOffset(ps.append_from));
      ps.held = false;
    }
}

void TransactionCommitter::end_commit(Txn& t, ErrorCode answer) {
  t.busy = t.ending = false;
  auto waiters = std::move(t.end_waiters);
  t.end_waiters.clear();
  for (auto& w : waiters) w(answer);
}

void TransactionCommitter::commit_failed(Txn& t) {
  t.bump_at_end = false;
  t.next_pid = -1;
  release_holds(t);
  end_commit(t, ErrorCode::kCoordinatorNotAvailable);
}

// ---- abort ----

// One SQLite transaction deletes what the transaction buffered and stores CompleteAbort.
void TransactionCommitter::abort(Txn& t, bool bump_epoch, std::function<void(ErrorCode)> done) {
  t.busy = t.ending = true;
  state::TransactionRow row = row_of(t);
  row.state = "CompleteAbort";
  row.updated_at_ms = ctx_.now();
  if (t.bump_at_end) {
    bump_producer(t, row);
  } else if (bump_epoch && t.epoch < kMaxTxnEpoch) {
    row.last_producer_id = t.pid;
    row.last_epoch = t.epoch;
    row.producer_epoch = t.epoch + 1;
  }
  const HeldTxn txn = t.held_txn;
  ctx_.write(
      [row, txn](SQLite::Database& db) {
        state::clear_transaction(db, row.transactional_id);
        state::save_transaction(db, row);
        if (txn != kPlainBatch) state::decide_held_batches(db, txn, state::HeldOutcomeCode::kAborted);
      },
      [this, row, txn, done = std::move(done)](Status st) {
        Txn* t = ctx_.txns.find(row.transactional_id);
        if (!t) return done(ErrorCode::kCoordinatorNotAvailable);
        t->busy = t->ending = false;
        t->bump_at_end = false;
        t->next_pid = -1;
        if (!st) {
          spdlog::warn("transactions: abort of '{}' not stored: {}", esc(row.transactional_id), st.error().message);
          return done(ErrorCode::kCoordinatorNotAvailable);
        }
        if (row.producer_id != t->pid) ctx_.txns.set_pid(*t, row.producer_id);
        // Its held batches become placeholders as the tails drain to them.
        if (t->held_txn == txn) decide_partitions(*t, txn, false);
        t->complete_abort(row);
        done(ErrorCode::kNone);
      });
}

}  // namespace kib::bridge
