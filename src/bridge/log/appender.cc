#include "bridge/log/appender.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <span>

#include "bridge/errors.h"
#include "bridge/log/produce_validation.h"

namespace kib::bridge {

using kafka::ErrorCode;

ProduceResult produce_error(ErrorCode code, std::string message) {
  ProduceResult r;
  r.error = code;
  r.message = std::move(message);
  return r;
}
ProduceResult produce_error(const Error& e) { return produce_error(to_kafka_error(e), e.message); }

uint64_t iggy_send_bytes(const MappedMessages& mapped) {
  uint64_t send_bytes = 0;
  for (const iggy::OutgoingMessage& m : mapped.messages)
    send_bytes += kIggyMessageFrameBytes + m.payload.size() + m.user_headers.size();
  return send_bytes;
}

std::optional<Error> check_send_bytes(uint64_t send_bytes) {
  if (send_bytes <= kMaxIggySendBytes) return std::nullopt;
  return kafka_error(ErrorCode::kMessageTooLarge, "batch maps to " + std::to_string(send_bytes) +
                                                      " bytes of Iggy messages, above the " +
                                                      std::to_string(kMaxIggySendBytes) + " one Iggy send can carry");
}

std::optional<ProduceResult> prepare_append(AppendJob& job, const std::string& topic, PartitionId partition,
                                            int32_t max_message_bytes, bool transactional) {
  if (Status v = validate_produce_batches(job.batches, max_message_bytes, transactional); !v) {
    if (to_kafka_error(v.error()) == ErrorCode::kInvalidTxnState)
      spdlog::warn("produce to {}-{} refused: {}", topic, partition, v.error().message);
    else
      spdlog::debug("produce to {}-{} refused: {}", topic, partition, v.error().message);
    return produce_error(v.error());
  }
  auto mapped = map_batch_to_iggy(job.batches.front());
  if (!mapped) return produce_error(mapped.error());
  const uint64_t send_bytes = iggy_send_bytes(*mapped);
  if (auto too_large = check_send_bytes(send_bytes)) return produce_error(*too_large);
  job.mapped = std::move(mapped.value());
  job.send_bytes = send_bytes;
  job.min_origin_us = UINT64_MAX;
  for (const iggy::OutgoingMessage& m : job.mapped.messages) {
    if (m.origin_timestamp_us == 0) job.unknown_origin = true;
    job.min_origin_us = std::min(job.min_origin_us, m.origin_timestamp_us);
    job.max_origin_us = std::max(job.max_origin_us, m.origin_timestamp_us);
  }
  return std::nullopt;
}

size_t coalesced_jobs(const std::deque<std::shared_ptr<AppendJob>>& queue,
                      const std::function<bool(AppendJob&)>& admit) {
  if (queue.empty()) return 0;
  const AppendJob& head = *queue.front();
  size_t n = 1;
  uint64_t send_bytes = head.send_bytes;
  uint64_t min_ts = head.min_origin_us, max_ts = head.max_origin_us;
  while (n < queue.size() && !head.unknown_origin) {
    AppendJob& next = *queue[n];
    if (next.unknown_origin || next.as != head.as || send_bytes + next.send_bytes > kMaxCoalescedSendBytes) break;
    if (std::max(max_ts, next.max_origin_us) - std::min(min_ts, next.min_origin_us) > kMaxSendSpanUs) break;
    if (!admit(next)) break;
    send_bytes += next.send_bytes;
    min_ts = std::min(min_ts, next.min_origin_us);
    max_ts = std::max(max_ts, next.max_origin_us);
    ++n;
  }
  return n;
}

Appender::Queue& Appender::queue_of(PartitionOffsets& p) {
  auto& slot = queues_[&p];
  if (!slot) {
    slot = std::make_unique<Queue>();
    slot->offsets = &p;
  }
  return *slot;
}

void Appender::append(PartitionOffsets& p, std::shared_ptr<AppendJob> job) {
  Queue& q = queue_of(p);
  q.appends.push_back(std::move(job));
  pump(q);
}

void Appender::when_idle(PartitionOffsets& p, std::function<void()> idle) {
  Queue& q = queue_of(p);
  if (!q.appending && q.appends.empty()) return idle();
  q.idle_waiters.push_back(std::move(idle));
}

size_t Appender::queued(const PartitionOffsets& p) const {
  auto it = queues_.find(&p);
  return it == queues_.end() ? 0 : it->second->appends.size();
}

void Appender::pump(Queue& q) {
  if (q.appending) return;
  if (q.appends.empty()) {
    auto waiters = std::move(q.idle_waiters);
    q.idle_waiters.clear();
    for (auto& w : waiters) w();
    return;
  }
  if (!prepare_head(q)) return;
  std::shared_ptr<AppendJob> head = q.appends.front();
  stamp_producer_ids(head->header(), head->mapped.messages);

  // Appends queued behind the head go to Iggy in the same send, in queue order, so a partition
  // pays one Iggy round trip (and with enforce_fsync one fsync) per send rather than per Produce
  // request: while one send is in Iggy the next requests queue up, and all of them go next.
  // An idempotent follower joins only if the registry reserves its sequence range (any other
  // verdict leaves it queued to be answered at the head).
  const PartitionOffsets& p = *q.offsets;
  const size_t n = coalesced_jobs(q.appends, [&](AppendJob& next) {
    const kafka::RecordBatchHeader& nh = next.header();
    if (!next.committed && idempotence_.applies_to(nh)) {
      if (!q.tail.recovered) return false;
      if (!idempotence_.reserve(p.topic, p.id, nh)) return false;
      next.reserved = true;
    }
    stamp_producer_ids(nh, next.mapped.messages);
    return true;
  });
  send(q, std::vector<std::shared_ptr<AppendJob>>(q.appends.begin(), q.appends.begin() + static_cast<ptrdiff_t>(n)));
}

// Gets the head of the queue ready to send: true when it is (an idempotent one then holds its
// reservation). False when it waits for Iggy (the queue is `appending` then) or was answered.
bool Appender::prepare_head(Queue& q) {
  PartitionOffsets& p = *q.offsets;
  if (!p.loaded && !q.load_tried) {
    // Once per partition: the answer carries the log start offset. A failure here is not the
    // append's failure; the send reports Iggy's state for itself.
    q.appending = true;
    q.load_tried = true;
    offsets_.refresh(p, [this, qq = &q](Status s) {
      if (!s)
        spdlog::debug("offsets of {}-{} not readable before append: {}", qq->offsets->topic, qq->offsets->id,
                      s.error().message);
      qq->appending = false;
      pump(*qq);
    });
    return false;
  }
  AppendJob& job = *q.appends.front();
  const kafka::RecordBatchHeader& h = job.header();
  if (job.committed || !idempotence_.applies_to(h)) return true;
  if (q.tail.unknown) {
    // The retry of a batch whose send failed may be at the head now. If Iggy stored that send
    // (a reply lost when the connection dropped, or a timeout), appending the retry would store
    // it twice: learn Iggy's end first, then recover the tail to record what is there.
    q.appending = true;
    offsets_.refresh(p, [this, qq = &q](Status s) {
      Queue& q = *qq;
      q.appending = false;
      // Still unknown: refuse (retriable) rather than risk a duplicate.
      if (!s) return finish_head(q, produce_error(s.error()));
      q.tail.unknown = false;
      q.tail.recovered = false;
      pump(q);
    });
    return false;
  }
  if (!q.tail.recovered && p.loaded) {
    q.appending = true;
    auto read_tail = [this, pp = &p](KafkaOffset from, uint32_t count, iggy::Callback<iggy::PolledMessages> cb) {
      offsets_.poll(*pp, iggy::PollingStrategy::offset(static_cast<uint64_t>(from())), count,
                    [pp, cb = std::move(cb)](Result<iggy::PolledMessages> r) {
                      if (r) observe_poll(*pp, *r);
                      cb(std::move(r));
                    });
    };
    idempotence_.recover_tail(p.topic, p.id, p.log_start, p.high_watermark, q.tail, read_tail, [this, qq = &q] {
      qq->appending = false;
      // The tail could not be read: answer this batch retriably (its retry tries the tail
      // again) instead of appending it unchecked or retrying the read at once, forever.
      if (!qq->tail.recovered)
        return finish_head(*qq, produce_error(ErrorCode::kRequestTimedOut,
                                              "the partition's tail could not be read from Iggy; retry"));
      pump(*qq);
    });
    return false;
  }
  // Idempotence is checked here, at the head of the partition's queue, right before the send:
  // the registry sees every earlier batch of this partition recorded or aborted, so a retry of
  // the batch in Iggy now waits behind it and is then answered as a duplicate, and no reservation
  // ever waits (is_reserved() would always be true).
  IdempotenceVerdict verdict = idempotence_.check(p.topic, p.id, h);
  switch (verdict.kind) {
    case IdempotenceVerdict::Kind::kAppend:
      job.reserved = true;
      return true;
    case IdempotenceVerdict::Kind::kDuplicate: {
      ProduceResult dup;
      dup.base_offset = verdict.duplicate_base_offset;
      dup.log_start_offset = p.log_start;
      finish_head(q, dup);
      return false;
    }
    case IdempotenceVerdict::Kind::kRefused:
      finish_head(q, produce_error(verdict.error, std::move(verdict.message)));
      return false;
  }
  return false;
}

void Appender::send(Queue& q, std::vector<std::shared_ptr<AppendJob>> jobs) {
  std::vector<iggy::OutgoingMessage> merged;  // the messages of every job; spans stay in the jobs
  std::span<const iggy::OutgoingMessage> messages = jobs.front()->mapped.messages;
  if (jobs.size() > 1) {
    size_t message_count = 0;
    for (const auto& j : jobs) message_count += j->mapped.messages.size();
    merged.reserve(message_count);
    for (const auto& j : jobs) merged.insert(merged.end(), j->mapped.messages.begin(), j->mapped.messages.end());
    messages = merged;
  }
  q.appending = true;
  const PartitionOffsets& p = *q.offsets;
  iggy::IggyPool* as = jobs.front()->as;
  backend_.send(
      p.topic, p.id(), messages,
      [this, qq = &q, jobs = std::move(jobs)](Result<iggy::SendConfirmation> r) { sent(*qq, jobs, std::move(r)); }, as);
}

void Appender::sent(Queue& q, const std::vector<std::shared_ptr<AppendJob>>& jobs, Result<iggy::SendConfirmation> r) {
  PartitionOffsets& p = *q.offsets;
  q.appending = false;
  // The jobs are still the front of the queue: nothing else pops while a send is in Iggy.
  for (size_t i = 0; i < jobs.size(); ++i) q.appends.pop_front();
  if (!r) {
    // A transport failure leaves the outcome unknown: Iggy sends are at-least-once.
    spdlog::warn("append to {}-{} failed: {}", p.topic, p.id, r.error().message);
    for (const auto& j : jobs) {
      if (!j->reserved) continue;
      idempotence_.abort(p.topic, p.id, j->header());
      q.tail.unknown = true;  // see prepare_head: the client's retry must not be stored twice
    }
    for (const auto& j : jobs) j->cb(produce_error(r.error()));
    pump(q);
    return;
  }
  KafkaOffset base = kNoOffset;
  int64_t count = 0;
  if (r->reported) {
    base = KafkaOffset(static_cast<int64_t>(r->base_offset));
    for (const auto& j : jobs) count += static_cast<int64_t>(j->mapped.messages.size());
  } else {
    spdlog::warn("Iggy committed an append to {}-{} without reporting its offset", p.topic, p.id);
  }
  note_appended(p, base, count);
  if (observer_ && base >= KafkaOffset(0)) {
    uint64_t bytes = 0;
    for (const auto& j : jobs) bytes += j->send_bytes;
    observer_(p, base, count, bytes);
  }
  KafkaOffset job_base = base;
  for (const auto& j : jobs) {
    ProduceResult ok;
    ok.base_offset = job_base;
    ok.log_start_offset = p.log_start;
    if (cache_ && job_base >= KafkaOffset(0) && !j->committed) cache_->put(p.topic, p.id, job_base(), j->batches.front(), j->input);
    if (job_base >= KafkaOffset(0)) job_base += static_cast<int64_t>(j->mapped.messages.size());
    if (j->reserved)
      idempotence_.record(p.topic, p.id, j->header(), ok.base_offset, [cb = j->cb, ok] { cb(ok); });
    else
      j->cb(ok);
  }
  if (appended_) appended_(p);
  pump(q);
}

void Appender::finish_head(Queue& q, ProduceResult result) {
  std::shared_ptr<AppendJob> job = std::move(q.appends.front());
  q.appends.pop_front();
  job->cb(std::move(result));
  pump(q);
}

}  // namespace kib::bridge
