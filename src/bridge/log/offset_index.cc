#include "bridge/log/offset_index.h"

#include <algorithm>

#include "bridge/errors.h"
#include "bridge/log/fetch_records.h"
#include "bridge/mapping/generation_mapping.h"
#include "bridge/mapping/record_mapping.h"

namespace kib::bridge {

using kafka::ErrorCode;

namespace {
OffsetLookup lookup_error(const Error& e) {
  OffsetLookup r;
  r.error = to_kafka_error(e);
  return r;
}
}  // namespace

TimestampMs kafka_timestamp_of(const iggy::MessageView& m) {
  auto r = map_iggy_to_record(m);
  if (r) return TimestampMs(r->timestamp_ms);
  return to_kafka_ms(TimestampUs(m.origin_timestamp_us));
}

OffsetIndex::Index& OffsetIndex::index_of(const PartitionOffsets& p) {
  auto& slot = indexes_[&p];
  if (!slot) slot = std::make_unique<Index>();
  return *slot;
}

void OffsetIndex::list_offsets(PartitionOffsets& p, TimestampMs timestamp, std::function<void(OffsetLookup)> cb,
                               IsolationLevel isolation) {
  if (timestamp == kLatestTimestamp) {
    offsets_.refresh_topic(p.topic, [pp = &p, cb, isolation](Status s) {
      if (!s) {
        cb(lookup_error(s.error()));
        return;
      }
      cb(OffsetLookup{ErrorCode::kNone,
                      isolation == IsolationLevel::kReadCommitted ? last_stable_offset(*pp) : pp->high_watermark,
                      kNoTimestamp});
    });
    return;
  }
  offsets_.refresh(p, [this, pp = &p, timestamp, cb](Status s) {
    if (!s) {
      cb(lookup_error(s.error()));
      return;
    }
    if (timestamp == kEarliestTimestamp || timestamp == kEarliestLocalTimestamp) {
      cb(OffsetLookup{ErrorCode::kNone, pp->log_start, kNoTimestamp});
      return;
    }
    extend(*pp, [this, pp, timestamp, cb](Status s2) {
      if (!s2) {
        cb(lookup_error(s2.error()));
        return;
      }
      const TimeIndex& index = index_of(*pp).time_index;
      if (timestamp == kMaxTimestamp) {
        cb(OffsetLookup{ErrorCode::kNone, KafkaOffset(index.max_timestamp_offset()),
                        index.max_timestamp_offset() < 0 ? kNoTimestamp : TimestampMs(index.max_timestamp())});
        return;
      }
      // Any other value, negative ones included, searches like Kafka: first record >= it. The
      // live log's time index covers what Iggy still has; below a cleaner point the kept
      // records are in the generation, searched first (the live log's records there, while
      // their segments last, include removed ones).
      std::optional<int64_t> from = index.chunk_start_for(timestamp());
      auto live = [this, pp, timestamp, cb, from] {
        if (!from) {
          cb(OffsetLookup{});
          return;
        }
        KafkaOffset start = std::max(KafkaOffset(*from), pp->log_start);
        if (pp->cleaned) start = std::max(start, KafkaOffset(pp->cleaned->cleaner_point));
        scan_for_timestamp(*pp, start, timestamp, cb);
      };
      if (pp->cleaned && pp->cleaned->cleaner_point > pp->log_start()) {
        const auto block = compaction::index_for_timestamp(pp->cleaned->index, timestamp());
        if (!block && !pp->cleaned->index.empty()) return live();  // every kept block is older
        return scan_generation(*pp, pp->cleaned, block ? block->generation_offset : 0, timestamp, cb, live);
      }
      live();
    });
  });
}

void OffsetIndex::extend(PartitionOffsets& p, std::function<void(Status)> done) {
  Index& ix = index_of(p);
  ix.waiters.push_back(std::move(done));
  if (ix.indexing) return;
  ix.indexing = true;
  TimeIndex& index = ix.time_index;
  const bool max_deleted = index.max_timestamp_offset() >= 0 && index.max_timestamp_offset() < p.log_start();
  if (!ix.started || p.high_watermark() < index.next() || p.log_start() < index.start() || max_deleted) {
    index.reset(p.log_start());  // first use, purge/recreation, or retention took the maximum
    ix.started = true;
  }
  index.advance_to(p.log_start());
  ix.target = p.high_watermark();
  step(p, ix);
}

void OffsetIndex::finish(Index& ix, const Status& status) {
  ix.indexing = false;
  auto waiting = std::move(ix.waiters);
  ix.waiters.clear();
  for (auto& cb : waiting) cb(status);
}

void OffsetIndex::step(PartitionOffsets& p, Index& ix) {
  TimeIndex& index = ix.time_index;
  if (index.next() >= ix.target) return finish(ix, ok_status());
  const uint32_t count = poll_count_for(UINT64_MAX, p.avg_message_bytes);
  offsets_.poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(index.next())), count,
                [this, pp = &p, ixp = &ix](Result<iggy::PolledMessages> r) {
                  Index& ix = *ixp;
                  if (!r) return finish(ix, r.error());
                  observe_poll(*pp, *r);
                  TimeIndex& index = ix.time_index;
                  const int64_t before = index.next();
                  for (const iggy::MessageView& m : r->messages)
                    index.add(static_cast<int64_t>(m.offset), kafka_timestamp_of(m)());
                  if (index.next() == before) index.advance_to(ix.target);  // nothing more is readable
                  step(*pp, ix);
                });
}

void OffsetIndex::scan_for_timestamp(PartitionOffsets& p, KafkaOffset from, TimestampMs timestamp,
                                     std::function<void(OffsetLookup)> cb) {
  if (from >= p.high_watermark) {
    cb(OffsetLookup{});
    return;
  }
  const uint32_t count = poll_count_for(UINT64_MAX, p.avg_message_bytes);
  offsets_.poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(from())), count,
                [this, pp = &p, from, timestamp, cb](Result<iggy::PolledMessages> r) {
                  if (!r) {
                    cb(lookup_error(r.error()));
                    return;
                  }
                  observe_poll(*pp, *r);
                  if (r->messages.empty()) {
                    cb(OffsetLookup{});
                    return;
                  }
                  for (const iggy::MessageView& m : r->messages) {
                    const KafkaOffset offset(static_cast<int64_t>(m.offset));
                    if (offset < from) continue;
                    const TimestampMs ts = kafka_timestamp_of(m);
                    if (ts >= timestamp) {
                      cb(OffsetLookup{ErrorCode::kNone, offset, ts});
                      return;
                    }
                  }
                  const KafkaOffset next = KafkaOffset(static_cast<int64_t>(r->messages.back().offset)) + 1;
                  if (next <= from) {
                    cb(OffsetLookup{});
                    return;
                  }
                  scan_for_timestamp(*pp, next, timestamp, cb);
                });
}

void OffsetIndex::scan_generation(PartitionOffsets& p, std::shared_ptr<const compaction::CleanedHead> head,
                                  uint64_t from, TimestampMs timestamp, std::function<void(OffsetLookup)> cb,
                                  std::function<void()> live) {
  offsets_.poll_generation(*head, iggy::PollingStrategy::offset(from), 1024,
                           [this, pp = &p, head, from, timestamp, cb, live](Result<iggy::PolledMessages> r) {
                             if (!r) {
                               cb(lookup_error(r.error()));
                               return;
                             }
                             if (r->messages.empty()) return live();
                             for (const iggy::MessageView& m : r->messages) {
                               if (m.offset < from) continue;
                               auto markers = read_generation_markers(m.user_headers);
                               if (!markers || markers->kafka_offset >= head->cleaner_point) continue;
                               if (markers->kafka_offset < pp->log_start()) continue;
                               const TimestampMs ts = kafka_timestamp_of(m);
                               if (ts >= timestamp) {
                                 cb(OffsetLookup{ErrorCode::kNone, KafkaOffset(markers->kafka_offset), ts});
                                 return;
                               }
                             }
                             scan_generation(*pp, head, r->messages.back().offset + 1, timestamp, cb, live);
                           });
}

}  // namespace kib::bridge
