// The transaction coordinator kept in SQLite (docs/transactions.md). Kafka's rules are those of
// its TransactionCoordinator (handleInitProducerId, handleAddPartitionsToTransaction,
// handleEndTransaction) and, for the buffered records, of its log's producer state; what differs
// is where an open transaction's records wait: in transaction_batches, until a commit appends
// them to Iggy.
//
// One transactional id has at most one state change in flight (`busy`): a second request meets
// CONCURRENT_TRANSACTIONS, the retriable answer Kafka gives while a transition is pending.
#include "bridge/transactions/transaction_coordinator_impl.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "bridge/errors.h"
#include "bridge/groups/committed_offsets.h"
#include "bridge/log/appender.h"
#include "bridge/log/partition_log.h"
#include "bridge/producers/idempotence.h"
#include "bridge/producers/producer_registry.h"
#include "common/liveness.h"
#include "common/text.h"
#include "state/group_store.h"
#include "state/state_store.h"
#include "state/transaction_store.h"
#include "uvx/tasks.h"
#include "uvx/timer.h"

namespace kib::bridge {
namespace {

using kafka::ErrorCode;

// Buffered batches are read back for a commit this many bytes at a time.
constexpr int64_t kCommitChunkBytes = 4 << 20;
// A commit whose append failed (Iggy down) is retried after this long, reading Iggy first to
// find what the failed send stored.
constexpr auto kCommitRetry = std::chrono::milliseconds(1000);
// Epochs go up to Short.MAX_VALUE - 1; past it the transactional id gets a new producer id
// (Kafka's TransactionMetadata.prepareIncrementProducerEpoch).
constexpr int16_t kMaxEpoch = 32766;
// A transactional batch decompresses within this, as it did when its Produce request was decoded.
constexpr size_t kReplayBudget = size_t{1} << 30;

struct PartState {
  int64_t start_offset = -1;  // high watermark when its first batch was buffered
  int64_t append_from = -1;   // PrepareCommit: its appends start at or after this offset
  bool has_batches = false;
  bool appended = false;  // this commit's batches of the partition are all in Iggy
  bool held = false;      // holds the partition's last stable offset at append_from
};

using OffsetKey = std::tuple<std::string, std::string, int32_t>;  // group, topic, partition

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
  std::map<TxnTopicPartition, PartState> partitions;
  std::set<std::string> groups;
  std::map<OffsetKey, TxnOffset> offsets;
  int64_t buffered_bytes = 0;
  int64_t next_seq = 1;
  bool busy = false;    // a state change is being written or a commit completed
  bool ending = false;  // EndTxn, an abort or InitProducerId began: no more records
  uint64_t generation = 0;  // bumped when a transaction ends: late completions see it
  std::vector<std::function<void(ErrorCode)>> end_waiters;  // EndTxn answers once the commit completes
};

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

TxnInitResult init_error(ErrorCode code, std::string message) {
  TxnInitResult r;
  r.error = code;
  r.message = std::move(message);
  return r;
}

class Coordinator final : public PersistentTransactionCoordinator {
 public:
  explicit Coordinator(TransactionServices s)
      : s_(std::move(s)), tasks_(s_.loop), sweep_(s_.loop, "transaction timeout sweep") {
    sweep_.unref();
  }
  ~Coordinator() override { alive_.end(); }

  Status load() override;
  void recover(std::function<void()> done) override;
  void stop() override {
    stopped_ = true;
    sweep_.stop();
  }

  void init_producer(const std::string& id, int32_t timeout_ms,
                     std::optional<std::pair<ProducerId, ProducerEpoch>> existing,
                     std::function<void(TxnInitResult)> done) override;
  void add_partitions(const std::string& id, ProducerId producer_id, ProducerEpoch epoch,
                      std::vector<TxnTopicPartition> partitions,
                      std::function<void(std::vector<ErrorCode>)> done) override;
  void add_offsets(const std::string& id, ProducerId producer_id, ProducerEpoch epoch, const std::string& group_id,
                   std::function<void(ErrorCode)> done) override;
  void txn_offset_commit(const std::string& id, const std::string& group_id, ProducerId producer_id,
                         ProducerEpoch epoch, const TxnGroupMember& member, std::vector<TxnOffset> offsets,
                         std::function<void(std::vector<ErrorCode>)> done) override;
  void end_txn(const std::string& id, ProducerId producer_id, ProducerEpoch epoch, bool commit,
               std::function<void(ErrorCode)> done) override;
  void produce(const std::optional<std::string>& transactional_id, const std::string& topic, PartitionId partition,
               std::vector<kafka::DecodedBatch> batches, std::shared_ptr<const void> input,
               std::function<void(ProduceResult)> done) override;
  ErrorCode check_non_transactional(ProducerId producer_id) const override {
    return by_pid(producer_id()) ? ErrorCode::kInvalidProducerIdMapping : ErrorCode::kNone;
  }
  bool has_pending_offset(const std::string& group_id, const std::string& topic, int32_t partition) const override;
  std::optional<TransactionDescription> describe(const std::string& id) const override;
  std::vector<TransactionListing> list() const override;
  std::vector<OpenTransactionOnPartition> open_on_partition(const std::string& topic,
                                                            PartitionId partition) const override;

 private:
  int64_t now() const {
    if (s_.now_ms) return s_.now_ms();
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  Txn* find(const std::string& id) const {
    auto it = txns_.find(id);
    return it == txns_.end() ? nullptr : it->second.get();
  }
  Txn* by_pid(int64_t pid) const {
    auto it = by_pid_.find(pid);
    return it == by_pid_.end() ? nullptr : find(it->second);
  }
  // The Txn still is the one a callback started with.
  Txn* current(const std::string& id, uint64_t generation) const {
    Txn* t = find(id);
    return t && t->generation == generation ? t : nullptr;
  }
  size_t open_transactions() const {
    size_t n = 0;
    for (const auto& [id, t] : txns_) n += t->state == TxnState::kOngoing;
    return n;
  }
  void set_pid(Txn& t, int64_t pid) {
    if (t.pid >= 0) by_pid_.erase(t.pid);
    t.pid = pid;
    if (pid >= 0) by_pid_[pid] = t.id;
  }
  // Kafka's checks before any transition: the producer id, its epoch, a transition in flight.
  ErrorCode check_producer(const Txn* t, ProducerId pid, ProducerEpoch epoch) const {
    if (stopped_) return ErrorCode::kCoordinatorNotAvailable;
    if (!t || t->pid != pid()) return ErrorCode::kInvalidProducerIdMapping;
    if (t->epoch != epoch()) return ErrorCode::kProducerFenced;
    if (t->busy || t->state == TxnState::kPrepareCommit || t->state == TxnState::kPrepareAbort)
      return ErrorCode::kConcurrentTransactions;
    return ErrorCode::kNone;
  }
  template <typename T>
  void later(std::function<void(T)> done, T value) {
    tasks_.post([done = std::move(done), value = std::move(value)]() mutable { done(std::move(value)); });
  }
  void write(std::function<void(SQLite::Database&)> job, std::function<void(Status)> done) {
    s_.store.write(std::move(job), [alive = alive_.token(), done = std::move(done)](Status st) {
      if (alive) done(std::move(st));
    });
  }

  // Starts a transaction if none is open: Ongoing from now. False when max_open are open.
  bool begin(Txn& t) {
    if (t.state == TxnState::kOngoing) return true;
    if (open_transactions() >= s_.config.max_open) return false;
    return true;
  }
  void bump_and_reset(Txn& t, std::function<void(Status)> done);
  void reset_and_persist(Txn& t, std::function<void(Status)> done);
  void issue_new_producer(Txn& t, std::function<void(Status)> done);
  void abort(Txn& t, bool bump_epoch, std::function<void(ErrorCode)> done);
  void commit(Txn& t, std::function<void(ErrorCode)> done);
  void decide_commit(const std::string& id, uint64_t generation);
  void complete_commit(const std::string& id, uint64_t generation, bool scan);
  void append_partition(const std::string& id, uint64_t generation, const TxnTopicPartition& tp, bool scan);
  void append_chunk(const std::string& id, uint64_t generation, const TxnTopicPartition& tp,
                    std::shared_ptr<std::set<int32_t>> present, int64_t after_seq);
  void partition_failed(const std::string& id, uint64_t generation, const TxnTopicPartition& tp, const Error& e);
  void finish_commit(const std::string& id, uint64_t generation);
  void clear_open(Txn& t) {
    t.partitions.clear();
    t.groups.clear();
    t.offsets.clear();
    t.buffered_bytes = 0;
    ++t.generation;  // started_ms stays: DescribeTransactions shows the last transaction's start, as Kafka
  }
  void sweep();
  // The last stable offset holds of a commit go (read_committed readers move on).
  void release_holds(Txn& t) {
    for (auto& [tp, ps] : t.partitions)
      if (ps.held) {
        s_.log.release_stable(tp.topic, tp.partition, KafkaOffset(ps.append_from));
        ps.held = false;
      }
  }
  // The commit is over: the transactional id takes requests again and EndTxn is answered.
  void end_commit(Txn& t, ErrorCode answer) {
    t.busy = t.ending = false;
    auto waiters = std::move(t.end_waiters);
    t.end_waiters.clear();
    for (auto& w : waiters) w(answer);
  }
  // A commit that was not decided: nothing reached Iggy, the transaction stays Ongoing.
  void commit_failed(Txn& t) {
    release_holds(t);
    end_commit(t, ErrorCode::kCoordinatorNotAvailable);
  }

  TransactionServices s_;
  uv::Tasks tasks_;
  uv::Timer sweep_;
  std::map<std::string, std::unique_ptr<Txn>> txns_;
  std::unordered_map<int64_t, std::string> by_pid_;
  bool stopped_ = false;
  Liveness alive_;
};

// ---- startup ----

Status Coordinator::load() {
  state::TransactionSnapshot snap;
  Status st = s_.store.run_blocking([&](SQLite::Database& db) { snap = state::load_transactions(db); });
  if (!st) return st;
  txns_.clear();
  by_pid_.clear();
  for (const auto& r : snap.transactions) {
    auto t = std::make_unique<Txn>();
    t->id = r.transactional_id;
    t->epoch = static_cast<int16_t>(r.producer_epoch);
    t->last_pid = r.last_producer_id;
    t->last_epoch = static_cast<int16_t>(r.last_epoch);
    t->timeout_ms = r.timeout_ms;
    t->state = txn_state_from_name(r.state).value_or(TxnState::kEmpty);
    t->started_ms = r.started_at_ms;
    t->updated_ms = r.updated_at_ms;
    Txn& ref = *t;
    txns_[r.transactional_id] = std::move(t);
    set_pid(ref, r.producer_id);
  }
  for (const auto& p : snap.partitions)
    if (Txn* t = find(p.transactional_id)) {
      PartState& ps = t->partitions[{p.topic, PartitionId(p.partition)}];
      ps.start_offset = p.start_offset;
      ps.append_from = p.append_from;
    }
  for (const auto& [id, group] : snap.groups)
    if (Txn* t = find(id)) t->groups.insert(group);
  for (const auto& o : snap.offsets)
    if (Txn* t = find(o.transactional_id))
      t->offsets[{o.group_id, o.topic, o.partition}] =
          TxnOffset{o.topic, o.partition, o.committed_offset, o.leader_epoch, o.metadata};
  for (const auto& b : snap.batches)
    if (Txn* t = find(b.transactional_id)) {
      t->partitions[{b.topic, PartitionId(b.partition)}].has_batches = true;
      t->buffered_bytes += b.bytes;
      t->next_seq = std::max(t->next_seq, b.seq + 1);
      // A crash between the batch's row and the producer registry's leaves the registry behind
      // the buffer: the client's retry of that batch must still be a duplicate, and its next
      // batch follow it.
      const ProducerId pid(t->pid);
      const ProducerEpoch epoch(t->epoch);
      const SequenceCheck check =
          s_.producers.check(pid, epoch, b.topic, PartitionId(b.partition), b.base_sequence, b.record_count);
      if (check.verdict == SequenceVerdict::kAppend)
        s_.producers.record_append(pid, epoch, b.topic, PartitionId(b.partition), b.base_sequence, b.record_count,
                                   kNoOffset);
    }
  for (auto& [id, t] : txns_) {
    if (t->state == TxnState::kPrepareCommit) {
      // Decided before the crash: read_committed consumers must not see the part of it that
      // reached Iggy until recover() appended the rest.
      t->busy = t->ending = true;
      for (auto& [tp, ps] : t->partitions)
        if (ps.has_batches && ps.append_from >= 0) {
          s_.log.hold_stable_at(tp.topic, tp.partition, KafkaOffset(ps.append_from));
          ps.held = true;
        }
    } else if (t->state == TxnState::kPrepareAbort) {
      t->busy = t->ending = true;  // aborted by recover()
    }
    // Ongoing stays open, as on Kafka, whose coordinator keeps a transaction across a restart:
    // its batches are on disk, its producer carries on (or its timeout aborts it).
  }
  spdlog::info("transactions: loaded {} transactional ids", txns_.size());
  sweep_.start_repeating(std::chrono::milliseconds(s_.config.abort_timed_out_interval_ms), [this] { sweep(); });
  return ok_status();
}

void Coordinator::recover(std::function<void()> done) {
  auto pending = std::make_shared<size_t>(1);
  auto one_done = [pending, done = std::move(done)]() {
    if (--*pending == 0) done();
  };
  for (auto& [id, t] : txns_) {
    if (t->state == TxnState::kPrepareCommit) {
      // Decided before the crash (load() put the holds in place): append what is missing.
      spdlog::info("transactions: completing the commit of transactional id '{}' decided before the restart",
                   esc(id));
      ++*pending;
      t->end_waiters.push_back([one_done](ErrorCode) { one_done(); });
      complete_commit(id, t->generation, true);
    } else if (t->state == TxnState::kPrepareAbort) {
      spdlog::info("transactions: aborting transactional id '{}', aborting when the bridge stopped", esc(id));
      ++*pending;
      abort(*t, false, [one_done](ErrorCode) { one_done(); });
    } else if (t->state == TxnState::kOngoing) {
      spdlog::info("transactions: transactional id '{}' still open after the restart ({} bytes buffered)", esc(id),
                   t->buffered_bytes);
    }
  }
  tasks_.post(one_done);
}

// ---- InitProducerId ----

void Coordinator::init_producer(const std::string& id, int32_t timeout_ms,
                                std::optional<std::pair<ProducerId, ProducerEpoch>> existing,
                                std::function<void(TxnInitResult)> done) {
  if (stopped_) return later(done, init_error(ErrorCode::kCoordinatorNotAvailable, "shutting down"));
  if (timeout_ms <= 0 || static_cast<uint32_t>(timeout_ms) > s_.config.max_timeout_ms)
    return later(done, init_error(ErrorCode::kInvalidTransactionTimeout,
                                  "transaction.timeout.ms " + std::to_string(timeout_ms) +
                                      " is not in 1.." + std::to_string(s_.config.max_timeout_ms) +
                                      " ([transactions] max_timeout_ms)"));
  auto answer = [this, id, done](Status st) {
    Txn* t = find(id);
    if (!st || !t) {
      const std::string why = st ? "transactional id vanished" : st.error().message;
      spdlog::warn("transactions: InitProducerId for '{}' failed: {}", esc(id), esc(why, 512));
      return done(init_error(ErrorCode::kCoordinatorNotAvailable, why));
    }
    TxnInitResult r;
    r.producer_id = ProducerId(t->pid);
    r.producer_epoch = ProducerEpoch(t->epoch);
    done(r);
  };

  Txn* t = find(id);
  if (!t) {
    auto fresh = std::make_unique<Txn>();
    fresh->id = id;
    fresh->timeout_ms = timeout_ms;
    fresh->busy = true;
    Txn& ref = *fresh;
    txns_[id] = std::move(fresh);
    issue_new_producer(ref, [this, id, answer](Status st) {
      if (!st) {
        if (Txn* t = find(id); t && t->pid < 0) txns_.erase(id);
      }
      answer(std::move(st));
    });
    return;
  }
  if (t->busy || t->state == TxnState::kPrepareCommit || t->state == TxnState::kPrepareAbort)
    return later(done, init_error(ErrorCode::kConcurrentTransactions, "a transition of this transactional id is in progress"));
  if (existing) {
    const bool is_current = existing->first() == t->pid && existing->second() == t->epoch;
    const bool is_retry = existing->first() == t->last_pid && existing->second() == t->last_epoch;
    if (is_retry && !is_current && t->state != TxnState::kOngoing) {
      // The client retried an InitProducerId that already bumped its epoch: the same answer.
      TxnInitResult r;
      r.producer_id = ProducerId(t->pid);
      r.producer_epoch = ProducerEpoch(t->epoch);
      return later(done, r);
    }
    if (!is_current)
      return later(done, init_error(ErrorCode::kProducerFenced,
                                    "producer id " + std::to_string(existing->first()) + " epoch " +
                                        std::to_string(existing->second()) + " is not the current one"));
  }
  t->timeout_ms = timeout_ms;
  t->busy = true;
  t->ending = true;
  if (t->state == TxnState::kOngoing)
    spdlog::info("transactions: InitProducerId for '{}' aborts its open transaction", esc(id));
  bump_and_reset(*t, answer);
}

void Coordinator::issue_new_producer(Txn& t, std::function<void(Status)> done) {
  s_.producers.init_producer(std::nullopt, [this, alive = alive_.token(), id = t.id,
                                            done = std::move(done)](Result<ProducerIdAndEpoch> r) {
    if (!alive) return;
    Txn* t = find(id);
    if (!t) return done(Error{ErrorDomain::kInvalid, 0, "transactional id vanished"});
    if (!r) {
      t->busy = t->ending = false;
      return done(r.error());
    }
    t->last_pid = t->pid;
    t->last_epoch = t->epoch;
    set_pid(*t, r->producer_id());
    t->epoch = r->producer_epoch();
    reset_and_persist(*t, std::move(done));
  });
}

// Bumps the epoch (a new producer id when it is exhausted), then reset_and_persist().
void Coordinator::bump_and_reset(Txn& t, std::function<void(Status)> done) {
  if (t.pid < 0 || t.epoch >= kMaxEpoch) return issue_new_producer(t, std::move(done));
  t.last_pid = t.pid;
  t.last_epoch = t.epoch;
  ++t.epoch;
  reset_and_persist(t, std::move(done));
}

// Discards an open transaction and persists the id as Empty.
void Coordinator::reset_and_persist(Txn& t, std::function<void(Status)> done) {
  clear_open(t);
  t.started_ms = -1;
  t.state = TxnState::kEmpty;
  t.updated_ms = now();
  write(
      [row = row_of(t)](SQLite::Database& db) {
        state::clear_transaction(db, row.transactional_id);
        state::save_transaction(db, row);
      },
      [this, id = t.id, done = std::move(done)](Status st) {
        if (Txn* t = find(id)) t->busy = t->ending = false;
        done(std::move(st));
      });
}

// ---- AddPartitionsToTxn, AddOffsetsToTxn ----

void Coordinator::add_partitions(const std::string& id, ProducerId producer_id, ProducerEpoch epoch,
                                 std::vector<TxnTopicPartition> partitions,
                                 std::function<void(std::vector<ErrorCode>)> done) {
  Txn* t = find(id);
  if (ErrorCode e = check_producer(t, producer_id, epoch); e != ErrorCode::kNone)
    return later(done, std::vector<ErrorCode>(partitions.size(), e));
  // Kafka answers an unknown partition with UNKNOWN_TOPIC_OR_PARTITION and every other one with
  // OPERATION_NOT_ATTEMPTED: none is added.
  std::vector<ErrorCode> errors(partitions.size(), ErrorCode::kNone);
  bool refused = false;
  for (size_t i = 0; i < partitions.size(); ++i)
    if (Status st = s_.log.precheck_produce(partitions[i].topic, partitions[i].partition); !st) {
      errors[i] = to_kafka_error(st.error());
      refused = true;
    }
  if (refused) {
    for (auto& e : errors)
      if (e == ErrorCode::kNone) e = ErrorCode::kOperationNotAttempted;
    return later(done, std::move(errors));
  }
  std::vector<TxnTopicPartition> added;
  for (const auto& tp : partitions)
    if (!t->partitions.count(tp) && std::find(added.begin(), added.end(), tp) == added.end()) added.push_back(tp);
  if (added.empty() && t->state == TxnState::kOngoing) return later(done, std::move(errors));
  if (!begin(*t)) {
    spdlog::warn("transactions: '{}' may not begin a transaction: {} are open ([transactions] max_open)", esc(id),
                 s_.config.max_open);
    return later(done, std::vector<ErrorCode>(partitions.size(), ErrorCode::kPolicyViolation));
  }
  const bool starts = t->state != TxnState::kOngoing;
  t->busy = true;
  state::TransactionRow row = row_of(*t);
  row.state = "Ongoing";
  if (starts) row.started_at_ms = now();
  row.updated_at_ms = now();
  write(
      [row, added](SQLite::Database& db) {
        state::save_transaction(db, row);
        for (const auto& tp : added) state::add_transaction_partition(db, {row.transactional_id, tp.topic, tp.partition()});
      },
      [this, id, row, added, starts, n = partitions.size(), done = std::move(done)](Status st) {
        Txn* t = find(id);
        if (!t) return done(std::vector<ErrorCode>(n, ErrorCode::kCoordinatorNotAvailable));
        t->busy = false;
        if (!st) {
          spdlog::warn("transactions: AddPartitionsToTxn for '{}' not stored: {}", esc(id), st.error().message);
          return done(std::vector<ErrorCode>(n, ErrorCode::kCoordinatorNotAvailable));
        }
        if (starts) {
          clear_open(*t);
          t->started_ms = row.started_at_ms;
        }
        t->state = TxnState::kOngoing;
        t->updated_ms = row.updated_at_ms;
        for (const auto& tp : added) t->partitions[tp];
        done(std::vector<ErrorCode>(n, ErrorCode::kNone));
      });
}

void Coordinator::add_offsets(const std::string& id, ProducerId producer_id, ProducerEpoch epoch,
                              const std::string& group_id, std::function<void(ErrorCode)> done) {
  Txn* t = find(id);
  if (ErrorCode e = check_producer(t, producer_id, epoch); e != ErrorCode::kNone) return later(done, e);
  if (t->groups.count(group_id) && t->state == TxnState::kOngoing) return later(done, ErrorCode::kNone);
  if (!begin(*t)) {
    spdlog::warn("transactions: '{}' may not begin a transaction: {} are open ([transactions] max_open)", esc(id),
                 s_.config.max_open);
    return later(done, ErrorCode::kPolicyViolation);
  }
  const bool starts = t->state != TxnState::kOngoing;
  t->busy = true;
  state::TransactionRow row = row_of(*t);
  row.state = "Ongoing";
  if (starts) row.started_at_ms = now();
  row.updated_at_ms = now();
  write(
      [row, group_id](SQLite::Database& db) {
        state::save_transaction(db, row);
        state::add_transaction_group(db, row.transactional_id, group_id);
      },
      [this, id, row, group_id, starts, done = std::move(done)](Status st) {
        Txn* t = find(id);
        if (!t) return done(ErrorCode::kCoordinatorNotAvailable);
        t->busy = false;
        if (!st) return done(ErrorCode::kCoordinatorNotAvailable);
        if (starts) {
          clear_open(*t);
          t->started_ms = row.started_at_ms;
        }
        t->state = TxnState::kOngoing;
        t->updated_ms = row.updated_at_ms;
        t->groups.insert(group_id);
        done(ErrorCode::kNone);
      });
}

// ---- TxnOffsetCommit ----

void Coordinator::txn_offset_commit(const std::string& id, const std::string& group_id, ProducerId producer_id,
                                    ProducerEpoch epoch, const TxnGroupMember& /*member*/,
                                    std::vector<TxnOffset> offsets,
                                    std::function<void(std::vector<ErrorCode>)> done) {
  const size_t n = offsets.size();
  Txn* t = find(id);
  // The group coordinator's checks (Kafka's GroupMetadataManager.storeOffsets for transactional
  // commits): an unknown producer, a fenced epoch, no AddOffsetsToTxn for the group.
  ErrorCode refuse = ErrorCode::kNone;
  if (stopped_)
    refuse = ErrorCode::kCoordinatorNotAvailable;
  else if (!t || t->pid != producer_id())
    refuse = ErrorCode::kInvalidProducerIdMapping;
  else if (t->epoch != epoch())
    refuse = ErrorCode::kProducerFenced;
  else if (t->state != TxnState::kOngoing || t->ending || !t->groups.count(group_id))
    refuse = ErrorCode::kInvalidTxnState;
  if (refuse != ErrorCode::kNone) return later(done, std::vector<ErrorCode>(n, refuse));

  std::vector<ErrorCode> errors(n, ErrorCode::kNone);
  std::vector<state::TransactionOffsetRow> rows;
  for (size_t i = 0; i < n; ++i) {
    const TxnOffset& o = offsets[i];
    errors[i] = s_.offsets.check_entry(o.topic, o.partition, o.metadata);
    if (errors[i] == ErrorCode::kNone)
      rows.push_back({id, group_id, o.topic, o.partition, o.offset, o.leader_epoch, o.metadata.value_or("")});
  }
  if (rows.empty()) return later(done, std::move(errors));
  write([rows](SQLite::Database& db) { state::upsert_transaction_offsets(db, rows); },
        [this, id, group_id, generation = t->generation, offsets = std::move(offsets), errors = std::move(errors),
         done = std::move(done)](Status st) mutable {
          Txn* t = current(id, generation);
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

bool Coordinator::has_pending_offset(const std::string& group_id, const std::string& topic, int32_t partition) const {
  const OffsetKey key{group_id, topic, partition};
  for (const auto& [id, t] : txns_)
    if (t->offsets.count(key)) return true;
  return false;
}

// ---- Produce ----

void Coordinator::produce(const std::optional<std::string>& transactional_id, const std::string& topic,
                          PartitionId partition, std::vector<kafka::DecodedBatch> batches,
                          std::shared_ptr<const void> input, std::function<void(ProduceResult)> done) {
  if (batches.empty()) return later(done, produce_error(ErrorCode::kInvalidRecord, "no record batch"));
  const kafka::RecordBatchHeader h = batches.front().header;
  // The request's transactional id must own the batch's producer id (Kafka's
  // TransactionCoordinator.handleVerifyPartitionsInTransaction): what WRITE on that id was
  // checked for. Without a transactional id the batch claims a transaction nobody named.
  if (!transactional_id || transactional_id->empty())
    return later(done, produce_error(ErrorCode::kInvalidRequest,
                                     "transactional records in a Produce request that names no transactional id"));
  Txn* t = find(*transactional_id);
  if (!t || t->pid != h.producer_id) {
    spdlog::warn("transactions: batch for {}-{} refused: producer id {} is not that of transactional id '{}'", topic,
                 partition(), h.producer_id, esc(*transactional_id, 256));
    return later(done, produce_error(ErrorCode::kInvalidProducerIdMapping,
                                     "producer id " + std::to_string(h.producer_id) +
                                         " is not the one of transactional id '" + escape(*transactional_id, 256) + "'"));
  }
  if (h.producer_epoch != t->epoch)
    return later(done, produce_error(ErrorCode::kInvalidProducerEpoch,
                                     "epoch " + std::to_string(h.producer_epoch) + " of producer " +
                                         std::to_string(h.producer_id) + " is not the current one (" +
                                         std::to_string(t->epoch) + ")"));
  const TxnTopicPartition tp{topic, partition};
  if (t->state != TxnState::kOngoing || t->ending || !t->partitions.count(tp))
    return later(done, produce_error(ErrorCode::kInvalidTxnState, topic + "-" + std::to_string(partition()) +
                                                                      " was not added to the transaction of '" +
                                                                      t->id + "' (AddPartitionsToTxn)"));
  const int64_t bytes = static_cast<int64_t>(batches.front().wire.size());
  if (t->buffered_bytes + bytes > static_cast<int64_t>(s_.config.max_buffered_bytes)) {
    std::string why = "the transaction of '" + t->id + "' would buffer " +
                      std::to_string(t->buffered_bytes + bytes) + " bytes, above [transactions] max_buffered_bytes (" +
                      std::to_string(s_.config.max_buffered_bytes) + ")";
    spdlog::warn("transactions: batch for {}-{} refused: {}", topic, partition(), esc(why, 512));
    return later(done, produce_error(ErrorCode::kPolicyViolation, std::move(why)));
  }
  t->buffered_bytes += bytes;
  auto wire = std::make_shared<Bytes>(batches.front().wire.begin(), batches.front().wire.end());
  const std::string id = t->id;
  const uint64_t generation = t->generation;
  auto shared_batches = std::make_shared<std::vector<kafka::DecodedBatch>>(std::move(batches));
  s_.log.check_transactional(
      topic, partition, *shared_batches,
      [this, alive = alive_.token(), id, generation, tp, h, bytes, wire, shared_batches, input,
       done = std::move(done)](Status checked) {
        if (!alive) return;
        Txn* t = current(id, generation);
        if (!t || t->ending || t->state != TxnState::kOngoing)
          return done(produce_error(ErrorCode::kInvalidTxnState, "the transaction of '" + id + "' ended"));
        if (!checked) {
          t->buffered_bytes -= bytes;
          return done(produce_error(checked.error()));
        }
        const IdempotenceVerdict v = verdict_for(
            s_.producers.check(ProducerId(h.producer_id), ProducerEpoch(h.producer_epoch), tp.topic, tp.partition,
                               h.base_sequence, h.record_count),
            h);
        if (v.kind != IdempotenceVerdict::Kind::kAppend) {
          t->buffered_bytes -= bytes;
          if (v.kind == IdempotenceVerdict::Kind::kDuplicate) return done(ProduceResult{});
          return done(produce_error(v.error, v.message));
        }
        PartState& ps = t->partitions[tp];
        std::optional<int64_t> start;
        if (!ps.has_batches) {
          ps.has_batches = true;
          ps.start_offset = s_.log.high_watermark(tp.topic, tp.partition).value_or(kNoOffset)();
          start = ps.start_offset;
        }
        const int64_t seq = t->next_seq++;
        write(
            [id, seq, tp, h, wire, start](SQLite::Database& db) {
              state::insert_transaction_batch(db, id, seq, tp.topic, tp.partition(), h.base_sequence, h.record_count,
                                              *wire);
              if (start) state::set_partition_start_offset(db, id, tp.topic, tp.partition(), *start);
            },
            [this, id, generation, tp, h, bytes, done](Status st) {
              const ProducerId pid(h.producer_id);
              if (!st) {
                s_.producers.abort_append(pid, tp.topic, tp.partition, h.base_sequence);
                if (Txn* t = current(id, generation)) t->buffered_bytes -= bytes;
                spdlog::warn("transactions: batch of '{}' for {}-{} not buffered: {}", esc(id), tp.topic,
                             tp.partition(), st.error().message);
                return done(produce_error(ErrorCode::kKafkaStorageError, st.error().message));
              }
              // Recorded as Kafka's log records every batch of a transaction, committed or not:
              // a retry is a duplicate and the next batch follows this one's sequence.
              s_.producers.record_append(pid, ProducerEpoch(h.producer_epoch), tp.topic, tp.partition,
                                         h.base_sequence, h.record_count, kNoOffset);
              done(ProduceResult{});
            });
      });
}

// ---- EndTxn ----

void Coordinator::end_txn(const std::string& id, ProducerId producer_id, ProducerEpoch epoch, bool commit_it,
                          std::function<void(ErrorCode)> done) {
  Txn* t = find(id);
  if (stopped_) return later(done, ErrorCode::kCoordinatorNotAvailable);
  if (!t || t->pid != producer_id()) return later(done, ErrorCode::kInvalidProducerIdMapping);
  if (t->epoch != epoch()) return later(done, ErrorCode::kProducerFenced);
  if (t->busy) return later(done, ErrorCode::kConcurrentTransactions);
  switch (t->state) {
    case TxnState::kOngoing:
      break;
    case TxnState::kCompleteCommit:  // a retry of the EndTxn that completed it
      return later(done, commit_it ? ErrorCode::kNone : ErrorCode::kInvalidTxnState);
    case TxnState::kCompleteAbort:
      return later(done, commit_it ? ErrorCode::kInvalidTxnState : ErrorCode::kNone);
    case TxnState::kPrepareCommit:
    case TxnState::kPrepareAbort:
      return later(done, ErrorCode::kConcurrentTransactions);
    default:
      return later(done, ErrorCode::kInvalidTxnState);
  }
  if (commit_it)
    commit(*t, std::move(done));
  else
    abort(*t, false, std::move(done));
}

void Coordinator::abort(Txn& t, bool bump_epoch, std::function<void(ErrorCode)> done) {
  t.busy = t.ending = true;
  state::TransactionRow row = row_of(t);
  row.state = "CompleteAbort";
  row.updated_at_ms = now();
  if (bump_epoch && t.epoch < kMaxEpoch) {
    // Kafka fences the producer of a transaction its coordinator aborts on its own.
    row.last_producer_id = t.pid;
    row.last_epoch = t.epoch;
    row.producer_epoch = t.epoch + 1;
  }
  write(
      [row](SQLite::Database& db) {
        state::clear_transaction(db, row.transactional_id);
        state::save_transaction(db, row);
      },
      [this, row, done = std::move(done)](Status st) {
        Txn* t = find(row.transactional_id);
        if (!t) return done(ErrorCode::kCoordinatorNotAvailable);
        t->busy = t->ending = false;
        if (!st) {
          spdlog::warn("transactions: abort of '{}' not stored: {}", esc(row.transactional_id), st.error().message);
          return done(ErrorCode::kCoordinatorNotAvailable);
        }
        clear_open(*t);
        t->state = TxnState::kCompleteAbort;
        t->epoch = static_cast<int16_t>(row.producer_epoch);
        t->last_pid = row.last_producer_id;
        t->last_epoch = static_cast<int16_t>(row.last_epoch);
        t->updated_ms = row.updated_at_ms;
        done(ErrorCode::kNone);
      });
}

void Coordinator::commit(Txn& t, std::function<void(ErrorCode)> done) {
  t.busy = t.ending = true;
  t.end_waiters.push_back(std::move(done));
  // 1. Hold the last stable offset of every partition with records at its high watermark: the
  //    appends land at or above it, and read_committed consumers must see them all or none.
  std::vector<TxnTopicPartition> parts;
  for (const auto& [tp, ps] : t.partitions)
    if (ps.has_batches) parts.push_back(tp);
  auto pending = std::make_shared<size_t>(parts.size() + 1);
  auto failed = std::make_shared<std::optional<Error>>();
  auto next = [this, id = t.id, generation = t.generation, pending, failed]() {
    if (--*pending > 0) return;
    Txn* t = current(id, generation);
    if (!t) return;
    if (*failed) {
      spdlog::warn("transactions: commit of '{}' not started: {}", esc(id), (*failed)->message);
      return commit_failed(*t);
    }
    decide_commit(id, generation);
  };
  for (const auto& tp : parts)
    s_.log.hold_stable(tp.topic, tp.partition,
                       [this, alive = alive_.token(), id = t.id, generation = t.generation, tp, failed,
                        next](Result<KafkaOffset> held) {
                         if (!alive) return;
                         Txn* t = current(id, generation);
                         if (!held) {
                           if (!*failed) *failed = held.error();
                         } else if (t) {
                           PartState& ps = t->partitions[tp];
                           ps.append_from = (*held)();
                           ps.held = true;
                         } else {
                           s_.log.release_stable(tp.topic, tp.partition, *held);
                         }
                         next();
                       });
  tasks_.post(next);
}

// 2. One SQLite transaction decides: PrepareCommit, where each partition's appends start, and the
//    pending offsets written into committed_offsets.
void Coordinator::decide_commit(const std::string& id, uint64_t generation) {
  Txn* t = current(id, generation);
  if (!t) return;
  state::TransactionRow row = row_of(*t);
  row.state = "PrepareCommit";
  row.updated_at_ms = now();
  std::vector<std::pair<TxnTopicPartition, int64_t>> starts;
  for (const auto& [tp, ps] : t->partitions)
    if (ps.has_batches) starts.emplace_back(tp, ps.append_from);
  const int64_t commit_time = s_.offsets.now_ms();
  std::map<std::string, std::vector<OffsetCommitEntry>> by_group;
  std::vector<state::CommittedOffsetRow> offset_rows;
  for (const auto& [key, o] : t->offsets) {
    const std::string& group = std::get<0>(key);
    by_group[group].push_back({o.topic, o.partition, o.offset, o.leader_epoch, o.metadata});
    offset_rows.push_back(
        {group, o.topic, o.partition, o.offset, o.leader_epoch, o.metadata.value_or(""), commit_time, std::nullopt});
  }
  write(
      [row, starts, offset_rows, commit_time](SQLite::Database& db) {
        state::save_transaction(db, row);
        for (const auto& [tp, from] : starts)
          state::set_partition_append_from(db, row.transactional_id, tp.topic, tp.partition(), from);
        std::set<std::string> groups;
        for (const auto& r : offset_rows)
          if (groups.insert(r.group_id).second) state::ensure_group_row(db, r.group_id, commit_time);
        state::upsert_committed_offsets(db, offset_rows);
        state::delete_transaction_offsets(db, row.transactional_id);
      },
      [this, id, generation, row, by_group = std::move(by_group), commit_time](Status st) {
        Txn* t = current(id, generation);
        if (!t) return;
        if (!st) {
          spdlog::warn("transactions: commit of '{}' not decided: {}", esc(id), st.error().message);
          return commit_failed(*t);
        }
        t->state = TxnState::kPrepareCommit;
        t->updated_ms = row.updated_at_ms;
        for (const auto& [group, entries] : by_group) s_.offsets.adopt(group, entries, commit_time);
        t->offsets.clear();
        complete_commit(id, generation, false);
      });
}

// 3. Appends every partition's batches; `scan`: read Iggy first for those already there.
void Coordinator::complete_commit(const std::string& id, uint64_t generation, bool scan) {
  Txn* t = current(id, generation);
  if (!t) return;
  bool all = true;
  for (const auto& [tp, ps] : t->partitions)
    if (ps.has_batches && !ps.appended) {
      all = false;
      append_partition(id, generation, tp, scan);
    }
  if (all) finish_commit(id, generation);
}

void Coordinator::append_partition(const std::string& id, uint64_t generation, const TxnTopicPartition& tp,
                                   bool scan) {
  Txn* t = current(id, generation);
  if (!t) return;
  const PartState& ps = t->partitions[tp];
  if (!scan || ps.append_from < 0)
    return append_chunk(id, generation, tp, std::make_shared<std::set<int32_t>>(), 0);
  s_.log.producer_batches_since(
      tp.topic, tp.partition, KafkaOffset(ps.append_from), ProducerId(t->pid), ProducerEpoch(t->epoch),
      [this, alive = alive_.token(), id, generation, tp](Result<std::vector<int32_t>> found) {
        if (!alive) return;
        if (!found) return partition_failed(id, generation, tp, found.error());
        append_chunk(id, generation, tp, std::make_shared<std::set<int32_t>>(found->begin(), found->end()), 0);
      });
}

void Coordinator::append_chunk(const std::string& id, uint64_t generation, const TxnTopicPartition& tp,
                               std::shared_ptr<std::set<int32_t>> present, int64_t after_seq) {
  auto rows = std::make_shared<std::vector<state::TransactionBatchRow>>();
  write(
      [rows, id, tp, after_seq](SQLite::Database& db) {
        *rows = state::load_transaction_batches(db, id, tp.topic, tp.partition(), after_seq, kCommitChunkBytes);
      },
      [this, id, generation, tp, present, rows](Status st) {
        Txn* t = current(id, generation);
        if (!t) return;
        if (!st) return partition_failed(id, generation, tp, st.error());
        if (rows->empty()) {
          t->partitions[tp].appended = true;
          bool all = true;
          for (const auto& [p, ps] : t->partitions) all = all && (!ps.has_batches || ps.appended);
          if (all) finish_commit(id, generation);
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
          s_.log.append_committed(tp.topic, tp.partition, std::move(*decoded), bytes,
                                  [failure, one_done](ProduceResult r) {
                                    if (r.error != ErrorCode::kNone && !*failure)
                                      *failure = kafka_error(r.error, r.message);
                                    one_done();
                                  });
        }
        one_done();
      });
}

void Coordinator::partition_failed(const std::string& id, uint64_t generation, const TxnTopicPartition& tp,
                                   const Error& e) {
  spdlog::warn("transactions: appending the commit of '{}' to {}-{} failed ({}); retrying in {} ms", esc(id),
               tp.topic, tp.partition(), e.message, kCommitRetry.count());
  auto timer = std::make_shared<uv::Timer>(s_.loop, "transaction commit retry");
  timer->start(kCommitRetry, [this, alive = alive_.token(), id, generation, tp, timer]() mutable {
    if (!alive) return;
    tasks_.post([timer] {});  // the timer is released outside its own callback
    timer.reset();
    if (stopped_) return;
    spdlog::debug("transactions: retrying the commit of '{}' on {}-{}", esc(id), tp.topic, tp.partition());
    append_partition(id, generation, tp, true);
  });
}

// 4. Every partition is appended: the holds go (read_committed consumers see the whole
//    transaction at once), the buffered batches are deleted, the state is CompleteCommit.
void Coordinator::finish_commit(const std::string& id, uint64_t generation) {
  Txn* t = current(id, generation);
  if (!t) return;
  release_holds(*t);
  state::TransactionRow row = row_of(*t);
  row.state = "CompleteCommit";
  row.updated_at_ms = now();
  clear_open(*t);
  t->state = TxnState::kCompleteCommit;
  t->updated_ms = row.updated_at_ms;
  write(
      [row](SQLite::Database& db) {
        state::clear_transaction(db, row.transactional_id);
        state::save_transaction(db, row);
      },
      [this, id](Status st) {
        Txn* t = find(id);
        // Not stored: the row still says PrepareCommit, and a restart reads Iggy, finds every
        // batch there and appends nothing. The commit is complete either way.
        if (!st) spdlog::warn("transactions: completion of '{}' not stored: {}", esc(id), st.error().message);
        if (t) end_commit(*t, ErrorCode::kNone);
      });
}

// ---- timers ----

void Coordinator::sweep() {
  if (stopped_) return;
  const int64_t at = now();
  std::vector<std::string> expired;
  for (auto& [id, t] : txns_) {
    if (t->busy) continue;
    if (t->state == TxnState::kOngoing && t->started_ms >= 0 && at - t->started_ms > t->timeout_ms) {
      spdlog::info("transactions: aborting '{}': open for {} ms, past its transaction.timeout.ms {}", esc(id),
                   at - t->started_ms, t->timeout_ms);
      abort(*t, true, [](ErrorCode) {});
    } else if (t->state != TxnState::kOngoing && t->state != TxnState::kPrepareCommit &&
               at - t->updated_ms > static_cast<int64_t>(s_.config.id_expiration_ms)) {
      expired.push_back(id);
    }
  }
  for (const std::string& id : expired) {
    spdlog::info("transactions: transactional id '{}' expired ([transactions] id_expiration_ms)", esc(id));
    if (Txn* t = find(id)) by_pid_.erase(t->pid);
    txns_.erase(id);
    write([id](SQLite::Database& db) { state::delete_transaction(db, id); }, [id](Status st) {
      if (!st) spdlog::warn("transactions: expired id '{}' not deleted: {}", esc(id), st.error().message);
    });
  }
}

// ---- views ----

std::optional<TransactionDescription> Coordinator::describe(const std::string& id) const {
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

std::vector<TransactionListing> Coordinator::list() const {
  std::vector<TransactionListing> out;
  for (const auto& [id, t] : txns_)
    if (t->pid >= 0) out.push_back({id, ProducerId(t->pid), t->state, TimestampMs(t->started_ms)});
  return out;
}

std::vector<OpenTransactionOnPartition> Coordinator::open_on_partition(const std::string& topic,
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

}  // namespace

std::unique_ptr<PersistentTransactionCoordinator> make_transaction_coordinator(TransactionServices services) {
  return std::make_unique<Coordinator>(std::move(services));
}

}  // namespace kib::bridge
