// The transaction coordinator kept in SQLite (transaction_coordinator.h has the contract,
// docs/transactions.md the design, "Where the code is" its files). This class routes: it checks
// each request against the state machine (transaction_state.h), writes the transition to SQLite
// and applies it, keeps the producer id and epoch of each transactional id (InitProducerId), and
// runs the timer that aborts timed-out transactions and forgets idle ids; a transactional
// Produce goes to BufferedProduce, the end of a transaction to TransactionCommitter, the start
// to TransactionRecovery.
//
// One transactional id has at most one state change in flight (`busy`): a second request meets
// CONCURRENT_TRANSACTIONS, the retriable answer Kafka gives while a transition is pending.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge/transactions/buffered_produce.h"
#include "bridge/transactions/transaction_committer.h"
#include "bridge/transactions/transaction_context.h"
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/transactions/transaction_recovery.h"
#include "uvx/timer.h"

namespace kib::bridge {

class PersistentTransactionCoordinator final : public TransactionCoordinator {
 public:
  explicit PersistentTransactionCoordinator(TransactionServices services);
  ~PersistentTransactionCoordinator() override;
  PersistentTransactionCoordinator(const PersistentTransactionCoordinator&) = delete;
  PersistentTransactionCoordinator& operator=(const PersistentTransactionCoordinator&) = delete;

  // Loads the transactional ids and their state (blocking: startup only). A commit decided
  // before a crash holds its partitions' last stable offsets from here on, and it and every
  // transaction open at the crash wait for recover() (their requests meet
  // CONCURRENT_TRANSACTIONS, which clients retry).
  Status load();
  // Once Iggy is reachable: completes what a crash interrupted. Commits decided before it are
  // appended (without duplicates), transactions open at the crash are aborted. `done` runs once
  // every one is.
  void recover(std::function<void()> done);
  // Stops the timers; later requests get COORDINATOR_NOT_AVAILABLE (shutdown).
  void stop();

  void init_producer(const std::string& id, int32_t timeout_ms,
                     std::optional<std::pair<ProducerId, ProducerEpoch>> existing,
                     std::function<void(TxnInitResult)> done) override;
  void add_partitions(const std::string& id, ProducerId producer_id, ProducerEpoch epoch,
                      std::vector<TxnTopicPartition> partitions,
                      std::function<void(std::vector<kafka::ErrorCode>)> done) override;
  void add_offsets(const std::string& id, ProducerId producer_id, ProducerEpoch epoch, const std::string& group_id,
                   std::function<void(kafka::ErrorCode)> done) override;
  void txn_offset_commit(const std::string& id, const std::string& group_id, ProducerId producer_id,
                         ProducerEpoch epoch, const TxnGroupMember& member, std::vector<TxnOffset> offsets,
                         bool add_group, std::function<void(std::vector<kafka::ErrorCode>)> done) override;
  void end_txn(const std::string& id, ProducerId producer_id, ProducerEpoch epoch, bool commit,
               std::function<void(kafka::ErrorCode)> done) override;
  void end_txn_v2(const std::string& id, ProducerId producer_id, ProducerEpoch epoch, bool commit,
                  std::function<void(EndTxnResult)> done) override;
  void produce(const std::optional<std::string>& transactional_id, const std::string& topic, PartitionId partition,
               std::vector<kafka::DecodedBatch> batches, std::shared_ptr<const void> input, bool add_partition,
               std::function<void(ProduceResult)> done) override;
  kafka::ErrorCode check_non_transactional(ProducerId producer_id) const override;
  bool has_pending_offset(const std::string& group_id, const std::string& topic, int32_t partition) const override;
  std::optional<TransactionDescription> describe(const std::string& id) const override;
  std::vector<TransactionListing> list() const override;
  std::vector<OpenTransactionOnPartition> open_on_partition(const std::string& topic,
                                                            PartitionId partition) const override;

 private:
  // TxnOffsetCommit once the group is in the transaction.
  void commit_txn_offsets(const std::string& id, const std::string& group_id, ProducerId producer_id,
                          ProducerEpoch epoch, const TxnGroupMember& member, std::vector<TxnOffset> offsets,
                          std::function<void(std::vector<kafka::ErrorCode>)> done);
  // A transactional Produce of one partition, kept while the partition is being added.
  struct PendingProduce {
    std::optional<std::string> transactional_id;
    TxnTopicPartition tp;
    std::vector<kafka::DecodedBatch> batches;
    std::shared_ptr<const void> input;
    bool add_partition = false;
    std::function<void(ProduceResult)> done;
  };
  using AddKey = std::pair<std::string, TxnTopicPartition>;
  // Whether the batch adds its partition to the transaction (Produce v12, transaction version 2).
  bool adds_partition(const PendingProduce& p) const;
  // Produce v12's implicit add of a partition; another change of the same transaction being
  // written (the add of its other partitions, sent in the same moment) is waited out, as Kafka's
  // partition leader retries CONCURRENT_TRANSACTIONS (add.partitions.to.txn.retry.backoff.ms).
  // While a partition's add is in flight, later batches of that transaction to that partition
  // wait behind it in `adding_` and follow in arrival order: a batch that overtook the one
  // adding the partition would reach the sequence check first (OUT_OF_ORDER_SEQUENCE_NUMBER).
  void start_adding(PendingProduce p, int attempt);
  void drain_adding(const AddKey& key);
  // EndTxn v5 once a new producer id is at hand when the epoch is exhausted.
  void end_bumping(Txn& t, bool commit, std::function<void(EndTxnResult)> done);
  // InitProducerId: the producer id and epoch of a transactional id.
  void issue_new_producer(Txn& t, std::function<void(Status)> done);
  void bump_and_reset(Txn& t, std::function<void(Status)> done);
  void reset_and_persist(Txn& t, std::function<void(Status)> done);
  // AddPartitionsToTxn, AddOffsetsToTxn: the row that makes `t` Ongoing (started now if it was
  // not), or nullopt when [transactions] max_open transactions are open already.
  std::optional<state::TransactionRow> ongoing_row(const Txn& t) const;
  void sweep();

  std::map<AddKey, std::deque<PendingProduce>> adding_;
  TxnContext ctx_;
  TransactionCommitter committer_;
  BufferedProduce buffered_;
  TransactionRecovery recovery_;
  uv::Timer sweep_;
};

std::unique_ptr<PersistentTransactionCoordinator> make_transaction_coordinator(TransactionServices services);

}  // namespace kib::bridge
