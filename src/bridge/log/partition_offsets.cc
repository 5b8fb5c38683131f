#include "bridge/log/partition_offsets.h"

#include <algorithm>
#include <climits>

#include "bridge/errors.h"

namespace kib::bridge {

using kafka::ErrorCode;

KafkaOffset high_watermark_of(const iggy::PartitionInfo& info) {
  if (info.messages_count == 0 && info.current_offset == 0) return KafkaOffset(0);
  return KafkaOffset(static_cast<int64_t>(info.current_offset)) + 1;
}

void apply_partition_info(PartitionOffsets& p, const iggy::PartitionInfo& info, bool appended_since) {
  const KafkaOffset hw = high_watermark_of(info);
  // The reply may predate one of our own appends: never go below what Iggy acknowledged since.
  // Otherwise trust it, even when it is lower (purged or recreated topic).
  p.high_watermark = appended_since ? std::max(hw, p.high_watermark) : hw;
  p.reply_high_watermark = hw;
  p.segments_count = info.segments_count;
  p.size_bytes = info.size_bytes;
  p.iggy_log_start = std::min(p.iggy_log_start, p.high_watermark);
  p.log_start = std::min(p.log_start, p.high_watermark);  // the floor too: a purged partition ends lower
  if (info.messages_count > 0) p.avg_message_bytes = info.size_bytes / info.messages_count;
}

void observe_poll(PartitionOffsets& p, const iggy::PolledMessages& reply) {
  if (reply.messages.empty()) return;
  // A non-empty reply proves the partition is non-empty, so current_offset is the last offset.
  const KafkaOffset last(std::max(static_cast<int64_t>(reply.current_offset),
                                   static_cast<int64_t>(reply.messages.back().offset)));
  p.high_watermark = std::max(p.high_watermark, last + 1);
  if (reply.payload_bytes) p.avg_message_bytes = std::max<uint64_t>(1, reply.payload_bytes / reply.messages.size());
}

namespace {
// Where the log starts before the DeleteRecords floor: Iggy's first offset, or for a cleaned
// partition the log start its cleaned head keeps.
KafkaOffset base_log_start(const PartitionOffsets& p) {
  return p.cleaned ? KafkaOffset(p.cleaned->log_start) : p.iggy_log_start;
}
}  // namespace

void set_iggy_log_start(PartitionOffsets& p, KafkaOffset first) {
  p.iggy_log_start = first;
  p.log_start = std::max(base_log_start(p), p.deleted_to);
}

void set_cleaned_head(PartitionOffsets& p, std::shared_ptr<const compaction::CleanedHead> head) {
  p.cleaned = std::move(head);
  p.log_start = std::max(base_log_start(p), p.deleted_to);
}

void raise_floor(PartitionOffsets& p, KafkaOffset floor) {
  p.deleted_to = std::max(p.deleted_to, floor);
  p.log_start = std::max(p.log_start, p.deleted_to);
}

void note_appended(PartitionOffsets& p, KafkaOffset base, int64_t count) {
  if (base >= KafkaOffset(0)) p.high_watermark = std::max(p.high_watermark, base + count);
  ++p.appends_done;
}

PartitionOffsets& OffsetsTable::at(const std::string& topic, PartitionId id) {
  auto& slot = partitions_[{topic, id}];
  if (!slot) {
    slot = std::make_unique<PartitionOffsets>();
    slot->topic = topic;
    slot->id = id;
  }
  return *slot;
}

const PartitionOffsets* OffsetsTable::find(const std::string& topic, PartitionId id) const {
  auto it = partitions_.find({topic, id});
  return it == partitions_.end() ? nullptr : it->second.get();
}

std::vector<const PartitionOffsets*> OffsetsTable::of_topic(const std::string& topic) const {
  auto mutable_entries = const_cast<OffsetsTable*>(this)->partitions_of(topic);
  return {mutable_entries.begin(), mutable_entries.end()};
}

void OffsetsTable::reset_topic(const std::string& topic) {
  for (PartitionOffsets* p : partitions_of(topic)) {
    p->loaded = false;
    p->high_watermark = KafkaOffset(0);
    p->log_start = KafkaOffset(0);
    p->iggy_log_start = KafkaOffset(0);
    p->deleted_to = KafkaOffset(0);  // a recreated topic has no DeleteRecords floor
    p->reply_high_watermark = KafkaOffset(0);
    p->segments_count = 0;
    p->size_bytes = 0;
    p->avg_message_bytes = 0;
    p->cleaned = nullptr;  // nor a cleaned head (its rows went with the topic's)
  }
  topic_refreshed_at_.erase(topic);
}

std::vector<PartitionOffsets*> OffsetsTable::partitions_of(const std::string& topic) {
  std::vector<PartitionOffsets*> out;  // keyed by (topic, id): the topic's entries are adjacent
  for (auto it = partitions_.lower_bound({topic, PartitionId(INT32_MIN)});
       it != partitions_.end() && it->first.first == topic; ++it)
    out.push_back(it->second.get());
  return out;
}

std::optional<uint64_t> OffsetsTable::refreshed_at(const std::string& topic) const {
  auto it = topic_refreshed_at_.find(topic);
  if (it == topic_refreshed_at_.end()) return std::nullopt;
  return it->second;
}

void OffsetsTable::refresh_topic(const std::string& topic, std::function<void(Status)> done) {
  auto& waiting = topic_refreshes_[topic];
  waiting.push_back(std::move(done));
  if (waiting.size() > 1) return;  // one GetTopic in flight per topic serves everyone

  std::vector<std::pair<PartitionOffsets*, uint64_t>> appends_before;
  for (auto it = partitions_.lower_bound({topic, PartitionId(INT32_MIN)});
       it != partitions_.end() && it->first.first == topic; ++it)
    appends_before.emplace_back(it->second.get(), it->second->appends_done);

  backend_.get_topic(topic, [this, topic, appends_before](Result<std::optional<iggy::TopicInfo>> r) {
    Status status = ok_status();
    if (!r) {
      status = r.error();
    } else if (!r.value()) {
      status = kafka_error(ErrorCode::kUnknownTopicOrPartition, "topic " + topic + " is not in Iggy");
    } else {
      for (const iggy::PartitionInfo& info : r.value()->partitions) {
        PartitionOffsets& p = at(topic, PartitionId(static_cast<int32_t>(info.id)));
        auto before = std::find_if(appends_before.begin(), appends_before.end(),
                                   [&](const auto& e) { return e.first == &p; });
        const uint64_t appends_then = before == appends_before.end() ? 0 : before->second;
        apply_partition_info(p, info, p.appends_done != appends_then);
      }
    }
    if (status) topic_refreshed_at_[topic] = uv_now(loop_);
    auto waiting = std::move(topic_refreshes_[topic]);
    topic_refreshes_.erase(topic);
    for (auto& cb : waiting) cb(status);
  });
}

void OffsetsTable::refresh_log_start(PartitionOffsets& p, std::function<void(Status)> done) {
  p.log_start_refreshes.push_back(std::move(done));
  if (p.log_start_refreshes.size() > 1) return;
  poll(p, iggy::PollingStrategy::first(), 1, [pp = &p](Result<iggy::PolledMessages> r) {
    PartitionOffsets& p = *pp;
    Status status = ok_status();
    if (!r) {
      status = r.error();
    } else {
      observe_poll(p, *r);
      // Nothing retained (e.g. retention emptied the partition): log start = high watermark.
      set_iggy_log_start(p, r->messages.empty() ? p.high_watermark
                                                : KafkaOffset(static_cast<int64_t>(r->messages.front().offset)));
    }
    auto waiting = std::move(p.log_start_refreshes);
    p.log_start_refreshes.clear();
    for (auto& cb : waiting) cb(status);
  });
}

void OffsetsTable::refresh(PartitionOffsets& p, std::function<void(Status)> done) {
  refresh_topic(p.topic, [this, pp = &p, done = std::move(done)](Status s) {
    if (!s) {
      done(s);
      return;
    }
    refresh_log_start(*pp, [pp, done](Status s2) {
      if (s2) pp->loaded = true;
      done(s2);
    });
  });
}

}  // namespace kib::bridge
