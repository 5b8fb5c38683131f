// How a transaction ends (docs/transactions.md, "A commit" and "An abort"). A commit or an abort
// is one SQLite transaction that gives the transaction's held batches their outcome and stores
// the pending offsets and the state; the partitions' held tails then append them to Iggy in
// offset order (an aborted batch as placeholders).
//
// Transactions buffered by a bridge before held batches (transaction_batches) are completed by
// the old pipeline: a commit decided before a restart holds the last stable offset of its
// partitions, appends the buffered batches partition by partition, then releases the holds and
// stores CompleteCommit.
//
// An append that fails (Iggy down) is retried, reading Iggy first for the batches the failed
// send stored; recovery (transaction_recovery.h) resumes a commit decided before a crash the
// same way. EndTxn is answered once the commit is complete. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "bridge/transactions/transaction_context.h"
#include "common/result.h"

namespace kib::bridge {

class TransactionCommitter {
 public:
  explicit TransactionCommitter(TxnContext& ctx) : ctx_(ctx) {}

  // EndTxn(commit) of an Ongoing transaction: decided and complete in one SQLite transaction;
  // `done` then, or when it failed (COORDINATOR_NOT_AVAILABLE; the transaction stays Ongoing).
  // Its held batches reach Iggy as the partitions' held tails drain.
  void commit(Txn& t, std::function<void(kafka::ErrorCode)> done);
  // EndTxn(abort), InitProducerId over an open transaction, the timeout sweep (`bump_epoch`:
  // Kafka fences the producer of a transaction its coordinator aborts on its own) and recovery.
  void abort(Txn& t, bool bump_epoch, std::function<void(kafka::ErrorCode)> done);
  // A commit decided before a restart by a bridge that buffered in transaction_batches
  // (PrepareCommit, holds in place): appends what is not in Iggy yet and completes it; `done` then.
  void resume(Txn& t, std::function<void(kafka::ErrorCode)> done);

 private:
  // The transaction's held batches on its partitions take the outcome in the held tails.
  void decide_partitions(const Txn& t, HeldTxn txn, bool committed);
  void complete_commit(Txn& t, const state::TransactionRow& row);
  // ---- the commit pipeline of transaction_batches (resume) ----
  void append_all(const std::string& id, uint64_t generation, bool scan);
  void append_partition(const std::string& id, uint64_t generation, const TxnTopicPartition& tp, bool scan);
  void append_chunk(const std::string& id, uint64_t generation, const TxnTopicPartition& tp,
                    std::shared_ptr<std::set<int32_t>> present, int64_t after_seq);
  void partition_failed(const std::string& id, uint64_t generation, const TxnTopicPartition& tp, const Error& e);
  void finish(const std::string& id, uint64_t generation);

  // The last stable offset holds of a commit go (read_committed readers move on).
  void release_holds(Txn& t);
  // The commit is over: the transactional id takes requests again and EndTxn is answered.
  void end_commit(Txn& t, kafka::ErrorCode answer);
  // A commit that was not decided: nothing reached Iggy, the transaction stays Ongoing.
  void commit_failed(Txn& t);

  TxnContext& ctx_;
};

}  // namespace kib::bridge
