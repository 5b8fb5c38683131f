// The transaction coordinator (bridge/transactions/transaction_coordinator_impl.h) on real
// services and a real state store, without Iggy: what needs no record to reach a partition.
// InitProducerId's epochs and fencing, a transaction of offsets only committed and aborted, the
// Produce checks that come before the partition log, the timeout sweep on a hand-driven clock,
// and a restart over the state a crash left (recovery). Records buffered and appended are the
// system tier's (tests/system/test_transactions.py), which runs an iggy-server.
#include <boost/test/unit_test.hpp>

#include <SQLiteCpp/SQLiteCpp.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge/transactions/transaction_coordinator_impl.h"
#include "common/bytes.h"
#include "handler_services_support.h"
#include "kafka/records/record_batch.h"

using namespace kib;
using namespace kib::bridge;
using kib::kafka::ErrorCode;

namespace {

struct Coordinator : test::IdleKafkaServer {
  int64_t clock = 1'000'000'000;
  std::unique_ptr<PersistentTransactionCoordinator> coord;

  Coordinator()
      : IdleKafkaServer([](config::Config& c) { c.transactions.abort_timed_out_interval_ms = 5; }) {
    coord = make();
  }
  ~Coordinator() { close(); }

  std::unique_ptr<PersistentTransactionCoordinator> make() {
    auto c = make_transaction_coordinator(TransactionServices{*store, &loop, idle->producers, idle->log,
                                                              idle->offsets, idle->groups, idle->config.transactions,
                                                              [this] { return clock; }});
    BOOST_REQUIRE(c->load().ok());
    return c;
  }
  void close() {
    if (coord) coord->stop();
    coord.reset();
  }
  // A restart on the same state database.
  void restart() {
    close();
    coord = make();
    bool recovered = false;
    coord->recover([&] { recovered = true; });
    while (!recovered) uv_run(&loop, UV_RUN_ONCE);
  }

  template <typename T, typename Call>
  T wait(Call call) {
    std::optional<T> out;
    call([&out](T v) { out = std::move(v); });
    while (!out) uv_run(&loop, UV_RUN_ONCE);
    return std::move(*out);
  }
  TxnInitResult init(const std::string& id, std::optional<std::pair<ProducerId, ProducerEpoch>> existing = {},
                     int32_t timeout_ms = 60000) {
    return wait<TxnInitResult>([&](auto done) { coord->init_producer(id, timeout_ms, existing, done); });
  }
  ErrorCode add_offsets(const std::string& id, const TxnInitResult& p, const std::string& group) {
    return wait<ErrorCode>(
        [&](auto done) { coord->add_offsets(id, p.producer_id, p.producer_epoch, group, done); });
  }
  std::vector<ErrorCode> commit_offset(const std::string& id, const TxnInitResult& p, const std::string& group,
                                       int64_t offset, bool add_group = false) {
    return wait<std::vector<ErrorCode>>([&](auto done) {
      coord->txn_offset_commit(id, group, p.producer_id, p.producer_epoch, TxnGroupMember{},
                               {TxnOffset{"in", 0, offset, -1, std::nullopt}}, add_group, done);
    });
  }
  ErrorCode end(const std::string& id, const TxnInitResult& p, bool commit) {
    return wait<ErrorCode>([&](auto done) { coord->end_txn(id, p.producer_id, p.producer_epoch, commit, done); });
  }
  EndTxnResult end_v2(const std::string& id, ProducerId pid, ProducerEpoch epoch, bool commit) {
    return wait<EndTxnResult>([&](auto done) { coord->end_txn_v2(id, pid, epoch, commit, done); });
  }
  TxnState state_of(const std::string& id) const { return coord->describe(id).value().state; }
  int64_t committed(const std::string& group) const {
    auto offsets = idle->offsets.fetch_offsets(group, nullptr);
    return offsets.empty() ? -1 : offsets.front().offset;
  }
  void sql(const std::string& statement) {
    SQLite::Database db((dir / "state.db").string(), SQLite::OPEN_READWRITE);
    db.exec(statement);
  }
};

// One transactional batch of one record, decoded as a Produce request's would be.
struct Batch {
  std::shared_ptr<Bytes> wire;
  std::vector<kafka::DecodedBatch> decoded;
};

Batch batch_of(const TxnInitResult& p) {
  kafka::BatchSettings settings;
  settings.transactional = true;
  settings.producer_id = p.producer_id();
  settings.producer_epoch = p.producer_epoch();
  settings.base_sequence = 0;
  const Bytes value{'v'};
  const kafka::RecordToEncode record{0, std::nullopt, ByteSpan(value.data(), value.size()), {}};
  ByteWriter w;
  kafka::encode_record_batch(w, settings, std::span(&record, 1));
  Batch b{std::make_shared<Bytes>(w.take()), {}};
  kafka::DecompressionBudget budget{size_t{1} << 20};
  auto decoded = kafka::decode_record_batches(*b.wire, budget);
  BOOST_REQUIRE(decoded.ok());
  b.decoded = std::move(*decoded);
  return b;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(transaction_coordinator)

BOOST_FIXTURE_TEST_CASE(init_producer_bumps_the_epoch_answers_a_retry_and_fences_an_old_producer, Coordinator) {
  const TxnInitResult first = init("tx");
  BOOST_REQUIRE((first.error == ErrorCode::kNone));
  BOOST_TEST(first.producer_epoch() == 0);
  const TxnInitResult second = init("tx");
  BOOST_TEST(second.producer_id() == first.producer_id());
  BOOST_TEST(second.producer_epoch() == 1);
  // KIP-360: the client retried the InitProducerId that made epoch 1 from epoch 0.
  const TxnInitResult retried = init("tx", std::pair{first.producer_id, first.producer_epoch});
  BOOST_TEST((retried.error == ErrorCode::kNone));
  BOOST_TEST(retried.producer_epoch() == 1);
  BOOST_TEST((init("tx", std::pair{first.producer_id, ProducerEpoch(7)}).error == ErrorCode::kProducerFenced));
  BOOST_TEST((init("tx", std::nullopt, 0).error == ErrorCode::kInvalidTransactionTimeout));
  // The transactional id owns its producer id: no idempotent batch may use it.
  BOOST_TEST((coord->check_non_transactional(first.producer_id) == ErrorCode::kInvalidProducerIdMapping));
  BOOST_TEST((coord->check_non_transactional(ProducerId(first.producer_id() + 100)) == ErrorCode::kNone));
}

BOOST_FIXTURE_TEST_CASE(a_commit_of_offsets_writes_them_into_the_group_and_a_retry_gets_the_same_answer,
                        Coordinator) {
  const TxnInitResult p = init("tx");
  BOOST_TEST((add_offsets("tx", p, "g") == ErrorCode::kNone));
  BOOST_TEST((state_of("tx") == TxnState::kOngoing));
  BOOST_TEST((commit_offset("tx", p, "other-group", 5) == std::vector{ErrorCode::kInvalidTxnState}));
  BOOST_TEST((commit_offset("tx", p, "g", 42) == std::vector{ErrorCode::kNone}));
  BOOST_TEST(coord->has_pending_offset("g", "in", 0));
  BOOST_TEST(committed("g") == -1);

  BOOST_TEST((end("tx", p, true) == ErrorCode::kNone));
  BOOST_TEST((state_of("tx") == TxnState::kCompleteCommit));
  BOOST_TEST(!coord->has_pending_offset("g", "in", 0));
  BOOST_TEST(committed("g") == 42);
  BOOST_TEST((end("tx", p, true) == ErrorCode::kNone));  // the client's retry
  BOOST_TEST((end("tx", p, false) == ErrorCode::kInvalidTxnState));
}

BOOST_FIXTURE_TEST_CASE(an_abort_discards_the_pending_offsets, Coordinator) {
  const TxnInitResult p = init("tx");
  BOOST_TEST((add_offsets("tx", p, "g") == ErrorCode::kNone));
  BOOST_TEST((commit_offset("tx", p, "g", 42) == std::vector{ErrorCode::kNone}));
  BOOST_TEST((end("tx", p, false) == ErrorCode::kNone));
  BOOST_TEST((state_of("tx") == TxnState::kCompleteAbort));
  BOOST_TEST(!coord->has_pending_offset("g", "in", 0));
  BOOST_TEST(committed("g") == -1);
  // A new transaction after it, and InitProducerId over an open one aborts it.
  BOOST_TEST((add_offsets("tx", p, "g") == ErrorCode::kNone));
  const TxnInitResult next = init("tx");
  BOOST_TEST(next.producer_epoch() == p.producer_epoch() + 1);
  BOOST_TEST((state_of("tx") == TxnState::kEmpty));
  BOOST_TEST((add_offsets("tx", p, "g") == ErrorCode::kProducerFenced));
}

BOOST_FIXTURE_TEST_CASE(transactional_produce_is_checked_against_the_transactional_id_it_names, Coordinator) {
  const TxnInitResult mine = init("mine");
  const TxnInitResult theirs = init("theirs");
  auto produce = [&](std::optional<std::string> id, Batch b) {
    return wait<ProduceResult>([&](auto done) {
      coord->produce(id, "t", PartitionId(0), std::move(b.decoded), b.wire, false, done);
    });
  };
  BOOST_TEST((produce(std::nullopt, batch_of(mine)).error == ErrorCode::kInvalidRequest));
  BOOST_TEST((produce("mine", batch_of(theirs)).error == ErrorCode::kInvalidProducerIdMapping));
  TxnInitResult stale = mine;
  stale.producer_epoch = ProducerEpoch(mine.producer_epoch() + 1);
  BOOST_TEST((produce("mine", batch_of(stale)).error == ErrorCode::kInvalidProducerEpoch));
  BOOST_TEST((produce("mine", batch_of(mine)).error == ErrorCode::kInvalidTxnState));  // no AddPartitionsToTxn
  BOOST_TEST((produce("mine", Batch{}).error == ErrorCode::kInvalidRecord));
}

BOOST_FIXTURE_TEST_CASE(a_transaction_past_its_timeout_is_aborted_and_its_producer_fenced, Coordinator) {
  const TxnInitResult p = init("tx", std::nullopt, 1000);
  BOOST_TEST((add_offsets("tx", p, "g") == ErrorCode::kNone));
  clock += 999;
  for (int i = 0; i < 5; ++i) uv_run(&loop, UV_RUN_NOWAIT);
  BOOST_TEST((state_of("tx") == TxnState::kOngoing));
  clock += 2;
  while (state_of("tx") != TxnState::kCompleteAbort) uv_run(&loop, UV_RUN_ONCE);
  BOOST_TEST(coord->describe("tx")->producer_epoch() == p.producer_epoch() + 1);
  BOOST_TEST((end("tx", p, true) == ErrorCode::kProducerFenced));
  // Idle past [transactions] id_expiration_ms, the id is forgotten.
  clock += static_cast<int64_t>(idle->config.transactions.id_expiration_ms) + 1;
  while (coord->describe("tx")) uv_run(&loop, UV_RUN_ONCE);
  BOOST_TEST((coord->check_non_transactional(p.producer_id) == ErrorCode::kNone));
}

BOOST_FIXTURE_TEST_CASE(a_restart_keeps_an_open_transaction_and_completes_an_interrupted_commit_or_abort,
                        Coordinator) {
  const TxnInitResult open = init("open");
  BOOST_TEST((add_offsets("open", open, "g") == ErrorCode::kNone));
  BOOST_TEST((commit_offset("open", open, "g", 7) == std::vector{ErrorCode::kNone}));
  const TxnInitResult committing = init("committing");
  const TxnInitResult aborting = init("aborting");
  BOOST_TEST((add_offsets("aborting", aborting, "g2") == ErrorCode::kNone));
  close();
  // What a crash after the commit's decision, and one in the middle of an abort, leave.
  sql("UPDATE transactions SET state = 'PrepareCommit' WHERE transactional_id = 'committing'");
  sql("UPDATE transactions SET state = 'PrepareAbort' WHERE transactional_id = 'aborting'");

  coord = make();
  BOOST_TEST((add_offsets("aborting", aborting, "g2") == ErrorCode::kConcurrentTransactions));  // until recover()
  restart();
  BOOST_TEST((state_of("open") == TxnState::kOngoing));
  BOOST_TEST(coord->has_pending_offset("g", "in", 0));
  BOOST_TEST((state_of("committing") == TxnState::kCompleteCommit));
  BOOST_TEST((state_of("aborting") == TxnState::kCompleteAbort));
  BOOST_TEST((end("open", open, true) == ErrorCode::kNone));
  BOOST_TEST(committed("g") == 7);
}

// Transaction version 2 (KIP-890): no AddOffsetsToTxn (TxnOffsetCommit v5 adds the group), and
// every EndTxn v5 ends the transaction with the producer's epoch bumped, fencing its last one.
BOOST_FIXTURE_TEST_CASE(transaction_version_2_adds_implicitly_and_bumps_the_epoch_at_every_end, Coordinator) {
  const TxnInitResult p = init("tx");
  BOOST_TEST((commit_offset("tx", p, "g", 5) == std::vector{ErrorCode::kInvalidTxnState}));  // v0-4: no group added
  BOOST_TEST((commit_offset("tx", p, "g", 5, true) == std::vector{ErrorCode::kNone}));
  BOOST_TEST((state_of("tx") == TxnState::kOngoing));
  const EndTxnResult first = end_v2("tx", p.producer_id, p.producer_epoch, true);
  BOOST_TEST((first.error == ErrorCode::kNone));
  BOOST_TEST(first.producer_id() == p.producer_id());
  BOOST_TEST(first.producer_epoch() == p.producer_epoch() + 1);
  BOOST_TEST(committed("g") == 5);
  BOOST_TEST((state_of("tx") == TxnState::kCompleteCommit));
  // The client retries the EndTxn whose answer it lost: the same answer, nothing ends twice.
  const EndTxnResult retry = end_v2("tx", p.producer_id, p.producer_epoch, true);
  BOOST_TEST((retry.error == ErrorCode::kNone));
  BOOST_TEST(retry.producer_epoch() == first.producer_epoch());
  BOOST_TEST((end_v2("tx", p.producer_id, p.producer_epoch, false).error == ErrorCode::kInvalidTxnState));
  // The bumped epoch has no transaction to commit yet (Kafka 4.x: INVALID_TXN_STATE); an abort of
  // the empty transaction ends it with the epoch bumped again, and a retry of that abort gets
  // the same answer. The old epochs are fenced from the next transaction.
  BOOST_TEST((end_v2("tx", p.producer_id, first.producer_epoch, true).error == ErrorCode::kInvalidTxnState));
  const EndTxnResult empty = end_v2("tx", p.producer_id, first.producer_epoch, false);
  BOOST_TEST((empty.error == ErrorCode::kNone));
  BOOST_TEST(empty.producer_epoch() == first.producer_epoch() + 1);
  BOOST_TEST((state_of("tx") == TxnState::kCompleteAbort));
  BOOST_TEST(committed("g") == 5);
  const EndTxnResult empty_retry = end_v2("tx", p.producer_id, first.producer_epoch, false);
  BOOST_TEST((empty_retry.error == ErrorCode::kNone));
  BOOST_TEST(empty_retry.producer_epoch() == empty.producer_epoch());
  TxnInitResult bumped_once = p;
  bumped_once.producer_epoch = first.producer_epoch;
  TxnInitResult next = p;
  next.producer_epoch = empty.producer_epoch;
  BOOST_TEST((commit_offset("tx", bumped_once, "g", 6, true) == std::vector{ErrorCode::kProducerFenced}));
  BOOST_TEST((commit_offset("tx", p, "g", 6, true) == std::vector{ErrorCode::kProducerFenced}));
  BOOST_TEST((commit_offset("tx", next, "g", 6, true) == std::vector{ErrorCode::kNone}));
  const EndTxnResult aborted = end_v2("tx", next.producer_id, next.producer_epoch, false);
  BOOST_TEST((aborted.error == ErrorCode::kNone));
  BOOST_TEST(aborted.producer_epoch() == next.producer_epoch() + 1);
  BOOST_TEST(committed("g") == 5);
  // From Empty (after InitProducerId), an abort ends the empty transaction too; a commit cannot.
  const TxnInitResult q = init("fresh");
  BOOST_TEST((end_v2("fresh", q.producer_id, q.producer_epoch, true).error == ErrorCode::kInvalidTxnState));
  const EndTxnResult fresh = end_v2("fresh", q.producer_id, q.producer_epoch, false);
  BOOST_TEST((fresh.error == ErrorCode::kNone));
  BOOST_TEST(fresh.producer_epoch() == q.producer_epoch() + 1);
  BOOST_TEST((end_v2("fresh", q.producer_id, q.producer_epoch, true).error == ErrorCode::kInvalidTxnState));
  // Transaction version 1's EndTxn on the same id keeps its epoch, as before.
  next.producer_epoch = aborted.producer_epoch;
  BOOST_TEST((add_offsets("tx", next, "g") == ErrorCode::kNone));
  BOOST_TEST((end("tx", next, true) == ErrorCode::kNone));
  BOOST_TEST(coord->describe("tx")->producer_epoch() == next.producer_epoch());
}

BOOST_FIXTURE_TEST_CASE(an_exhausted_epoch_ends_with_a_new_producer_id, Coordinator) {
  const TxnInitResult p = init("tx");
  close();
  sql("UPDATE transactions SET producer_epoch = 32766 WHERE transactional_id = 'tx'");
  restart();
  TxnInitResult old = p;
  old.producer_epoch = ProducerEpoch(32766);
  BOOST_TEST((commit_offset("tx", old, "g", 9, true) == std::vector{ErrorCode::kNone}));
  const EndTxnResult r = end_v2("tx", old.producer_id, old.producer_epoch, true);
  BOOST_TEST((r.error == ErrorCode::kNone));
  BOOST_TEST(r.producer_id() != p.producer_id());
  BOOST_TEST(r.producer_epoch() == 0);
  BOOST_TEST(committed("g") == 9);
  BOOST_TEST((coord->check_non_transactional(r.producer_id) == ErrorCode::kInvalidProducerIdMapping));
  // The retry of that EndTxn, with the old producer id and epoch, gets the new ones again.
  const EndTxnResult retry = end_v2("tx", old.producer_id, old.producer_epoch, true);
  BOOST_TEST((retry.error == ErrorCode::kNone));
  BOOST_TEST(retry.producer_id() == r.producer_id());
}

BOOST_FIXTURE_TEST_CASE(a_stopped_coordinator_answers_coordinator_not_available, Coordinator) {
  const TxnInitResult p = init("tx");
  coord->stop();
  BOOST_TEST((init("tx").error == ErrorCode::kCoordinatorNotAvailable));
  BOOST_TEST((add_offsets("tx", p, "g") == ErrorCode::kCoordinatorNotAvailable));
  BOOST_TEST((end("tx", p, true) == ErrorCode::kCoordinatorNotAvailable));
}

BOOST_AUTO_TEST_SUITE_END()
