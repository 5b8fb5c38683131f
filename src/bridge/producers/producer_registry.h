// Idempotent producers: producer id allocation (never reused, even across restarts) and the
// last five batch sequence ranges per producer, epoch and partition (persisted), so a retried
// batch is answered with its original offset instead of being appended twice.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/result.h"

namespace kib::state {
class StateStore;
}

namespace kib::bridge {

struct ProducerIdAndEpoch {
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
};

// What to do with an incoming batch of an idempotent producer.
enum class SequenceVerdict {
  kAppend,               // new, in order: append it, then call record_append()
  kDuplicate,            // a retry of one of the last five batches: answer with duplicate_base_offset
  kOutOfOrder,           // gap in sequence: OUT_OF_ORDER_SEQUENCE_NUMBER
  kInvalidEpoch,         // older epoch than the producer's current one: INVALID_PRODUCER_EPOCH
  kUnknownProducer,      // producer id never issued by this bridge: UNKNOWN_PRODUCER_ID
  kInFlight,             // same range is being appended right now: retry later (retriable)
};

struct SequenceCheck {
  SequenceVerdict verdict = SequenceVerdict::kAppend;
  KafkaOffset duplicate_base_offset = kNoOffset;
};

// One producer's state on a partition (DescribeProducers).
struct ProducerOnPartition {
  ProducerId producer_id;
  ProducerEpoch producer_epoch;
  int32_t last_sequence = -1;
  TimestampMs last_timestamp = kNoTimestamp;
};

class ProducerRegistry {
 public:
  virtual ~ProducerRegistry() = default;

  // Loads producers and their recent batches from the state store. Startup only.
  virtual Status load() = 0;

  // InitProducerId without a transactional id: always a fresh id with epoch 0. `existing` (sent
  // by KIP-360 clients at v3+) is accepted and ignored, as Kafka's TransactionCoordinator does for
  // non-transactional producers; idempotent producers bump their epoch on their own.
  // The id is durable (never issued again, even after a restart) before `done` runs.
  // Failure: an Error carrying COORDINATOR_LOAD_IN_PROGRESS (retriable; see kafka_error()).
  virtual void init_producer(std::optional<ProducerIdAndEpoch> existing,
                             std::function<void(Result<ProducerIdAndEpoch>)> done) = 0;

  // Checks a batch [first_sequence, first_sequence + count - 1] (sequences wrap at 2^31).
  // kAppend reserves the range as in flight until record_append() or abort_append(); the next
  // batch of the partition may be checked (and reserved) before this one completes.
  // producer_id < 0 (not idempotent): kAppend, nothing tracked.
  virtual SequenceCheck check(ProducerId producer_id, ProducerEpoch epoch, const std::string& topic,
                              PartitionId partition, int32_t first_sequence, int32_t count) = 0;

  // False once the reservation made by check() was cancelled because an earlier batch of the
  // same producer and partition was aborted: do not append it, answer OUT_OF_ORDER_SEQUENCE_NUMBER.
  // Call right before handing the batch to Iggy when it waited behind an earlier batch.
  virtual bool is_reserved(ProducerId producer_id, const std::string& topic, PartitionId partition,
                           int32_t first_sequence) const = 0;

  // The reserved batch was appended at `base_offset`: remember it (persisted, batched).
  // `durable`, if given, runs on the loop once the row is committed (or failed to be).
  virtual void record_append(ProducerId producer_id, ProducerEpoch epoch, const std::string& topic,
                             PartitionId partition, int32_t first_sequence, int32_t count, KafkaOffset base_offset,
                             std::function<void(Status)> durable = nullptr) = 0;
  // The reserved batch was not appended (Iggy failed): release the reservation, and cancel every
  // later reservation of the partition (they must be retried after this one, in order).
  virtual void abort_append(ProducerId producer_id, const std::string& topic, PartitionId partition,
                            int32_t first_sequence) = 0;

  // The topic was deleted (its producer_batches rows are gone with it, state::delete_topic_everywhere):
  // the sequence state of its partitions is dropped, as Kafka's log takes its producer state
  // along. Partitions with batches in flight keep their reservations until those fail.
  virtual void forget_topic(const std::string& topic) { (void)topic; }

  // The producers with state on the partition (appended or buffered batches), by producer id.
  virtual std::vector<ProducerOnPartition> producers_on(const std::string& topic, PartitionId partition) const = 0;
};

}  // namespace kib::bridge
