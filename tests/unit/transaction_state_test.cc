// The state machine of a transactional id (bridge/transactions/transaction_state.h): Kafka's
// checks of producer id, epoch and state before a transition (TransactionCoordinator.handle*,
// TransactionMetadata), the transitions, and the table of transactional ids with its views.
// Pure: no loop, no SQLite.
#include <boost/test/unit_test.hpp>

#include <memory>

#include "bridge/transactions/transaction_state.h"

using namespace kib;
using namespace kib::bridge;
using kib::kafka::ErrorCode;

BOOST_AUTO_TEST_SUITE(transaction_state)

namespace {

std::unique_ptr<Txn> txn(const std::string& id, int64_t pid, int16_t epoch, TxnState state) {
  auto t = std::make_unique<Txn>();
  t->id = id;
  t->pid = pid;
  t->epoch = epoch;
  t->state = state;
  return t;
}

const TxnTopicPartition kTp{"t", PartitionId(0)};

}  // namespace

BOOST_AUTO_TEST_CASE(a_request_is_checked_for_its_producer_id_then_its_epoch_then_a_transition_in_flight) {
  auto t = txn("tx", 7, 3, TxnState::kOngoing);
  BOOST_TEST((check_producer(nullptr, ProducerId(7), ProducerEpoch(3)) == ErrorCode::kInvalidProducerIdMapping));
  BOOST_TEST((check_producer(t.get(), ProducerId(8), ProducerEpoch(3)) == ErrorCode::kInvalidProducerIdMapping));
  BOOST_TEST((check_producer(t.get(), ProducerId(7), ProducerEpoch(2)) == ErrorCode::kProducerFenced));
  BOOST_TEST((check_producer(t.get(), ProducerId(7), ProducerEpoch(3)) == ErrorCode::kNone));
  t->busy = true;
  BOOST_TEST((check_producer(t.get(), ProducerId(7), ProducerEpoch(3)) == ErrorCode::kConcurrentTransactions));
  BOOST_TEST((check_producer(t.get(), ProducerId(7), ProducerEpoch(2)) == ErrorCode::kProducerFenced));
  t->busy = false;
  t->state = TxnState::kPrepareCommit;
  BOOST_TEST((check_producer(t.get(), ProducerId(7), ProducerEpoch(3)) == ErrorCode::kConcurrentTransactions));
}

BOOST_AUTO_TEST_CASE(end_txn_ends_an_ongoing_transaction_and_answers_a_retry_of_the_one_that_completed) {
  auto t = txn("tx", 7, 3, TxnState::kOngoing);
  const ProducerId pid(7);
  const ProducerEpoch epoch(3);
  BOOST_TEST(!check_end_txn(t.get(), pid, epoch, true).has_value());
  BOOST_TEST(!check_end_txn(t.get(), pid, epoch, false).has_value());
  BOOST_TEST((check_end_txn(nullptr, pid, epoch, true) == ErrorCode::kInvalidProducerIdMapping));
  BOOST_TEST((check_end_txn(t.get(), pid, ProducerEpoch(4), true) == ErrorCode::kProducerFenced));
  t->state = TxnState::kCompleteCommit;
  BOOST_TEST((check_end_txn(t.get(), pid, epoch, true) == ErrorCode::kNone));
  BOOST_TEST((check_end_txn(t.get(), pid, epoch, false) == ErrorCode::kInvalidTxnState));
  t->state = TxnState::kCompleteAbort;
  BOOST_TEST((check_end_txn(t.get(), pid, epoch, false) == ErrorCode::kNone));
  BOOST_TEST((check_end_txn(t.get(), pid, epoch, true) == ErrorCode::kInvalidTxnState));
  t->state = TxnState::kPrepareAbort;
  BOOST_TEST((check_end_txn(t.get(), pid, epoch, true) == ErrorCode::kConcurrentTransactions));
  t->state = TxnState::kEmpty;
  BOOST_TEST((check_end_txn(t.get(), pid, epoch, true) == ErrorCode::kInvalidTxnState));
  t->state = TxnState::kOngoing;
  t->busy = true;
  BOOST_TEST((check_end_txn(t.get(), pid, epoch, true) == ErrorCode::kConcurrentTransactions));
}

BOOST_AUTO_TEST_CASE(txn_offset_commit_needs_the_group_added_to_an_open_transaction) {
  auto t = txn("tx", 7, 3, TxnState::kOngoing);
  const ProducerId pid(7);
  const ProducerEpoch epoch(3);
  BOOST_TEST((check_txn_offset_commit(t.get(), pid, epoch, "g") == ErrorCode::kInvalidTxnState));
  t->groups.insert("g");
  BOOST_TEST((check_txn_offset_commit(t.get(), pid, epoch, "g") == ErrorCode::kNone));
  BOOST_TEST((check_txn_offset_commit(t.get(), ProducerId(8), epoch, "g") == ErrorCode::kInvalidProducerIdMapping));
  BOOST_TEST((check_txn_offset_commit(t.get(), pid, ProducerEpoch(2), "g") == ErrorCode::kProducerFenced));
  t->ending = true;  // EndTxn began: no more offsets
  BOOST_TEST((check_txn_offset_commit(t.get(), pid, epoch, "g") == ErrorCode::kInvalidTxnState));
}

BOOST_AUTO_TEST_CASE(init_producer_bumps_answers_a_retry_again_and_fences_an_older_producer) {
  auto t = txn("tx", 7, 4, TxnState::kCompleteCommit);
  t->last_pid = 7;
  t->last_epoch = 3;
  BOOST_TEST((check_init_producer(*t, std::nullopt) == InitProducerCheck::kBump));
  BOOST_TEST((check_init_producer(*t, std::pair{ProducerId(7), ProducerEpoch(4)}) == InitProducerCheck::kBump));
  BOOST_TEST((check_init_producer(*t, std::pair{ProducerId(7), ProducerEpoch(3)}) == InitProducerCheck::kRetried));
  BOOST_TEST((check_init_producer(*t, std::pair{ProducerId(7), ProducerEpoch(2)}) == InitProducerCheck::kFenced));
  // A transaction begun since: the previous epoch is not a retry any more.
  t->state = TxnState::kOngoing;
  BOOST_TEST((check_init_producer(*t, std::pair{ProducerId(7), ProducerEpoch(3)}) == InitProducerCheck::kFenced));
  t->busy = true;
  BOOST_TEST((check_init_producer(*t, std::nullopt) == InitProducerCheck::kConcurrent));
}

BOOST_AUTO_TEST_CASE(transitions_forget_the_open_transaction_and_late_completions_see_a_new_generation) {
  auto t = txn("tx", 7, 3, TxnState::kCompleteCommit);
  t->partitions[kTp].has_batches = true;
  t->groups.insert("g");
  t->buffered_bytes = 100;
  const uint64_t before = t->generation;
  t->become_ongoing(/*starts=*/true, 1000, 1001);
  BOOST_TEST((t->state == TxnState::kOngoing));
  BOOST_TEST(t->partitions.empty());
  BOOST_TEST(t->groups.empty());
  BOOST_TEST(t->buffered_bytes == 0);
  BOOST_TEST(t->started_ms == 1000);
  BOOST_TEST(t->updated_ms == 1001);
  BOOST_TEST(t->generation == before + 1);
  t->partitions[kTp];
  t->become_ongoing(/*starts=*/false, 2000, 2001);  // a partition added to the same transaction
  BOOST_TEST(t->partitions.size() == 1u);
  BOOST_TEST(t->started_ms == 1000);
  BOOST_TEST(t->open_for_writes());

  t->bump_epoch();
  BOOST_TEST(t->epoch == 4);
  BOOST_TEST(t->last_epoch == 3);
  BOOST_TEST(t->last_pid == 7);
  t->become_empty(3000);
  BOOST_TEST((t->state == TxnState::kEmpty));
  BOOST_TEST(t->started_ms == -1);
  BOOST_TEST(t->partitions.empty());

  state::TransactionRow row = row_of(*t);
  BOOST_TEST(row.state == "Empty");
  row.producer_epoch = 5;
  row.last_epoch = 4;
  row.updated_at_ms = 4000;
  t->complete_abort(row);
  BOOST_TEST((t->state == TxnState::kCompleteAbort));
  BOOST_TEST(t->epoch == 5);
  BOOST_TEST(t->updated_ms == 4000);

  BOOST_TEST(!t->epoch_exhausted());
  t->epoch = kMaxTxnEpoch;
  BOOST_TEST(t->epoch_exhausted());
}

BOOST_AUTO_TEST_CASE(the_table_finds_a_transactional_id_by_its_producer_id_as_long_as_it_owns_it) {
  TxnTable table;
  Txn& a = table.add(txn("a", 7, 0, TxnState::kEmpty));
  table.add(txn("fresh", -1, -1, TxnState::kEmpty));  // InitProducerId still waiting for its id
  BOOST_TEST(table.by_pid(7) == &a);
  BOOST_TEST(table.by_pid(-1) == nullptr);
  table.set_pid(a, 9);  // the epoch was exhausted: a new producer id
  BOOST_TEST(table.by_pid(7) == nullptr);
  BOOST_TEST(table.by_pid(9) == &a);
  BOOST_TEST(table.current("a", a.generation) == &a);
  a.clear_open();
  BOOST_TEST(table.current("a", a.generation - 1) == nullptr);
  table.erase("a");
  BOOST_TEST(table.by_pid(9) == nullptr);
  BOOST_TEST(table.find("a") == nullptr);
  BOOST_TEST(table.size() == 1u);
}

BOOST_AUTO_TEST_CASE(max_open_bounds_the_transactions_begun_not_those_already_open) {
  TxnTable table;
  Txn& open = table.add(txn("open", 1, 0, TxnState::kOngoing));
  Txn& idle = table.add(txn("idle", 2, 0, TxnState::kCompleteCommit));
  BOOST_TEST(table.open_transactions() == 1u);
  BOOST_TEST(table.may_begin(open, 1));
  BOOST_TEST(!table.may_begin(idle, 1));
  BOOST_TEST(table.may_begin(idle, 2));
}

BOOST_AUTO_TEST_CASE(views_show_ids_with_a_producer_and_open_transactions_with_records_on_a_partition) {
  TxnTable table;
  Txn& a = table.add(txn("a", 7, 2, TxnState::kOngoing));
  a.started_ms = 1000;
  a.partitions[kTp].has_batches = true;
  a.partitions[kTp].start_offset = 42;
  a.partitions[{"t", PartitionId(1)}];  // added, nothing buffered yet
  a.offsets[{"g", "in", 0}] = TxnOffset{"in", 0, 5, -1, std::nullopt};
  table.add(txn("done", 8, 0, TxnState::kCompleteCommit)).partitions[kTp].has_batches = true;
  table.add(txn("fresh", -1, -1, TxnState::kEmpty));

  BOOST_TEST(table.list().size() == 2u);
  BOOST_TEST(!table.describe("fresh").has_value());
  const auto d = table.describe("a");
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->partitions.size() == 2u);
  BOOST_TEST(d->start_ms() == 1000);

  const auto open = table.open_on_partition("t", PartitionId(0));
  BOOST_REQUIRE(open.size() == 1u);
  BOOST_TEST(open[0].producer_id() == 7);
  BOOST_TEST(open[0].start_offset() == 42);
  BOOST_TEST(table.open_on_partition("t", PartitionId(1)).empty());

  BOOST_TEST(table.has_pending_offset("g", "in", 0));
  BOOST_TEST(!table.has_pending_offset("g", "in", 1));
}

BOOST_AUTO_TEST_SUITE_END()
