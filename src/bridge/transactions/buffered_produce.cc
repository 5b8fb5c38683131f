#include "bridge/transactions/buffered_produce.h"

#include <spdlog/spdlog.h>

#include "bridge/log/appender.h"
#include "bridge/log/partition_log.h"
#include "bridge/producers/idempotence.h"
#include "bridge/producers/producer_registry.h"
#include "common/text.h"
#include "state/held_batch_store.h"
#include "state/transaction_store.h"

namespace kib::bridge {

using kafka::ErrorCode;

void BufferedProduce::produce(const std::optional<std::string>& transactional_id, const std::string& topic,
                              PartitionId partition, std::vector<kafka::DecodedBatch> batches,
                              std::shared_ptr<const void> input, std::function<void(ProduceResult)> done) {
  if (batches.empty()) return ctx_.later(done, produce_error(ErrorCode::kInvalidRecord, "no record batch"));
  const TxnTopicPartition tp{topic, partition};
  Admission a = admit(transactional_id, tp, batches.front());
  if (!a.txn) return ctx_.later(done, std::move(a.refusal));
  Txn& t = *a.txn;
  Pending p{t.id,
            t.generation,
            tp,
            batches.front().header,
            static_cast<int64_t>(batches.front().wire.size()),
            std::make_shared<Bytes>(batches.front().wire.begin(), batches.front().wire.end()),
            std::move(done)};
  t.buffered_bytes += p.bytes;
  auto shared_batches = std::make_shared<std::vector<kafka::DecodedBatch>>(std::move(batches));
  ctx_.s.log.check_transactional(topic, partition, *shared_batches,
                                 [this, alive = ctx_.alive.token(), p = std::move(p), shared_batches,
                                  input](ProduceResult checked) mutable {
                                   if (!alive) return;
                                   on_checked(std::move(p), std::move(checked));
                                 });
}

BufferedProduce::Admission BufferedProduce::admit(const std::optional<std::string>& transactional_id,
                                                  const TxnTopicPartition& tp,
                                                  const kafka::DecodedBatch& batch) const {
  const kafka::RecordBatchHeader& h = batch.header;
  const auto refuse = [](ErrorCode code, std::string message) {
    return Admission{nullptr, produce_error(code, std::move(message))};
  };
  // The request's transactional id must own the batch's producer id (Kafka's
  // TransactionCoordinator.handleVerifyPartitionsInTransaction): what WRITE on that id was
  // checked for. Without a transactional id the batch claims a transaction nobody named.
  if (!transactional_id || transactional_id->empty())
    return refuse(ErrorCode::kInvalidRequest, "transactional records in a Produce request that names no transactional id");
  Txn* t = ctx_.txns.find(*transactional_id);
  if (!t || t->pid != h.producer_id) {
    spdlog::warn("transactions: batch for {}-{} refused: producer id {} is not that of transactional id '{}'",
                 tp.topic, tp.partition(), h.producer_id, esc(*transactional_id, 256));
    return refuse(ErrorCode::kInvalidProducerIdMapping, "producer id " + std::to_string(h.producer_id) +
                                                            " is not the one of transactional id '" +
                                                            escape(*transactional_id, 256) + "'");
  }
  if (h.producer_epoch != t->epoch)
    return refuse(ErrorCode::kInvalidProducerEpoch, "epoch " + std::to_string(h.producer_epoch) + " of producer " +
                                                        std::to_string(h.producer_id) + " is not the current one (" +
                                                        std::to_string(t->epoch) + ")");
  if (!t->open_for_writes() || !t->partitions.count(tp))
    return refuse(ErrorCode::kInvalidTxnState, tp.topic + "-" + std::to_string(tp.partition()) +
                                                   " was not added to the transaction of '" + t->id +
                                                   "' (AddPartitionsToTxn)");
  const int64_t bytes = static_cast<int64_t>(batch.wire.size());
  if (t->buffered_bytes + bytes > static_cast<int64_t>(ctx_.s.config.max_buffered_bytes)) {
    std::string why = "the transaction of '" + t->id + "' would buffer " + std::to_string(t->buffered_bytes + bytes) +
                      " bytes, above [transactions] max_buffered_bytes (" +
                      std::to_string(ctx_.s.config.max_buffered_bytes) + ")";
    spdlog::warn("transactions: batch for {}-{} refused: {}", tp.topic, tp.partition(), esc(why, 512));
    return refuse(ErrorCode::kPolicyViolation, std::move(why));
  }
  return Admission{t, {}};
}

void BufferedProduce::on_checked(Pending p, ProduceResult checked) {
  Txn* t = ctx_.txns.current(p.id, p.generation);
  if (!t || !t->open_for_writes())
    return p.done(produce_error(ErrorCode::kInvalidTxnState, "the transaction of '" + p.id + "' ended"));
  if (checked.error != ErrorCode::kNone) {
    t->buffered_bytes -= p.bytes;
    return p.done(std::move(checked));
  }
  const kafka::RecordBatchHeader& h = p.header;
  const IdempotenceVerdict v = verdict_for(ctx_.s.producers.check(ProducerId(h.producer_id),
                                                                  ProducerEpoch(h.producer_epoch), p.tp.topic,
                                                                  p.tp.partition, h.base_sequence, h.record_count),
                                           h);
  if (v.kind != IdempotenceVerdict::Kind::kAppend) {
    t->buffered_bytes -= p.bytes;
    if (v.kind == IdempotenceVerdict::Kind::kDuplicate) {
      ProduceResult dup;  // a retry: the offsets the batch was answered with
      dup.base_offset = v.duplicate_base_offset;
      return p.done(dup);
    }
    return p.done(produce_error(v.error, v.message));
  }
  // The batch takes its offsets in the partition's held tail (docs/transactions.md, "Real offsets
  // at produce time"): the partition holds every later append behind them until the
  // transaction is decided.
  if (t->held_txn == kPlainBatch) t->held_txn = ctx_.next_held_txn++;
  const HeldTxn txn = t->held_txn;
  // Copied before `p` moves into the completion (arguments are evaluated in no set order).
  const TxnTopicPartition tp = p.tp;
  const auto bytes = static_cast<uint64_t>(p.bytes);
  const AbortedRecordMarker producer{h.producer_id, h.producer_epoch};
  const int32_t count = h.record_count;
  ctx_.s.log.reserve_held(tp.topic, tp.partition, count, bytes, txn, producer,
                          [this, alive = ctx_.alive.token(), p = std::move(p), txn](Result<KafkaOffset> base) mutable {
                            if (!alive) return;
                            on_reserved(std::move(p), txn, std::move(base));
                          });
}

void BufferedProduce::on_reserved(Pending p, HeldTxn txn, Result<KafkaOffset> base) {
  const kafka::RecordBatchHeader& h = p.header;
  const ProducerId pid(h.producer_id);
  Txn* t = ctx_.txns.current(p.id, p.generation);
  if (!base || !t || !t->open_for_writes()) {
    ctx_.s.producers.abort_append(pid, p.tp.topic, p.tp.partition, h.base_sequence);
    if (t) t->buffered_bytes -= p.bytes;
    if (!base) return p.done(produce_error(base.error()));
    // Offsets taken, but the transaction ended meanwhile: they become placeholders.
    ctx_.s.log.lose_held(p.tp.topic, p.tp.partition, *base);
    return p.done(produce_error(ErrorCode::kInvalidTxnState, "the transaction of '" + p.id + "' ended"));
  }
  TxnPartitionState& ps = t->partitions[p.tp];
  std::optional<int64_t> start;  // the partition's first batch: DescribeProducers' start offset
  if (!ps.has_batches) {
    ps.has_batches = true;
    ps.start_offset = (*base)();
    start = ps.start_offset;
  }
  state::HeldBatchRow row;
  row.topic = p.tp.topic;
  row.partition = p.tp.partition();
  row.base_offset = (*base)();
  row.record_count = h.record_count;
  row.txn = txn;
  row.transactional_id = p.id;
  row.producer_id = h.producer_id;
  row.producer_epoch = h.producer_epoch;
  row.base_sequence = h.base_sequence;
  row.outcome = state::HeldOutcomeCode::kUndecided;
  // Made before `p` moves into the completion (arguments are evaluated in no set order).
  auto job = [id = p.id, row, wire = p.wire, start](SQLite::Database& db) {
    state::insert_held_batch(db, row, *wire);
    if (start) state::set_partition_start_offset(db, id, row.topic, row.partition, *start);
  };
  const KafkaOffset at = *base;
  ctx_.write(std::move(job), [this, p = std::move(p), at](Status st) { on_buffered(p, at, std::move(st)); });
}

void BufferedProduce::on_buffered(const Pending& p, KafkaOffset base, Status st) {
  const kafka::RecordBatchHeader& h = p.header;
  const ProducerId pid(h.producer_id);
  if (!st) {
    ctx_.s.producers.abort_append(pid, p.tp.topic, p.tp.partition, h.base_sequence);
    ctx_.s.log.lose_held(p.tp.topic, p.tp.partition, base);
    if (Txn* t = ctx_.txns.current(p.id, p.generation)) t->buffered_bytes -= p.bytes;
    spdlog::warn("transactions: batch of '{}' for {}-{} not buffered: {}", esc(p.id), p.tp.topic, p.tp.partition(),
                 st.error().message);
    return p.done(produce_error(ErrorCode::kKafkaStorageError, st.error().message));
  }
  // Recorded as Kafka's log records every batch of a transaction, committed or not: a retry is
  // a duplicate answered with this offset, and the next batch follows this one's sequence.
  ctx_.s.producers.record_append(pid, ProducerEpoch(h.producer_epoch), p.tp.topic, p.tp.partition, h.base_sequence,
                                 h.record_count, base);
  ProduceResult ok;
  ok.base_offset = base;
  p.done(ok);
}

}  // namespace kib::bridge
