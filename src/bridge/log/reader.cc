#include "bridge/log/reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "bridge/errors.h"
#include "common/fan_in.h"
#include "uvx/timer.h"
#include "uvx/work_owner.h"

namespace kib::bridge {

using kafka::ErrorCode;
using std::chrono::milliseconds;

struct Reader::FetchOp {
  enum class Phase { kReading, kWaiting, kChecking };

  std::vector<FetchPartitionRequest> requests;
  FetchParams params;
  FetchCallback cb;
  uint64_t owner = 0;        // the Kafka connection (uvx/work_owner.h)
  uint64_t deadline_ms = 0;  // loop time
  uint64_t read_budget = 0;  // of the pass in progress: params.max_bytes less what reads took
  std::vector<PartitionOffsets*> states;      // per request; nullptr while the topic is unknown
  std::vector<PartitionRead> reads;           // of the pass in progress
  std::vector<FetchPartitionResult> results;  // of the last complete pass
  std::vector<KafkaOffset> seen_high_watermark;  // per request, at the last pass
  FanIn<> reads_in{[] {}};  // of the pass in progress: its answer once every partition's read is in
  uint32_t passes = 0;  // started so far
  Phase phase = Phase::kReading;
  bool rerun = false;  // an append arrived while reading or checking
  milliseconds recheck = kFirstRecheck;
  std::unique_ptr<uv::Timer> timer;
};

PassResults assemble_pass(const std::vector<FetchPartitionRequest>& requests, const std::vector<PartitionRead>& reads,
                          const std::vector<PartitionOffsets*>& states, int32_t max_bytes,
                          IsolationLevel isolation) {
  const size_t n = requests.size();
  PassResults out;
  out.results.resize(n);
  size_t remaining = static_cast<size_t>(std::max(0, max_bytes));
  bool first_with_data = true;
  for (size_t i = 0; i < n; ++i) {
    FetchPartitionResult& res = out.results[i];
    const PartitionRead& read = reads[i];
    KafkaOffset stable = kNoOffset;  // read_committed: records from here on are not returned yet
    if (const PartitionOffsets* p = states[i]) {
      res.high_watermark = p->high_watermark;
      res.last_stable_offset = last_stable_offset(*p);
      res.log_start_offset = p->log_start;
      if (isolation == IsolationLevel::kReadCommitted) stable = res.last_stable_offset;
    }
    if (read.error != ErrorCode::kNone) {
      res.error = read.error;
      out.any_error = true;
      continue;
    }
    if (!read.cached.empty()) {
      // Whole batches as produced (KIP-74: the first partition with data gets its first batch
      // whatever its size); none at or above the last stable offset.
      const size_t budget = std::min(static_cast<size_t>(std::max(0, requests[i].max_bytes)), remaining);
      size_t take = 0, bytes = 0;
      for (const CachedBatch& b : read.cached) {
        if (stable >= KafkaOffset(0) && b.next_offset > stable()) break;
        if (bytes + b.size() > budget && !(take == 0 && first_with_data)) break;
        bytes += b.size();
        ++take;
      }
      if (take == 0) continue;
      // Shared with the cache, not copied: the response is written from the cached buffers.
      for (size_t k = 0; k < take; ++k) {
        res.records.append(read.cached[k].head);
        res.records.append(read.cached[k].rest);
      }
      first_with_data = false;
      remaining -= std::min(remaining, bytes);
      out.bytes += bytes;
      continue;
    }
    std::span<const FetchedRecord> records = read.records;
    if (stable >= KafkaOffset(0)) {
      auto end = std::find_if(records.begin(), records.end(),
                              [&](const FetchedRecord& r) { return r.offset >= stable(); });
      records = records.first(static_cast<size_t>(end - records.begin()));
    }
    if (records.empty()) continue;
    const size_t budget = std::min(static_cast<size_t>(std::max(0, requests[i].max_bytes)), remaining);
    EncodedRecords enc = encode_fetched_records(records, budget, first_with_data);
    if (enc.records == 0) continue;
    first_with_data = false;
    remaining -= std::min(remaining, enc.bytes.size());
    out.bytes += enc.bytes.size();
    res.records.append(std::move(enc.bytes));
    res.aborted = std::move(enc.aborted);
  }
  return out;
}

Reader::Reader(uv_loop_t* loop, LogBackend& backend, OffsetsTable& offsets, uv::Tasks& tasks,
               PartitionLookup lookup, BatchCache* cache)
    : loop_(loop),
      backend_(backend),
      offsets_(offsets),
      lookup_(std::move(lookup)),
      cache_(cache),
      read_aheads_(loop, offsets, tasks) {}

Reader::~Reader() = default;

void Reader::fetch(std::vector<FetchPartitionRequest> partitions, const FetchParams& params, FetchCallback cb,
                   uint64_t owner) {
  const uint64_t id = next_fetch_id_++;
  auto op = std::make_unique<FetchOp>();
  op->cb = std::move(cb);
  op->requests = std::move(partitions);
  op->params = params;
  op->owner = owner;
  op->deadline_ms = uv_now(loop_) + static_cast<uint64_t>(std::max(0, params.max_wait_ms));
  op->states.assign(op->requests.size(), nullptr);
  op->results.assign(op->requests.size(), {});
  op->seen_high_watermark.assign(op->requests.size(), kNoOffset);
  op->timer = std::make_unique<uv::Timer>(loop_);
  fetches_.emplace(id, std::move(op));
  run_pass(id);
}

void Reader::run_pass(uint64_t op_id) {
  FetchOp& op = *fetches_.at(op_id);
  op.phase = FetchOp::Phase::kReading;
  op.rerun = false;
  ++op.passes;
  op.reads.assign(op.requests.size(), {});
  op.read_budget = static_cast<uint64_t>(std::max(0, op.params.max_bytes));
  op.reads_in = FanIn<>([this, op_id] { pass_done(op_id); });
  for (size_t i = 0; i < op.requests.size(); ++i) {
    op.reads_in.add();
    const FetchPartitionRequest& rq = op.requests[i];
    lookup_(rq.topic, rq.partition, [this, op_id, i](Status known) {
      auto it = fetches_.find(op_id);
      if (it == fetches_.end()) return;
      FetchOp& op = *it->second;
      if (!known) {
        op.reads[i].error = to_kafka_fetch_error(known.error());
        read_finished(op_id);
        return;
      }
      const FetchPartitionRequest& rq = op.requests[i];
      PartitionOffsets& p = offsets_.at(rq.topic, rq.partition);
      if (!op.states[i]) {
        op.states[i] = &p;
        auto& waiters = waiters_[&p];
        if (std::find(waiters.begin(), waiters.end(), op_id) == waiters.end()) waiters.push_back(op_id);
      }
      // Later passes of a long poll re-read only partitions that moved: appends through this
      // bridge wake the op, and appends by others show in check_for_news' GetTopic. The first
      // pass polls every partition, at the high watermark too, as others may have appended.
      if (op.passes > 1 && p.loaded && rq.fetch_offset == p.high_watermark &&
          op.seen_high_watermark[i] == p.high_watermark) {
        read_finished(op_id);
        return;
      }
      // Like Kafka's sequential log reads: each partition may read what the response has
      // left (at least one message), so a fetch of many partitions each allowed
      // partition_max_bytes holds about max_bytes of data, not partitions x 16 MiB. A partition
      // known to be at its high watermark takes nothing from the others.
      const uint64_t budget = std::min<uint64_t>(static_cast<uint64_t>(std::max(0, rq.max_bytes)), op.read_budget);
      const bool at_end = p.loaded && rq.fetch_offset >= p.high_watermark;
      if (!at_end) op.read_budget -= budget;
      read_partition(p, rq.fetch_offset, static_cast<int32_t>(budget), false, op.owner, op.params.as,
                     [this, op_id, i](PartitionRead read) {
                       auto it = fetches_.find(op_id);
                       if (it == fetches_.end()) return;
                       it->second->reads[i] = std::move(read);
                       read_finished(op_id);
                     });
    });
  }
  read_finished(op_id);
}

void Reader::read_finished(uint64_t op_id) {
  auto it = fetches_.find(op_id);
  if (it == fetches_.end()) return;
  it->second->reads_in.done();
}

void Reader::read_partition(PartitionOffsets& p, KafkaOffset offset, int32_t max_bytes, bool refreshed, uint64_t owner,
                            iggy::IggyPool* as, std::function<void(PartitionRead)> cb) {
  auto retry_refreshed = [this, pp = &p, offset, max_bytes, owner, as, cb]() {
    offsets_.refresh(*pp, [this, pp, offset, max_bytes, owner, as, cb](Status s) {
      if (!s) {
        cb(PartitionRead{to_kafka_fetch_error(s.error()), nullptr, {}, {}});
        return;
      }
      read_partition(*pp, offset, max_bytes, true, owner, as, cb);
    });
  };
  if (!p.loaded && !refreshed) {
    retry_refreshed();
    return;
  }
  const FetchPosition pos = classify_fetch_offset(offset(), p.log_start(), p.high_watermark());
  if (pos == FetchPosition::kBelowLogStart || pos == FetchPosition::kBeyondEnd) {
    // The cache may be behind other writers or retention: only Iggy's word makes it an error.
    if (!refreshed) {
      retry_refreshed();
      return;
    }
    cb(PartitionRead{ErrorCode::kOffsetOutOfRange, nullptr, {}, {}});
    return;
  }
  if (p.cleaned && offset() < p.cleaned->cleaner_point) {
    const auto start = compaction::index_floor(p.cleaned->index, offset());
    read_cleaned(p, p.cleaned, offset, start ? start->generation_offset : 0, max_bytes, owner, as, std::move(cb));
    return;
  }
  if (cache_ && pos == FetchPosition::kReadable) {
    std::vector<CachedBatch> cached = cache_->read(p.topic, p.id, offset(), p.high_watermark(), p.high_watermark(),
                                                   static_cast<uint64_t>(std::max(0, max_bytes)));
    if (!cached.empty()) {
      PartitionRead read;
      read.cached = std::move(cached);
      cb(std::move(read));
      return;
    }
  }
  // At the high watermark too: another writer may have appended since.
  const uint32_t count = poll_count_for(static_cast<uint64_t>(std::max(0, max_bytes)), p.avg_message_bytes);
  read_aheads_.poll(p, offset(), count, owner,
                    [this, pp = &p, offset, count, refreshed, as, cb, retry_refreshed](Result<iggy::PolledMessages> r) {
    PartitionOffsets& p = *pp;
    if (!r) {
      spdlog::debug("poll {}-{} at {} failed: {}", p.topic, p.id, offset, r.error().message);
      cb(PartitionRead{to_kafka_fetch_error(r.error()), nullptr, {}, {}});
      return;
    }
    observe_poll(p, *r);
    const auto& messages = r->messages;
    const bool starts_later = !messages.empty() && KafkaOffset(static_cast<int64_t>(messages.front().offset)) > offset;
    if ((messages.empty() && offset < p.high_watermark) || starts_later) {
      // Retention removed the offset, or the partition was purged or recreated.
      if (!refreshed) {
        retry_refreshed();
        return;
      }
      if (messages.empty() || offset < p.log_start) {
        cb(PartitionRead{messages.empty() ? ErrorCode::kNone : ErrorCode::kOffsetOutOfRange, nullptr, {}, {}});
        return;
      }
    }
    PolledRecords polled = map_polled_messages(messages, offset());
    if (polled.unmappable) {
      spdlog::error("{}-{} offset {}: stored message is not a readable Kafka record: {}", p.topic, p.id,
                    polled.unmappable_offset, polled.unmappable->message);
      if (polled.records.empty()) {
        cb(PartitionRead{ErrorCode::kUnknownServerError, nullptr, {}, {}});
        return;
      }
    }
    if (!polled.records.empty()) read_aheads_.start(p, polled.records.back().offset + 1, count, as);
    cb(PartitionRead{ErrorCode::kNone, r->buffer, std::move(polled.records), {}});
  }, as);
}

void Reader::read_cleaned(PartitionOffsets& p, std::shared_ptr<const compaction::CleanedHead> head,
                          KafkaOffset offset, uint64_t from, int32_t max_bytes, uint64_t owner, iggy::IggyPool* as,
                          std::function<void(PartitionRead)> cb) {
  const uint32_t count = poll_count_for(static_cast<uint64_t>(std::max(0, max_bytes)), p.avg_message_bytes);
  uv::OwnerScope scope(uv::WorkOwner{owner, owner != 0});
  backend_.poll_generation(head->stream, head->topic, iggy::PollingStrategy::offset(from), count,
                           [this, pp = &p, head, offset, max_bytes, owner, as, cb](Result<iggy::PolledMessages> r) {
    PartitionOffsets& p = *pp;
    if (!r) {
      spdlog::warn("poll of {}-{}'s generation {} at {} failed: {}", p.topic, p.id, head->topic, offset,
                   r.error().message);
      cb(PartitionRead{to_kafka_fetch_error(r.error()), nullptr, {}, {}});
      return;
    }
    PolledRecords polled = map_generation_messages(r->messages, offset(), head->cleaner_point);
    if (polled.unmappable) {
      spdlog::error("{}-{} generation {}: a message is not a readable kept record: {}", p.topic, p.id, head->topic,
                    polled.unmappable->message);
      if (polled.records.empty()) {
        cb(PartitionRead{ErrorCode::kUnknownServerError, nullptr, {}, {}});
        return;
      }
    }
    if (!polled.records.empty()) {
      cb(PartitionRead{ErrorCode::kNone, r->buffer, std::move(polled.records), {}});
      return;
    }
    // Nothing kept at or after `offset` in this poll: the index block started before it (read
    // on), or the generation has no record left below the cleaner point (the live log from it).
    const int64_t last = polled.last_generation_offset;
    if (!polled.unmappable && last >= 0 && last < offset() && last + 1 < head->cleaner_point) {
      read_cleaned(p, head, offset, r->messages.back().offset + 1, max_bytes, owner, as, cb);
      return;
    }
    read_partition(p, KafkaOffset(head->cleaner_point), max_bytes, false, owner, as, cb);
  }, as);
}

void Reader::pass_done(uint64_t op_id) {
  FetchOp& op = *fetches_.at(op_id);
  PassResults pass = assemble_pass(op.requests, op.reads, op.states, op.params.max_bytes, op.params.isolation);
  for (size_t i = 0; i < op.requests.size(); ++i)
    if (const PartitionOffsets* p = op.states[i]) op.seen_high_watermark[i] = p->high_watermark;
  op.results = std::move(pass.results);
  op.reads.clear();

  const bool enough = pass.bytes >= static_cast<size_t>(std::max(0, op.params.min_bytes));
  if (pass.any_error || enough || op.requests.empty() || op.params.max_wait_ms <= 0 ||
      uv_now(loop_) >= op.deadline_ms || stop_waiting_) {
    respond(op_id);
    return;
  }
  if (op.rerun) {
    run_pass(op_id);
    return;
  }
  arm_wait(op_id);
}

void Reader::arm_wait(uint64_t op_id) {
  FetchOp& op = *fetches_.at(op_id);
  op.phase = FetchOp::Phase::kWaiting;
  const uint64_t now = uv_now(loop_);
  const auto left = milliseconds(op.deadline_ms > now ? op.deadline_ms - now : 0);
  op.timer->start(std::min(op.recheck, left), [this, op_id] { check_for_news(op_id); });
}

void Reader::appended(const PartitionOffsets& p) {
  auto it = waiters_.find(&p);
  if (it == waiters_.end()) return;
  std::vector<uint64_t> ids = it->second;
  for (uint64_t id : ids) wake(id);
}

void Reader::wake(uint64_t op_id) {
  auto it = fetches_.find(op_id);
  if (it == fetches_.end()) return;
  FetchOp& op = *it->second;
  if (op.phase == FetchOp::Phase::kWaiting) {
    op.timer->stop();
    run_pass(op_id);
  } else {
    op.rerun = true;
  }
}

void Reader::check_for_news(uint64_t op_id) {
  FetchOp& op = *fetches_.at(op_id);
  op.phase = FetchOp::Phase::kChecking;
  std::set<std::string> topics;
  for (size_t i = 0; i < op.requests.size(); ++i)
    if (op.states[i]) topics.insert(op.requests[i].topic);
  auto checked_all = std::make_shared<FanIn<>>([this, op_id] {
    auto it = fetches_.find(op_id);
    if (it == fetches_.end()) return;
    FetchOp& op = *it->second;
    bool news = op.rerun;
    for (size_t i = 0; i < op.requests.size() && !news; ++i)
      news = op.states[i] && op.states[i]->high_watermark != op.seen_high_watermark[i];
    if (news) {
      run_pass(op_id);
    } else if (stop_waiting_ || uv_now(loop_) >= op.deadline_ms) {
      respond(op_id);
    } else {
      op.recheck = std::min(op.recheck * 2, kMaxRecheck);
      arm_wait(op_id);
    }
  });
  // A failed GetTopic just means no news this round; the next pass reports real errors.
  // Many fetches long-polling one topic share GetTopic replies younger than half their
  // re-check interval, which bounds the load on Iggy whatever the number of consumers.
  const uint64_t now = uv_now(loop_);
  const auto max_age = static_cast<uint64_t>(op.recheck.count() / 2);
  for (const std::string& t : topics) {
    std::optional<uint64_t> fresh = offsets_.refreshed_at(t);
    if (fresh && now - *fresh < max_age) continue;
    checked_all->add();
    offsets_.refresh_topic(t, [checked_all](Status) { checked_all->done(); });
  }
  checked_all->done();
}

// Takes the op out of the table and out of its partitions' waiters.
void Reader::forget(uint64_t op_id, FetchOp& op) {
  op.timer->stop();
  for (PartitionOffsets* p : op.states) {
    if (!p) continue;
    auto w = waiters_.find(p);
    if (w == waiters_.end()) continue;
    std::erase(w->second, op_id);
    if (w->second.empty()) waiters_.erase(w);
  }
}

void Reader::respond(uint64_t op_id) {
  auto it = fetches_.find(op_id);
  if (it == fetches_.end()) return;
  std::unique_ptr<FetchOp> op = std::move(it->second);
  fetches_.erase(it);
  forget(op_id, *op);
  op->cb(std::move(op->results));
}

void Reader::cancel_fetches(uint64_t owner) {
  if (owner == 0) return;
  std::vector<uint64_t> ids;
  for (const auto& [id, op] : fetches_)
    if (op->owner == owner) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = fetches_.find(id);
    std::unique_ptr<FetchOp> op = std::move(it->second);
    fetches_.erase(it);
    forget(id, *op);
    // Reads in flight find the op gone and stop; the callback is never called.
  }
  backend_.cancel_owner(owner);
}

void Reader::stop_waiting() {
  stop_waiting_ = true;
  std::vector<uint64_t> waiting;
  for (const auto& [id, op] : fetches_)
    if (op->phase == FetchOp::Phase::kWaiting) waiting.push_back(id);
  for (uint64_t id : waiting) respond(id);
}

}  // namespace kib::bridge
