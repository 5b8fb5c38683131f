#include "bridge/producers/idempotence.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>

namespace kib::bridge {

using kafka::ErrorCode;

namespace {
// A decoded batch header keeps the wire's plain integers; the registry takes typed ids.
ProducerId producer_of(const kafka::RecordBatchHeader& h) { return ProducerId(h.producer_id); }
ProducerEpoch epoch_of(const kafka::RecordBatchHeader& h) { return ProducerEpoch(h.producer_epoch); }
}  // namespace

iggy::MessageId producer_message_id(ProducerId producer_id, ProducerEpoch epoch, int32_t sequence, bool batch_start) {
  iggy::MessageId id;
  id.hi = static_cast<uint64_t>(producer_id());
  id.lo = (static_cast<uint64_t>(static_cast<uint16_t>(epoch())) << 48) |
          (static_cast<uint64_t>(static_cast<uint32_t>(sequence)) << 16) |
          (batch_start ? kBatchStartMarker : kBatchContinuationMarker);
  return id;
}

std::optional<ProducerSeq> parse_producer_message_id(const iggy::MessageId& id) {
  const uint64_t marker = id.lo & 0xFFFF;
  if ((marker != kBatchStartMarker && marker != kBatchContinuationMarker) || id.hi > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  const auto seq = static_cast<uint32_t>((id.lo >> 16) & 0xFFFFFFFFu);
  if (seq > static_cast<uint32_t>(INT32_MAX)) return std::nullopt;
  return ProducerSeq{ProducerId(static_cast<int64_t>(id.hi)),
                     ProducerEpoch(static_cast<int16_t>(static_cast<uint16_t>(id.lo >> 48))), static_cast<int32_t>(seq),
                     marker == kBatchStartMarker};
}

// Each record's Iggy message id names its producer, epoch and sequence, so a batch that reached
// Iggy but whose sequence was not yet stored when the bridge died is recognised in the
// partition's tail after a restart (recover_tail) instead of being appended twice.
void stamp_producer_ids(const kafka::RecordBatchHeader& h, std::vector<iggy::OutgoingMessage>& messages) {
  if (h.producer_id < 0) return;
  for (size_t i = 0; i < messages.size(); ++i)
    messages[i].id = producer_message_id(
        producer_of(h), epoch_of(h),
        static_cast<int32_t>((static_cast<int64_t>(h.base_sequence) + static_cast<int64_t>(i)) % (int64_t{1} << 31)),
        i == 0);
}

std::vector<ProducerRun> producer_runs(std::span<const iggy::MessageView> messages) {
  std::vector<ProducerRun> runs;
  for (const auto& m : messages) {
    auto seq = parse_producer_message_id(m.id);
    if (!seq) continue;
    const KafkaOffset off(static_cast<int64_t>(m.offset));
    if (!runs.empty() && !seq->batch_start) {
      ProducerRun& last = runs.back();
      if (last.first.producer_id == seq->producer_id && last.first.epoch == seq->epoch &&
          last.base_offset + last.count == off &&
          (static_cast<int64_t>(last.first.sequence) + last.count) % (int64_t{1} << 31) == seq->sequence) {
        ++last.count;
        continue;
      }
    }
    if (!seq->batch_start) continue;  // the batch's start is before the scanned tail
    runs.push_back({*seq, 1, off});
  }
  return runs;
}

IdempotenceVerdict verdict_for(const SequenceCheck& check, const kafka::RecordBatchHeader& h) {
  using Kind = IdempotenceVerdict::Kind;
  auto refused = [](ErrorCode code, std::string message) {
    return IdempotenceVerdict{Kind::kRefused, kNoOffset, code, std::move(message)};
  };
  switch (check.verdict) {
    case SequenceVerdict::kAppend:
      return {};
    case SequenceVerdict::kDuplicate:
      return IdempotenceVerdict{Kind::kDuplicate, check.duplicate_base_offset, ErrorCode::kNone, {}};
    case SequenceVerdict::kOutOfOrder:
      return refused(ErrorCode::kOutOfOrderSequenceNumber, "sequence " + std::to_string(h.base_sequence) +
                                                               " of producer " + std::to_string(h.producer_id) +
                                                               " is out of order");
    case SequenceVerdict::kInvalidEpoch:
      return refused(ErrorCode::kInvalidProducerEpoch, "epoch " + std::to_string(h.producer_epoch) + " of producer " +
                                                           std::to_string(h.producer_id) + " is fenced");
    case SequenceVerdict::kUnknownProducer:
      return refused(ErrorCode::kUnknownProducerId,
                     "producer id " + std::to_string(h.producer_id) + " was not issued here");
    case SequenceVerdict::kInFlight:
      // Nothing was appended for this request and the same range is being appended right
      // now: NOT_ENOUGH_REPLICAS is retriable for every client and means "not written, retry";
      // the retry then meets the recorded batch and gets its offset as a duplicate.
      return refused(ErrorCode::kNotEnoughReplicas, "the same sequence range is being appended; retry");
  }
  return {};
}

IdempotenceVerdict Idempotence::check(const std::string& topic, PartitionId partition,
                                      const kafka::RecordBatchHeader& h) {
  return verdict_for(registry_->check(producer_of(h), epoch_of(h), topic, partition, h.base_sequence, h.record_count),
                     h);
}

bool Idempotence::reserve(const std::string& topic, PartitionId partition, const kafka::RecordBatchHeader& h) {
  return registry_->check(producer_of(h), epoch_of(h), topic, partition, h.base_sequence, h.record_count)
             .verdict == SequenceVerdict::kAppend;
}

void Idempotence::abort(const std::string& topic, PartitionId partition, const kafka::RecordBatchHeader& h) {
  registry_->abort_append(producer_of(h), topic, partition, h.base_sequence);
}

void Idempotence::record(const std::string& topic, PartitionId partition, const kafka::RecordBatchHeader& h,
                         KafkaOffset base_offset, std::function<void()> then) {
  // Answer once the sequence is durable, so a restarted bridge still knows what this producer's
  // next batch follows; the next append need not wait for that.
  registry_->record_append(producer_of(h), epoch_of(h), topic, partition, h.base_sequence, h.record_count,
                           base_offset, [then = std::move(then), topic, partition](Status s) {
                             if (!s)
                               spdlog::warn("producer state for {}-{} not stored: {}", topic, partition,
                                            s.error().message);
                             then();
                           });
}

void Idempotence::recover_tail(const std::string& topic, PartitionId partition, KafkaOffset log_start,
                               KafkaOffset high_watermark, TailState& tail, TailReader read, std::function<void()> done) {
  const KafkaOffset from = std::max(log_start, high_watermark - kTailMessages);
  const int64_t count = high_watermark - from;
  if (count <= 0) {
    tail.recovered = true;
    return done();
  }
  read(from, static_cast<uint32_t>(count),
       [this, topic, partition, tail = &tail, done](Result<iggy::PolledMessages> r) {
         if (!r) {
           // Not marked recovered: the next append tries again rather than risking a duplicate.
           spdlog::warn("cannot read the tail of {}-{} to recover producer state: {}", topic, partition,
                        r.error().message);
           return done();
         }
         std::vector<ProducerRun> runs = producer_runs(r->messages);
         if (size_t recovered = record_runs(topic, partition, runs))
           spdlog::warn("{}-{}: recovered {} producer batches that reached Iggy without their sequence stored "
                        "(a restart, or a send whose reply was lost); their retries are answered as duplicates",
                        topic, partition, recovered);
         tail->recovered = true;
         done();
       });
}

size_t Idempotence::record_runs(const std::string& topic, PartitionId partition, std::span<const ProducerRun> runs) {
  size_t recovered = 0;
  for (const ProducerRun& run : runs) {
    SequenceCheck c =
        registry_->check(run.first.producer_id, run.first.epoch, topic, partition, run.first.sequence, run.count);
    if (c.verdict != SequenceVerdict::kAppend) continue;  // known already, or not a batch boundary
    registry_->record_append(run.first.producer_id, run.first.epoch, topic, partition, run.first.sequence, run.count,
                             run.base_offset, nullptr);
    ++recovered;
  }
  return recovered;
}

}  // namespace kib::bridge
