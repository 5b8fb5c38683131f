// The bottom of the log: what the bridge knows of each partition's offsets in Iggy.
//
//   * Offsets are Iggy's offsets. High watermark = last offset + 1 (0 when empty), refreshed from
//     GetTopic, from every non-empty poll and from the bridge's own appends; Iggy's log start = the
//     first retained offset (Poll First), refreshed whenever a read looks out of range.
//   * The log start Kafka clients see is max(Iggy's log start, the DeleteRecords floor): Iggy cannot
//     truncate at an offset, so the bridge keeps the floor (SQLite partition_log_start, loaded at
//     startup) and every read, ListOffsets and Fetch answer goes by the effective `log_start`.
//   * GetTopic and Poll First are shared: one in flight per topic (per partition) serves every
//     caller that asks meanwhile.
//
// Entries are created lazily and never removed: the services above keep pointers to them.
// Loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bridge/compaction/cleaner_model.h"
#include "bridge/log/log_backend.h"
#include "common/ids.h"
#include "common/result.h"

namespace kib::bridge {

struct PartitionOffsets {
  std::string topic;
  PartitionId id;
  bool loaded = false;  // high watermark and log start read from Iggy at least once
  KafkaOffset high_watermark;
  // Effective: max(iggy_log_start, deleted_to), never above high_watermark; for a cleaned
  // partition max(cleaned->log_start, deleted_to): Iggy's first offset is then the live log's,
  // which moves up as its segments below the cleaner point go (docs/compaction.md).
  KafkaOffset log_start;
  KafkaOffset iggy_log_start;  // Iggy's first retained offset (Poll First)
  KafkaOffset deleted_to;      // DeleteRecords floor kept by the bridge (0 = none)
  // From the last GetTopic reply: the high watermark it gave and the partition's segments and size
  // (DeleteRecords' DeleteSegments rule, DescribeLogDirs).
  KafkaOffset reply_high_watermark;
  uint32_t segments_count = 0;
  uint64_t size_bytes = 0;
  uint64_t avg_message_bytes = 0;  // Iggy bytes per message, sizes poll counts (0 = unknown)
  uint64_t appends_done = 0;       // own appends; a GetTopic reply older than one must not lower HW
  std::vector<std::function<void(Status)>> log_start_refreshes;  // coalesced Poll First
  // Last stable offset holds of committed transactions being appended (PartitionLog::hold_stable):
  // read_committed readers see nothing at or above the lowest.
  std::multiset<int64_t> stable_holds;
  // The cleaned head of a compacted partition, once a pass has written one (nullptr: none).
  std::shared_ptr<const compaction::CleanedHead> cleaned;
};

// The last stable offset: the high watermark, or the lowest hold below it.
inline KafkaOffset last_stable_offset(const PartitionOffsets& p) {
  if (p.stable_holds.empty() || *p.stable_holds.begin() >= p.high_watermark()) return p.high_watermark;
  return KafkaOffset(*p.stable_holds.begin());
}

// High watermark from GetTopic: last offset + 1, 0 when empty (docs/iggy-protocol.md §7). current_offset
// is 0 both for "empty" and for "one message at 0"; messages_count tells them apart.
KafkaOffset high_watermark_of(const iggy::PartitionInfo& info);
// A GetTopic reply for the partition. `appended_since`: one of our own appends was acknowledged
// after the request went out, so the reply must not lower the high watermark.
void apply_partition_info(PartitionOffsets& p, const iggy::PartitionInfo& info, bool appended_since);
// What any poll reply proves about the partition's end and its messages' size.
void observe_poll(PartitionOffsets& p, const iggy::PolledMessages& reply);
// Iggy's log start is now `first`; recomputes the effective log start.
void set_iggy_log_start(PartitionOffsets& p, KafkaOffset first);
// Raises the DeleteRecords floor to `floor` (never lowers it); recomputes the effective log start.
void raise_floor(PartitionOffsets& p, KafkaOffset floor);
// The partition's cleaned head is now `head` (a pass committed, or startup); recomputes the
// effective log start.
void set_cleaned_head(PartitionOffsets& p, std::shared_ptr<const compaction::CleanedHead> head);
// Iggy acknowledged one of our appends: `count` messages from `base` (-1: offset not reported).
void note_appended(PartitionOffsets& p, KafkaOffset base, int64_t count);

class OffsetsTable {
 public:
  OffsetsTable(uv_loop_t* loop, LogBackend& backend) : loop_(loop), backend_(backend) {}
  OffsetsTable(const OffsetsTable&) = delete;
  OffsetsTable& operator=(const OffsetsTable&) = delete;

  PartitionOffsets& at(const std::string& topic, PartitionId id);
  const PartitionOffsets* find(const std::string& topic, PartitionId id) const;
  // Every partition of `topic` the table has seen, by id.
  std::vector<const PartitionOffsets*> of_topic(const std::string& topic) const;

  // GetTopic: the offsets of every partition of `topic`.
  void refresh_topic(const std::string& topic, std::function<void(Status)> done);
  // Poll First: the partition's log start.
  void refresh_log_start(PartitionOffsets& p, std::function<void(Status)> done);
  // Both; the partition is `loaded` once they succeeded.
  void refresh(PartitionOffsets& p, std::function<void(Status)> done);
  // The topic was deleted: its partitions' entries (kept: callers hold pointers) forget what
  // they knew, DeleteRecords floor included, so a topic created again under the name is read
  // from Iggy afresh and starts at 0 (its SQLite rows go with state::delete_topic_everywhere).
  void reset_topic(const std::string& topic);
  // The entries of `topic`'s partitions that exist, by id (of_topic, for changing them).
  std::vector<PartitionOffsets*> partitions_of(const std::string& topic);

  // Loop ms of the last successful GetTopic of `topic`.
  std::optional<uint64_t> refreshed_at(const std::string& topic) const;

  // A poll of the partition (callers observe_poll() what they got), as `as` (LogBackend::poll).
  void poll(const PartitionOffsets& p, iggy::PollingStrategy strategy, uint32_t count,
            iggy::Callback<iggy::PolledMessages> cb, iggy::IggyPool* as = nullptr) {
    backend_.poll(p.topic, p.id(), strategy, count, std::move(cb), as);
  }
  // A poll of a cleaned partition's generation topic (LogBackend::poll_generation).
  void poll_generation(const compaction::CleanedHead& head, iggy::PollingStrategy strategy, uint32_t count,
                       iggy::Callback<iggy::PolledMessages> cb) {
    backend_.poll_generation(head.stream, head.topic, strategy, count, std::move(cb));
  }

 private:
  uv_loop_t* loop_;
  LogBackend& backend_;
  std::map<std::pair<std::string, PartitionId>, std::unique_ptr<PartitionOffsets>> partitions_;
  std::map<std::string, std::vector<std::function<void(Status)>>> topic_refreshes_;  // coalesced GetTopic
  std::map<std::string, uint64_t> topic_refreshed_at_;  // loop ms of the last GetTopic reply
};

}  // namespace kib::bridge
