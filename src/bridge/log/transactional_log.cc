// PartitionLog's transactional side (partition_log.h, "transactions"; docs/transactions.md): the
// checks and appends of the transaction coordinator, the recovery scan, and the last stable
// offset holds that keep a committed transaction invisible to read_committed readers until all of
// its partitions are appended.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

#include "bridge/errors.h"
#include "bridge/log/appender.h"
#include "bridge/log/partition_log.h"
#include "bridge/log/partition_offsets.h"
#include "bridge/log/produce_validation.h"
#include "bridge/log/reader.h"
#include "bridge/producers/idempotence.h"

namespace kib::bridge {

using kafka::ErrorCode;

namespace {
// Messages per poll of the recovery scan.
constexpr uint32_t kScanPollMessages = 1000;
}  // namespace

void PartitionLog::check_transactional(const std::string& topic, PartitionId partition,
                                       const std::vector<kafka::DecodedBatch>& batches,
                                       std::function<void(ProduceResult)> cb) {
  Liveness in_call;
  cb = deferred_if_sync<ProduceResult>(std::move(cb), in_call.token());
  // Checked as produce() checks and maps a batch, so one that could never be appended at commit
  // is refused now, before it is buffered. `batches` outlives `cb` (the caller's contract).
  lookup(topic, partition, [this, pb = &batches, cb, topic, partition](Result<TopicLimits> limits) {
    if (!limits) return cb(produce_error(limits.error()));
    if (Status v = validate_produce_batches(*pb, limits->max_message_bytes, /*transactional=*/true); !v)
      return cb(produce_error(v.error()));
    if (!pb->front().header.is_transactional())
      return cb(produce_error(ErrorCode::kInvalidRecord, "not a transactional batch"));
    auto mapped = map_batch_to_iggy(pb->front());
    if (!mapped) return cb(produce_error(mapped.error()));
    if (auto too_large = check_send_bytes(iggy_send_bytes(*mapped))) return cb(produce_error(*too_large));
    if (limits->compacted)
      if (auto keyless = refuse_keyless_records(*pb, topic, partition())) {
        keyless_compacted_records_ += keyless->record_errors.size();
        return cb(std::move(*keyless));
      }
    cb(ProduceResult{});
  });
}

void PartitionLog::append_committed(const std::string& topic, PartitionId partition,
                                    std::vector<kafka::DecodedBatch> batches, std::shared_ptr<const void> input,
                                    std::function<void(ProduceResult)> cb) {
  Liveness in_call;
  cb = deferred_if_sync<ProduceResult>(std::move(cb), in_call.token());
  auto job = std::make_shared<AppendJob>();
  job->batches = std::move(batches);
  job->input = SharedSpan{std::move(input), {}};
  job->cb = std::move(cb);
  job->committed = true;
  lookup(topic, partition, [this, job, topic, partition](Result<TopicLimits> limits) {
    if (!limits) return job->cb(produce_error(limits.error()));
    // Checked when buffered; the topic's max.message.bytes may have been lowered since, which
    // must not make a decided commit impossible.
    if (auto refused = prepare_append(*job, topic, partition, /*max_message_bytes=*/-1, /*transactional=*/true))
      return job->cb(std::move(*refused));
    appender_->append(offsets_->at(topic, partition), job);
  });
}

struct PartitionLog::RecoveryScan {
  PartitionOffsets* partition = nullptr;
  ProducerId producer_id;
  ProducerEpoch epoch;
  KafkaOffset next;
  KafkaOffset end;
  std::vector<int32_t> found;
  std::function<void(Result<std::vector<int32_t>>)> cb;
};

void PartitionLog::producer_batches_since(const std::string& topic, PartitionId partition, KafkaOffset from,
                                          ProducerId producer_id, ProducerEpoch epoch,
                                          std::function<void(Result<std::vector<int32_t>>)> cb) {
  Liveness in_call;
  cb = deferred_if_sync<Result<std::vector<int32_t>>>(std::move(cb), in_call.token());
  auto scan = std::make_shared<RecoveryScan>();
  scan->producer_id = producer_id;
  scan->epoch = epoch;
  scan->next = from;
  scan->cb = std::move(cb);
  lookup(topic, partition, [this, alive = alive_.token(), scan, topic, partition](Result<TopicLimits> limits) {
    if (!alive) return;
    if (!limits) return scan->cb(limits.error());
    PartitionOffsets& p = offsets_->at(topic, partition);
    scan->partition = &p;
    offsets_->refresh(p, [this, alive, scan](Status s) {
      if (!alive) return;
      if (!s) return scan->cb(s.error());
      const PartitionOffsets& p = *scan->partition;
      scan->end = p.high_watermark;
      scan->next = std::max(scan->next, p.log_start);
      spdlog::debug("recovery scan of {}-{} for producer {} epoch {}: offsets {} to {}", p.topic, p.id,
                    scan->producer_id, scan->epoch, scan->next, scan->end);
      const auto bound = static_cast<int64_t>(config_.transactions.max_recovery_scan_messages);
      if (scan->end - scan->next > bound)
        return scan->cb(kafka_error(ErrorCode::kKafkaStorageError,
                                    "recovery scan of " + p.topic + "-" + std::to_string(p.id()) + " from " +
                                        std::to_string(scan->next()) + " would read " +
                                        std::to_string(scan->end - scan->next) + " messages, above " +
                                        std::to_string(bound) + " ([transactions] max_recovery_scan_messages)"));
      scan_step(scan);
    });
  });
}

// One poll of the recovery scan; the next one is posted, so a long scan never recurses.
void PartitionLog::scan_step(std::shared_ptr<RecoveryScan> scan) {
  if (scan->next >= scan->end) return scan->cb(std::move(scan->found));
  const auto count = static_cast<uint32_t>(std::min<int64_t>(kScanPollMessages, scan->end - scan->next));
  offsets_->poll(*scan->partition, iggy::PollingStrategy::offset(static_cast<uint64_t>(scan->next())), count,
                 [this, alive = alive_.token(), scan](Result<iggy::PolledMessages> r) {
                   if (!alive) return;
                   if (!r) return scan->cb(r.error());
                   observe_poll(*scan->partition, *r);
                   if (r->messages.empty()) scan->next = scan->end;  // retention moved past it
                   for (const iggy::MessageView& m : r->messages) {
                     if (KafkaOffset(static_cast<int64_t>(m.offset)) < scan->next) continue;
                     scan->next = KafkaOffset(static_cast<int64_t>(m.offset) + 1);
                     auto seq = parse_producer_message_id(m.id);
                     if (seq && seq->batch_start && seq->producer_id == scan->producer_id && seq->epoch == scan->epoch)
                       scan->found.push_back(seq->sequence);
                   }
                   tasks_.post([this, alive, scan] {
                     if (alive) scan_step(scan);
                   });
                 });
}

void PartitionLog::hold_stable(const std::string& topic, PartitionId partition,
                               std::function<void(Result<KafkaOffset>)> held) {
  Liveness in_call;
  held = deferred_if_sync<Result<KafkaOffset>>(std::move(held), in_call.token());
  lookup(topic, partition, [this, alive = alive_.token(), topic, partition, held](Result<TopicLimits> limits) {
    if (!alive) return;
    if (!limits) return held(limits.error());
    PartitionOffsets& p = offsets_->at(topic, partition);
    auto hold = [pp = &p, held] {
      pp->stable_holds.insert(pp->high_watermark());
      held(pp->high_watermark);
    };
    if (p.loaded) return hold();
    offsets_->refresh(p, [alive, hold, held](Status s) {
      if (!alive) return;
      if (!s) return held(s.error());
      hold();
    });
  });
}

void PartitionLog::hold_stable_at(const std::string& topic, PartitionId partition, KafkaOffset at) {
  offsets_->at(topic, partition).stable_holds.insert(at());
}

void PartitionLog::release_stable(const std::string& topic, PartitionId partition, KafkaOffset held) {
  PartitionOffsets& p = offsets_->at(topic, partition);
  auto it = p.stable_holds.find(held());
  if (it == p.stable_holds.end()) {
    spdlog::warn("release of a last stable offset hold {} that {}-{} does not have", held, topic, partition);
    return;
  }
  p.stable_holds.erase(it);
  // read_committed fetches waiting at the old last stable offset read again.
  reader_->appended(p);
}

}  // namespace kib::bridge
