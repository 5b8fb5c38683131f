// Idempotent appends on top of the producer registry (as librdkafka keeps rdkafka_idempotence.c
// apart from its partition queues): the verdict for a batch at the head of a partition's queue,
// the Iggy message ids that carry a record's producer, epoch and sequence into Iggy, and the
// recovery of batches that reached Iggy without their sequence stored.
//
// Iggy message ids of idempotent records: hi = producer id, lo = epoch (16 bits) | sequence
// (32 bits) | a 16-bit marker that also says whether the record starts its Kafka batch, so
// recover_tail can tell them from ids native producers chose and find batch boundaries.
//
// Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bridge/producers/producer_registry.h"
#include "iggy/client.h"
#include "kafka/protocol/error_code.h"
#include "kafka/records/record_batch.h"

namespace kib::bridge {

inline constexpr uint64_t kBatchStartMarker = 0xBD1Du;
inline constexpr uint64_t kBatchContinuationMarker = 0xBD1Eu;

iggy::MessageId producer_message_id(ProducerId producer_id, ProducerEpoch epoch, int32_t sequence, bool batch_start);

struct ProducerSeq {
  ProducerId producer_id;
  ProducerEpoch epoch;
  int32_t sequence;
  bool batch_start;
};
// nullopt for ids the bridge did not write (native Iggy producers).
std::optional<ProducerSeq> parse_producer_message_id(const iggy::MessageId& id);

// Gives each message of a batch of an idempotent producer (producer_id >= 0) its id; others keep
// theirs.
void stamp_producer_ids(const kafka::RecordBatchHeader& h, std::vector<iggy::OutgoingMessage>& messages);

// One producer batch found in Iggy: consecutive offsets and sequences from a batch start.
struct ProducerRun {
  ProducerSeq first;
  int32_t count = 0;
  KafkaOffset base_offset;
};
// The producer batches among `messages` (a partition's tail, in offset order). Records before
// the first batch start of a run are skipped: that batch starts before the scanned tail.
std::vector<ProducerRun> producer_runs(std::span<const iggy::MessageView> messages);

// What to do with the batch at the head of a partition's queue.
struct IdempotenceVerdict {
  enum class Kind { kAppend, kDuplicate, kRefused };
  Kind kind = Kind::kAppend;
  KafkaOffset duplicate_base_offset = kNoOffset;    // kDuplicate
  kafka::ErrorCode error = kafka::ErrorCode::kNone;  // kRefused
  std::string message;                             // kRefused
};
IdempotenceVerdict verdict_for(const SequenceCheck& check, const kafka::RecordBatchHeader& h);

// Per partition: whether Iggy's tail may hold producer batches the registry does not know.
struct TailState {
  bool recovered = false;  // producer batches in Iggy's tail reconciled after startup
  // An idempotent send failed with its outcome unknown (Iggy may have stored it): the high
  // watermark and the tail are read again before the next idempotent append.
  bool unknown = false;
};

class Idempotence {
 public:
  explicit Idempotence(ProducerRegistry* registry) : registry_(registry) {}

  // Whether the batch is an idempotent producer's and the bridge tracks producers.
  bool applies_to(const kafka::RecordBatchHeader& h) const { return h.producer_id >= 0 && registry_; }

  // The verdict for the batch at the head of the partition's queue; kAppend reserves its range.
  IdempotenceVerdict check(const std::string& topic, PartitionId partition, const kafka::RecordBatchHeader& h);
  // Whether a batch queued behind the head may join its send (its range is then reserved).
  bool reserve(const std::string& topic, PartitionId partition, const kafka::RecordBatchHeader& h);
  // The send of a reserved batch failed: release it (and every later reservation).
  void abort(const std::string& topic, PartitionId partition, const kafka::RecordBatchHeader& h);
  // A reserved batch was stored at `base_offset`; `then` runs once that is durable (or failed
  // to be, which is logged).
  void record(const std::string& topic, PartitionId partition, const kafka::RecordBatchHeader& h,
              KafkaOffset base_offset, std::function<void()> then);

  // Reads `count` messages of the partition from `from`.
  using TailReader = std::function<void(KafkaOffset from, uint32_t count, iggy::Callback<iggy::PolledMessages>)>;
  // After a restart, the last batches of idempotent producers may be in Iggy without their
  // sequence in SQLite (the bridge died between the two). Before the first idempotent append to
  // a partition, the tail [max(log_start, high_watermark - kTailMessages), high_watermark) is
  // read back and every producer batch found there that the registry would still accept as new
  // is recorded with the offset Iggy gave it, so its retry becomes a duplicate. Only the tail can
  // hold such batches: each partition appends one batch at a time. Sets tail.recovered on
  // success; `done` runs either way.
  static constexpr int64_t kTailMessages = 2000;  // far more than five in-flight batches per producer
  void recover_tail(const std::string& topic, PartitionId partition, KafkaOffset log_start, KafkaOffset high_watermark,
                    TailState& tail, TailReader read, std::function<void()> done);
  // The part of recover_tail after the read: records the runs the registry takes as new.
  size_t record_runs(const std::string& topic, PartitionId partition, std::span<const ProducerRun> runs);

 private:
  ProducerRegistry* registry_;
};

}  // namespace kib::bridge
