// PartitionLog: Kafka's partition log on top of Iggy partitions — Produce, Fetch and ListOffsets
// semantics (docs/mapping.md). Handlers decode and encode; everything Kafka
// decides about an append or a read happens below this facade, in one service per kind of state:
//
//   * partition_offsets.h — high watermark and log start per partition, learned from Iggy (the
//     bottom; every service above reads and refreshes it);
//   * appender.h — the per-partition append queue, coalescing and the send (Produce), with
//     bridge/producers/idempotence.h for idempotent producers' verdicts, message ids and tail
//     recovery; it signals each acknowledged append upward by callback;
//   * reader.h, read_ahead.h — long-polling fetches, their waiters, and the read-ahead (Fetch);
//   * offset_index.h — ListOffsets and the time index behind it.
//
// Loop thread only. Callbacks never run inside the call that was given them. Destroying the log
// drops pending work without calling its callbacks.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/compaction/cleaner_model.h"
#include "bridge/log/held_tail.h"
#include "bridge/log/leader_epoch.h"
#include "bridge/log/log_dirs.h"
#include "bridge/log/log_types.h"
#include "bridge/log/record_deletion.h"
#include "common/liveness.h"
#include "common/result.h"
#include "config/config.h"
#include "iggy/client.h"
#include "kafka/records/record_batch.h"
#include "uvx/tasks.h"

namespace kib::bridge {

class TopicCatalog;
class ProducerRegistry;
class LogBackend;
class OffsetsTable;
class Idempotence;
class Appender;
class Reader;
class OffsetIndex;
class BatchCache;
struct BatchCacheStats;
class HeldAppends;
class HeldStore;
struct HeldStats;

// A DeleteRecords floor as stored (state partition_log_start).
struct LogStartFloor {
  std::string topic;
  PartitionId partition;
  KafkaOffset offset;
};

class PartitionLog final : public TopicListener {
 public:
  PartitionLog(uv_loop_t* loop, iggy::IggyClient& iggy, TopicCatalog& catalog, ProducerRegistry* producers,
               const config::Config& config);
  ~PartitionLog() override;
  PartitionLog(const PartitionLog&) = delete;
  PartitionLog& operator=(const PartitionLog&) = delete;

  // Appends one partition's batches (Produce v3+ rules: exactly one batch, see
  // produce_validation.h). `input` keeps alive the bytes the batches point into (input.bytes: all
  // of them, the request frame; the produced-batch cache refers to the batches there). The
  // callback runs after Iggy acknowledged the append (whatever `acks`; acks=0 callers ignore it).
  // `as`: the Iggy identity the send runs as (LogBackend::send); nullptr: the bridge's.
  void produce(const std::string& topic, PartitionId partition, std::vector<kafka::DecodedBatch> batches,
               SharedSpan input, int16_t acks, std::function<void(ProduceResult)> cb,
               iggy::IggyPool* as = nullptr);

  // What produce() would refuse for sure, from the catalog's cache alone, checked by the Produce
  // handler before it decodes (and decompresses) a partition's records: a name that cannot be a
  // topic, or a partition a cached topic does not have (UNKNOWN_TOPIC_OR_PARTITION, as Kafka
  // answers before looking at the records). OK when the cache does not know the topic:
  // produce() asks Iggy then.
  Status precheck_produce(const std::string& topic, PartitionId partition) const;

  // `partitions`: each at most once (the handler merges repeats, as Kafka does). The partitions'
  // reads share params.max_bytes in request order, so one fetch holds about that much read data
  // whatever its partition_max_bytes say. `owner`: the Kafka connection (uvx/work_owner.h); its
  // fetches are dropped by cancel_fetches() when it closes.
  void fetch(std::vector<FetchPartitionRequest> partitions, const FetchParams& params, FetchCallback cb,
             uint64_t owner = 0);
  // Drops `owner`'s pending fetches without calling their callbacks (its connection closed), and
  // their polls still queued for Iggy.
  void cancel_fetches(uint64_t owner);

  // `timestamp`: kLatestTimestamp, kEarliestTimestamp, kEarliestLocalTimestamp, kMaxTimestamp, or
  // a time in ms (the first offset whose record timestamp is >= it; -1/-1 without error if none).
  // At read_committed, latest is the last stable offset (hold_stable).
  void list_offsets(const std::string& topic, PartitionId partition, TimestampMs timestamp,
                    std::function<void(OffsetLookup)> cb, IsolationLevel isolation = IsolationLevel::kReadUncommitted);

  // Learns the offsets of every partition of `topic` from Iggy (one GetTopic, shared with a
  // refresh already in flight). For consumer-lag metrics.
  void refresh_offsets_of(const std::string& topic, std::function<void(Status)> done);
  // The high watermark last learned for a partition; nullopt when the log has not seen it.
  std::optional<KafkaOffset> high_watermark(const std::string& topic, PartitionId partition) const;

  // DeleteRecords (record_deletion.h): moves the partition's log start to `offset` (-1 = the high
  // watermark) and answers the new log start once it is durable. UNKNOWN_TOPIC_OR_PARTITION for
  // an unknown partition, POLICY_VIOLATION when the topic's cleanup.policy has no `delete`.
  void delete_records(const std::string& topic, PartitionId partition, KafkaOffset offset,
                      std::function<void(DeleteRecordsResult)> cb);
  // The floors stored so far (startup), and how new ones are made durable.
  void restore_log_starts(const std::vector<LogStartFloor>& floors, SaveLogStart save);
  const SegmentDeletionStats& segment_deletions() const;
  // A compacted partition's cleaned head (docs/compaction.md): reads below its cleaner point come
  // from its generation, and its log start is the one the head keeps. Startup and the cleaner.
  void set_cleaned_head(const std::string& topic, PartitionId partition,
                        std::shared_ptr<const compaction::CleanedHead> head);
  // The cleaned head reads use now (nullptr: none): a replaced one is still read while a read
  // that started before holds it.
  std::shared_ptr<const compaction::CleanedHead> cleaned_head(const std::string& topic, PartitionId partition) const;
  // Told of every acknowledged append (Appender::Observer): topic, partition, base, count, bytes.
  using AppendObserver = std::function<void(const std::string&, PartitionId, KafkaOffset, int64_t, uint64_t)>;
  void set_append_observer(AppendObserver observer);
  // Records refused because they had no key and their topic is compacted (Kafka's
  // NoKeyCompactedTopicRecordsPerSec), for kib_produce_keyless_compacted_total.
  uint64_t keyless_compacted_records() const { return keyless_compacted_records_; }
  // The produced-batch cache (batch_cache.h), for metrics and tests.
  const BatchCache& batch_cache() const { return *cache_; }

  // OffsetForLeaderEpoch for a consumer (leader_epoch.h): epoch 0 ends at the high watermark,
  // fresh from Iggy; UNKNOWN_TOPIC_OR_PARTITION for an unknown partition.
  void end_offset_for_epoch(const std::string& topic, PartitionId partition, int32_t current_leader_epoch,
                            int32_t leader_epoch, std::function<void(EpochEndOffset)> cb);

  // DescribeLogDirs (log_dirs.h): the one log dir, with the sizes of `topics` (nullopt: all), and
  // the disk totals when `with_totals`.
  void describe_log_dirs(LogDirQuery topics, bool with_totals, std::function<void(LogDirDescription)> cb);

  // ---- transactions (docs/transactions.md): the transaction coordinator's side of the log ----

  // What produce() would refuse of a transactional batch before the coordinator buffers it:
  // an unknown topic or partition, the Produce v3+ batch rules (produce_validation.h; the
  // transactional bit is required here), max.message.bytes, keyless records on a compacted topic,
  // a batch too large for one Iggy send. `cb` gets a result without error when the batch may be
  // buffered. `batches` must stay alive until `cb` ran.
  void check_transactional(const std::string& topic, PartitionId partition,
                           const std::vector<kafka::DecodedBatch>& batches, std::function<void(ProduceResult)> cb);
  // Appends one batch of a committed transaction, in the partition's queue order with the other
  // appends. Its sequence was checked when it was buffered, so it gets no idempotence verdict and
  // nothing is recorded in the producer registry; its Iggy message ids carry its producer, epoch
  // and sequence as an idempotent batch's do (idempotence.h), which is how crash recovery finds
  // it (producer_batches_since). `input` keeps alive the bytes the batch points into.
  void append_committed(const std::string& topic, PartitionId partition, std::vector<kafka::DecodedBatch> batches,
                        std::shared_ptr<const void> input, std::function<void(ProduceResult)> cb);
  // The first sequences of the batches of `producer_id` at `epoch` stored at offsets >= `from`,
  // read from Iggy up to the high watermark (at most [transactions] max_recovery_scan_messages; more is
  // an error): which batches of a commit interrupted by a crash are already in Iggy.
  void producer_batches_since(const std::string& topic, PartitionId partition, KafkaOffset from,
                              ProducerId producer_id, ProducerEpoch epoch,
                              std::function<void(Result<std::vector<int32_t>>)> cb);
  // The last stable offset (LSO) of a partition is its high watermark, except while a committed
  // transaction is being appended: hold_stable() pins it at the high watermark it answers
  // (fresh from Iggy when the log has not loaded the partition) until release_stable() with that
  // offset. Holds count; the LSO is the lowest one held. read_committed fetches return no record
  // at or above the LSO and wake when a release moves it; Fetch reports it as last_stable_offset
  // and ListOffsets(latest) at read_committed answers it.
  void hold_stable(const std::string& topic, PartitionId partition, std::function<void(Result<KafkaOffset>)> held);
  void release_stable(const std::string& topic, PartitionId partition, KafkaOffset held);
  // A hold at a known offset (crash recovery: where a decided commit's appends began), in place
  // before the call returns; released with release_stable(topic, partition, at).
  void hold_stable_at(const std::string& topic, PartitionId partition, KafkaOffset at);

  // ---- held appends (docs/transactions.md, "Real offsets at produce time"; held_appends.h) ----

  // Where held batches are kept (the composition root gives SQLite's); without one no partition
  // holds.
  void set_held_store(HeldStore* store);
  // The offsets of a transactional batch of `count` records and `bytes` wire bytes of transaction
  // `txn`: the partition holds from now until every transaction with batches in it is decided,
  // and every later batch to it takes its offsets after these.
  void reserve_held(const std::string& topic, PartitionId partition, int32_t count, uint64_t bytes, HeldTxn txn,
                    AbortedRecordMarker producer, std::function<void(Result<KafkaOffset>)> cb);
  // The row of the batch reserved at `base` was not stored: its offsets become placeholders.
  void lose_held(const std::string& topic, PartitionId partition, KafkaOffset base);
  // Transaction `txn` ended: its batches in the partition reach Iggy once those before them have.
  void decide_held(const std::string& topic, PartitionId partition, HeldTxn txn, bool committed);
  // `settled` once the partition holds no batch of `txn`, or holds them behind an undecided
  // transaction (HeldAppends::when_settled).
  void when_held_settled(const std::string& topic, PartitionId partition, HeldTxn txn, std::function<void()> settled);
  // Startup, before the first Produce: the partition's stored held batches.
  void restore_held(const std::string& topic, PartitionId partition, std::vector<HeldBatch> rows,
                    std::function<void(Status)> done);
  const HeldStats& held_stats() const;

  // Answers every long-polling fetch now and stops new ones from waiting (shutdown).
  void stop_waiting();

  // For tests and metrics.
  size_t waiting_fetches() const;

  // TopicListener (registered with the catalog for the log's lifetime): a deleted topic's
  // offsets, time indexes and read-aheads are forgotten, and the fetches waiting on it answered
  // (UNKNOWN_TOPIC_OR_PARTITION, as appends still queued get from Iggy).
  void on_topic_deleted(const std::string& name) override;

 private:
  struct TopicLimits {
    int32_t partitions = 0;
    int32_t max_message_bytes = 0;
    bool deletable = true;  // deletes_allowed(): cleanup.policy includes `delete` (Kafka's deleteRecordsOnLeader)
    bool compacted = false;  // compacts(): cleanup.policy includes `compact`, keyless records refused
  };

  struct RecoveryScan;  // producer_batches_since
  void scan_step(std::shared_ptr<RecoveryScan> scan);

  template <typename T>
  std::function<void(T)> deferred_if_sync(std::function<void(T)> cb, Liveness::Token in_call);
  void lookup(const std::string& topic, PartitionId partition, std::function<void(Result<TopicLimits>)> cb);

  uv_loop_t* loop_;
  uint64_t keyless_compacted_records_ = 0;
  TopicCatalog& catalog_;
  const config::Config& config_;
  uv::Tasks tasks_;
  std::unique_ptr<BatchCache> cache_;  // before the reader and appender that use it
  std::unique_ptr<LogBackend> backend_;
  std::unique_ptr<OffsetsTable> offsets_;
  std::unique_ptr<Idempotence> idempotence_;
  std::unique_ptr<Reader> reader_;
  std::unique_ptr<Appender> appender_;
  std::unique_ptr<HeldAppends> held_;
  std::unique_ptr<OffsetIndex> index_;
  std::unique_ptr<RecordDeletion> deletion_;
  std::unique_ptr<LogDirs> log_dirs_;
  Liveness alive_;  // catalog callbacks check it
};

// A callback that runs later when called inside the call that was given it (shared by
// partition_log.cc and transactional_log.cc).
template <typename T>
std::function<void(T)> PartitionLog::deferred_if_sync(std::function<void(T)> cb, Liveness::Token in_call) {
  return [this, cb = std::move(cb), in_call](T value) {
    if (in_call) {
      tasks_.post([cb, value = std::move(value)]() mutable { cb(std::move(value)); });
      return;
    }
    cb(std::move(value));
  };
}

}  // namespace kib::bridge
