// The Produce path below the handler: one queue of appends per partition, sent to Iggy one send
// at a time in arrival order. Iggy replies can overtake each other across pool connections, and
// an idempotent producer's sequence order must be the offset order. Different partitions append
// in parallel.
//
// At the head of a queue, in this order: the partition's offsets are loaded once (the answer
// carries the log start offset), an idempotent batch first has Iggy's tail reconciled with the
// producer registry (bridge/producers/idempotence.h) and then gets its verdict, and the batches
// queued behind it join its send while Iggy's limits allow. Every acknowledged send is signalled
// upward through the `appended` callback (the reader wakes its long polls on it).
//
// Loop thread only. Callbacks never run inside the call that was given them.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge/log/batch_cache.h"
#include "bridge/log/log_backend.h"
#include "bridge/log/log_types.h"
#include "bridge/log/partition_offsets.h"
#include "bridge/mapping/record_mapping.h"
#include "bridge/producers/idempotence.h"
#include "kafka/records/record_batch.h"

namespace kib::bridge {

// One Iggy send stores each origin timestamp as a u32 µs delta from the batch's smallest.
inline constexpr uint64_t kMaxSendSpanUs = UINT32_MAX;
// Queued appends merge into one Iggy send up to this size. Iggy stores a send as one batch and
// slices stored batches on every poll, so polls of a few huge batches are slow; one round trip
// per MiB already amortises the send well.
inline constexpr uint64_t kMaxCoalescedSendBytes = 1u << 20;

struct AppendJob {
  std::vector<kafka::DecodedBatch> batches;  // exactly one once validated
  // What keeps alive the bytes the batch's views point into, and all of them (the Produce request
  // frame; the produced-batch cache refers to the batch there). bytes empty: not known.
  SharedSpan input;
  MappedMessages mapped;
  uint64_t send_bytes = 0;  // Iggy message bytes (frame headers, payloads, user headers)
  uint64_t min_origin_us = 0, max_origin_us = 0;  // of the mapped messages
  bool unknown_origin = false;  // some message has origin 0 (Iggy stamps "now"): sent alone
  std::function<void(ProduceResult)> cb;
  bool reserved = false;  // the producer registry holds a sequence reservation for it
  // A batch of a committed transaction (PartitionLog::append_committed): its sequence was checked
  // and recorded when it was buffered, so it gets no idempotence verdict here.
  bool committed = false;
  // The Iggy identity the send runs as (LogBackend::send); only jobs of one identity share a send.
  iggy::IggyPool* as = nullptr;

  const kafka::RecordBatchHeader& header() const { return batches.front().header; }
};

ProduceResult produce_error(kafka::ErrorCode code, std::string message);
ProduceResult produce_error(const Error& e);

// Validates the job's batches (produce_validation.h) and maps them to Iggy messages; the error
// to answer when it cannot be appended.
// What a batch's mapped messages take in one Iggy send (frame headers, payloads, user headers),
// and the error when that is above kMaxIggySendBytes.
uint64_t iggy_send_bytes(const MappedMessages& mapped);
std::optional<Error> check_send_bytes(uint64_t send_bytes);

// `transactional`: a transactional batch is allowed (the transaction coordinator's checks).
std::optional<ProduceResult> prepare_append(AppendJob& job, const std::string& topic, PartitionId partition,
                                            int32_t max_message_bytes, bool transactional = false);

// How many jobs from the front of `queue` go in one send: the head, then each follower while the
// send stays within kMaxCoalescedSendBytes and Iggy's origin-timestamp span, none next to a job
// of unknown origin, and while `admit` takes it (idempotence may refuse).
size_t coalesced_jobs(const std::deque<std::shared_ptr<AppendJob>>& queue,
                      const std::function<bool(AppendJob&)>& admit);

class Appender {
 public:
  using Appended = std::function<void(PartitionOffsets&)>;
  // `cache`: where acknowledged batches are kept for Fetch (batch_cache.h); nullptr: nowhere.
  Appender(LogBackend& backend, OffsetsTable& offsets, Idempotence& idempotence, Appended appended,
           BatchCache* cache = nullptr)
      : backend_(backend), offsets_(offsets), idempotence_(idempotence), appended_(std::move(appended)), cache_(cache) {}
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;

  // Queues a prepared job; its callback runs once Iggy answered (or the job was refused).
  void append(PartitionOffsets& p, std::shared_ptr<AppendJob> job);
  // Jobs queued for the partition, the one in Iggy included.
  size_t queued(const PartitionOffsets& p) const;
  // Told of every acknowledged send: its partition, first offset, records and Iggy bytes (the
  // compaction cleaner's dirty bytes and virtual segments, bridge/cleaner/cleaner.h).
  using Observer = std::function<void(const PartitionOffsets&, KafkaOffset base, int64_t count, uint64_t bytes)>;
  void set_observer(Observer observer) { observer_ = std::move(observer); }
  // Runs `idle` once nothing is queued for the partition or in Iggy (at once when so): where a
  // partition starts holding (held_appends.h), so its high watermark is exact.
  void when_idle(PartitionOffsets& p, std::function<void()> idle);

 private:
  struct Queue {
    PartitionOffsets* offsets = nullptr;
    bool load_tried = false;
    TailState tail;
    std::deque<std::shared_ptr<AppendJob>> appends;  // front = the one in Iggy when `appending`
    bool appending = false;
    std::vector<std::function<void()>> idle_waiters;  // when_idle
  };

  Queue& queue_of(PartitionOffsets& p);

  void pump(Queue& q);
  bool prepare_head(Queue& q);
  void send(Queue& q, std::vector<std::shared_ptr<AppendJob>> jobs);
  void sent(Queue& q, const std::vector<std::shared_ptr<AppendJob>>& jobs, Result<iggy::SendConfirmation> r);
  void finish_head(Queue& q, ProduceResult result);

  LogBackend& backend_;
  OffsetsTable& offsets_;
  Idempotence& idempotence_;
  Appended appended_;
  Observer observer_;
  BatchCache* cache_;
  std::map<const PartitionOffsets*, std::unique_ptr<Queue>> queues_;
};

}  // namespace kib::bridge
