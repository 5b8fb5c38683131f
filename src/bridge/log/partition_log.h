// PartitionLog: Kafka's partition log on top of Iggy partitions — Produce, Fetch and ListOffsets
// semantics (DESIGN.md §4, docs/mapping.md). Handlers decode and encode; everything Kafka
// decides about an append or a read happens here.
//
// Per partition (created lazily) it keeps the high watermark and log start offset learned from
// Iggy, the queue of appends, the fetches waiting for data, and a time index:
//   * Offsets are Iggy's offsets. High watermark = last offset + 1 (0 when empty), refreshed from
//     GetTopic, from every non-empty poll and from the bridge's own appends; log start = the
//     first retained offset (Poll First), refreshed whenever a read looks out of range.
//   * Appends to one partition go to Iggy one at a time, in arrival order: Iggy replies can
//     overtake each other across pool connections, and an idempotent producer's sequence order
//     must be the offset order. Different partitions append in parallel.
//   * Fetch long-polls: it wakes at once when this bridge appends to a requested partition and
//     otherwise asks Iggy (GetTopic per topic) with backoff, so native Iggy producers are seen.
//   * Fetch reads ahead: once a fetch got data from a partition, the poll for the offset after
//     it starts at once, so a consumer's next fetch does not wait for Iggy (bounded in age and
//     in total bytes).
//   * ListOffsets by timestamp and max timestamp (-3) use a time index (time_index.h) built by
//     scanning the partition once and extended incrementally: exact even where CreateTime does
//     not grow with the offset, which Iggy's own timestamp poll (append time) cannot be. The
//     first such query on a large partition reads all of it.
//
// Loop thread only. Callbacks never run inside the call that was given them. Destroying the log
// drops pending work without calling its callbacks.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "config/config.h"
#include "iggy/client.h"
#include "iggy/loop.h"
#include "kafka/protocol/error_code.h"
#include "kafka/records/record_batch.h"

namespace kib::bridge {

class TopicCatalog;
class ProducerRegistry;

// ListOffsets' special timestamps.
inline constexpr int64_t kLatestTimestamp = -1;
inline constexpr int64_t kEarliestTimestamp = -2;
inline constexpr int64_t kMaxTimestamp = -3;            // v7+
inline constexpr int64_t kEarliestLocalTimestamp = -4;  // v8+ (tiered storage; = earliest here)

struct ProduceResult {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  std::string message;  // why, for errors (Produce v8+ error_message)
  int64_t base_offset = -1;
  int64_t log_append_time_ms = -1;  // -1: CreateTime
  int64_t log_start_offset = -1;
};

enum class IsolationLevel : int8_t { kReadUncommitted = 0, kReadCommitted = 1 };

struct FetchPartitionRequest {
  std::string topic;
  int32_t partition = 0;
  int64_t fetch_offset = 0;
  int32_t max_bytes = 0;  // partition_max_bytes
};

struct FetchParams {
  int32_t max_wait_ms = 0;
  int32_t min_bytes = 1;
  int32_t max_bytes = INT32_MAX;  // whole response (KIP-74)
  IsolationLevel isolation = IsolationLevel::kReadUncommitted;
};

struct FetchPartitionResult {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  int64_t high_watermark = -1;
  int64_t last_stable_offset = -1;  // = high watermark: no transactions yet
  int64_t log_start_offset = -1;
  Bytes records;  // v2 batches, empty when none
};

// One result per requested partition, in request order.
using FetchCallback = std::function<void(std::vector<FetchPartitionResult>)>;

struct OffsetLookup {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  int64_t offset = -1;
  int64_t timestamp = -1;
};

class PartitionLog {
 public:
  PartitionLog(uv_loop_t* loop, iggy::IggyClient& iggy, TopicCatalog& catalog, ProducerRegistry* producers,
               const config::Config& config);
  ~PartitionLog();
  PartitionLog(const PartitionLog&) = delete;
  PartitionLog& operator=(const PartitionLog&) = delete;

  // Appends one partition's batches (Produce v3+ rules: exactly one batch, see
  // produce_validation.h). `input` keeps alive the bytes uncompressed batches point into. The
  // callback runs after Iggy acknowledged the append (whatever `acks`; acks=0 callers ignore it).
  void produce(const std::string& topic, int32_t partition, std::vector<kafka::DecodedBatch> batches,
               std::shared_ptr<const void> input, int16_t acks, std::function<void(ProduceResult)> cb);

  // What produce() would refuse for sure, from the catalog's cache alone, checked by the Produce
  // handler before it decodes (and decompresses) a partition's records: a name that cannot be a
  // topic, or a partition a cached topic does not have (UNKNOWN_TOPIC_OR_PARTITION, as Kafka
  // answers before looking at the records). OK when the cache does not know the topic:
  // produce() asks Iggy then.
  Status precheck_produce(const std::string& topic, int32_t partition) const;

  // `partitions`: each at most once (the handler merges repeats, as Kafka does). The partitions'
  // reads share params.max_bytes in request order, so one fetch holds about that much read data
  // whatever its partition_max_bytes say. `owner`: the Kafka connection (iggy/owner.h); its
  // fetches are dropped by cancel_fetches() when it closes.
  void fetch(std::vector<FetchPartitionRequest> partitions, const FetchParams& params, FetchCallback cb,
             uint64_t owner = 0);
  // Drops `owner`'s pending fetches without calling their callbacks (its connection closed), and
  // their polls still queued for Iggy.
  void cancel_fetches(uint64_t owner);

  // `timestamp`: kLatestTimestamp, kEarliestTimestamp, kEarliestLocalTimestamp, kMaxTimestamp, or
  // a time in ms (the first offset whose record timestamp is >= it; -1/-1 without error if none).
  void list_offsets(const std::string& topic, int32_t partition, int64_t timestamp,
                    std::function<void(OffsetLookup)> cb);

  // Learns the offsets of every partition of `topic` from Iggy (one GetTopic, shared with a
  // refresh already in flight). For consumer-lag metrics.
  void refresh_offsets_of(const std::string& topic, std::function<void(Status)> done) {
    refresh_topic(topic, std::move(done));
  }
  // The high watermark last learned for a partition; nullopt when the log has not seen it.
  std::optional<int64_t> high_watermark(const std::string& topic, int32_t partition) const;

  // Answers every long-polling fetch now and stops new ones from waiting (shutdown).
  void stop_waiting();

  // For tests and metrics.
  size_t waiting_fetches() const { return fetches_.size(); }

 private:
  struct Partition;
  struct AppendJob;
  void recover_tail(Partition& p, std::function<void()> done);
  struct FetchOp;
  struct PartitionRead;
  struct TopicLimits {
    int32_t partitions = 0;
    int32_t max_message_bytes = 0;
  };

  template <typename T>
  std::function<void(T)> deferred_if_sync(std::function<void(T)> cb, std::shared_ptr<bool> in_call);
  template <typename T, typename F>
  iggy::Callback<T> guarded(F&& f);

  void lookup(const std::string& topic, int32_t partition, std::function<void(Result<TopicLimits>)> cb);
  Partition& partition(const std::string& topic, int32_t id);

  // Offsets from Iggy.
  void refresh_topic(const std::string& topic, std::function<void(Status)> done);
  void refresh_log_start(Partition& p, std::function<void(Status)> done);
  void refresh_offsets(Partition& p, std::function<void(Status)> done);
  void poll(const Partition& p, iggy::PollingStrategy strategy, uint32_t count, iggy::Callback<iggy::PolledMessages> cb);
  void observe_poll(Partition& p, const iggy::PolledMessages& reply);

  // Produce.
  void pump_appends(Partition& p);
  void stamp_producer_ids(AppendJob& job);
  void finish_append(Partition& p, ProduceResult result);
  void notify_waiters(Partition& p);

  // Fetch.
  void read_partition(Partition& p, int64_t offset, int32_t max_bytes, bool refreshed, uint64_t owner,
                      std::function<void(PartitionRead)> cb);
  void run_pass(uint64_t op_id);
  void read_finished(uint64_t op_id);
  void fetch_poll(Partition& p, int64_t offset, uint32_t count, uint64_t owner,
                  iggy::Callback<iggy::PolledMessages> cb);
  void start_read_ahead(Partition& p, int64_t offset, uint32_t count);
  void drop_read_ahead(Partition& p);
  void pass_done(uint64_t op_id);
  void arm_wait(uint64_t op_id);
  void wake(uint64_t op_id);
  void check_for_news(uint64_t op_id);
  void respond(uint64_t op_id);

  // ListOffsets.
  void extend_time_index(Partition& p, std::function<void(Status)> done);
  void index_step(Partition& p);
  void scan_for_timestamp(Partition& p, int64_t from, int64_t timestamp, std::function<void(OffsetLookup)> cb);

  uv_loop_t* loop_;
  iggy::IggyClient iggy_;
  TopicCatalog& catalog_;
  ProducerRegistry* producers_;
  const config::Config& config_;
  iggy::LoopTasks tasks_;
  std::map<std::pair<std::string, int32_t>, std::unique_ptr<Partition>> partitions_;
  std::map<std::string, std::vector<std::function<void(Status)>>> topic_refreshes_;  // coalesced GetTopic
  std::map<std::string, uint64_t> topic_refreshed_at_;  // loop ms of the last GetTopic reply
  std::unordered_map<uint64_t, std::unique_ptr<FetchOp>> fetches_;
  uint64_t next_fetch_id_ = 1;
  uint64_t read_ahead_bytes_ = 0;  // estimated bytes of every partition's read-ahead
  bool stop_waiting_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // Iggy callbacks check it
};

}  // namespace kib::bridge
