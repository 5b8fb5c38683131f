// The transaction coordinator's start (docs/transactions.md, "Crash recovery"): load() reads
// every transactional id from SQLite before the Kafka listener opens, brings the producer
// registry level with the buffered batches and puts back the last stable offset holds of a
// commit decided before a crash; recover(), once Iggy is reachable, completes that commit (the
// committer reads Iggy for what already reached it) and aborts a transaction an abort was
// interrupted in. A transaction Ongoing at the crash stays open, as on Kafka. Loop thread only.
#pragma once

#include <functional>

#include "bridge/transactions/transaction_committer.h"
#include "bridge/transactions/transaction_context.h"
#include "common/result.h"

namespace kib::bridge {

class TransactionRecovery {
 public:
  TransactionRecovery(TxnContext& ctx, TransactionCommitter& committer) : ctx_(ctx), committer_(committer) {}

  // Blocking: startup only. The interrupted transactions answer CONCURRENT_TRANSACTIONS
  // (retriable) until recover() dealt with them.
  Status load();
  // `done` once every interrupted commit and abort is complete.
  void recover(std::function<void()> done);

 private:
  void restore(const state::TransactionSnapshot& snap);
  void level_producer(const Txn& t, const state::TransactionBatchInfo& b);
  void hold_interrupted();

  TxnContext& ctx_;
  TransactionCommitter& committer_;
};

}  // namespace kib::bridge
