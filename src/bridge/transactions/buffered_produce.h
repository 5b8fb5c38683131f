// Produce of a transactional batch (docs/transactions.md, "What Produce answers for a buffered
// batch"): checked as Kafka checks it (the request's transactional id owns the producer id, the
// epoch is current, the partition was added to the open transaction, the transaction stays
// within [transactions] max_buffered_bytes), then by the partition log's rules and the producer
// registry's sequence check, given its offsets in the partition's held tail and stored in
// SQLite's held_batches with them until it reaches Iggy; answered with its base offset once
// durable (docs/transactions.md, "Real offsets at produce time"). Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge/log/held_tail.h"
#include "bridge/log/log_types.h"
#include "bridge/transactions/transaction_context.h"
#include "kafka/records/record_batch.h"

namespace kib::bridge {

class BufferedProduce {
 public:
  explicit BufferedProduce(TxnContext& ctx) : ctx_(ctx) {}

  // TransactionCoordinator::produce.
  void produce(const std::optional<std::string>& transactional_id, const std::string& topic, PartitionId partition,
               std::vector<kafka::DecodedBatch> batches, std::shared_ptr<const void> input,
               std::function<void(ProduceResult)> done);

 private:
  // A batch on its way into the buffer; its bytes count in the transaction's buffered_bytes.
  struct Pending {
    std::string id;
    uint64_t generation = 0;
    TxnTopicPartition tp;
    kafka::RecordBatchHeader header;
    int64_t bytes = 0;
    std::shared_ptr<Bytes> wire;
    std::function<void(ProduceResult)> done;
  };

  // The transaction the batch goes into, or the answer refusing it.
  struct Admission {
    Txn* txn = nullptr;
    ProduceResult refusal;
  };
  Admission admit(const std::optional<std::string>& transactional_id, const TxnTopicPartition& tp,
                  const kafka::DecodedBatch& batch) const;
  // After the partition log's checks: the sequence check, then the offsets in the held tail.
  void on_checked(Pending p, ProduceResult checked);
  // The offsets are taken: the row is written with them.
  void on_reserved(Pending p, HeldTxn txn, Result<KafkaOffset> base);
  void on_buffered(const Pending& p, KafkaOffset base, Status st);

  TxnContext& ctx_;
};

}  // namespace kib::bridge
