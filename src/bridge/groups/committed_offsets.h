// Committed offsets: what every group committed, per partition, cached in memory and kept in
// SQLite (committed_offsets). Kafka keeps this apart from the group protocol too
// (GroupMetadataManager's offset storage in 3.x, OffsetMetadataManager in 4.x): the
// coordinator (group_coordinator.h) decides who may commit and when a group's offsets expire;
// this service stores, answers OffsetFetch, deletes and expires. It knows nothing of members
// or generations.
//
// Everything runs on the loop thread. Writes go through the StateStore; a commit, delete or
// expiry reaches the cache (and is answered) only once its batch is on disk, so the cache
// follows the database in write order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/liveness.h"
#include "common/result.h"
#include "config/config.h"
#include "kafka/protocol/error_code.h"

namespace SQLite {
class Database;
}
namespace kib::state {
class StateStore;
}

namespace kib::bridge {

using kafka::ErrorCode;

class GroupTimers;

struct TopicPartitionIndex {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartitionIndex&) const = default;
};

struct OffsetCommitEntry {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int32_t leader_epoch = -1;
  std::optional<std::string> metadata;
};

// One partition's committed offset as OffsetFetch returns it (-1 and "" when none).
struct FetchedOffset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  ErrorCode error = ErrorCode::kNone;
};

struct CommittedOffsetsOptions {
  // offsets.retention.minutes (7 days).
  int64_t offsets_retention_ms = static_cast<int64_t>(config::GroupsConfig{}.offsets_retention_minutes) * 60 * 1000;
  // offset.metadata.max.bytes: longer metadata strings get OFFSET_METADATA_TOO_LARGE.
  int32_t offset_metadata_max_bytes = static_cast<int32_t>(config::GroupsConfig{}.offset_metadata_max_bytes);
  // Partition count of a topic, for UNKNOWN_TOPIC_OR_PARTITION on commits and offset deletes;
  // nullopt = no such topic. Unset = every partition is accepted.
  std::function<std::optional<int32_t>(const std::string& topic)> partition_count;
};

// When a group's offsets expire, as the group's owner decides (Kafka's
// ClassicGroup.offsetExpirationCondition). An offset committed with an explicit retention time
// (OffsetCommit v2-v4) expires then, whatever this says.
struct OffsetExpiration {
  enum class Clock {
    kNone,         // nothing else expires (a group in a rebalance, or not a consumer group)
    kSinceEmpty,   // retention after the group became empty, at empty_since_ms
    kSinceCommit,  // retention after each offset's commit, except kept_topics
  };
  Clock clock = Clock::kSinceCommit;
  int64_t empty_since_ms = 0;
  // kSinceCommit: topics whose offsets do not expire (a Stable consumer group's subscription).
  // Read during expire_offsets() only.
  const std::set<std::string>* kept_topics = nullptr;
};

class CommittedOffsets {
 public:
  CommittedOffsets(state::StateStore& store, GroupTimers& clock, CommittedOffsetsOptions options = {});
  ~CommittedOffsets();
  CommittedOffsets(const CommittedOffsets&) = delete;
  CommittedOffsets& operator=(const CommittedOffsets&) = delete;

  // Loads every committed offset (blocking: startup only).
  Status load();
  // Forgets the cache; later commits and deletes get COORDINATOR_NOT_AVAILABLE. Writes already
  // queued are still answered. Call it when shutdown begins, with the coordinator's stop().
  void stop();

  // Stores `entries` for the group (creating its consumer_groups row if it has none);
  // `retention_time_ms` >= 0 gives them an explicit expiry (OffsetCommit v2-v4). `done` gets one
  // error per entry, in order, once the accepted offsets are durable. Who may commit is the
  // coordinator's business: it calls this after its checks.
  void commit(const std::string& group_id, std::vector<OffsetCommitEntry> entries, int64_t retention_time_ms,
              std::function<void(std::vector<ErrorCode>)> done);
  // Offsets a committed transaction wrote into committed_offsets itself, in the same SQLite
  // transaction as its commit decision (docs/transactions.md): the cache takes them, as a
  // commit() would once durable. The group's consumer_groups row is the writer's business
  // (state::ensure_group_row). Rows are checked as commit() checks nothing: the coordinator did.
  void adopt(const std::string& group_id, const std::vector<OffsetCommitEntry>& entries, int64_t commit_time_ms);
  // What commit() would refuse of one entry: OFFSET_METADATA_TOO_LARGE, UNKNOWN_TOPIC_OR_PARTITION.
  ErrorCode check_entry(const std::string& topic, int32_t partition, const std::optional<std::string>& metadata) const;
  // The clock commit() stamps commit times with.
  int64_t now_ms() const;
  // `partitions` null = every committed partition of the group, by topic and partition.
  std::vector<FetchedOffset> fetch_offsets(const std::string& group_id,
                                           const std::vector<TopicPartitionIndex>* partitions) const;
  // Deletes the partitions' offsets (OffsetDelete), except those of topics `subscribed` says
  // the group consumes (GROUP_SUBSCRIBED_TO_TOPIC; null = none). Group level error, then one
  // error per partition; answered once durable.
  void delete_offsets(const std::string& group_id, const std::vector<TopicPartitionIndex>& partitions,
                      const std::function<bool(const std::string& topic)>& subscribed,
                      std::function<void(ErrorCode, std::vector<ErrorCode>)> done);
  // Expires the group's offsets past retention by `how` (Kafka: cleanupExpiredOffsets). True
  // when some are being expired; once that is durable the expiry listener hears of the group.
  bool expire_offsets(const std::string& group_id, const OffsetExpiration& how);
  // The group was deleted, its offsets with it (state::delete_group, written by the
  // coordinator): the cache forgets them, and writes still queued for it leave the cache alone.
  void forget_group(const std::string& group_id);
  // The topic was deleted, its committed offsets with it (state::delete_topic_everywhere,
  // written by the catalog; Kafka: GroupCoordinator.onPartitionsDeleted): the cache forgets them
  // in every group. Groups stay; one left empty without offsets expires as usual.
  void forget_topic(const std::string& topic);

  // Called with the group's id once offsets expire_offsets() removed are gone from disk and
  // cache: the coordinator drops empty groups left without offsets there. One listener; null
  // = none.
  void set_expiry_listener(std::function<void(const std::string& group_id)> listener);

  // The group has committed offsets, or offset writes in flight.
  bool has_offsets(const std::string& group_id) const;
  // Groups with committed offsets, by id.
  std::vector<std::string> groups() const;
  size_t pending_writes() const { return pending_writes_; }

 private:
  struct Group;

  Group* find(const std::string& group_id) const;
  Group& find_or_create(const std::string& group_id);
  // The group's entry still is the one `incarnation` names (not forgotten meanwhile).
  Group* current(const std::string& group_id, uint64_t incarnation) const;
  void erase_if_unused(const std::string& group_id);
  bool metadata_too_large(const std::optional<std::string>& metadata) const;
  bool partition_exists(const std::string& topic, int32_t partition) const;
  void write(std::function<void(SQLite::Database&)> job, std::function<void(Status)> done);

  state::StateStore& store_;
  GroupTimers& clock_;
  CommittedOffsetsOptions options_;
  std::map<std::string, std::unique_ptr<Group>> groups_;
  std::function<void(const std::string&)> expiry_listener_;
  uint64_t next_incarnation_ = 1;
  size_t pending_writes_ = 0;
  bool stopped_ = false;
  // Completions from the StateStore may arrive after the service is gone; they check this.
  Liveness alive_;
};

}  // namespace kib::bridge
