#include "bridge/log/partition_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>
#include <deque>
#include <set>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "bridge/log/fetch_records.h"
#include "bridge/log/produce_validation.h"
#include "bridge/log/time_index.h"
#include "bridge/mapping/record_mapping.h"
#include "bridge/producers/producer_registry.h"
#include "iggy/owner.h"

namespace kib::bridge {

using kafka::ErrorCode;
using std::chrono::milliseconds;

namespace {

// Long-poll re-checks of Iggy for appends made by others (native Iggy producers, other bridges).
constexpr milliseconds kFirstRecheck{10};
constexpr milliseconds kMaxRecheck{200};

// One Iggy send stores each origin timestamp as a u32 µs delta from the batch's smallest.
constexpr uint64_t kMaxSendSpanUs = UINT32_MAX;
// Queued appends merge into one Iggy send up to this size. Iggy stores a send as one batch and
// slices stored batches on every poll, so polls of a few huge batches are slow; one round trip
// per MiB already amortises the send well.
constexpr uint64_t kMaxCoalescedSendBytes = 1u << 20;

// Read-ahead: after a fetch is answered from a partition, the next poll from where it stopped
// is started at once, so the consumer's next fetch finds its data here instead of waiting for
// Iggy. A read-ahead older than kReadAheadMaxAge is not served (retention or a purge may have
// happened since); all of them together hold at most kReadAheadBudgetBytes.
constexpr uint64_t kReadAheadMaxAgeMs = 500;
constexpr uint64_t kReadAheadBudgetBytes = 64u << 20;

// Reads are plain polls without auto-commit: nothing is stored for this consumer id.
iggy::Consumer reader() { return iggy::Consumer::consumer(iggy::Identifier::numeric(0)); }

// High watermark from GetTopic: last offset + 1, 0 when empty (PROTOCOL.md §7). current_offset
// is 0 both for "empty" and for "one message at 0"; messages_count tells them apart.
int64_t high_watermark_of(const iggy::PartitionInfo& info) {
  if (info.messages_count == 0 && info.current_offset == 0) return 0;
  return static_cast<int64_t>(info.current_offset) + 1;
}

// The Kafka timestamp of a stored message; a message the mapping refuses (Fetch reports it)
// is indexed by its Iggy origin time.
int64_t kafka_timestamp_of(const iggy::MessageView& m) {
  auto r = map_iggy_to_record(m);
  if (r) return r->timestamp_ms;
  return static_cast<int64_t>(m.origin_timestamp_us / 1000);
}

ProduceResult produce_error(ErrorCode code, std::string message) {
  ProduceResult r;
  r.error = code;
  r.message = std::move(message);
  return r;
}
ProduceResult produce_error(const Error& e) { return produce_error(to_kafka_error(e), e.message); }

// Iggy message ids of idempotent records: hi = producer id, lo = epoch (16 bits) | sequence
// (32 bits) | a 16-bit marker that also says whether the record starts its Kafka batch, so
// recover_tail can tell them from ids native producers chose and find batch boundaries.
constexpr uint64_t kBatchStartMarker = 0xBD1Du;
constexpr uint64_t kBatchContinuationMarker = 0xBD1Eu;

iggy::MessageId producer_message_id(int64_t producer_id, int16_t epoch, int32_t sequence, bool batch_start) {
  iggy::MessageId id;
  id.hi = static_cast<uint64_t>(producer_id);
  id.lo = (static_cast<uint64_t>(static_cast<uint16_t>(epoch)) << 48) |
          (static_cast<uint64_t>(static_cast<uint32_t>(sequence)) << 16) |
          (batch_start ? kBatchStartMarker : kBatchContinuationMarker);
  return id;
}

struct ProducerSeq {
  int64_t producer_id;
  int16_t epoch;
  int32_t sequence;
  bool batch_start;
};

std::optional<ProducerSeq> parse_producer_message_id(const iggy::MessageId& id) {
  const uint64_t marker = id.lo & 0xFFFF;
  if ((marker != kBatchStartMarker && marker != kBatchContinuationMarker) || id.hi > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  const auto seq = static_cast<uint32_t>((id.lo >> 16) & 0xFFFFFFFFu);
  if (seq > static_cast<uint32_t>(INT32_MAX)) return std::nullopt;
  return ProducerSeq{static_cast<int64_t>(id.hi), static_cast<int16_t>(static_cast<uint16_t>(id.lo >> 48)),
                     static_cast<int32_t>(seq), marker == kBatchStartMarker};
}

OffsetLookup lookup_error(const Error& e) {
  OffsetLookup r;
  r.error = to_kafka_error(e);
  return r;
}

}  // namespace

// ---- state ------------------------------------------------------------------------------------

struct PartitionLog::Partition {
  std::string topic;
  int32_t id = 0;

  bool loaded = false;  // high watermark and log start read from Iggy at least once
  bool load_tried_for_append = false;
  bool tail_recovered = false;  // producer batches in Iggy's tail reconciled after startup
  // An idempotent send failed with its outcome unknown (Iggy may have stored it): the high
  // watermark and the tail are read again before the next idempotent append.
  bool tail_unknown = false;
  int64_t high_watermark = 0;
  int64_t log_start = 0;
  uint64_t avg_message_bytes = 0;  // Iggy bytes per message, sizes poll counts (0 = unknown)
  uint64_t appends_done = 0;       // own appends; a GetTopic reply older than one must not lower HW
  std::vector<std::function<void(Status)>> log_start_refreshes;  // coalesced Poll First

  std::deque<std::shared_ptr<AppendJob>> appends;  // front = the one in Iggy when `appending`
  bool appending = false;

  std::vector<uint64_t> waiters;  // fetch ops to wake on an append

  // At most one poll read ahead of the last fetch (see kReadAheadMaxAgeMs).
  struct ReadAhead {
    int64_t offset = 0;
    uint32_t count = 0;
    uint64_t started_ms = 0;
    uint64_t budget_bytes = 0;  // charged to read_ahead_bytes_ until dropped
    std::optional<Result<iggy::PolledMessages>> reply;
    std::vector<iggy::Callback<iggy::PolledMessages>> waiting;
  };
  std::unique_ptr<ReadAhead> read_ahead;

  TimeIndex time_index;
  bool time_index_started = false;
  bool indexing = false;
  int64_t index_target = 0;
  std::vector<std::function<void(Status)>> index_waiters;
};

struct PartitionLog::AppendJob {
  std::vector<kafka::DecodedBatch> batches;  // exactly one once validated
  std::shared_ptr<const void> input;         // bytes the batch's views point into
  MappedMessages mapped;
  uint64_t send_bytes = 0;  // Iggy message bytes (frame headers, payloads, user headers)
  uint64_t min_origin_us = 0, max_origin_us = 0;  // of the mapped messages
  bool unknown_origin = false;  // some message has origin 0 (Iggy stamps "now"): sent alone
  std::function<void(ProduceResult)> cb;
  bool reserved = false;  // the producer registry holds a sequence reservation for it

  const kafka::RecordBatchHeader& header() const { return batches.front().header; }
};

struct PartitionLog::PartitionRead {
  ErrorCode error = ErrorCode::kNone;
  std::shared_ptr<const Bytes> buffer;  // owns what `records` point into
  std::vector<FetchedRecord> records;
};

struct PartitionLog::FetchOp {
  enum class Phase { kReading, kWaiting, kChecking };

  std::vector<FetchPartitionRequest> requests;
  FetchParams params;
  FetchCallback cb;
  uint64_t owner = 0;        // the Kafka connection (iggy/owner.h)
  uint64_t deadline_ms = 0;  // loop time
  uint64_t read_budget = 0;  // of the pass in progress: params.max_bytes less what reads took
  std::vector<Partition*> states;          // per request; nullptr while the topic is unknown
  std::vector<PartitionRead> reads;        // of the pass in progress
  std::vector<FetchPartitionResult> results;  // of the last complete pass
  std::vector<int64_t> seen_high_watermark;   // per request, at the last pass
  size_t pending = 0;
  uint32_t passes = 0;  // started so far
  Phase phase = Phase::kReading;
  bool rerun = false;  // an append arrived while reading or checking
  milliseconds recheck = kFirstRecheck;
  std::unique_ptr<iggy::LoopTimer> timer;
};

// ---- plumbing ---------------------------------------------------------------------------------

PartitionLog::PartitionLog(uv_loop_t* loop, iggy::IggyClient& iggy, TopicCatalog& catalog, ProducerRegistry* producers,
                           const config::Config& config)
    : loop_(loop), iggy_(iggy), catalog_(catalog), producers_(producers), config_(config), tasks_(loop) {}

PartitionLog::~PartitionLog() { alive_.reset(); }

template <typename T>
std::function<void(T)> PartitionLog::deferred_if_sync(std::function<void(T)> cb, std::shared_ptr<bool> in_call) {
  return [this, cb = std::move(cb), in_call](T value) {
    if (*in_call) {
      tasks_.post([cb, value = std::move(value)]() mutable { cb(std::move(value)); });
      return;
    }
    cb(std::move(value));
  };
}

template <typename T, typename F>
iggy::Callback<T> PartitionLog::guarded(F&& f) {
  return [alive = std::weak_ptr<bool>(alive_), f = std::forward<F>(f)](Result<T> r) mutable {
    if (alive.expired()) return;
    f(std::move(r));
  };
}

void PartitionLog::lookup(const std::string& topic, int32_t partition, std::function<void(Result<TopicLimits>)> cb) {
  auto limits = [topic, partition](const TopicMetadata* m) -> Result<TopicLimits> {
    if (!m) return kafka_error(ErrorCode::kUnknownTopicOrPartition, "unknown topic " + topic);
    if (partition < 0 || partition >= m->partitions)
      return kafka_error(ErrorCode::kUnknownTopicOrPartition,
                         "topic " + topic + " has no partition " + std::to_string(partition));
    return TopicLimits{m->partitions, m->settings.max_message_bytes};
  };
  if (const TopicMetadata* m = catalog_.find(topic)) {
    cb(limits(m));
    return;
  }
  catalog_.ensure(topic, /*auto_create=*/false,
                  [alive = std::weak_ptr<bool>(alive_), limits, cb](Result<const TopicMetadata*> r) {
                    if (alive.expired()) return;
                    if (!r) {
                      // Like Kafka's Produce/Fetch: a name that cannot be a topic is simply
                      // not a known partition (only Metadata answers INVALID_TOPIC_EXCEPTION).
                      if (to_kafka_error(r.error()) == ErrorCode::kInvalidTopicException)
                        return cb(kafka_error(ErrorCode::kUnknownTopicOrPartition, r.error().message));
                      cb(r.error());
                      return;
                    }
                    cb(limits(r.value()));
                  });
}

Status PartitionLog::precheck_produce(const std::string& topic, int32_t partition) const {
  if (const TopicMetadata* m = catalog_.find(topic)) {
    if (partition < 0 || partition >= m->partitions)
      return kafka_error(ErrorCode::kUnknownTopicOrPartition,
                         "topic " + topic + " has no partition " + std::to_string(partition));
    return ok_status();
  }
  if (auto why = TopicCatalog::invalid_topic_name(topic))
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, "unknown topic: " + *why);
  return ok_status();
}

PartitionLog::Partition& PartitionLog::partition(const std::string& topic, int32_t id) {
  auto& slot = partitions_[{topic, id}];
  if (!slot) {
    slot = std::make_unique<Partition>();
    slot->topic = topic;
    slot->id = id;
  }
  return *slot;
}

// ---- offsets from Iggy ------------------------------------------------------------------------

std::optional<int64_t> PartitionLog::high_watermark(const std::string& topic, int32_t partition) const {
  auto it = partitions_.find({topic, partition});
  if (it == partitions_.end()) return std::nullopt;
  return it->second->high_watermark;
}

void PartitionLog::refresh_topic(const std::string& topic, std::function<void(Status)> done) {
  auto& waiting = topic_refreshes_[topic];
  waiting.push_back(std::move(done));
  if (waiting.size() > 1) return;  // one GetTopic in flight per topic serves everyone

  std::vector<std::pair<Partition*, uint64_t>> appends_before;
  for (auto it = partitions_.lower_bound({topic, INT32_MIN}); it != partitions_.end() && it->first.first == topic; ++it)
    appends_before.emplace_back(it->second.get(), it->second->appends_done);

  iggy_.get_topic(catalog_.stream(), iggy::Identifier::named(topic),
                  guarded<std::optional<iggy::TopicInfo>>([this, topic, appends_before](
                                                              Result<std::optional<iggy::TopicInfo>> r) {
                    Status status = ok_status();
                    if (!r) {
                      status = r.error();
                    } else if (!r.value()) {
                      status = kafka_error(ErrorCode::kUnknownTopicOrPartition, "topic " + topic + " is not in Iggy");
                    } else {
                      for (const iggy::PartitionInfo& info : r.value()->partitions) {
                        Partition& p = partition(topic, static_cast<int32_t>(info.id));
                        const int64_t hw = high_watermark_of(info);
                        auto before = std::find_if(appends_before.begin(), appends_before.end(),
                                                   [&](const auto& e) { return e.first == &p; });
                        const uint64_t appends_then = before == appends_before.end() ? 0 : before->second;
                        // The reply may predate one of our own appends: never go below what
                        // Iggy acknowledged since. Otherwise trust it, even when it is lower
                        // (purged or recreated topic).
                        p.high_watermark = p.appends_done != appends_then ? std::max(hw, p.high_watermark) : hw;
                        p.log_start = std::min(p.log_start, p.high_watermark);
                        if (info.messages_count > 0) p.avg_message_bytes = info.size_bytes / info.messages_count;
                      }
                    }
                    if (status) topic_refreshed_at_[topic] = uv_now(loop_);
                    auto waiting = std::move(topic_refreshes_[topic]);
                    topic_refreshes_.erase(topic);
                    for (auto& cb : waiting) cb(status);
                  }));
}

void PartitionLog::refresh_log_start(Partition& p, std::function<void(Status)> done) {
  p.log_start_refreshes.push_back(std::move(done));
  if (p.log_start_refreshes.size() > 1) return;
  poll(p, iggy::PollingStrategy::first(), 1, [this, pp = &p](Result<iggy::PolledMessages> r) {
    Partition& p = *pp;
    Status status = ok_status();
    if (!r) {
      status = r.error();
    } else {
      observe_poll(p, *r);
      // Nothing retained (e.g. retention emptied the partition): log start = high watermark.
      p.log_start = r->messages.empty() ? p.high_watermark : static_cast<int64_t>(r->messages.front().offset);
    }
    auto waiting = std::move(p.log_start_refreshes);
    p.log_start_refreshes.clear();
    for (auto& cb : waiting) cb(status);
  });
}

void PartitionLog::refresh_offsets(Partition& p, std::function<void(Status)> done) {
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

void PartitionLog::poll(const Partition& p, iggy::PollingStrategy strategy, uint32_t count,
                        iggy::Callback<iggy::PolledMessages> cb) {
  iggy::PollRequest q;
  q.consumer = reader();
  q.stream = catalog_.stream();
  q.topic = iggy::Identifier::named(p.topic);
  q.partition_id = static_cast<uint32_t>(p.id);
  q.strategy = strategy;
  q.count = count;
  q.auto_commit = false;
  iggy_.poll_messages(q, guarded<iggy::PolledMessages>(std::move(cb)));
}

void PartitionLog::observe_poll(Partition& p, const iggy::PolledMessages& reply) {
  if (reply.messages.empty()) return;
  // A non-empty reply proves the partition is non-empty, so current_offset is the last offset.
  const int64_t last = std::max(static_cast<int64_t>(reply.current_offset),
                                static_cast<int64_t>(reply.messages.back().offset));
  p.high_watermark = std::max(p.high_watermark, last + 1);
  if (reply.buffer) p.avg_message_bytes = std::max<uint64_t>(1, reply.buffer->size() / reply.messages.size());
}

// ---- produce ----------------------------------------------------------------------------------

void PartitionLog::produce(const std::string& topic, int32_t partition_id, std::vector<kafka::DecodedBatch> batches,
                           std::shared_ptr<const void> input, int16_t acks, std::function<void(ProduceResult)> cb) {
  auto in_call = std::make_shared<bool>(true);
  cb = deferred_if_sync<ProduceResult>(std::move(cb), in_call);
  if (acks != 0 && acks != 1 && acks != -1) {
    cb(produce_error(ErrorCode::kInvalidRequiredAcks, "acks must be 0, 1 or -1, got " + std::to_string(acks)));
    *in_call = false;
    return;
  }
  auto job = std::make_shared<AppendJob>();
  job->batches = std::move(batches);
  job->input = std::move(input);
  job->cb = std::move(cb);
  lookup(topic, partition_id, [this, job, topic, partition_id](Result<TopicLimits> limits) {
    if (!limits) {
      job->cb(produce_error(limits.error()));
      return;
    }
    if (Status v = validate_produce_batches(job->batches, limits->max_message_bytes); !v) {
      if (to_kafka_error(v.error()) == ErrorCode::kInvalidTxnState)
        spdlog::warn("produce to {}-{} refused: {}", topic, partition_id, v.error().message);
      else
        spdlog::debug("produce to {}-{} refused: {}", topic, partition_id, v.error().message);
      job->cb(produce_error(v.error()));
      return;
    }
    auto mapped = map_batch_to_iggy(job->batches.front());
    if (!mapped) {
      job->cb(produce_error(mapped.error()));
      return;
    }
    uint64_t send_bytes = 0;
    for (const iggy::OutgoingMessage& m : mapped->messages)
      send_bytes += kIggyMessageFrameBytes + m.payload.size() + m.user_headers.size();
    if (send_bytes > kMaxIggySendBytes) {
      job->cb(produce_error(ErrorCode::kMessageTooLarge,
                            "batch maps to " + std::to_string(send_bytes) + " bytes of Iggy messages, above the " +
                                std::to_string(kMaxIggySendBytes) + " one Iggy send can carry"));
      return;
    }
    job->mapped = std::move(mapped.value());
    job->send_bytes = send_bytes;
    job->min_origin_us = UINT64_MAX;
    for (const iggy::OutgoingMessage& m : job->mapped.messages) {
      if (m.origin_timestamp_us == 0) job->unknown_origin = true;
      job->min_origin_us = std::min(job->min_origin_us, m.origin_timestamp_us);
      job->max_origin_us = std::max(job->max_origin_us, m.origin_timestamp_us);
    }
    Partition& p = partition(topic, partition_id);
    p.appends.push_back(job);
    pump_appends(p);
  });
  *in_call = false;
}

void PartitionLog::pump_appends(Partition& p) {
  if (p.appending || p.appends.empty()) return;
  if (!p.loaded && !p.load_tried_for_append) {
    // Once per partition: the answer carries the log start offset. A failure here is not the
    // append's failure; the send below reports Iggy's state for itself.
    p.appending = true;
    p.load_tried_for_append = true;
    refresh_offsets(p, [this, pp = &p](Status s) {
      if (!s) spdlog::debug("offsets of {}-{} not readable before append: {}", pp->topic, pp->id, s.error().message);
      pp->appending = false;
      pump_appends(*pp);
    });
    return;
  }
  std::shared_ptr<AppendJob> job = p.appends.front();
  const kafka::RecordBatchHeader& h = job->header();
  if (h.producer_id >= 0 && producers_ && p.tail_unknown) {
    // The retry of a batch whose send failed may be at the head now. If Iggy stored that send
    // (a reply lost when the connection dropped, or a timeout), appending the retry would store
    // it twice: learn Iggy's end first, then recover_tail() records what is there.
    p.appending = true;
    refresh_offsets(p, [this, pp = &p](Status s) {
      Partition& p = *pp;
      p.appending = false;
      if (!s) {
        // Still unknown: refuse (retriable) rather than risk a duplicate.
        return finish_append(p, produce_error(s.error()));
      }
      p.tail_unknown = false;
      p.tail_recovered = false;
      pump_appends(p);
    });
    return;
  }
  if (h.producer_id >= 0 && producers_ && !p.tail_recovered && p.loaded) {
    p.appending = true;
    recover_tail(p, [this, pp = &p] {
      pp->appending = false;
      // The tail could not be read: answer this batch retriably (its retry tries the tail
      // again) instead of appending it unchecked or retrying the read at once, forever.
      if (!pp->tail_recovered)
        return finish_append(*pp, produce_error(ErrorCode::kRequestTimedOut,
                                                "the partition's tail could not be read from Iggy; retry"));
      pump_appends(*pp);
    });
    return;
  }

  // Idempotence is checked here, at the head of the partition's queue, right before the send:
  // the registry sees every earlier batch of this partition recorded or aborted, so a retry of
  // the batch in Iggy now waits behind it and is then answered as a duplicate, and no reservation
  // ever waits (is_reserved() would always be true).
  if (h.producer_id >= 0 && producers_) {
    SequenceCheck check = producers_->check(h.producer_id, h.producer_epoch, p.topic, p.id, h.base_sequence,
                                            h.record_count);
    switch (check.verdict) {
      case SequenceVerdict::kAppend:
        job->reserved = true;
        break;
      case SequenceVerdict::kDuplicate: {
        ProduceResult dup;
        dup.base_offset = check.duplicate_base_offset;
        dup.log_start_offset = p.log_start;
        finish_append(p, dup);
        return;
      }
      case SequenceVerdict::kOutOfOrder:
        finish_append(p, produce_error(ErrorCode::kOutOfOrderSequenceNumber,
                                       "sequence " + std::to_string(h.base_sequence) + " of producer " +
                                           std::to_string(h.producer_id) + " is out of order"));
        return;
      case SequenceVerdict::kInvalidEpoch:
        finish_append(p, produce_error(ErrorCode::kInvalidProducerEpoch,
                                       "epoch " + std::to_string(h.producer_epoch) + " of producer " +
                                           std::to_string(h.producer_id) + " is fenced"));
        return;
      case SequenceVerdict::kUnknownProducer:
        finish_append(p, produce_error(ErrorCode::kUnknownProducerId,
                                       "producer id " + std::to_string(h.producer_id) + " was not issued here"));
        return;
      case SequenceVerdict::kInFlight:
        // Nothing was appended for this request and the same range is being appended right
        // now: NOT_ENOUGH_REPLICAS is retriable for every client and means "not written, retry";
        // the retry then meets the recorded batch and gets its offset as a duplicate.
        finish_append(p, produce_error(ErrorCode::kNotEnoughReplicas,
                                       "the same sequence range is being appended; retry"));
        return;
    }
  }
  stamp_producer_ids(*job);

  // Appends queued behind the head go to Iggy in the same send, in queue order, so a partition
  // pays one Iggy round trip (and with enforce_fsync one fsync) per send rather than per Produce
  // request: while one send is in Iggy the next requests queue up, and all of them go next.
  // A follower joins only while the send stays within Iggy's frame and origin-timestamp limits,
  // and an idempotent one only if the registry reserves its sequence range (any other verdict
  // leaves it queued to be answered at the head, as above).
  std::vector<std::shared_ptr<AppendJob>> jobs{job};
  uint64_t send_bytes = job->send_bytes;
  uint64_t min_ts = job->min_origin_us, max_ts = job->max_origin_us;
  size_t message_count = job->mapped.messages.size();
  while (jobs.size() < p.appends.size() && !job->unknown_origin) {
    const std::shared_ptr<AppendJob>& next = p.appends[jobs.size()];
    const kafka::RecordBatchHeader& nh = next->header();
    if (next->unknown_origin || send_bytes + next->send_bytes > kMaxCoalescedSendBytes) break;
    if (std::max(max_ts, next->max_origin_us) - std::min(min_ts, next->min_origin_us) > kMaxSendSpanUs) break;
    if (nh.producer_id >= 0 && producers_) {
      if (!p.tail_recovered) break;
      SequenceCheck check = producers_->check(nh.producer_id, nh.producer_epoch, p.topic, p.id, nh.base_sequence,
                                              nh.record_count);
      if (check.verdict != SequenceVerdict::kAppend) break;
      next->reserved = true;
    }
    stamp_producer_ids(*next);
    send_bytes += next->send_bytes;
    min_ts = std::min(min_ts, next->min_origin_us);
    max_ts = std::max(max_ts, next->max_origin_us);
    message_count += next->mapped.messages.size();
    jobs.push_back(next);
  }
  std::vector<iggy::OutgoingMessage> merged;  // the messages of every job; spans stay in the jobs
  std::span<const iggy::OutgoingMessage> messages = job->mapped.messages;
  if (jobs.size() > 1) {
    merged.reserve(message_count);
    for (const auto& j : jobs) merged.insert(merged.end(), j->mapped.messages.begin(), j->mapped.messages.end());
    messages = merged;
  }

  p.appending = true;
  iggy_.send_messages(
      catalog_.stream(), iggy::Identifier::named(p.topic), iggy::Partitioning::partition(static_cast<uint32_t>(p.id)),
      messages, guarded<iggy::SendConfirmation>([this, pp = &p, jobs = std::move(jobs)](Result<iggy::SendConfirmation> r) {
        Partition& p = *pp;
        p.appending = false;
        // The jobs are still the front of the queue: nothing else pops while a send is in Iggy.
        for (size_t i = 0; i < jobs.size(); ++i) p.appends.pop_front();
        if (!r) {
          // A transport failure leaves the outcome unknown: Iggy sends are at-least-once.
          spdlog::warn("append to {}-{} failed: {}", p.topic, p.id, r.error().message);
          for (const auto& j : jobs) {
            const kafka::RecordBatchHeader& h = j->header();
            if (!j->reserved) continue;
            producers_->abort_append(h.producer_id, p.topic, p.id, h.base_sequence);
            p.tail_unknown = true;  // see pump_appends: the client's retry must not be stored twice
          }
          for (const auto& j : jobs) j->cb(produce_error(r.error()));
          pump_appends(p);
          return;
        }
        int64_t base = -1;
        if (r->reported) {
          base = static_cast<int64_t>(r->base_offset);
          int64_t count = 0;
          for (const auto& j : jobs) count += static_cast<int64_t>(j->mapped.messages.size());
          p.high_watermark = std::max(p.high_watermark, base + count);
        } else {
          spdlog::warn("Iggy committed an append to {}-{} without reporting its offset", p.topic, p.id);
        }
        ++p.appends_done;
        int64_t job_base = base;
        for (const auto& j : jobs) {
          const kafka::RecordBatchHeader& h = j->header();
          ProduceResult ok;
          ok.base_offset = job_base;
          ok.log_start_offset = p.log_start;
          if (job_base >= 0) job_base += static_cast<int64_t>(j->mapped.messages.size());
          if (j->reserved) {
            // Answer once the sequence is durable, so a restarted bridge still knows what this
            // producer's next batch follows; the next append need not wait for that.
            producers_->record_append(
                h.producer_id, h.producer_epoch, p.topic, p.id, h.base_sequence, h.record_count, ok.base_offset,
                [cb = j->cb, ok, topic = p.topic, id = p.id](Status s) {
                  if (!s) spdlog::warn("producer state for {}-{} not stored: {}", topic, id, s.error().message);
                  cb(ok);
                });
          } else {
            j->cb(ok);
          }
        }
        notify_waiters(p);
        pump_appends(p);
      }));
}

// Each record's Iggy message id names its producer, epoch and sequence, so a batch that reached
// Iggy but whose sequence was not yet stored when the bridge died is recognised in the
// partition's tail after a restart (recover_tail) instead of being appended twice.
void PartitionLog::stamp_producer_ids(AppendJob& job) {
  const kafka::RecordBatchHeader& h = job.header();
  if (h.producer_id < 0) return;
  for (size_t i = 0; i < job.mapped.messages.size(); ++i)
    job.mapped.messages[i].id = producer_message_id(
        h.producer_id, h.producer_epoch,
        static_cast<int32_t>((static_cast<int64_t>(h.base_sequence) + static_cast<int64_t>(i)) % (int64_t{1} << 31)),
        i == 0);
}

// After a restart, the last batches of idempotent producers may be in Iggy without their
// sequence in SQLite (the bridge died between the two). Before the first idempotent append to
// a partition, the tail is read back and every producer batch found there that the registry
// would still accept as new is recorded with the offset Iggy gave it, so its retry becomes a
// duplicate. Only the tail can hold such batches: each partition appends one batch at a time.
void PartitionLog::recover_tail(Partition& p, std::function<void()> done) {
  constexpr int64_t kTailMessages = 2000;  // far more than five in-flight batches per producer
  const int64_t from = std::max(p.log_start, p.high_watermark - kTailMessages);
  const int64_t count = p.high_watermark - from;
  if (count <= 0) {
    p.tail_recovered = true;
    return done();
  }
  poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(from)), static_cast<uint32_t>(count),
       [this, pp = &p, done](Result<iggy::PolledMessages> r) {
         Partition& p = *pp;
         if (!r) {
           // Not marked recovered: the next append tries again rather than risking a duplicate.
           spdlog::warn("cannot read the tail of {}-{} to recover producer state: {}", p.topic, p.id,
                        r.error().message);
           return done();
         }
         observe_poll(p, *r);
         struct Run {
           ProducerSeq first;
           int32_t count = 0;
           int64_t base_offset = 0;
         };
         std::vector<Run> runs;
         for (const auto& m : r->messages) {
           auto seq = parse_producer_message_id(m.id);
           if (!seq) continue;
           const int64_t off = static_cast<int64_t>(m.offset);
           if (!runs.empty() && !seq->batch_start) {
             Run& last = runs.back();
             if (last.first.producer_id == seq->producer_id && last.first.epoch == seq->epoch &&
                 last.base_offset + last.count == off &&
                 (static_cast<int64_t>(last.first.sequence) + last.count) % (int64_t{1} << 31) == seq->sequence) {
               ++last.count;
               continue;
             }
           }
           if (!seq->batch_start) continue;  // the batch's start is before the scanned tail
           runs.push_back({*seq, 1, off});
         }
         size_t recovered = 0;
         for (const Run& run : runs) {
           SequenceCheck c = producers_->check(run.first.producer_id, run.first.epoch, p.topic, p.id,
                                               run.first.sequence, run.count);
           if (c.verdict != SequenceVerdict::kAppend) continue;  // known already, or not a batch boundary
           producers_->record_append(run.first.producer_id, run.first.epoch, p.topic, p.id, run.first.sequence,
                                     run.count, run.base_offset, nullptr);
           ++recovered;
         }
         if (recovered)
           spdlog::warn("{}-{}: recovered {} producer batches that reached Iggy without their sequence stored "
                        "(a restart, or a send whose reply was lost); their retries are answered as duplicates",
                        p.topic, p.id, recovered);
         p.tail_recovered = true;
         done();
       });
}

void PartitionLog::finish_append(Partition& p, ProduceResult result) {
  std::shared_ptr<AppendJob> job = std::move(p.appends.front());
  p.appends.pop_front();
  job->cb(std::move(result));
  pump_appends(p);
}

void PartitionLog::notify_waiters(Partition& p) {
  std::vector<uint64_t> ids = p.waiters;
  for (uint64_t id : ids) wake(id);
}

// ---- fetch ------------------------------------------------------------------------------------

void PartitionLog::fetch(std::vector<FetchPartitionRequest> partitions, const FetchParams& params, FetchCallback cb,
                         uint64_t owner) {
  auto in_call = std::make_shared<bool>(true);
  const uint64_t id = next_fetch_id_++;
  auto op = std::make_unique<FetchOp>();
  op->cb = deferred_if_sync<std::vector<FetchPartitionResult>>(std::move(cb), in_call);
  op->requests = std::move(partitions);
  op->params = params;
  op->owner = owner;
  op->deadline_ms = uv_now(loop_) + static_cast<uint64_t>(std::max(0, params.max_wait_ms));
  op->states.assign(op->requests.size(), nullptr);
  op->results.assign(op->requests.size(), {});
  op->seen_high_watermark.assign(op->requests.size(), -1);
  op->timer = std::make_unique<iggy::LoopTimer>(loop_);
  fetches_.emplace(id, std::move(op));
  run_pass(id);
  *in_call = false;
}

void PartitionLog::run_pass(uint64_t op_id) {
  FetchOp& op = *fetches_.at(op_id);
  op.phase = FetchOp::Phase::kReading;
  op.rerun = false;
  ++op.passes;
  op.reads.assign(op.requests.size(), {});
  op.read_budget = static_cast<uint64_t>(std::max(0, op.params.max_bytes));
  op.pending = op.requests.size() + 1;  // +1: released below, after every read has started
  for (size_t i = 0; i < op.requests.size(); ++i) {
    const FetchPartitionRequest& rq = op.requests[i];
    lookup(rq.topic, rq.partition, [this, op_id, i](Result<TopicLimits> limits) {
      auto it = fetches_.find(op_id);
      if (it == fetches_.end()) return;
      FetchOp& op = *it->second;
      if (!limits) {
        op.reads[i].error = to_kafka_error(limits.error());
        read_finished(op_id);
        return;
      }
      const FetchPartitionRequest& rq = op.requests[i];
      Partition& p = partition(rq.topic, rq.partition);
      if (!op.states[i]) {
        op.states[i] = &p;
        if (std::find(p.waiters.begin(), p.waiters.end(), op_id) == p.waiters.end()) p.waiters.push_back(op_id);
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
      read_partition(p, rq.fetch_offset, static_cast<int32_t>(budget), false, op.owner,
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

void PartitionLog::read_finished(uint64_t op_id) {
  auto it = fetches_.find(op_id);
  if (it == fetches_.end()) return;
  if (--it->second->pending == 0) pass_done(op_id);
}

void PartitionLog::read_partition(Partition& p, int64_t offset, int32_t max_bytes, bool refreshed, uint64_t owner,
                                  std::function<void(PartitionRead)> cb) {
  auto retry_refreshed = [this, pp = &p, offset, max_bytes, owner, cb]() {
    refresh_offsets(*pp, [this, pp, offset, max_bytes, owner, cb](Status s) {
      if (!s) {
        cb(PartitionRead{to_kafka_error(s.error()), nullptr, {}});
        return;
      }
      read_partition(*pp, offset, max_bytes, true, owner, cb);
    });
  };
  if (!p.loaded && !refreshed) {
    retry_refreshed();
    return;
  }
  const FetchPosition pos = classify_fetch_offset(offset, p.log_start, p.high_watermark);
  if (pos == FetchPosition::kBelowLogStart || pos == FetchPosition::kBeyondEnd) {
    // The cache may be behind other writers or retention: only Iggy's word makes it an error.
    if (!refreshed) {
      retry_refreshed();
      return;
    }
    cb(PartitionRead{ErrorCode::kOffsetOutOfRange, nullptr, {}});
    return;
  }
  // At the high watermark too: another writer may have appended since.
  const uint32_t count = poll_count_for(static_cast<uint64_t>(std::max(0, max_bytes)), p.avg_message_bytes);
  fetch_poll(p, offset, count, owner,
       [this, pp = &p, offset, count, refreshed, cb, retry_refreshed](Result<iggy::PolledMessages> r) {
         Partition& p = *pp;
         if (!r) {
           spdlog::debug("poll {}-{} at {} failed: {}", p.topic, p.id, offset, r.error().message);
           cb(PartitionRead{to_kafka_error(r.error()), nullptr, {}});
           return;
         }
         observe_poll(p, *r);
         const auto& messages = r->messages;
         const bool starts_later = !messages.empty() && static_cast<int64_t>(messages.front().offset) > offset;
         if ((messages.empty() && offset < p.high_watermark) || starts_later) {
           // Retention removed the offset, or the partition was purged or recreated.
           if (!refreshed) {
             retry_refreshed();
             return;
           }
           if (messages.empty() || offset < p.log_start) {
             cb(PartitionRead{messages.empty() ? ErrorCode::kNone : ErrorCode::kOffsetOutOfRange, nullptr, {}});
             return;
           }
         }
         PolledRecords polled = map_polled_messages(messages, offset);
         if (polled.unmappable) {
           spdlog::error("{}-{} offset {}: stored message is not a readable Kafka record: {}", p.topic, p.id,
                         polled.unmappable_offset, polled.unmappable->message);
           if (polled.records.empty()) {
             cb(PartitionRead{ErrorCode::kUnknownServerError, nullptr, {}});
             return;
           }
         }
         if (!polled.records.empty()) start_read_ahead(p, polled.records.back().offset + 1, count);
         cb(PartitionRead{ErrorCode::kNone, r->buffer, std::move(polled.records)});
       });
}

void PartitionLog::fetch_poll(Partition& p, int64_t offset, uint32_t count, uint64_t owner,
                              iggy::Callback<iggy::PolledMessages> cb) {
  if (p.read_ahead && p.read_ahead->offset == offset && p.read_ahead->count >= count &&
      uv_now(loop_) - p.read_ahead->started_ms <= kReadAheadMaxAgeMs) {
    Partition::ReadAhead& ra = *p.read_ahead;
    if (!ra.reply) {
      ra.waiting.push_back(std::move(cb));
      return;
    }
    if (*ra.reply) {
      Result<iggy::PolledMessages> reply = std::move(*ra.reply);
      drop_read_ahead(p);
      tasks_.post([cb = std::move(cb), reply = std::move(reply)]() mutable { cb(std::move(reply)); });
      return;
    }
  }
  if (p.read_ahead && p.read_ahead->reply) drop_read_ahead(p);  // stale or for another offset
  // Only this fetch waits for this poll: it may be dropped unsent when the fetch's connection
  // closes (IggyPool::cancel_owner).
  iggy::OwnerScope scope(iggy::WorkOwner{owner, owner != 0});
  poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(offset)), count, std::move(cb));
}

void PartitionLog::start_read_ahead(Partition& p, int64_t offset, uint32_t count) {
  if (p.read_ahead || offset >= p.high_watermark) return;
  const uint64_t bytes = static_cast<uint64_t>(count) * std::max<uint64_t>(p.avg_message_bytes, 1);
  if (read_ahead_bytes_ + bytes > kReadAheadBudgetBytes) {
    // Read-aheads nobody came for (a consumer that stopped or moved) give their room back.
    const uint64_t now = uv_now(loop_);
    for (auto& [key, other] : partitions_)
      if (other->read_ahead && other->read_ahead->reply && now - other->read_ahead->started_ms > kReadAheadMaxAgeMs)
        drop_read_ahead(*other);
    if (read_ahead_bytes_ + bytes > kReadAheadBudgetBytes) return;
  }
  read_ahead_bytes_ += bytes;
  p.read_ahead = std::make_unique<Partition::ReadAhead>();
  Partition::ReadAhead* ra = p.read_ahead.get();
  ra->offset = offset;
  ra->count = count;
  ra->started_ms = uv_now(loop_);
  ra->budget_bytes = bytes;
  poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(offset)), count,
       [this, pp = &p, ra](Result<iggy::PolledMessages> r) {
         Partition& p = *pp;
         if (p.read_ahead.get() != ra) return;  // dropped meanwhile
         if (r) observe_poll(p, *r);
         if (ra->waiting.empty()) {
           ra->reply = std::move(r);
           return;
         }
         // Fetches already wait for it: the first takes the reply, any other polls for itself,
         // and after a failure every one of them does (their own poll reports real errors).
         auto waiting = std::move(ra->waiting);
         const int64_t offset = ra->offset;
         const uint32_t count = ra->count;
         drop_read_ahead(p);
         size_t first = 0;
         if (r) waiting[first++](std::move(r));
         for (size_t i = first; i < waiting.size(); ++i)
           poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(offset)), count, std::move(waiting[i]));
       });
}

void PartitionLog::drop_read_ahead(Partition& p) {
  if (!p.read_ahead) return;
  read_ahead_bytes_ -= p.read_ahead->budget_bytes;
  p.read_ahead.reset();
}

void PartitionLog::pass_done(uint64_t op_id) {
  FetchOp& op = *fetches_.at(op_id);
  const size_t n = op.requests.size();
  std::vector<FetchPartitionResult> results(n);
  size_t remaining = static_cast<size_t>(std::max(0, op.params.max_bytes));
  bool first_with_data = true;
  bool any_error = false;
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    FetchPartitionResult& res = results[i];
    PartitionRead& read = op.reads[i];
    if (const Partition* p = op.states[i]) {
      res.high_watermark = res.last_stable_offset = p->high_watermark;
      res.log_start_offset = p->log_start;
      op.seen_high_watermark[i] = p->high_watermark;
    }
    if (read.error != ErrorCode::kNone) {
      res.error = read.error;
      any_error = true;
      continue;
    }
    if (read.records.empty()) continue;
    // KIP-74: the first partition with data returns at least one record whatever the limits.
    const size_t budget = std::min(static_cast<size_t>(std::max(0, op.requests[i].max_bytes)), remaining);
    EncodedRecords enc = encode_fetched_records(read.records, budget, first_with_data);
    if (enc.records == 0) continue;
    first_with_data = false;
    remaining -= std::min(remaining, enc.bytes.size());
    total += enc.bytes.size();
    res.records = std::move(enc.bytes);
  }
  op.results = std::move(results);
  op.reads.clear();

  const bool enough = total >= static_cast<size_t>(std::max(0, op.params.min_bytes));
  if (any_error || enough || op.requests.empty() || op.params.max_wait_ms <= 0 || uv_now(loop_) >= op.deadline_ms || stop_waiting_) {
    respond(op_id);
    return;
  }
  if (op.rerun) {
    run_pass(op_id);
    return;
  }
  arm_wait(op_id);
}

void PartitionLog::arm_wait(uint64_t op_id) {
  FetchOp& op = *fetches_.at(op_id);
  op.phase = FetchOp::Phase::kWaiting;
  const uint64_t now = uv_now(loop_);
  const auto left = milliseconds(op.deadline_ms > now ? op.deadline_ms - now : 0);
  op.timer->start(std::min(op.recheck, left), [this, op_id] { check_for_news(op_id); });
}

void PartitionLog::wake(uint64_t op_id) {
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

void PartitionLog::check_for_news(uint64_t op_id) {
  FetchOp& op = *fetches_.at(op_id);
  op.phase = FetchOp::Phase::kChecking;
  std::set<std::string> topics;
  for (size_t i = 0; i < op.requests.size(); ++i)
    if (op.states[i]) topics.insert(op.requests[i].topic);
  auto pending = std::make_shared<size_t>(topics.size() + 1);
  auto checked = [this, op_id, pending](Status) {
    if (--*pending > 0) return;
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
  };
  // A failed GetTopic just means no news this round; the next pass reports real errors.
  // Many fetches long-polling one topic share GetTopic replies younger than half their
  // re-check interval, which bounds the load on Iggy whatever the number of consumers.
  const uint64_t now = uv_now(loop_);
  const auto max_age = static_cast<uint64_t>(op.recheck.count() / 2);
  for (const std::string& t : topics) {
    auto fresh = topic_refreshed_at_.find(t);
    if (fresh != topic_refreshed_at_.end() && now - fresh->second < max_age) {
      --*pending;
      continue;
    }
    refresh_topic(t, checked);
  }
  checked(ok_status());
}

void PartitionLog::respond(uint64_t op_id) {
  auto it = fetches_.find(op_id);
  if (it == fetches_.end()) return;
  std::unique_ptr<FetchOp> op = std::move(it->second);
  fetches_.erase(it);
  op->timer->stop();
  for (Partition* p : op->states)
    if (p) std::erase(p->waiters, op_id);
  op->cb(std::move(op->results));
}

void PartitionLog::cancel_fetches(uint64_t owner) {
  if (owner == 0) return;
  std::vector<uint64_t> ids;
  for (const auto& [id, op] : fetches_)
    if (op->owner == owner) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = fetches_.find(id);
    std::unique_ptr<FetchOp> op = std::move(it->second);
    fetches_.erase(it);
    op->timer->stop();
    for (Partition* p : op->states)
      if (p) std::erase(p->waiters, id);
    // Reads in flight find the op gone and stop; the callback is never called.
  }
  iggy_.pool().cancel_owner(owner);
}

void PartitionLog::stop_waiting() {
  stop_waiting_ = true;
  std::vector<uint64_t> waiting;
  for (const auto& [id, op] : fetches_)
    if (op->phase == FetchOp::Phase::kWaiting) waiting.push_back(id);
  for (uint64_t id : waiting) respond(id);
}

// ---- list offsets -----------------------------------------------------------------------------

void PartitionLog::list_offsets(const std::string& topic, int32_t partition_id, int64_t timestamp,
                                std::function<void(OffsetLookup)> cb) {
  auto in_call = std::make_shared<bool>(true);
  cb = deferred_if_sync<OffsetLookup>(std::move(cb), in_call);
  lookup(topic, partition_id, [this, topic, partition_id, timestamp, cb](Result<TopicLimits> limits) {
    if (!limits) {
      cb(lookup_error(limits.error()));
      return;
    }
    Partition& p = partition(topic, partition_id);
    if (timestamp == kLatestTimestamp) {
      refresh_topic(topic, [pp = &p, cb](Status s) {
        if (!s) {
          cb(lookup_error(s.error()));
          return;
        }
        cb(OffsetLookup{ErrorCode::kNone, pp->high_watermark, -1});
      });
      return;
    }
    refresh_offsets(p, [this, pp = &p, timestamp, cb](Status s) {
      if (!s) {
        cb(lookup_error(s.error()));
        return;
      }
      if (timestamp == kEarliestTimestamp || timestamp == kEarliestLocalTimestamp) {
        cb(OffsetLookup{ErrorCode::kNone, pp->log_start, -1});
        return;
      }
      extend_time_index(*pp, [this, pp, timestamp, cb](Status s2) {
        if (!s2) {
          cb(lookup_error(s2.error()));
          return;
        }
        const TimeIndex& index = pp->time_index;
        if (timestamp == kMaxTimestamp) {
          cb(OffsetLookup{ErrorCode::kNone, index.max_timestamp_offset(),
                          index.max_timestamp_offset() < 0 ? -1 : index.max_timestamp()});
          return;
        }
        // Any other value, negative ones included, searches like Kafka: first record >= it.
        std::optional<int64_t> from = index.chunk_start_for(timestamp);
        if (!from) {
          cb(OffsetLookup{});
          return;
        }
        scan_for_timestamp(*pp, std::max(*from, pp->log_start), timestamp, cb);
      });
    });
  });
  *in_call = false;
}

void PartitionLog::extend_time_index(Partition& p, std::function<void(Status)> done) {
  p.index_waiters.push_back(std::move(done));
  if (p.indexing) return;
  p.indexing = true;
  TimeIndex& index = p.time_index;
  const bool max_deleted = index.max_timestamp_offset() >= 0 && index.max_timestamp_offset() < p.log_start;
  if (!p.time_index_started || p.high_watermark < index.next() || p.log_start < index.start() || max_deleted) {
    index.reset(p.log_start);  // first use, purge/recreation, or retention took the maximum
    p.time_index_started = true;
  }
  index.advance_to(p.log_start);
  p.index_target = p.high_watermark;
  index_step(p);
}

void PartitionLog::index_step(Partition& p) {
  TimeIndex& index = p.time_index;
  if (index.next() >= p.index_target) {
    p.indexing = false;
    auto waiting = std::move(p.index_waiters);
    p.index_waiters.clear();
    for (auto& cb : waiting) cb(ok_status());
    return;
  }
  const uint32_t count = poll_count_for(UINT64_MAX, p.avg_message_bytes);
  poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(index.next())), count,
       [this, pp = &p](Result<iggy::PolledMessages> r) {
         Partition& p = *pp;
         TimeIndex& index = p.time_index;
         if (!r) {
           p.indexing = false;
           auto waiting = std::move(p.index_waiters);
           p.index_waiters.clear();
           for (auto& cb : waiting) cb(r.error());
           return;
         }
         observe_poll(p, *r);
         const int64_t before = index.next();
         for (const iggy::MessageView& m : r->messages)
           index.add(static_cast<int64_t>(m.offset), kafka_timestamp_of(m));
         if (index.next() == before) index.advance_to(p.index_target);  // nothing more is readable
         index_step(p);
       });
}

void PartitionLog::scan_for_timestamp(Partition& p, int64_t from, int64_t timestamp,
                                      std::function<void(OffsetLookup)> cb) {
  if (from >= p.high_watermark) {
    cb(OffsetLookup{});
    return;
  }
  const uint32_t count = poll_count_for(UINT64_MAX, p.avg_message_bytes);
  poll(p, iggy::PollingStrategy::offset(static_cast<uint64_t>(from)), count,
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
           if (static_cast<int64_t>(m.offset) < from) continue;
           const int64_t ts = kafka_timestamp_of(m);
           if (ts >= timestamp) {
             cb(OffsetLookup{ErrorCode::kNone, static_cast<int64_t>(m.offset), ts});
             return;
           }
         }
         const int64_t next = static_cast<int64_t>(r->messages.back().offset) + 1;
         if (next <= from) {
           cb(OffsetLookup{});
           return;
         }
         scan_for_timestamp(*pp, next, timestamp, cb);
       });
}

}  // namespace kib::bridge
