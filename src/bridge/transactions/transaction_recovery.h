// The transaction coordinator's start (docs/transactions.md, "Crash recovery"): load() reads
// every transactional id and every held batch from SQLite before the Kafka listener opens,
// gives the held batches back to the partitions' held tails (which wait for Iggy's high
// watermark before they take any append), brings the producer registry level with the
// transactions' batches and puts back the last stable offset holds of a commit an older bridge
// decided before a crash; recover(), once Iggy is reachable, completes that commit (the
// committer reads Iggy for what already reached it) and aborts a transaction an abort was
// interrupted in. A transaction Ongoing at the crash stays open, as on Kafka. Loop thread only.
#pragma once

#include <functional>

#include "bridge/transactions/transaction_committer.h"
#include "bridge/transactions/transaction_context.h"
#include "common/result.h"
#include "state/held_batch_store.h"

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
  void restore_held(const std::vector<state::HeldBatchRow>& rows);
  void level_producer(const Txn& t, const std::string& topic, int32_t partition, int32_t base_sequence,
                      int32_t record_count, KafkaOffset base);
  void hold_interrupted();

  TxnContext& ctx_;
  TransactionCommitter& committer_;
};

}  // namespace kib::bridge
