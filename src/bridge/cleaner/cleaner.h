// The log cleaner of cleanup.policy=compact topics (docs/compaction.md, "A pass"): it picks the
// partitions worth cleaning, writes each one's next generation (the records compaction keeps
// below the new cleaner point, each with its Kafka offset) into the [compaction] stream, verifies
// and commits it in SQLite, swaps the partition log's cleaned head, moves the Iggy consumer-offset
// barrier up to the new cleaner point and deletes the live log's segments below it, then the
// previous generation. At startup it finishes or undoes the passes a crash interrupted.
//
// Decisions come from cleaner_model.h; this is their I/O. Iggy calls are asynchronous on the
// loop, paced by [compaction] io_bytes_per_second; decoding, hashing and the copies' header
// blocks run on libuv's thread pool, one chunk of a pass at a time. Loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/compaction/cleaner_model.h"
#include "common/liveness.h"
#include "common/ids.h"
#include "common/result.h"
#include "config/config.h"
#include "iggy/client.h"
#include "uvx/timer.h"

namespace kib::state {
class StateStore;
struct CompactionStateRow;
}

namespace kib::bridge {
class PartitionLog;
}

namespace kib::bridge::compaction {

struct CleanerStats {
  uint64_t passes_committed = 0;
  uint64_t passes_failed = 0;     // an Iggy or SQLite error: undone, tried again after backoff_ms
  uint64_t passes_abandoned = 0;  // the written generation did not read back as written
  uint64_t passes_recovered = 0;  // interrupted passes finished or undone at startup
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t records_removed = 0;
  uint64_t barrier_repairs = 0;  // a barrier found elsewhere than C - 1 and stored again
  uint64_t orphans_deleted = 0;  // generation topics no state named, deleted at startup
  uint64_t running = 0;          // passes in progress
  double last_pass_seconds = 0;
};

// One compacted partition as `kafka-iggy-bridge topics list` and /metrics show it.
struct PartitionCleanStatus {
  std::string topic;
  int32_t partition = 0;
  int64_t cleaner_point = 0;
  double dirty_ratio = 0;
  int64_t generation = 0;  // 0: never cleaned
  std::string generation_topic;
  int64_t kept_records = 0;
  bool running = false;
};

class Cleaner final : public TopicListener {
 public:
  Cleaner(uv_loop_t* loop, const config::CompactionConfig& cfg, iggy::IggyClient iggy, TopicCatalog& catalog,
          PartitionLog& log, state::StateStore& state);
  ~Cleaner() override;
  Cleaner(const Cleaner&) = delete;
  Cleaner& operator=(const Cleaner&) = delete;

  // Reads the cleaned partitions' state, finishes or undoes the passes a crash interrupted,
  // stores every barrier again and deletes generation topics nothing names; then, when
  // [compaction] enabled, checks the compacted partitions every backoff_ms. `recovered` (optional)
  // runs once recovery is over.
  void start(std::function<void(Status)> recovered = nullptr);
  void stop();
  // One pass of one partition now, whatever its dirty ratio (the cleanable end still applies):
  // `done` gets the error, or ok once the pass committed (or had nothing to clean).
  void clean(const std::string& topic, int32_t partition, std::function<void(Status)> done);

  std::vector<PartitionCleanStatus> status() const;
  const CleanerStats& stats() const { return stats_; }
  uint32_t max_metric_partitions() const { return cfg_.max_metric_partitions; }

  void on_topic_deleted(const std::string& name) override;

 private:
  struct Part;
  struct Pass;
  using Key = std::pair<std::string, int32_t>;

  void check();
  void check_topic(const std::string& topic);
  void on_append(const std::string& topic, PartitionId partition, KafkaOffset base, int64_t count, uint64_t bytes);
  CleanerPolicy policy_of(const TopicMetadata& t) const;
  Part& part(const std::string& topic, int32_t partition);

  // The steps of a pass (docs/compaction.md, "A pass"), each continuing with the next.
  void run(std::shared_ptr<Pass> pass);
  void map_dirty(std::shared_ptr<Pass> pass);
  void begin(std::shared_ptr<Pass> pass);
  void create_generation(std::shared_ptr<Pass> pass);
  void copy_from(std::shared_ptr<Pass> pass, bool generation, uint64_t next);
  static void decide(Pass& pass, const iggy::PolledMessages& polled, bool generation, int64_t now, uint64_t& last,
                     bool& reached_end);
  void send_copies(std::shared_ptr<Pass> pass, std::function<void()> then);
  void verify(std::shared_ptr<Pass> pass);
  void commit(std::shared_ptr<Pass> pass);
  void note_committed(const Pass& pass, const state::CompactionStateRow& row);
  static void adopt(Part& p, const state::CompactionStateRow& row);
  // `previous_point`: where the last pass left the cleaner point (a barrier found there is not a
  // repair); -1: none known.
  void barrier(const std::string& topic, int32_t partition, int64_t cleaner_point, std::function<void(Status)> done,
               int64_t previous_point = -1);
  void delete_sealed(const iggy::Identifier& stream, const iggy::Identifier& topic, int32_t partition,
                     std::function<void(Status)> done);
  void retire_unread(std::shared_ptr<Pass> pass, std::weak_ptr<const CleanedHead> previous);
  void retire(std::shared_ptr<Pass> pass);
  void finish(std::shared_ptr<Pass> pass, Status status);
  void undo(std::shared_ptr<Pass> pass, std::function<void()> then);
  // The end of a step of a pass: the fault tests' hooks (cleaner.cc), then `next`.
  void at_step(const char* step, std::function<void()> next);

  void recover(std::function<void(Status)> done);
  void sweep_orphans(std::function<void()> done);
  void ensure_stream(std::function<void(Status)> done);
  void delete_generation_topic(const std::string& name, std::function<void()> done);
  // Waits (a timer) until `bytes` more fit in io_bytes_per_second, then runs `then`.
  void paced(uint64_t bytes, std::function<void()> then);
  // Runs `then` in `ms` (a timer of waits_).
  void after_ms(int64_t ms, std::function<void()> then);
  // Runs `then` once `ready()` (checked every kRetireWaitMs on the loop's timers), or after max_ms.
  void wait_until(std::function<bool()> ready, int64_t max_ms, std::function<void()> then);

  uv_loop_t* loop_;
  config::CompactionConfig cfg_;
  iggy::IggyClient iggy_;
  TopicCatalog& catalog_;
  PartitionLog& log_;
  state::StateStore& state_;
  std::map<Key, std::unique_ptr<Part>> parts_;
  CleanerStats stats_;
  std::unique_ptr<uv::Timer> check_timer_;
  std::vector<std::unique_ptr<uv::Timer>> waits_;  // pacing and retire waits
  double io_free_at_ms_ = 0;  // when the I/O budget has room again (loop time)
  bool started_ = false;
  bool stopped_ = false;
  bool paused_once_ = false;  // the fault tests' pause hook holds one pass only
  Liveness alive_;
};

}  // namespace kib::bridge::compaction
