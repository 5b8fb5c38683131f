// The transaction coordinator (Kafka's TransactionCoordinator, docs/transactions.md): transactional
// ids, their producer id and epoch, the state machine, the partitions and groups a transaction
// touched, its held records and pending offsets. Everything is kept in SQLite
// (migrations/0006_transactions.sql, 0009_held_batches.sql); records of an open transaction wait
// there with the offsets they were given at produce time (the held tail) and reach Iggy in offset
// order once decided, an aborted one as a placeholder keeping its offset, so Iggy never holds
// uncommitted records and native readers never see aborted ones.
//
// Loop thread only. Callbacks never run inside the call that was given them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bridge/log/log_types.h"
#include "common/ids.h"
#include "common/result.h"
#include "kafka/protocol/error_code.h"
#include "kafka/records/record_batch.h"

namespace kib::bridge {

// Kafka's TransactionState, by the names DescribeTransactions and ListTransactions report.
enum class TxnState : int8_t { kEmpty, kOngoing, kPrepareCommit, kPrepareAbort, kCompleteCommit, kCompleteAbort, kDead };
std::string_view txn_state_name(TxnState s);
// nullopt for a name Kafka does not have (ListTransactions' state filter).
std::optional<TxnState> txn_state_from_name(std::string_view name);

struct TxnTopicPartition {
  std::string topic;
  PartitionId partition;
  auto operator<=>(const TxnTopicPartition&) const = default;
};

// DescribeTransactions.
struct TransactionDescription {
  std::string transactional_id;
  TxnState state = TxnState::kEmpty;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  int32_t timeout_ms = 0;
  TimestampMs start_ms = kNoTimestamp;         // -1 when no transaction is open
  std::vector<TxnTopicPartition> partitions;  // by topic, partition
};

// ListTransactions.
struct TransactionListing {
  std::string transactional_id;
  ProducerId producer_id = kNoProducerId;
  TxnState state = TxnState::kEmpty;
  TimestampMs start_ms = kNoTimestamp;  // for ListTransactions v1's duration filter; -1 when none open
};

// An open transaction's producer on one partition (DescribeProducers' current_txn_start_offset):
// the partition's high watermark when the transaction first buffered records for it, the offset
// its records would have had if they had been appended then.
struct OpenTransactionOnPartition {
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  KafkaOffset start_offset = kNoOffset;
};

struct TxnInitResult {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  std::string message;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
};

struct TxnOffset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int32_t leader_epoch = -1;
  std::optional<std::string> metadata;
};

// TxnOffsetCommit v3+'s group membership fields (-1/"" when the client sent none).
struct TxnGroupMember {
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
};

// EndTxn v5's answer (transaction version 2): the producer id and epoch the next transaction uses.
struct EndTxnResult {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  ProducerId producer_id{-1};
  ProducerEpoch producer_epoch{-1};
};

class TransactionCoordinator {
 public:
  virtual ~TransactionCoordinator() = default;

  // InitProducerId with a transactional id: a new producer id (epoch 0) the first time, else the
  // epoch bumped (fencing the previous incarnation; an open transaction is aborted first).
  // `existing` (KIP-360, v3+) is the producer id and epoch the client had.
  virtual void init_producer(const std::string& transactional_id, int32_t timeout_ms,
                             std::optional<std::pair<ProducerId, ProducerEpoch>> existing,
                             std::function<void(TxnInitResult)> done) = 0;

  // AddPartitionsToTxn v0-3: one error per partition, in order.
  virtual void add_partitions(const std::string& transactional_id, ProducerId producer_id, ProducerEpoch epoch,
                              std::vector<TxnTopicPartition> partitions,
                              std::function<void(std::vector<kafka::ErrorCode>)> done) = 0;
  // AddOffsetsToTxn.
  virtual void add_offsets(const std::string& transactional_id, ProducerId producer_id, ProducerEpoch epoch,
                           const std::string& group_id, std::function<void(kafka::ErrorCode)> done) = 0;
  // TxnOffsetCommit: offsets pending until the transaction ends; one error per entry.
  // `add_group` (v5+, transaction version 2): a group the transaction does not have yet is added
  // first, as AddOffsetsToTxn would.
  virtual void txn_offset_commit(const std::string& transactional_id, const std::string& group_id,
                                 ProducerId producer_id, ProducerEpoch epoch, const TxnGroupMember& member,
                                 std::vector<TxnOffset> offsets, bool add_group,
                                 std::function<void(std::vector<kafka::ErrorCode>)> done) = 0;
  // EndTxn: commit (records appended to Iggy, pending offsets committed) or abort (discarded).
  virtual void end_txn(const std::string& transactional_id, ProducerId producer_id, ProducerEpoch epoch, bool commit,
                       std::function<void(kafka::ErrorCode)> done) = 0;
  // EndTxn v5 (transaction version 2, KIP-890): as end_txn, and the transaction ends with the
  // producer's epoch bumped (a new producer id at epoch 0 once the epoch is exhausted), which the
  // answer carries: the producer's next transaction is fenced from its last one. A retry of the
  // EndTxn that ended the last transaction, with the producer id and epoch it had, gets the same
  // answer again.
  virtual void end_txn_v2(const std::string& transactional_id, ProducerId producer_id, ProducerEpoch epoch,
                          bool commit, std::function<void(EndTxnResult)> done) = 0;

  // Produce of a transactional batch (attributes bit 4): held in SQLite with the partition's next
  // offsets, answered with that base offset once durable (docs/transactions.md, "Real offsets at
  // produce time"). `input` keeps alive the bytes the
  // batches point into. `transactional_id` is the one the request names: it must own the batch's
  // producer id (INVALID_PRODUCER_ID_MAPPING otherwise, as Kafka's partition verification
  // answers), so a principal allowed to write one transactional id cannot write into another's
  // transaction by naming its own id and the other's producer id.
  // `add_partition` (Produce v12+, transaction version 2): a partition the transaction does not
  // have yet is added first, as AddPartitionsToTxn would (a conflicting change in flight is
  // answered NOT_ENOUGH_REPLICAS, which every producer retries).
  virtual void produce(const std::optional<std::string>& transactional_id, const std::string& topic,
                       PartitionId partition, std::vector<kafka::DecodedBatch> batches,
                       std::shared_ptr<const void> input, bool add_partition,
                       std::function<void(ProduceResult)> done) = 0;
  // A non-transactional (idempotent) batch of `producer_id`: refused (INVALID_PRODUCER_ID_MAPPING)
  // when a transactional id owns that producer id, whose producer only writes transactionally;
  // kNone otherwise. Without it a client could append under another transaction's producer id and
  // sequence, making that producer's next batch look like a duplicate.
  virtual kafka::ErrorCode check_non_transactional(ProducerId producer_id) const = 0;

  // OffsetFetch with require_stable (KIP-447): whether an open transaction has an offset pending
  // for the group's partition (UNSTABLE_OFFSET_COMMIT).
  virtual bool has_pending_offset(const std::string& group_id, const std::string& topic, int32_t partition) const = 0;

  // The views kafka-transactions.sh reads.
  virtual std::optional<TransactionDescription> describe(const std::string& transactional_id) const = 0;
  virtual std::vector<TransactionListing> list() const = 0;
  virtual std::vector<OpenTransactionOnPartition> open_on_partition(const std::string& topic,
                                                                    PartitionId partition) const = 0;
};

// AddPartitionsToTxn v4+ with verify_only (what a partition leader asks before it appends a
// transactional batch, KIP-890), as Kafka's handleVerifyPartitionsInTransaction answers it from
// the coordinator's view: one error per partition, in order — NONE where the transaction has the
// partition, TRANSACTION_ABORTABLE where not; every partition INVALID_REQUEST for an empty id,
// INVALID_PRODUCER_ID_MAPPING for an unknown id or another producer id, PRODUCER_FENCED for
// another epoch, CONCURRENT_TRANSACTIONS while the transaction is being committed or aborted.
std::vector<kafka::ErrorCode> verify_partitions(const TransactionCoordinator& txns, const std::string& transactional_id,
                                                ProducerId producer_id, ProducerEpoch epoch,
                                                const std::vector<TxnTopicPartition>& partitions);

}  // namespace kib::bridge
