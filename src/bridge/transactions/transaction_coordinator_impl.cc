// The transaction coordinator kept in SQLite (transaction_coordinator_impl.h). Kafka's rules are
// those of its TransactionCoordinator (handleInitProducerId, handleAddPartitionsToTransaction,
// handleEndTransaction); what differs is where an open transaction's records wait: in
// transaction_batches, until a commit appends them to Iggy (buffered_produce.h,
// transaction_committer.h).
#include "bridge/transactions/transaction_coordinator_impl.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "bridge/errors.h"
#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/log/partition_log.h"
#include "bridge/producers/producer_registry.h"
#include "common/text.h"
#include "state/held_batch_store.h"
#include "state/transaction_store.h"

namespace kib::bridge {
namespace {

using kafka::ErrorCode;

TxnInitResult init_error(ErrorCode code, std::string message) {
  TxnInitResult r;
  r.error = code;
  r.message = std::move(message);
  return r;
}

TxnInitResult init_answer(const Txn& t) {
  TxnInitResult r;
  r.producer_id = ProducerId(t.pid);
  r.producer_epoch = ProducerEpoch(t.epoch);
  return r;
}

}  // namespace

PersistentTransactionCoordinator::PersistentTransactionCoordinator(TransactionServices services)
    : ctx_(std::move(services)),
      committer_(ctx_),
      buffered_(ctx_),
      recovery_(ctx_, committer_),
      sweep_(ctx_.s.loop, "transaction timeout sweep") {
  sweep_.unref();
}

PersistentTransactionCoordinator::~PersistentTransactionCoordinator() { ctx_.alive.end(); }

std::unique_ptr<PersistentTransactionCoordinator> make_transaction_coordinator(TransactionServices services) {
  return std::make_unique<PersistentTransactionCoordinator>(std::move(services));
}

// ---- startup, shutdown ----

Status PersistentTransactionCoordinator::load() {
  if (Status st = recovery_.load(); !st) return st;
  sweep_.start_repeating(std::chrono::milliseconds(ctx_.s.config.abort_timed_out_interval_ms), [this] { sweep(); });
  return ok_status();
}

void PersistentTransactionCoordinator::recover(std::function<void()> done) { recovery_.recover(std::move(done)); }

void PersistentTransactionCoordinator::stop() {
  ctx_.stopped = true;
  sweep_.stop();
}

// ---- InitProducerId ----

void PersistentTransactionCoordinator::init_producer(const std::string& id, int32_t timeout_ms,
                                                     std::optional<std::pair<ProducerId, ProducerEpoch>> existing,
                                                     std::function<void(TxnInitResult)> done) {
  const auto& config = ctx_.s.config;
  if (ctx_.stopped) return ctx_.later(done, init_error(ErrorCode::kCoordinatorNotAvailable, "shutting down"));
  if (timeout_ms <= 0 || static_cast<uint32_t>(timeout_ms) > config.max_timeout_ms)
    return ctx_.later(done, init_error(ErrorCode::kInvalidTransactionTimeout,
                                       "transaction.timeout.ms " + std::to_string(timeout_ms) + " is not in 1.." +
                                           std::to_string(config.max_timeout_ms) + " ([transactions] max_timeout_ms)"));
  auto answer = [this, id, done](Status st) {
    Txn* t = ctx_.txns.find(id);
    if (!st || !t) {
      const std::string why = st ? "transactional id vanished" : st.error().message;
      spdlog::warn("transactions: InitProducerId for '{}' failed: {}", esc(id), esc(why, 512));
      return done(init_error(ErrorCode::kCoordinatorNotAvailable, why));
    }
    done(init_answer(*t));
  };

  Txn* t = ctx_.txns.find(id);
  if (!t) {
    auto fresh = std::make_unique<Txn>();
    fresh->id = id;
    fresh->timeout_ms = timeout_ms;
    fresh->busy = true;
    issue_new_producer(ctx_.txns.add(std::move(fresh)), [this, id, answer](Status st) {
      if (!st) {
        if (Txn* t = ctx_.txns.find(id); t && t->pid < 0) ctx_.txns.erase(id);
      }
      answer(std::move(st));
    });
    return;
  }
  switch (check_init_producer(*t, existing)) {
    case InitProducerCheck::kConcurrent:
      return ctx_.later(done, init_error(ErrorCode::kConcurrentTransactions,
                                         "a transition of this transactional id is in progress"));
    case InitProducerCheck::kRetried:  // the client retried an InitProducerId that bumped its epoch
      return ctx_.later(done, init_answer(*t));
    case InitProducerCheck::kFenced:
      return ctx_.later(done, init_error(ErrorCode::kProducerFenced,
                                         "producer id " + std::to_string(existing->first()) + " epoch " +
                                             std::to_string(existing->second()) + " is not the current one"));
    case InitProducerCheck::kBump:
      break;
  }
  t->timeout_ms = timeout_ms;
  t->busy = true;
  t->ending = true;
  if (t->state == TxnState::kOngoing)
    spdlog::info("transactions: InitProducerId for '{}' aborts its open transaction", esc(id));
  bump_and_reset(*t, answer);
}

void PersistentTransactionCoordinator::issue_new_producer(Txn& t, std::function<void(Status)> done) {
  ctx_.s.producers.init_producer(std::nullopt, [this, alive = ctx_.alive.token(), id = t.id,
                                                done = std::move(done)](Result<ProducerIdAndEpoch> r) {
    if (!alive) return;
    Txn* t = ctx_.txns.find(id);
    if (!t) return done(Error{ErrorDomain::kInvalid, 0, "transactional id vanished"});
    if (!r) {
      t->busy = t->ending = false;
      return done(r.error());
    }
    t->last_pid = t->pid;
    t->last_epoch = t->epoch;
    ctx_.txns.set_pid(*t, r->producer_id());
    t->epoch = r->producer_epoch();
    reset_and_persist(*t, std::move(done));
  });
}

// Bumps the epoch (a new producer id when it is exhausted), then reset_and_persist().
void PersistentTransactionCoordinator::bump_and_reset(Txn& t, std::function<void(Status)> done) {
  if (t.epoch_exhausted()) return issue_new_producer(t, std::move(done));
  t.bump_epoch();
  reset_and_persist(t, std::move(done));
}

// Discards an open transaction and persists the id as Empty.
// Its held batches are aborted with it (placeholders, as an abort's).
void PersistentTransactionCoordinator::reset_and_persist(Txn& t, std::function<void(Status)> done) {
  const HeldTxn txn = t.held_txn;
  std::vector<TxnTopicPartition> held;
  for (const auto& [tp, ps] : t.partitions)
    if (ps.has_batches) held.push_back(tp);
  t.become_empty(ctx_.now());
  ctx_.write(
      [row = row_of(t), txn](SQLite::Database& db) {
        state::clear_transaction(db, row.transactional_id);
        state::save_transaction(db, row);
        if (txn != kPlainBatch) state::decide_held_batches(db, txn, state::HeldOutcomeCode::kAborted);
      },
      [this, id = t.id, txn, held = std::move(held), done = std::move(done)](Status st) {
        if (Txn* t = ctx_.txns.find(id)) t->busy = t->ending = false;
        // In memory the transaction is discarded either way; a row left undecided by a failed
        // write belongs to no open transaction at the next start and is aborted then.
        if (txn != kPlainBatch)
          for (const auto& tp : held) ctx_.s.log.decide_held(tp.topic, tp.partition, txn, false);
        done(std::move(st));
      });
}

// ---- AddPartitionsToTxn, AddOffsetsToTxn ----

std::optional<state::TransactionRow> PersistentTransactionCoordinator::ongoing_row(const Txn& t) const {
  if (!ctx_.txns.may_begin(t, ctx_.s.config.max_open)) {
    spdlog::warn("transactions: '{}' may not begin a transaction: {} are open ([transactions] max_open)", esc(t.id),
                 ctx_.s.config.max_open);
    return std::nullopt;
  }
  state::TransactionRow row = row_of(t);
  row.state = "Ongoing";
  if (t.state != TxnState::kOngoing) row.started_at_ms = ctx_.now();
  row.updated_at_ms = ctx_.now();
  return row;
}

void PersistentTransactionCoordinator::add_partitions(const std::string& id, ProducerId producer_id,
                                                      ProducerEpoch epoch, std::vector<TxnTopicPartition> partitions,
                                                      std::function<void(std::vector<ErrorCode>)> done) {
  Txn* t = ctx_.txns.find(id);
  ErrorCode e = ctx_.stopped ? ErrorCode::kCoordinatorNotAvailable : check_producer(t, producer_id, epoch);
  if (e != ErrorCode::kNone) return ctx_.later(done, std::vector<ErrorCode>(partitions.size(), e));
  // Kafka answers an unknown partition with UNKNOWN_TOPIC_OR_PARTITION and every other one with
  // OPERATION_NOT_ATTEMPTED: none is added.
  std::vector<ErrorCode> errors(partitions.size(), ErrorCode::kNone);
  bool refused = false;
  for (size_t i = 0; i < partitions.size(); ++i)
    if (Status st = ctx_.s.log.precheck_produce(partitions[i].topic, partitions[i].partition); !st) {
      errors[i] = to_kafka_error(st.error());
      refused = true;
    }
  if (refused) {
    for (auto& err : errors)
      if (err == ErrorCode::kNone) err = ErrorCode::kOperationNotAttempted;
    return ctx_.later(done, std::move(errors));
  }
  std::vector<TxnTopicPartition> added;
  for (const auto& tp : partitions)
    if (!t->partitions.count(tp) && std::find(added.begin(), added.end(), tp) == added.end()) added.push_back(tp);
  if (added.empty() && t->state == TxnState::kOngoing) return ctx_.later(done, std::move(errors));
  std::optional<state::TransactionRow> row = ongoing_row(*t);
  if (!row) return ctx_.later(done, std::vector<ErrorCode>(partitions.size(), ErrorCode::kPolicyViolation));
  const bool starts = t->state != TxnState::kOngoing;
  t->busy = true;
  ctx_.write(
      [row = *row, added](SQLite::Database& db) {
        state::save_transaction(db, row);
        for (const auto& tp : added)
          state::add_transaction_partition(db, {row.transactional_id, tp.topic, tp.partition()});
      },
      [this, id, row = *row, added, starts, n = partitions.size(), done = std::move(done)](Status st) {
        Txn* t = ctx_.txns.find(id);
        if (!t) return done(std::vector<ErrorCode>(n, ErrorCode::kCoordinatorNotAvailable));
        t->busy = false;
        if (!st) {
          spdlog::warn("transactions: AddPartitionsToTxn for '{}' not stored: {}", esc(id), st.error().message);
          return done(std::vector<ErrorCode>(n, ErrorCode::kCoordinatorNotAvailable));
        }
        t->become_ongoing(starts, row.started_at_ms, row.updated_at_ms);
        for (const auto& tp : added) t->partitions[tp];
        done(std::vector<ErrorCode>(n, ErrorCode::kNone));
      });
}

void PersistentTransactionCoordinator::add_offsets(const std::string& id, ProducerId producer_id, ProducerEpoch epoch,
                                                   const std::string& group_id, std::function<void(ErrorCode)> done) {
  Txn* t = ctx_.txns.find(id);
  ErrorCode e = ctx_.stopped ? ErrorCode::kCoordinatorNotAvailable : check_producer(t, producer_id, epoch);
  if (e != ErrorCode::kNone) return ctx_.later(done, e);
  if (t->groups.count(group_id) && t->state == TxnState::kOngoing) return ctx_.later(done, ErrorCode::kNone);
  std::optional<state::TransactionRow> row = ongoing_row(*t);
  if (!row) return ctx_.later(done, ErrorCode::kPolicyViolation);
  const bool starts = t->state != TxnState::kOngoing;
  t->busy = true;
  ctx_.write(
      [row = *row, group_id](SQLite::Database& db) {
        state::save_transaction(db, row);
        state::add_transaction_group(db, row.transactional_id, group_id);
      },
      [this, id, row = *row, group_id, starts, done = std::move(done)](Status st) {
        Txn* t = ctx_.txns.find(id);
        if (!t) return done(ErrorCode::kCoordinatorNotAvailable);
        t->busy = false;
        if (!st) return done(ErrorCode::kCoordinatorNotAvailable);
        t->become_ongoing(starts, row.started_at_ms, row.updated_at_ms);
        t->groups.insert(group_id);
        done(ErrorCode::kNone);
      });
}

// ---- TxnOffsetCommit ----

void PersistentTransactionCoordinator::txn_offset_commit(const std::string& id, const std::string& group_id,
                                                         ProducerId producer_id, ProducerEpoch epoch,
                                                         const TxnGroupMember& member,
                                                         std::vector<TxnOffset> offsets, bool add_group,
                                                         std::function<void(std::vector<ErrorCode>)> done) {
  const Txn* t = ctx_.txns.find(id);
  // Transaction version 2 sends no AddOffsetsToTxn: the commit adds its group (Kafka's
  // coordinator does it through the group coordinator's transaction verification).
  if (!add_group || !t || t->groups.count(group_id) || ctx_.stopped)
    return commit_txn_offsets(id, group_id, producer_id, epoch, member, std::move(offsets), std::move(done));
  const size_t n = offsets.size();
  add_offsets(id, producer_id, epoch, group_id,
              [this, id, group_id, producer_id, epoch, member, offsets = std::move(offsets),
               done = std::move(done), n](ErrorCode e) mutable {
                if (e != ErrorCode::kNone) return done(std::vector<ErrorCode>(n, e));
                commit_txn_offsets(id, group_id, producer_id, epoch, member, std::move(offsets), std::move(done));
              });
}

void PersistentTransactionCoordinator::commit_txn_offsets(const std::string& id, const std::string& group_id,
                                                          ProducerId producer_id, ProducerEpoch epoch,
                                                          const TxnGroupMember& member,
                                                          std::vector<TxnOffset> offsets,
                                                          std::function<void(std::vector<ErrorCode>)> done) {
  const size_t n = offsets.size();
  Txn* t = ctx_.txns.find(id);
  ErrorCode refuse =
      ctx_.stopped ? ErrorCode::kCoordinatorNotAvailable : check_txn_offset_commit(t, producer_id, epoch, group_id);
  // Then the group's fencing (KIP-447): a zombie whose partitions went to another member in a
  // rebalance keeps a live producer (its transactional id is its own), so only the group can
  // tell its commit from the new owner's.
  if (refuse == ErrorCode::kNone) {
    OffsetCommitParams as_member;
    as_member.group_id = group_id;
    as_member.generation_id = member.generation_id;
    as_member.member_id = member.member_id;
    as_member.group_instance_id = member.group_instance_id;
    as_member.transactional = true;
    if (std::optional<ErrorCode> e = ctx_.s.groups.validate_txn_offset_commit(as_member)) {
      spdlog::info("transactions: '{}' may not commit offsets of group={} as member={} generation={}: {}", esc(id),
                   esc(group_id), esc(member.member_id), member.generation_id, kafka::error_name(*e));
      refuse = *e;
    }
  }
  if (refuse != ErrorCode::kNone) return ctx_.later(done, std::vector<ErrorCode>(n, refuse));

  std::vector<ErrorCode> errors(n, ErrorCode::kNone);
  std::vector<state::TransactionOffsetRow> rows;
  for (size_t i = 0; i < n; ++i) {
    const TxnOffset& o = offsets[i];
    errors[i] = ctx_.s.offsets.check_entry(o.topic, o.partition, o.metadata);
    if (errors[i] == ErrorCode::kNone)
      rows.push_back({id, group_id, o.topic, o.partition, o.offset, o.leader_epoch, o.metadata.value_or("")});
  }
  if (rows.empty()) return ctx_.later(done, std::move(errors));
  ctx_.write([rows](SQLite::Database& db) { state::upsert_transaction_offsets(db, rows); },
             [this, id, group_id, generation = t->generation, offsets = std::move(offsets),
              errors = std::move(errors), done = std::move(done)](Status st) mutable {
               Txn* t = ctx_.txns.current(id, generation);
               for (size_t i = 0; i < offsets.size(); ++i) {
                 if (errors[i] != ErrorCode::kNone) continue;
                 if (!st || !t) {
                   errors[i] = st ? ErrorCode::kInvalidTxnState : ErrorCode::kCoordinatorNotAvailable;
                   continue;
                 }
                 t->offsets[{group_id, offsets[i].topic, offsets[i].partition}] = offsets[i];
               }
               done(std::move(errors));
             });
}

// ---- EndTxn, Produce ----

void PersistentTransactionCoordinator::end_txn(const std::string& id, ProducerId producer_id, ProducerEpoch epoch,
                                               bool commit, std::function<void(ErrorCode)> done) {
  if (ctx_.stopped) return ctx_.later(done, ErrorCode::kCoordinatorNotAvailable);
  Txn* t = ctx_.txns.find(id);
  if (std::optional<ErrorCode> answer = check_end_txn(t, producer_id, epoch, commit))
    return ctx_.later(done, *answer);
  if (commit)
    committer_.commit(*t, std::move(done));
  else
    committer_.abort(*t, false, std::move(done));
}

void PersistentTransactionCoordinator::end_txn_v2(const std::string& id, ProducerId producer_id, ProducerEpoch epoch,
                                                  bool commit, std::function<void(EndTxnResult)> done) {
  auto answer = [this, done](ErrorCode e, const Txn* t) {
    EndTxnResult r;
    r.error = e;
    if (e == ErrorCode::kNone && t) {
      r.producer_id = ProducerId(t->pid);
      r.producer_epoch = ProducerEpoch(t->epoch);
    }
    ctx_.later(done, r);
  };
  if (ctx_.stopped) return answer(ErrorCode::kCoordinatorNotAvailable, nullptr);
  Txn* t = ctx_.txns.find(id);
  if (std::optional<ErrorCode> now = check_end_txn_v2(t, producer_id, epoch, commit)) return answer(*now, t);
  t->busy = t->ending = true;  // nothing else starts while a new producer id is fetched
  if (!t->epoch_exhausted()) return end_bumping(*t, commit, std::move(done));
  // Kafka's prepareAbortOrCommit with an exhausted epoch: the next transaction gets a new producer
  // id at epoch 0, allocated before the transaction ends.
  ctx_.s.producers.init_producer(std::nullopt, [this, alive = ctx_.alive.token(), id, commit,
                                                done = std::move(done)](Result<ProducerIdAndEpoch> r) mutable {
    if (!alive) return;
    Txn* t = ctx_.txns.find(id);
    if (!t) return done(EndTxnResult{ErrorCode::kCoordinatorNotAvailable});
    if (!r) {
      t->busy = t->ending = false;
      spdlog::warn("transactions: EndTxn of '{}' found no new producer id: {}", esc(id), r.error().message);
      return done(EndTxnResult{ErrorCode::kCoordinatorNotAvailable});
    }
    t->next_pid = r->producer_id();
    end_bumping(*t, commit, std::move(done));
  });
}

void PersistentTransactionCoordinator::end_bumping(Txn& t, bool commit, std::function<void(EndTxnResult)> done) {
  t.busy = t.ending = false;
  t.bump_at_end = true;
  auto answered = [this, id = t.id, done = std::move(done)](ErrorCode e) {
    const Txn* t = ctx_.txns.find(id);
    EndTxnResult r;
    r.error = e;
    if (e == ErrorCode::kNone && t) {
      r.producer_id = ProducerId(t->pid);
      r.producer_epoch = ProducerEpoch(t->epoch);
    }
    done(r);
  };
  if (commit)
    committer_.commit(t, std::move(answered));
  else
    committer_.abort(t, false, std::move(answered));
}

void PersistentTransactionCoordinator::produce(const std::optional<std::string>& transactional_id,
                                               const std::string& topic, PartitionId partition,
                                               std::vector<kafka::DecodedBatch> batches,
                                               std::shared_ptr<const void> input, bool add_partition,
                                               std::function<void(ProduceResult)> done) {
  PendingProduce p{transactional_id, {topic, partition}, std::move(batches), std::move(input), add_partition,
                   std::move(done)};
  if (transactional_id) {
    auto it = adding_.find(AddKey{*transactional_id, p.tp});
    if (it != adding_.end()) return it->second.push_back(std::move(p));  // behind the partition's add
  }
  start_adding(std::move(p), 0);
}

namespace {
// Kafka's add.partitions.to.txn.retry.backoff.ms is 20 ms and its max 100 ms; the bridge's add is
// a write to the state database, which can take longer under load, so it waits up to 1 s.
constexpr std::chrono::milliseconds kAddRetry{20};
constexpr int kMaxAddRetries = 50;
}  // namespace

// Transaction version 2 sends no AddPartitionsToTxn: the first batch for a partition adds it, as
// Kafka's partition leader asks the coordinator to. Only for the transaction's own producer at its
// current epoch: anything else is refused by the buffered produce's checks as it was.
bool PersistentTransactionCoordinator::adds_partition(const PendingProduce& p) const {
  const Txn* t = p.transactional_id ? ctx_.txns.find(*p.transactional_id) : nullptr;
  return p.add_partition && t && !p.batches.empty() && t->pid == p.batches.front().header.producer_id &&
         t->epoch == p.batches.front().header.producer_epoch && !t->partitions.count(p.tp) && !ctx_.stopped;
}

void PersistentTransactionCoordinator::start_adding(PendingProduce p, int attempt) {
  if (!adds_partition(p))
    return buffered_.produce(p.transactional_id, p.tp.topic, p.tp.partition, std::move(p.batches), std::move(p.input),
                             std::move(p.done));
  const AddKey key{*p.transactional_id, p.tp};
  adding_.try_emplace(key);  // later batches of this partition wait behind this one
  const Txn* t = ctx_.txns.find(*p.transactional_id);
  const ProducerId pid(t->pid);
  const ProducerEpoch epoch(t->epoch);
  auto shared = std::make_shared<PendingProduce>(std::move(p));
  add_partitions(key.first, pid, epoch, {key.second},
                 [this, key, shared, attempt](std::vector<ErrorCode> errors) {
                   ErrorCode e = errors.empty() ? ErrorCode::kUnknownServerError : errors.front();
                   if (e == ErrorCode::kConcurrentTransactions && attempt < kMaxAddRetries) {
                     auto timer = std::make_shared<uv::Timer>(ctx_.s.loop, "implicit add retry");
                     timer->start(kAddRetry, [this, alive = ctx_.alive.token(), timer, shared, attempt]() mutable {
                       ctx_.tasks.post([timer] {});  // the timer is released outside its own callback
                       timer.reset();
                       if (!alive) return;
                       start_adding(std::move(*shared), attempt + 1);
                     });
                     return;
                   }
                   // Still another change of the transaction in flight: a retriable answer every
                   // producer knows, where Produce has no CONCURRENT_TRANSACTIONS.
                   if (e == ErrorCode::kConcurrentTransactions) e = ErrorCode::kNotEnoughReplicas;
                   PendingProduce& p = *shared;
                   if (e != ErrorCode::kNone) {
                     ProduceResult r;
                     r.error = e;
                     r.message = std::string("the partition could not be added to the transaction: ") +
                                 kafka::error_name(e);
                     p.done(std::move(r));
                   } else {
                     buffered_.produce(p.transactional_id, p.tp.topic, p.tp.partition, std::move(p.batches),
                                       std::move(p.input), std::move(p.done));
                   }
                   drain_adding(key);
                 });
}

// The partition's add is over: the batches that waited follow in arrival order, until one of them
// has to add the partition again (the add failed) and so waits for its own add.
void PersistentTransactionCoordinator::drain_adding(const AddKey& key) {
  auto it = adding_.find(key);
  if (it == adding_.end()) return;
  while (!it->second.empty()) {
    PendingProduce p = std::move(it->second.front());
    it->second.pop_front();
    if (adds_partition(p)) return start_adding(std::move(p), 0);
    buffered_.produce(p.transactional_id, p.tp.topic, p.tp.partition, std::move(p.batches), std::move(p.input),
                      std::move(p.done));
  }
  adding_.erase(it);
}

ErrorCode PersistentTransactionCoordinator::check_non_transactional(ProducerId producer_id) const {
  return ctx_.txns.by_pid(producer_id()) ? ErrorCode::kInvalidProducerIdMapping : ErrorCode::kNone;
}

// ---- the timeout sweep ----

// Aborts the transactions open past their transaction.timeout.ms (fencing their producer, as
// Kafka does) and forgets the ids idle past [transactions] id_expiration_ms.
void PersistentTransactionCoordinator::sweep() {
  if (ctx_.stopped) return;
  const int64_t at = ctx_.now();
  std::vector<std::string> expired;
  for (const auto& [id, t] : ctx_.txns.all()) {
    if (t->busy) continue;
    if (t->state == TxnState::kOngoing && t->started_ms >= 0 && at - t->started_ms > t->timeout_ms) {
      spdlog::info("transactions: aborting '{}': open for {} ms, past its transaction.timeout.ms {}", esc(id),
                   at - t->started_ms, t->timeout_ms);
      committer_.abort(*t, true, [](ErrorCode) {});
    } else if (t->state != TxnState::kOngoing && t->state != TxnState::kPrepareCommit &&
               at - t->updated_ms > static_cast<int64_t>(ctx_.s.config.id_expiration_ms)) {
      expired.push_back(id);
    }
  }
  for (const std::string& id : expired) {
    spdlog::info("transactions: transactional id '{}' expired ([transactions] id_expiration_ms)", esc(id));
    ctx_.txns.erase(id);
    ctx_.write([id](SQLite::Database& db) { state::delete_transaction(db, id); }, [id](Status st) {
      if (!st) spdlog::warn("transactions: expired id '{}' not deleted: {}", esc(id), st.error().message);
    });
  }
}

// ---- views ----

bool PersistentTransactionCoordinator::has_pending_offset(const std::string& group_id, const std::string& topic,
                                                          int32_t partition) const {
  return ctx_.txns.has_pending_offset(group_id, topic, partition);
}

std::optional<TransactionDescription> PersistentTransactionCoordinator::describe(const std::string& id) const {
  return ctx_.txns.describe(id);
}

std::vector<TransactionListing> PersistentTransactionCoordinator::list() const { return ctx_.txns.list(); }

std::vector<OpenTransactionOnPartition> PersistentTransactionCoordinator::open_on_partition(
    const std::string& topic, PartitionId partition) const {
  return ctx_.txns.open_on_partition(topic, partition);
}

}  // namespace kib::bridge
