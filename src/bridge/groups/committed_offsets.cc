#include "bridge/groups/committed_offsets.h"

#include <spdlog/spdlog.h>

#include "bridge/errors.h"
#include "bridge/groups/group_timers.h"
#include "common/text.h"
#include "state/group_store.h"
#include "state/state_store.h"

namespace kib::bridge {

namespace {

// Kafka limits offset metadata by String.length(): UTF-16 code units.
size_t utf16_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;  // a code point starts here
    if (c >= 0xF0) ++n;           // outside the BMP: a surrogate pair
  }
  return n;
}

struct CachedOffset {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_time_ms = 0;
  std::optional<int64_t> expire_time_ms;
};

}  // namespace

struct CommittedOffsets::Group {
  uint64_t incarnation = 0;  // a forgotten and recommitted group is a different group
  std::map<TopicPartitionIndex, CachedOffset> offsets;
  std::map<TopicPartitionIndex, int> pending_commits;  // commits not yet durable
  int pending_writes = 0;
};

CommittedOffsets::CommittedOffsets(state::StateStore& store, GroupTimers& clock, CommittedOffsetsOptions options)
    : store_(store), clock_(clock), options_(std::move(options)) {}

CommittedOffsets::~CommittedOffsets() { alive_.end(); }

Status CommittedOffsets::load() {
  std::vector<state::CommittedOffsetRow> rows;
  Status st = store_.run_blocking([&](SQLite::Database& db) { rows = state::load_committed_offsets(db); });
  if (!st) return st;
  groups_.clear();
  for (const auto& o : rows)
    find_or_create(o.group_id).offsets[{o.topic, o.partition}] =
        CachedOffset{o.committed_offset, o.leader_epoch, o.metadata, o.commit_time_ms, o.expire_time_ms};
  spdlog::info("groups: loaded {} committed offsets of {} groups", rows.size(), groups_.size());
  stopped_ = false;
  return ok_status();
}

void CommittedOffsets::stop() {
  stopped_ = true;
  groups_.clear();
}

void CommittedOffsets::set_expiry_listener(std::function<void(const std::string&)> listener) {
  expiry_listener_ = std::move(listener);
}

CommittedOffsets::Group* CommittedOffsets::find(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.get();
}

CommittedOffsets::Group& CommittedOffsets::find_or_create(const std::string& group_id) {
  auto& g = groups_[group_id];
  if (!g) {
    g = std::make_unique<Group>();
    g->incarnation = next_incarnation_++;
  }
  return *g;
}

CommittedOffsets::Group* CommittedOffsets::current(const std::string& group_id, uint64_t incarnation) const {
  Group* g = find(group_id);
  return g && g->incarnation == incarnation ? g : nullptr;
}

void CommittedOffsets::erase_if_unused(const std::string& group_id) {
  Group* g = find(group_id);
  if (g && g->offsets.empty() && g->pending_writes == 0) groups_.erase(group_id);
}

bool CommittedOffsets::has_offsets(const std::string& group_id) const {
  const Group* g = find(group_id);
  return g && (!g->offsets.empty() || g->pending_writes > 0);
}

std::vector<std::string> CommittedOffsets::groups() const {
  std::vector<std::string> out;
  for (const auto& [id, g] : groups_)
    if (!g->offsets.empty()) out.push_back(id);
  return out;
}

void CommittedOffsets::forget_group(const std::string& group_id) { groups_.erase(group_id); }

void CommittedOffsets::forget_topic(const std::string& topic) {
  std::vector<std::string> touched;
  for (auto& [id, g] : groups_) {
    bool any = false;
    for (auto it = g->offsets.lower_bound({topic, INT32_MIN}); it != g->offsets.end() && it->first.topic == topic;) {
      it = g->offsets.erase(it);
      any = true;
    }
    if (any) touched.push_back(id);
  }
  for (const auto& id : touched) erase_if_unused(id);
  if (!touched.empty()) spdlog::info("groups: dropped committed offsets of deleted topic {} in {} groups", topic, touched.size());
}

bool CommittedOffsets::metadata_too_large(const std::optional<std::string>& metadata) const {
  return metadata && utf16_length(*metadata) > static_cast<size_t>(options_.offset_metadata_max_bytes);
}

bool CommittedOffsets::partition_exists(const std::string& topic, int32_t partition) const {
  if (!options_.partition_count) return true;
  auto n = options_.partition_count(topic);
  return n && partition >= 0 && partition < *n;
}

void CommittedOffsets::write(std::function<void(SQLite::Database&)> job, std::function<void(Status)> done) {
  ++pending_writes_;
  store_.write(std::move(job), [this, alive = alive_.token(), done = std::move(done)](Status st) mutable {
    if (!alive) return;
    --pending_writes_;
    if (!st) spdlog::warn("groups: state write failed: {}", st.error().message);
    if (done) done(std::move(st));
  });
}

void CommittedOffsets::commit(const std::string& group_id, std::vector<OffsetCommitEntry> entries,
                              int64_t retention_time_ms, std::function<void(std::vector<ErrorCode>)> done) {
  std::vector<ErrorCode> errors(entries.size(), ErrorCode::kNone);
  if (stopped_) {
    std::fill(errors.begin(), errors.end(), ErrorCode::kCoordinatorNotAvailable);
    return done(std::move(errors));
  }
  int64_t now = clock_.now_ms();
  std::optional<int64_t> expire;
  if (retention_time_ms >= 0) expire = now + retention_time_ms;
  auto rows = std::make_shared<std::vector<state::CommittedOffsetRow>>();
  std::vector<size_t> written;  // indexes of `errors` the write decides
  for (size_t i = 0; i < entries.size(); ++i) {
    auto& e = entries[i];
    if (metadata_too_large(e.metadata)) {
      errors[i] = ErrorCode::kOffsetMetadataTooLarge;
    } else if (!partition_exists(e.topic, e.partition)) {
      errors[i] = ErrorCode::kUnknownTopicOrPartition;
    } else {
      rows->push_back({group_id, e.topic, e.partition, e.offset, e.leader_epoch, e.metadata.value_or(""), now, expire});
      written.push_back(i);
    }
  }
  if (rows->empty()) return done(std::move(errors));
  Group& g = find_or_create(group_id);
  for (const auto& r : *rows) ++g.pending_commits[{r.topic, r.partition}];
  ++g.pending_writes;
  write(
      [rows, group_id, now](SQLite::Database& db) {
        state::ensure_group_row(db, group_id, now);
        state::upsert_committed_offsets(db, *rows);
      },
      [this, rows, group_id, incarnation = g.incarnation, errors = std::move(errors), written = std::move(written),
       done = std::move(done)](Status st) mutable {
        if (Group* g = current(group_id, incarnation)) {
          --g->pending_writes;
          for (const auto& r : *rows) {
            TopicPartitionIndex tp{r.topic, r.partition};
            if (--g->pending_commits[tp] <= 0) g->pending_commits.erase(tp);
            if (st) g->offsets[tp] = CachedOffset{r.committed_offset, r.leader_epoch, r.metadata, r.commit_time_ms,
                                                     r.expire_time_ms};
          }
          erase_if_unused(group_id);
        }
        if (!st)
          for (size_t i : written) errors[i] = to_kafka_error(st.error());
        done(std::move(errors));
      });
}

void CommittedOffsets::adopt(const std::string& group_id, const std::vector<OffsetCommitEntry>& entries,
                             int64_t commit_time_ms) {
  if (stopped_ || entries.empty()) return;
  Group& g = find_or_create(group_id);
  for (const auto& e : entries)
    g.offsets[{e.topic, e.partition}] =
        CachedOffset{e.offset, e.leader_epoch, e.metadata.value_or(""), commit_time_ms, std::nullopt};
}

int64_t CommittedOffsets::now_ms() const { return clock_.now_ms(); }

ErrorCode CommittedOffsets::check_entry(const std::string& topic, int32_t partition,
                                        const std::optional<std::string>& metadata) const {
  if (metadata_too_large(metadata)) return ErrorCode::kOffsetMetadataTooLarge;
  if (!partition_exists(topic, partition)) return ErrorCode::kUnknownTopicOrPartition;
  return ErrorCode::kNone;
}

std::vector<FetchedOffset> CommittedOffsets::fetch_offsets(const std::string& group_id,
                                                           const std::vector<TopicPartitionIndex>* partitions) const {
  std::vector<FetchedOffset> out;
  const Group* g = find(group_id);
  if (!partitions) {
    if (!g) return out;
    for (const auto& [tp, o] : g->offsets)
      out.push_back({tp.topic, tp.partition, o.offset, o.leader_epoch, o.metadata, ErrorCode::kNone});
    return out;
  }
  for (const auto& tp : *partitions) {
    FetchedOffset f;
    f.topic = tp.topic;
    f.partition = tp.partition;
    if (g) {
      auto it = g->offsets.find(tp);
      if (it != g->offsets.end()) {
        f.offset = it->second.offset;
        f.leader_epoch = it->second.leader_epoch;
        f.metadata = it->second.metadata;
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

void CommittedOffsets::delete_offsets(const std::string& group_id, const std::vector<TopicPartitionIndex>& partitions,
                                      const std::function<bool(const std::string&)>& subscribed,
                                      std::function<void(ErrorCode, std::vector<ErrorCode>)> done) {
  std::vector<ErrorCode> errors(partitions.size(), ErrorCode::kNone);
  if (stopped_) return done(ErrorCode::kCoordinatorNotAvailable, {});
  auto doomed = std::make_shared<std::vector<TopicPartitionIndex>>();
  std::vector<size_t> written;
  for (size_t i = 0; i < partitions.size(); ++i) {
    const auto& tp = partitions[i];
    if (!partition_exists(tp.topic, tp.partition)) {
      errors[i] = ErrorCode::kUnknownTopicOrPartition;
    } else if (subscribed && subscribed(tp.topic)) {
      errors[i] = ErrorCode::kGroupSubscribedToTopic;
    } else {
      doomed->push_back(tp);
      written.push_back(i);
    }
  }
  if (doomed->empty()) return done(ErrorCode::kNone, std::move(errors));
  Group& g = find_or_create(group_id);
  ++g.pending_writes;
  write(
      [doomed, group_id](SQLite::Database& db) {
        for (const auto& tp : *doomed) state::delete_committed_offset(db, group_id, tp.topic, tp.partition);
      },
      [this, doomed, group_id, incarnation = g.incarnation, errors = std::move(errors), written = std::move(written),
       done = std::move(done)](Status st) mutable {
        // The cache follows the database in write order: commits queued before the delete
        // completed before it, later ones complete after it.
        if (Group* g = current(group_id, incarnation)) {
          --g->pending_writes;
          if (st)
            for (const auto& tp : *doomed) g->offsets.erase(tp);
          erase_if_unused(group_id);
        }
        if (!st)
          for (size_t i : written) errors[i] = to_kafka_error(st.error());
        else
          spdlog::info("group={} deleted {} committed offsets", esc(group_id), doomed->size());
        done(ErrorCode::kNone, std::move(errors));
      });
}

bool CommittedOffsets::expire_offsets(const std::string& group_id, const OffsetExpiration& how) {
  if (stopped_) return false;
  Group* g = find(group_id);
  if (!g) return false;
  int64_t now = clock_.now_ms();
  using Clock = OffsetExpiration::Clock;
  auto expired = std::make_shared<std::vector<state::CommittedOffsetRow>>();
  for (const auto& [tp, o] : g->offsets) {
    if (g->pending_commits.count(tp)) continue;
    bool gone = false;
    if (o.expire_time_ms) {
      gone = now >= *o.expire_time_ms;  // committed with an explicit retention (v2-v4)
    } else if (how.clock != Clock::kNone && !(how.kept_topics && how.kept_topics->count(tp.topic))) {
      int64_t since = how.clock == Clock::kSinceEmpty ? how.empty_since_ms : o.commit_time_ms;
      gone = now - since >= options_.offsets_retention_ms;
    }
    if (gone) expired->push_back({group_id, tp.topic, tp.partition, o.offset, o.leader_epoch, "", o.commit_time_ms, {}});
  }
  if (expired->empty()) return false;
  spdlog::info("group={} {} committed offsets expired (retention {} ms)", esc(group_id), expired->size(),
               options_.offsets_retention_ms);
  ++g->pending_writes;
  write(
      [expired](SQLite::Database& db) {
        for (const auto& r : *expired)
          state::expire_committed_offset(db, r.group_id, r.topic, r.partition, r.commit_time_ms);
      },
      [this, expired, group_id, incarnation = g->incarnation](Status st) {
        Group* g = current(group_id, incarnation);
        if (!g) return;
        --g->pending_writes;
        if (st) {
          for (const auto& r : *expired) {
            auto it = g->offsets.find({r.topic, r.partition});
            if (it != g->offsets.end() && it->second.commit_time_ms <= r.commit_time_ms) g->offsets.erase(it);
          }
        }
        erase_if_unused(group_id);
        if (st && expiry_listener_) expiry_listener_(group_id);
      });
  return true;
}

}  // namespace kib::bridge
