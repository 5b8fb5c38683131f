#include "bridge/log/partition_log.h"

#include <spdlog/spdlog.h>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "bridge/log/appender.h"
#include "bridge/log/batch_cache.h"
#include "bridge/log/fetch_records.h"
#include "bridge/log/held_appends.h"
#include "bridge/log/log_backend.h"
#include "bridge/log/log_dirs.h"
#include "bridge/log/offset_index.h"
#include "bridge/log/partition_offsets.h"
#include "bridge/log/produce_validation.h"
#include "bridge/log/reader.h"
#include "bridge/producers/idempotence.h"

namespace kib::bridge {

using kafka::ErrorCode;

PartitionLog::PartitionLog(uv_loop_t* loop, iggy::IggyClient& iggy, TopicCatalog& catalog, ProducerRegistry* producers,
                           const config::Config& config)
    : loop_(loop),
      catalog_(catalog),
      config_(config),
      tasks_(loop),
      cache_(std::make_unique<BatchCache>(config.limits.produced_batch_cache_bytes)),
      backend_(std::make_unique<IggyLogBackend>(iggy, catalog)),
      offsets_(std::make_unique<OffsetsTable>(loop, *backend_)),
      idempotence_(std::make_unique<Idempotence>(producers)) {
  auto known = [this](const std::string& topic, PartitionId partition, std::function<void(Status)> cb) {
    lookup(topic, partition, [cb = std::move(cb)](Result<TopicLimits> limits) {
      cb(limits ? ok_status() : Status(limits.error()));
    });
  };
  reader_ = std::make_unique<Reader>(loop, *backend_, *offsets_, tasks_, known, cache_.get());
  appender_ = std::make_unique<Appender>(
      *backend_, *offsets_, *idempotence_, [this](PartitionOffsets& p) { reader_->appended(p); }, cache_.get());
  held_ = std::make_unique<HeldAppends>(loop, *offsets_, *appender_, *idempotence_, tasks_,
                                        config.transactions.max_held_bytes_per_partition);
  index_ = std::make_unique<OffsetIndex>(*offsets_);
  deletion_ = std::make_unique<RecordDeletion>(*backend_, *offsets_);
  log_dirs_ = std::make_unique<LogDirs>(*backend_, *offsets_,
                                        log_dir_name(config.iggy.address.str(), config.iggy.stream), [this] {
                                          std::vector<std::pair<std::string, int32_t>> out;
                                          for (const TopicMetadata* m : catalog_.all())
                                            out.emplace_back(m->name, m->partitions);
                                          return out;
                                        });
  catalog_.add_listener(this);
}

PartitionLog::~PartitionLog() {
  catalog_.remove_listener(this);
  alive_.end();
}

void PartitionLog::on_topic_deleted(const std::string& name) {
  cache_->drop_topic(name);
  offsets_->reset_topic(name);
  for (PartitionOffsets* p : offsets_->partitions_of(name)) {
    held_->forget(*p);
    index_->forget(*p);
    reader_->topic_deleted(*p);
  }
}

void PartitionLog::lookup(const std::string& topic, PartitionId partition,
                          std::function<void(Result<TopicLimits>)> cb) {
  auto limits = [topic, partition](const TopicMetadata* m) -> Result<TopicLimits> {
    if (!m) return kafka_error(ErrorCode::kUnknownTopicOrPartition, "unknown topic " + topic);
    if (partition() < 0 || partition() >= m->partitions)
      return kafka_error(ErrorCode::kUnknownTopicOrPartition,
                         "topic " + topic + " has no partition " + std::to_string(partition()));
    return TopicLimits{m->partitions, m->settings.max_message_bytes, deletes_allowed(*m), compacts(m->settings)};
  };
  if (const TopicMetadata* m = catalog_.find(topic)) {
    cb(limits(m));
    return;
  }
  catalog_.ensure(topic, /*auto_create=*/false,
                  [alive = alive_.token(), limits, cb](Result<const TopicMetadata*> r) {
                    if (!alive) return;
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

Status PartitionLog::precheck_produce(const std::string& topic, PartitionId partition) const {
  if (const TopicMetadata* m = catalog_.find(topic)) {
    if (partition() < 0 || partition() >= m->partitions)
      return kafka_error(ErrorCode::kUnknownTopicOrPartition,
                         "topic " + topic + " has no partition " + std::to_string(partition()));
    return ok_status();
  }
  if (auto why = TopicCatalog::invalid_topic_name(topic))
    return kafka_error(ErrorCode::kUnknownTopicOrPartition, "unknown topic: " + *why);
  return ok_status();
}

// ---- produce: validate and map here, queue and send in the appender ------------------------------

void PartitionLog::produce(const std::string& topic, PartitionId partition_id, std::vector<kafka::DecodedBatch> batches,
                           SharedSpan input, int16_t acks, std::function<void(ProduceResult)> cb,
                           iggy::IggyPool* as) {
  Liveness in_call;  // alive until this call returns: a callback run before then is deferred
  cb = deferred_if_sync<ProduceResult>(std::move(cb), in_call.token());
  if (acks != 0 && acks != 1 && acks != -1) {
    cb(produce_error(ErrorCode::kInvalidRequiredAcks, "acks must be 0, 1 or -1, got " + std::to_string(acks)));
    return;
  }
  auto job = std::make_shared<AppendJob>();
  job->batches = std::move(batches);
  job->input = std::move(input);
  job->cb = std::move(cb);
  job->as = as;
  lookup(topic, partition_id, [this, job, topic, partition_id](Result<TopicLimits> limits) {
    if (!limits) {
      job->cb(produce_error(limits.error()));
      return;
    }
    if (auto refused = prepare_append(*job, topic, partition_id, limits->max_message_bytes)) {
      job->cb(std::move(*refused));
      return;
    }
    if (limits->compacted)
      if (auto keyless = refuse_keyless_records(job->batches, topic, partition_id())) {
        keyless_compacted_records_ += keyless->record_errors.size();
        spdlog::debug("produce to {}-{} refused: {}", topic, partition_id, keyless->message);
        return job->cb(std::move(*keyless));
      }
    PartitionOffsets& p = offsets_->at(topic, partition_id);
    // Behind an open transaction, a batch takes its offsets in the held tail (held_appends.h).
    if (held_->holding(p)) return held_->append_plain(p, job);
    appender_->append(p, job);
  });
}

// ---- held appends -----------------------------------------------------------------------------

void PartitionLog::set_held_store(HeldStore* store) { held_->set_store(store); }

void PartitionLog::reserve_held(const std::string& topic, PartitionId partition, int32_t count, uint64_t bytes,
                                HeldTxn txn, AbortedRecordMarker producer,
                                std::function<void(Result<KafkaOffset>)> cb) {
  Liveness in_call;
  cb = deferred_if_sync<Result<KafkaOffset>>(std::move(cb), in_call.token());
  lookup(topic, partition, [this, topic, partition, count, bytes, txn, producer, cb](Result<TopicLimits> limits) {
    if (!limits) return cb(limits.error());
    held_->reserve(offsets_->at(topic, partition), count, bytes, txn, producer, cb);
  });
}

void PartitionLog::lose_held(const std::string& topic, PartitionId partition, KafkaOffset base) {
  held_->lose(offsets_->at(topic, partition), base);
}

void PartitionLog::decide_held(const std::string& topic, PartitionId partition, HeldTxn txn, bool committed) {
  held_->decide(offsets_->at(topic, partition), txn, committed);
}

void PartitionLog::when_held_settled(const std::string& topic, PartitionId partition, HeldTxn txn,
                                     std::function<void()> settled) {
  held_->when_settled(offsets_->at(topic, partition), txn, std::move(settled));
}

void PartitionLog::restore_held(const std::string& topic, PartitionId partition, std::vector<HeldBatch> rows,
                                std::function<void(Status)> done) {
  held_->restore(offsets_->at(topic, partition), std::move(rows), std::move(done));
}

const HeldStats& PartitionLog::held_stats() const { return held_->stats(); }

// ---- fetch ------------------------------------------------------------------------------------

void PartitionLog::fetch(std::vector<FetchPartitionRequest> partitions, const FetchParams& params, FetchCallback cb,
                         uint64_t owner) {
  Liveness in_call;  // alive until this call returns: a callback run before then is deferred
  reader_->fetch(std::move(partitions), params,
                 deferred_if_sync<std::vector<FetchPartitionResult>>(std::move(cb), in_call.token()), owner);
}

void PartitionLog::cancel_fetches(uint64_t owner) { reader_->cancel_fetches(owner); }

void PartitionLog::stop_waiting() { reader_->stop_waiting(); }

size_t PartitionLog::waiting_fetches() const { return reader_->waiting_fetches(); }

// ---- offsets ----------------------------------------------------------------------------------

void PartitionLog::list_offsets(const std::string& topic, PartitionId partition_id, TimestampMs timestamp,
                                std::function<void(OffsetLookup)> cb, IsolationLevel isolation) {
  Liveness in_call;  // alive until this call returns: a callback run before then is deferred
  cb = deferred_if_sync<OffsetLookup>(std::move(cb), in_call.token());
  lookup(topic, partition_id, [this, topic, partition_id, timestamp, cb, isolation](Result<TopicLimits> limits) {
    if (!limits) {
      OffsetLookup r;
      r.error = to_kafka_error(limits.error());
      cb(r);
      return;
    }
    index_->list_offsets(offsets_->at(topic, partition_id), timestamp, cb, isolation);
  });
}

void PartitionLog::refresh_offsets_of(const std::string& topic, std::function<void(Status)> done) {
  offsets_->refresh_topic(topic, std::move(done));
}

std::optional<KafkaOffset> PartitionLog::high_watermark(const std::string& topic, PartitionId partition) const {
  const PartitionOffsets* p = offsets_->find(topic, partition);
  if (!p) return std::nullopt;
  return p->high_watermark;
}

// ---- DeleteRecords ----------------------------------------------------------------------------

void PartitionLog::delete_records(const std::string& topic, PartitionId partition_id, KafkaOffset offset,
                                  std::function<void(DeleteRecordsResult)> cb) {
  Liveness in_call;  // alive until this call returns: a callback run before then is deferred
  cb = deferred_if_sync<DeleteRecordsResult>(std::move(cb), in_call.token());
  lookup(topic, partition_id, [this, topic, partition_id, offset, cb](Result<TopicLimits> limits) {
    if (!limits) {
      cb(DeleteRecordsResult{to_kafka_error(limits.error()), limits.error().message, kNoOffset});
      return;
    }
    if (Status st = deletable_check(topic, partition_id, limits->deletable); !st) {
      cb(DeleteRecordsResult{to_kafka_error(st.error()), st.error().message, kNoOffset});
      return;
    }
    // Records below the new log start must not be served again, from the cache either.
    cache_->drop_partition(topic, partition_id);
    deletion_->delete_records(offsets_->at(topic, partition_id), offset,
                              [this, topic, partition_id, cb](DeleteRecordsResult r) {
                                cache_->drop_partition(topic, partition_id);  // appends made meanwhile
                                cb(std::move(r));
                              });
  });
}

void PartitionLog::restore_log_starts(const std::vector<LogStartFloor>& floors, SaveLogStart save) {
  for (const LogStartFloor& f : floors) raise_floor(offsets_->at(f.topic, f.partition), f.offset);
  deletion_->set_store(std::move(save));
}

void PartitionLog::set_cleaned_head(const std::string& topic, PartitionId partition,
                                    std::shared_ptr<const compaction::CleanedHead> head) {
  bridge::set_cleaned_head(offsets_->at(topic, partition), std::move(head));
}

std::shared_ptr<const compaction::CleanedHead> PartitionLog::cleaned_head(const std::string& topic,
                                                                         PartitionId partition) const {
  const PartitionOffsets* p = offsets_->find(topic, partition);
  return p ? p->cleaned : nullptr;
}

void PartitionLog::set_append_observer(AppendObserver observer) {
  if (!observer) return appender_->set_observer(nullptr);
  appender_->set_observer([observer = std::move(observer)](const PartitionOffsets& p, KafkaOffset base, int64_t count,
                                                           uint64_t bytes) { observer(p.topic, p.id, base, count, bytes); });
}

const SegmentDeletionStats& PartitionLog::segment_deletions() const { return deletion_->segment_deletions(); }

// ---- OffsetForLeaderEpoch ---------------------------------------------------------------------

void PartitionLog::end_offset_for_epoch(const std::string& topic, PartitionId partition_id,
                                        int32_t current_leader_epoch, int32_t leader_epoch,
                                        std::function<void(EpochEndOffset)> cb) {
  Liveness in_call;  // alive until this call returns: a callback run before then is deferred
  cb = deferred_if_sync<EpochEndOffset>(std::move(cb), in_call.token());
  lookup(topic, partition_id,
         [this, topic, partition_id, current_leader_epoch, leader_epoch, cb](Result<TopicLimits> limits) {
           if (!limits) {
             cb(EpochEndOffset{to_kafka_error(limits.error()), -1, kNoOffset});
             return;
           }
           if (auto answer = epoch_end_without_log(current_leader_epoch, leader_epoch)) {
             cb(*answer);
             return;
           }
           // A fresh high watermark: a stale one below the consumer's position would read as truncation.
           PartitionOffsets& p = offsets_->at(topic, partition_id);
           offsets_->refresh_topic(topic, [pp = &p, cb](Status s) {
             if (!s) {
               cb(EpochEndOffset{to_kafka_error(s.error()), -1, kNoOffset});
               return;
             }
             cb(EpochEndOffset{ErrorCode::kNone, kPartitionLeaderEpoch, pp->high_watermark});
           });
         });
}

// ---- DescribeLogDirs --------------------------------------------------------------------------

void PartitionLog::describe_log_dirs(LogDirQuery topics, bool with_totals,
                                     std::function<void(LogDirDescription)> cb) {
  Liveness in_call;  // alive until this call returns: a callback run before then is deferred
  log_dirs_->describe(std::move(topics), with_totals, deferred_if_sync<LogDirDescription>(std::move(cb), in_call.token()));
}

}  // namespace kib::bridge
