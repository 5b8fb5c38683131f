// How a transaction ends (docs/transactions.md, "A commit" and "An abort"). A commit holds the
// last stable offset of its partitions, decides in one SQLite transaction (PrepareCommit, where
// each partition's appends start, the pending offsets committed), appends the buffered batches
// to Iggy partition by partition, then releases the holds and stores CompleteCommit. An abort
// deletes what the transaction buffered and stores CompleteAbort: nothing of it is in Iggy.
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

  // EndTxn(commit) of an Ongoing transaction; `done` once the commit is complete or failed
  // before it was decided (COORDINATOR_NOT_AVAILABLE; the transaction stays Ongoing).
  void commit(Txn& t, std::function<void(kafka::ErrorCode)> done);
  // EndTxn(abort), InitProducerId over an open transaction, the timeout sweep (`bump_epoch`:
  // Kafka fences the producer of a transaction its coordinator aborts on its own) and recovery.
  void abort(Txn& t, bool bump_epoch, std::function<void(kafka::ErrorCode)> done);
  // A commit decided before a restart (PrepareCommit, holds in place): appends what is not in
  // Iggy yet and completes it; `done` then.
  void resume(Txn& t, std::function<void(kafka::ErrorCode)> done);

 private:
  void decide(const std::string& id, uint64_t generation);
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
