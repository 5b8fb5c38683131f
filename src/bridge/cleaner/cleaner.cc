#include "bridge/cleaner/cleaner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <stdexcept>
#include <string_view>

#include "bridge/catalog/topic_configs.h"
#include "bridge/log/partition_log.h"
#include "bridge/mapping/generation_mapping.h"
#include "bridge/mapping/record_mapping.h"
#include "common/guard.h"
#include "iggy/errors.h"
#include "state/compaction_store.h"
#include "state/state_store.h"

namespace kib::bridge::compaction {

namespace {

constexpr uint32_t kPollCount = 1000;            // messages a poll of a pass asks for
constexpr uint64_t kMaxSendBytes = 1u << 20;      // copies sent to the generation at once
constexpr uint32_t kIndexInterval = 1024;         // kept records per sparse index entry
constexpr int64_t kRetireWaitMs = 100;            // how often a replaced head is checked for readers
constexpr int64_t kRetireMaxWaitMs = 60000;       // a read longer than this does not keep it

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool not_found(const Error& e) {
  return e.domain == ErrorDomain::kIggy &&
         (e.code == iggy::code::kTopicNameNotFound || e.code == iggy::code::kTopicIdNotFound ||
          e.code == iggy::code::kStreamNameNotFound || e.code == iggy::code::kStreamIdNotFound);
}

Error pass_error(std::string message) { return Error{ErrorDomain::kInvalid, 0, std::move(message)}; }

// The crash tests' hook (tests/system/test_compaction_crash.py): with KIB_TEST_COMPACTION_CRASH
// naming a step, the process ends there at once, as kill -9 would end it (no destructor, no
// flush but the log's). Steps: written-row, created-generation, sent-copies, committed,
// stored-barrier, deleted-segments. Unset, as in production: nothing.
void crash_point(const char* step) {
  static const char* wanted = std::getenv("KIB_TEST_COMPACTION_CRASH");
  if (!wanted || std::strcmp(wanted, step) != 0) return;
  spdlog::critical("compaction: KIB_TEST_COMPACTION_CRASH={}: ending the process here", step);
  spdlog::default_logger()->flush();
  std::_Exit(137);
}

// Runs `work` on libuv's thread pool, then `after` on the loop (guarded). An exception of `work`
// becomes `after`'s error.
void off_loop(uv_loop_t* loop, std::function<void()> work, std::function<void(Status)> after) {
  struct Job {
    uv_work_t req{};
    std::function<void()> work;
    std::function<void(Status)> after;
    std::string error;
  };
  auto* job = new Job{{}, std::move(work), std::move(after), {}};
  job->req.data = job;
  const int rc = uv_queue_work(
      loop, &job->req,
      [](uv_work_t* r) {
        auto* j = static_cast<Job*>(r->data);
        try {
          j->work();
        } catch (const std::exception& e) {
          j->error = e.what();
        } catch (...) {
          j->error = "unknown exception";
        }
      },
      [](uv_work_t* r, int status) {
        std::unique_ptr<Job> j(static_cast<Job*>(r->data));
        if (status != 0 && j->error.empty()) j->error = uv_strerror(status);
        guard::run(guard::Boundary::kLoopTask, "compaction pass", [&] {
          j->after(j->error.empty() ? ok_status() : Status(pass_error(j->error)));
        });
      });
  if (rc != 0) {
    std::unique_ptr<Job> j(job);
    j->after(Status(pass_error(std::string("cannot queue work: ") + uv_strerror(rc))));
  }
}

// A topic config's resolved value as a number (`parse`: std::stoll or std::stod); `fallback`
// when it is missing or does not parse.
template <typename T, typename Parse>
T config_number(const std::vector<topic_configs::Entry>& entries, std::string_view name, T fallback, Parse parse) {
  for (const auto& e : entries)
    if (e.name == name && e.value) {
      try {
        return static_cast<T>(parse(*e.value));
      } catch (...) {
        return fallback;
      }
    }
  return fallback;
}

int64_t config_int(const std::vector<topic_configs::Entry>& entries, std::string_view name, int64_t fallback) {
  return config_number(entries, name, fallback, [](const std::string& v) { return std::stoll(v); });
}

double config_double(const std::vector<topic_configs::Entry>& entries, std::string_view name, double fallback) {
  return config_number(entries, name, fallback, [](const std::string& v) { return std::stod(v); });
}

}  // namespace

// What the cleaner keeps of one compacted partition.
struct Cleaner::Part {
  PartitionCleanState model;
  int64_t generation = 0;  // 0: never cleaned
  std::string generation_topic;
  int64_t log_start = 0;
  int64_t kept_records = 0;
  int64_t kept_bytes = 0;
  bool running = false;
  bool dirty_estimated = false;  // dirty bytes estimated from Iggy's partition size once
  std::weak_ptr<Pass> pass;  // the one running, if any
  CleanerPolicy policy;  // the topic's, as of policy_at_ms (appends roll the virtual segment by it)
  int64_t policy_at_ms = INT64_MIN / 2;
};

// One pass of one partition (docs/compaction.md, "A pass").
struct Cleaner::Pass {
  std::string topic;
  int32_t partition = 0;
  TopicId topic_id{};
  CleanerPolicy policy;
  int64_t from = 0;  // C
  int64_t to = 0;    // C'
  int64_t generation = 1;
  std::string generation_topic;
  std::string previous_topic;  // empty: the first generation
  uint64_t previous_records = 0;
  int64_t log_start = 0;
  int64_t started_ms = 0;
  uint64_t started_loop_ms = 0;
  std::function<void(Status)> done;
  bool row_written = false;
  bool topic_created = false;
  bool cancelled = false;  // its topic was deleted
  bool undone = false;     // a failed pass's generation topic and row are gone

  std::unique_ptr<OffsetMap> map;
  int64_t mapped_to = 0;  // the next offset to map

  // The copies waiting to be sent: views into polled buffers kept alive here.
  struct Copy {
    iggy::MessageId id;
    uint64_t origin_us = 0;
    ByteSpan payload;
    Bytes headers;
  };
  std::vector<Copy> copies;
  std::vector<std::shared_ptr<const void>> buffers;
  uint64_t copy_bytes = 0;
  uint64_t written = 0;  // messages in the new generation
  uint64_t written_bytes = 0;
  int64_t last_kept = -1;
  uint64_t removed = 0;
  int64_t first_kept = -1;
  // After the records retention removed before anything was kept (compact,delete): the log start
  // moves there, as Kafka's retention deletes the oldest segments and moves it. -1: none.
  int64_t retention_to = -1;
  SparseIndexBuilder index{kIndexInterval};
  bool committed = false;  // the new generation is the partition's
};

Cleaner::Cleaner(uv_loop_t* loop, const config::CompactionConfig& cfg, iggy::IggyClient iggy, TopicCatalog& catalog,
                 PartitionLog& log, state::StateStore& state)
    : loop_(loop), cfg_(cfg), iggy_(iggy), catalog_(catalog), log_(log), state_(state) {
  catalog_.add_listener(this);
  log_.set_append_observer([this](const std::string& topic, PartitionId p, KafkaOffset base, int64_t count,
                                  uint64_t bytes) { on_append(topic, p, base, count, bytes); });
}

Cleaner::~Cleaner() {
  log_.set_append_observer(nullptr);
  catalog_.remove_listener(this);
  alive_.end();
}

Cleaner::Part& Cleaner::part(const std::string& topic, int32_t partition) {
  auto& p = parts_[{topic, partition}];
  if (!p) p = std::make_unique<Part>();
  return *p;
}

CleanerPolicy Cleaner::policy_of(const TopicMetadata& t) const {
  CleanerPolicy p;
  p.compact = compacts(t.settings);
  p.del = deletes_allowed(t.settings);
  const auto entries = catalog_.config_entries(t);
  p.min_cleanable_dirty_ratio = config_double(entries, "min.cleanable.dirty.ratio", p.min_cleanable_dirty_ratio);
  p.min_compaction_lag_ms = config_int(entries, "min.compaction.lag.ms", p.min_compaction_lag_ms);
  p.max_compaction_lag_ms = config_int(entries, "max.compaction.lag.ms", p.max_compaction_lag_ms);
  p.delete_retention_ms = config_int(entries, "delete.retention.ms", p.delete_retention_ms);
  p.segment_bytes = config_int(entries, "segment.bytes", p.segment_bytes);
  p.segment_ms = config_int(entries, "segment.ms", p.segment_ms);
  p.retention_ms = config_int(entries, "retention.ms", p.retention_ms);
  return p;
}

void Cleaner::on_append(const std::string& topic, PartitionId partition, KafkaOffset base, int64_t count,
                        uint64_t bytes) {
  (void)count;
  const TopicMetadata* t = catalog_.find(topic);
  if (!t || !compacts(t->settings)) return;
  Part& p = part(topic, partition());
  const int64_t now = now_ms();
  // The topic's configs at most once a second per partition: the produce path stays cheap.
  if (now - p.policy_at_ms >= 1000) {
    p.policy = policy_of(*t);
    p.policy_at_ms = now;
  }
  if (p.model.first_dirty_append_ms < 0) p.model.first_dirty_append_ms = now;
  p.model.dirty_bytes += bytes;
  p.model.active.on_append(p.policy, base(), bytes, now);
}

std::vector<PartitionCleanStatus> Cleaner::status() const {
  std::vector<PartitionCleanStatus> out;
  for (const auto& [key, p] : parts_) {
    PartitionCleanStatus s;
    s.topic = key.first;
    s.partition = key.second;
    s.cleaner_point = p->model.cleaner_point;
    s.dirty_ratio = dirty_ratio(p->model);
    s.generation = p->generation;
    s.generation_topic = p->generation_topic;
    s.kept_records = p->kept_records;
    s.running = p->running;
    out.push_back(std::move(s));
  }
  return out;
}

void Cleaner::on_topic_deleted(const std::string& name) {
  // The topic's rows went with it (state/topic_store.cc); its generation topics go too.
  // A pass in progress is cancelled: it stops at its next step and deletes what it wrote.
  for (auto it = parts_.lower_bound({name, INT32_MIN}); it != parts_.end() && it->first.first == name;) {
    if (auto pass = it->second->pass.lock()) pass->cancelled = true;
    if (!it->second->generation_topic.empty()) delete_generation_topic(it->second->generation_topic, [] {});
    it = parts_.erase(it);
  }
}

// ---- startup -----------------------------------------------------------------------------------

void Cleaner::start(std::function<void(Status)> recovered) {
  if (started_) return;
  started_ = true;
  auto rows = std::make_shared<std::vector<state::CompactionStateRow>>();
  state_.write([rows](SQLite::Database& db) { *rows = state::load_compaction_states(db); },
               [this, alive = alive_.token(), rows, recovered](Status st) {
                 if (!alive || stopped_) return;
                 if (!st) {
                   spdlog::error("compaction: cannot read its state: {}", st.error().message);
                   if (recovered) recovered(st);
                   return;
                 }
                 for (const auto& r : *rows) adopt(part(r.topic, r.partition), r);
                 recover([this, recovered](Status rs) {
                   if (recovered) recovered(rs);
                   if (!cfg_.enabled || stopped_) return;
                   check_timer_ = std::make_unique<uv::Timer>(loop_, "compaction check");
                   check_timer_->start_repeating(std::chrono::milliseconds(cfg_.backoff_ms), [this] { check(); });
                   check_timer_->unref();
                 });
               });
}

void Cleaner::stop() {
  stopped_ = true;
  check_timer_.reset();
  waits_.clear();
}

void Cleaner::recover(std::function<void(Status)> done) {
  auto passes = std::make_shared<std::vector<state::CompactionPassRow>>();
  state_.write([passes](SQLite::Database& db) { *passes = state::load_unfinished_compaction_passes(db); },
               [this, alive = alive_.token(), passes, done](Status st) {
                 if (!alive) return;
                 if (!st) return done(st);
                 // One pass after the other, then the barriers, then the orphans.
                 auto next = std::make_shared<std::function<void(size_t)>>();
                 *next = [this, passes, done, next](size_t i) {
                   if (i == passes->size()) {
                     auto barriers = std::make_shared<std::vector<std::tuple<std::string, int32_t, int64_t>>>();
                     for (const auto& [key, p] : parts_)
                       if (p->generation > 0) barriers->emplace_back(key.first, key.second, p->model.cleaner_point);
                     auto store = std::make_shared<std::function<void(size_t)>>();
                     *store = [this, barriers, store, done](size_t j) {
                       if (j == barriers->size()) {
                         sweep_orphans([done, store] {
                           *store = nullptr;
                           done(ok_status());
                         });
                         return;
                       }
                       const auto& [topic, partition, point] = (*barriers)[j];
                       barrier(topic, partition, point, [store, j](Status) { (*store)(j + 1); });
                     };
                     (*store)(0);
                     *next = nullptr;
                     return;
                   }
                   const state::CompactionPassRow row = (*passes)[i];
                   ++stats_.passes_recovered;
                   auto after = [this, row, next, i] {
                     state_.write(
                         [row](SQLite::Database& db) {
                           state::delete_compaction_pass(db, row.topic, row.partition, row.generation);
                         },
                         [next, i](Status) {
                           if (*next) (*next)(i + 1);
                         });
                   };
                   const auto st = pass_state_from(row.state);
                   if (!st || recovery_for(*st) == Recovery::kDropNextGeneration) {
                     spdlog::info("compaction: undoing the interrupted pass of {}-{} (generation {})", row.topic,
                                  row.partition, row.generation);
                     delete_generation_topic(row.generation_topic, after);
                   } else if (recovery_for(*st) == Recovery::kFinishRetire) {
                     spdlog::info("compaction: finishing the committed pass of {}-{} (generation {})", row.topic,
                                  row.partition, row.generation);
                     barrier(row.topic, row.partition, row.to_offset, [this, row, after](Status) {
                       if (row.previous_topic && !row.previous_topic->empty())
                         delete_generation_topic(*row.previous_topic, after);
                       else
                         after();
                     });
                   } else {
                     after();
                   }
                 };
                 (*next)(0);
               });
}

void Cleaner::sweep_orphans(std::function<void()> done) {
  iggy_.get_topics(iggy::Identifier::named(cfg_.stream), [this, alive = alive_.token(), done](
                                                              Result<std::vector<iggy::TopicInfo>> r) {
    if (!alive) return;
    if (!r) return done();  // no stream yet: nothing to sweep
    std::set<std::string> named;
    for (const auto& [key, p] : parts_)
      if (!p->generation_topic.empty()) named.insert(p->generation_topic);
    static const std::regex kGeneration("[0-9a-f]{32}-[0-9]+-[0-9]+");
    auto orphans = std::make_shared<std::vector<std::string>>();
    for (const auto& t : *r)
      if (std::regex_match(t.name, kGeneration) && !named.count(t.name)) orphans->push_back(t.name);
    if (orphans->empty()) return done();
    auto remaining = std::make_shared<size_t>(orphans->size());
    for (const auto& name : *orphans) {
      spdlog::info("compaction: deleting generation topic {} that no state names", name);
      ++stats_.orphans_deleted;
      delete_generation_topic(name, [remaining, done] {
        if (--*remaining == 0) done();
      });
    }
  });
}

void Cleaner::delete_generation_topic(const std::string& name, std::function<void()> done) {
  iggy_.delete_topic(iggy::Identifier::named(cfg_.stream), iggy::Identifier::named(name),
                     [alive = alive_.token(), name, done](Status st) {
                       if (!alive) return;
                       if (!st && !not_found(st.error()))
                         spdlog::warn("compaction: cannot delete generation topic {}: {} (deleted at next startup)", name,
                                      st.error().message);
                       done();
                     });
}

void Cleaner::ensure_stream(std::function<void(Status)> done) {
  iggy_.get_stream(iggy::Identifier::named(cfg_.stream),
                   [this, alive = alive_.token(), done](Result<std::optional<iggy::StreamInfo>> r) {
                     if (!alive) return;
                     if (!r) return done(Status(r.error()));
                     if (*r) return done(ok_status());
                     iggy_.create_stream(cfg_.stream, [alive, done](Result<iggy::StreamInfo> c) {
                       if (!alive) return;
                       if (!c && !(c.error().domain == ErrorDomain::kIggy &&
                                   c.error().code == iggy::code::kStreamNameAlreadyExists))
                         return done(Status(c.error()));
                       done(ok_status());
                     });
                   });
}

// ---- scheduling --------------------------------------------------------------------------------

void Cleaner::check() {
  if (stopped_ || !cfg_.enabled) return;
  for (const TopicMetadata* t : catalog_.all())
    if (compacts(t->settings)) check_topic(t->name);
}

void Cleaner::check_topic(const std::string& topic) {
  iggy_.get_topic(catalog_.stream(), iggy::Identifier::named(topic),
                  [this, alive = alive_.token(), topic](Result<std::optional<iggy::TopicInfo>> r) {
                    if (!alive || stopped_ || !r || !*r) return;
                    const TopicMetadata* t = catalog_.find(topic);
                    if (!t || !compacts(t->settings)) return;
                    const CleanerPolicy policy = policy_of(*t);
                    const int64_t now = now_ms();
                    std::vector<std::pair<double, int32_t>> eligible;  // (dirty ratio, partition)
                    for (const iggy::PartitionInfo& info : (*r)->partitions) {
                      const auto partition = static_cast<int32_t>(info.id);
                      if (partition >= t->partitions) continue;
                      Part& p = part(topic, partition);
                      p.policy = policy;
                      p.policy_at_ms = now;
                      const auto hw = log_.high_watermark(topic, PartitionId(partition));
                      const int64_t end = hw ? (*hw)() : (info.messages_count ? static_cast<int64_t>(info.current_offset) + 1 : 0);
                      p.model.high_watermark = end;
                      if (!p.dirty_estimated) {
                        // Not seen appended since startup: Iggy's average message size times the
                        // dirty offsets (the appends counted from here on add to it).
                        p.dirty_estimated = true;
                        const double avg = info.messages_count ? double(info.size_bytes) / double(info.messages_count) : 0;
                        p.model.dirty_bytes += static_cast<uint64_t>(avg * double(std::max<int64_t>(0, end - p.model.cleaner_point)));
                        if (p.model.active.first_append_ms < 0 && p.model.active.start < end) p.model.active.start = end;
                      }
                      if (p.running) continue;
                      const Eligibility e = eligibility(policy, p.model, now);
                      if (e != Eligibility::kDirtyRatio && e != Eligibility::kMaxLag) continue;
                      spdlog::debug("compaction: {}-{} eligible ({}, dirty ratio {:.3f})", topic, partition,
                                    eligibility_name(e), dirty_ratio(p.model));
                      // Past its max lag first, then the filthiest, as Kafka's cleaner chooses.
                      eligible.emplace_back(e == Eligibility::kMaxLag ? 2.0 : dirty_ratio(p.model), partition);
                    }
                    std::stable_sort(eligible.begin(), eligible.end(),
                                     [](const auto& a, const auto& b) { return a.first > b.first; });
                    for (const auto& [ratio, partition] : eligible) {
                      if (stats_.running >= cfg_.threads) break;
                      clean(topic, partition, [](Status) {});
                    }
                  });
}

// ---- a pass ------------------------------------------------------------------------------------

void Cleaner::clean(const std::string& topic, int32_t partition, std::function<void(Status)> done) {
  const TopicMetadata* t = catalog_.find(topic);
  if (!t || partition < 0 || partition >= t->partitions)
    return done(Status(pass_error("no partition " + topic + "-" + std::to_string(partition))));
  if (!compacts(t->settings)) return done(Status(pass_error("topic " + topic + " is not compacted")));
  Part& p = part(topic, partition);
  if (p.running) return done(Status(pass_error("a pass of " + topic + "-" + std::to_string(partition) + " is running")));
  p.running = true;
  ++stats_.running;
  auto pass = std::make_shared<Pass>();
  pass->topic = topic;
  pass->partition = partition;
  pass->topic_id = t->topic_id;
  pass->policy = policy_of(*t);
  pass->from = p.model.cleaner_point;
  pass->generation = p.generation + 1;
  pass->previous_topic = p.generation_topic;
  pass->previous_records = static_cast<uint64_t>(std::max<int64_t>(0, p.kept_records));
  pass->generation_topic = generation_topic_name(pass->topic_id, partition, pass->generation);
  pass->started_ms = now_ms();
  pass->started_loop_ms = uv_now(loop_);
  pass->done = std::move(done);
  p.pass = pass;
  run(std::move(pass));
}

void Cleaner::run(std::shared_ptr<Pass> pass) {
  // The cleanable end: the last stable offset, the virtual active segment, min.compaction.lag.ms.
  log_.list_offsets(
      pass->topic, PartitionId(pass->partition), kLatestTimestamp,
      [this, alive = alive_.token(), pass](OffsetLookup lso) {
        if (!alive) return;
        if (lso.error != kafka::ErrorCode::kNone) return finish(pass, Status(pass_error("cannot read the last stable offset")));
        Part& p = part(pass->topic, pass->partition);
        p.model.high_watermark = lso.offset();
        // No append seen since startup: everything before it counts as rolled (the virtual active
        // segment is not kept across restarts).
        if (p.model.active.first_append_ms < 0) p.model.active.start = std::max(p.model.active.start, lso.offset());
        pass->log_start = std::max(p.log_start, int64_t{0});
        auto with_lag = [this, pass](std::optional<int64_t> first_within_min_lag) {
          Part& p = part(pass->topic, pass->partition);
          pass->to = cleanable_end(p.model, first_within_min_lag);
          if (pass->to <= pass->from) return finish(pass, ok_status());
          // The map needs at most one entry per dirty offset.
          const uint64_t dirty = static_cast<uint64_t>(pass->to - pass->from);
          const uint64_t budget = cfg_.dedupe_buffer_bytes / std::max<uint32_t>(1, cfg_.threads);
          const uint64_t needed =
              static_cast<uint64_t>(std::ceil(double(dirty) / OffsetMap::kLoadFactor) + 16) * OffsetMap::kBytesPerEntry;
          pass->map = std::make_unique<OffsetMap>(static_cast<size_t>(std::min(budget, needed)));
          pass->mapped_to = pass->from;
          map_dirty(pass);
        };
        if (pass->policy.min_compaction_lag_ms <= 0) return with_lag(std::nullopt);
        log_.list_offsets(pass->topic, PartitionId(pass->partition),
                          TimestampMs(now_ms() - pass->policy.min_compaction_lag_ms),
                          [alive = alive_.token(), with_lag](OffsetLookup r) {
                            if (!alive) return;
                            with_lag(r.error == kafka::ErrorCode::kNone && r.offset() >= 0
                                         ? std::optional<int64_t>(r.offset())
                                         : std::nullopt);
                          });
      },
      IsolationLevel::kReadCommitted);
}

// Step 2: the key -> latest offset map of [C, C').
void Cleaner::map_dirty(std::shared_ptr<Pass> pass) {
  if (pass->cancelled) return finish(pass, Status(pass_error("topic deleted")));
  if (pass->mapped_to >= pass->to) return begin(pass);
  iggy::PollRequest q;
  q.consumer = iggy::Consumer::consumer(iggy::Identifier::numeric(cfg_.iggy_consumer_id));
  q.stream = catalog_.stream();
  q.topic = iggy::Identifier::named(pass->topic);
  q.partition_id = static_cast<uint32_t>(pass->partition);
  q.strategy = iggy::PollingStrategy::offset(static_cast<uint64_t>(pass->mapped_to));
  q.count = static_cast<uint32_t>(std::min<int64_t>(kPollCount, pass->to - pass->mapped_to));
  iggy_.poll_messages(q, [this, alive = alive_.token(), pass](Result<iggy::PolledMessages> r) {
    if (!alive) return;
    if (!r) return finish(pass, Status(r.error()));
    auto polled = std::make_shared<iggy::PolledMessages>(std::move(*r));
    if (polled->messages.empty()) {
      // Nothing left below C' (Iggy's poll past its end): C' is where the log ends.
      pass->to = pass->mapped_to;
      return begin(pass);
    }
    stats_.bytes_read += polled->payload_bytes;
    auto full_at = std::make_shared<int64_t>(-1);
    auto next = std::make_shared<int64_t>(pass->mapped_to);
    off_loop(
        loop_,
        [pass, polled, full_at, next] {
          for (const iggy::MessageView& m : polled->messages) {
            const auto offset = static_cast<int64_t>(m.offset);
            if (offset < *next) continue;
            if (offset >= pass->to) break;
            *next = offset + 1;
            auto rec = map_iggy_to_record(m);
            if (!rec || rec->aborted || !rec->key) continue;
            if (!pass->map->put(*rec->key, offset)) {
              *full_at = offset;
              break;
            }
          }
        },
        [this, pass, polled, full_at, next](Status st) {
          if (!st) return finish(pass, st);
          if (*full_at >= 0) {
            // The map is full: this pass cleans up to the first offset it could not map.
            pass->to = *full_at;
            pass->mapped_to = *full_at;
          } else {
            pass->mapped_to = std::max(*next, pass->mapped_to + 1);
          }
          paced(polled->payload_bytes, [this, pass] { map_dirty(pass); });
        });
  });
}

// Step 3: the pass's row, then step 4.
void Cleaner::begin(std::shared_ptr<Pass> pass) {
  if (pass->to <= pass->from) return finish(pass, ok_status());
  state::CompactionPassRow row;
  row.topic = pass->topic;
  row.partition = pass->partition;
  row.generation = pass->generation;
  row.generation_topic = pass->generation_topic;
  if (!pass->previous_topic.empty()) row.previous_topic = pass->previous_topic;
  row.from_offset = pass->from;
  row.to_offset = pass->to;
  row.started_at = pass->started_ms;
  state_.write([row](SQLite::Database& db) { state::begin_compaction_pass(db, row); },
               [this, alive = alive_.token(), pass](Status st) {
                 if (!alive) return;
                 if (!st) return finish(pass, st);
                 pass->row_written = true;
                 at_step("written-row", [this, pass] { create_generation(pass); });
               });
}

void Cleaner::create_generation(std::shared_ptr<Pass> pass) {
  ensure_stream([this, alive = alive_.token(), pass](Status st) {
    if (!alive) return;
    if (!st) return finish(pass, st);
    // A topic of this name is one a crash left half-written: it goes first.
    iggy_.delete_topic(
        iggy::Identifier::named(cfg_.stream), iggy::Identifier::named(pass->generation_topic),
        [this, alive, pass](Status) {
          if (!alive) return;
          iggy::TopicConfig c;
          c.name = pass->generation_topic;
          c.partitions_count = 1;
          c.enforce_fsync = true;
          c.messages_required_to_save = 1;
          c.message_expiry_us = iggy::kNeverExpire;
          c.max_topic_size = iggy::kUnlimitedSize;
          if (pass->policy.segment_bytes >= (1 << 20) && pass->policy.segment_bytes <= (1 << 30))
            c.segment_size = static_cast<uint64_t>(pass->policy.segment_bytes) / 512 * 512;
          iggy_.create_topic(iggy::Identifier::named(cfg_.stream), c,
                             [this, alive, pass](Result<iggy::TopicInfo> r) {
                               if (!alive) return;
                               if (!r) return finish(pass, Status(r.error()));
                               pass->topic_created = true;
                               // The current generation first (offsets below C), then [C, C').
                               at_step("created-generation", [this, pass] {
                                 if (!pass->previous_topic.empty()) return copy_from(pass, true, 0);
                                 copy_from(pass, false, static_cast<uint64_t>(pass->from));
                               });
                             });
        });
  });
}

// Step 4: polls the current generation (`generation`) or the dirty section, decides each record
// off the loop, and sends the kept ones to the new generation.
void Cleaner::copy_from(std::shared_ptr<Pass> pass, bool generation, uint64_t next) {
  if (pass->cancelled) return finish(pass, Status(pass_error("topic deleted")));
  if (!generation && next >= static_cast<uint64_t>(pass->to)) return send_copies(pass, [this, pass] { verify(pass); });
  iggy::PollRequest q;
  q.consumer = iggy::Consumer::consumer(iggy::Identifier::numeric(cfg_.iggy_consumer_id));
  if (generation) {
    q.stream = iggy::Identifier::named(cfg_.stream);
    q.topic = iggy::Identifier::named(pass->previous_topic);
    q.partition_id = 0;
  } else {
    q.stream = catalog_.stream();
    q.topic = iggy::Identifier::named(pass->topic);
    q.partition_id = static_cast<uint32_t>(pass->partition);
  }
  q.strategy = iggy::PollingStrategy::offset(next);
  q.count = kPollCount;
  iggy_.poll_messages(q, [this, alive = alive_.token(), pass, generation, next](Result<iggy::PolledMessages> r) {
    if (!alive) return;
    if (!r) return finish(pass, Status(r.error()));
    auto polled = std::make_shared<iggy::PolledMessages>(std::move(*r));
    if (polled->messages.empty()) {
      if (generation) return copy_from(pass, false, static_cast<uint64_t>(pass->from));
      return send_copies(pass, [this, pass] { verify(pass); });
    }
    stats_.bytes_read += polled->payload_bytes;
    auto last = std::make_shared<uint64_t>(next);
    auto reached_end = std::make_shared<bool>(false);
    const int64_t now = now_ms();
    off_loop(
        loop_,
        [pass, polled, generation, last, reached_end, now] { decide(*pass, *polled, generation, now, *last, *reached_end); },
        [this, pass, polled, generation, last, reached_end](Status st) {
          if (!st) return finish(pass, st);
          pass->buffers.push_back(polled->buffer);
          const uint64_t next = *last;
          auto go_on = [this, pass, generation, next, reached_end] {
            if (*reached_end) return send_copies(pass, [this, pass] { verify(pass); });
            copy_from(pass, generation, next);
          };
          paced(polled->payload_bytes, [this, pass, go_on] {
            if (pass->copy_bytes >= kMaxSendBytes) return send_copies(pass, go_on);
            go_on();
          });
        });
  });
}

// Step 4's decisions for one polled chunk, on the thread pool: which records the next generation
// keeps, each with its header block (kib.offset, and kib.horizon for a tombstone kept the first
// time), its sparse index entry, and what was removed. `last`: the next offset wanted (of the
// chunk's source); `reached_end`: the dirty section ended inside the chunk.
void Cleaner::decide(Pass& pass, const iggy::PolledMessages& polled, bool generation, int64_t now, uint64_t& last,
                     bool& reached_end) {
  PassContext ctx;
  ctx.map = pass.map.get();
  ctx.now_ms = now;
  ctx.log_start = pass.log_start;
  ctx.policy = pass.policy;
  for (const iggy::MessageView& m : polled.messages) {
    if (m.offset < last) continue;
    last = m.offset + 1;
    CleanRecord c;
    if (generation) {
      auto markers = read_generation_markers(m.user_headers);
      if (!markers) throw std::runtime_error("generation message without kib.offset: " + markers.error().message);
      c.offset = markers->kafka_offset;
      c.delete_horizon_ms = markers->delete_horizon_ms;
    } else {
      c.offset = static_cast<int64_t>(m.offset);
      if (c.offset >= pass.to) {
        reached_end = true;
        break;
      }
    }
    auto rec = map_iggy_to_record(m);
    if (!rec) {
      ++pass.removed;  // not a record the bridge can read: Kafka's reader would not either
      continue;
    }
    c.timestamp_ms = rec->timestamp_ms;
    c.key = rec->key;
    c.aborted_placeholder = rec->aborted.has_value();
    c.tombstone = !rec->value && !rec->aborted;
    const Verdict v = verdict(ctx, c);
    if (!kept(v)) {
      ++pass.removed;
      if (v == Verdict::kRetention && pass.first_kept < 0) pass.retention_to = c.offset + 1;
      continue;
    }
    Pass::Copy copy;
    copy.id = m.id;
    copy.origin_us = m.origin_timestamp_us;
    copy.payload = m.payload;
    if (generation) {
      copy.headers.assign(m.user_headers.begin(), m.user_headers.end());
    } else {
      std::optional<int64_t> horizon;
      if (v == Verdict::kKeepNewTombstone) horizon = now + pass.policy.delete_retention_ms;
      auto block = generation_header_block(m.user_headers, c.offset, horizon);
      if (!block) throw std::runtime_error("record " + std::to_string(c.offset) + ": " + block.error().message);
      copy.headers = std::move(*block);
    }
    pass.copy_bytes += copy.payload.size() + copy.headers.size() + 64;
    pass.index.add(c.offset, c.timestamp_ms);
    if (pass.first_kept < 0) pass.first_kept = c.offset;
    pass.last_kept = c.offset;
    pass.copies.push_back(std::move(copy));
  }
}

void Cleaner::send_copies(std::shared_ptr<Pass> pass, std::function<void()> then) {
  if (pass->copies.empty()) {
    pass->buffers.clear();
    return then();
  }
  // At most kMaxSendBytes a send: the first copies that fit (one at least).
  size_t n = 0;
  uint64_t bytes = 0;
  while (n < pass->copies.size() && (n == 0 || bytes + pass->copies[n].payload.size() + pass->copies[n].headers.size() + 64 <= kMaxSendBytes)) {
    bytes += pass->copies[n].payload.size() + pass->copies[n].headers.size() + 64;
    ++n;
  }
  auto messages = std::make_shared<std::vector<iggy::OutgoingMessage>>();
  messages->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& c = pass->copies[i];
    messages->push_back({c.id, c.origin_us, c.payload, ByteSpan(c.headers)});
  }
  iggy_.send_messages(iggy::Identifier::named(cfg_.stream), iggy::Identifier::named(pass->generation_topic),
                      iggy::Partitioning::partition(0), *messages,
                      [this, alive = alive_.token(), pass, messages, n, bytes, then](Result<iggy::SendConfirmation> r) {
                        if (!alive) return;
                        if (!r) return finish(pass, Status(r.error()));
                        pass->written += n;
                        pass->written_bytes += bytes;
                        stats_.bytes_written += bytes;
                        pass->copies.erase(pass->copies.begin(), pass->copies.begin() + static_cast<std::ptrdiff_t>(n));
                        pass->copy_bytes -= std::min(pass->copy_bytes, bytes);
                        at_step("sent-copies", [this, pass, bytes, then] {
                          paced(bytes, [this, pass, then] { send_copies(pass, then); });
                        });
                      });
}

// Step 5: the generation reads back as written, then the commit.
void Cleaner::verify(std::shared_ptr<Pass> pass) {
  iggy_.get_topic(
      iggy::Identifier::named(cfg_.stream), iggy::Identifier::named(pass->generation_topic),
      [this, alive = alive_.token(), pass](Result<std::optional<iggy::TopicInfo>> r) {
        if (!alive) return;
        if (!r) return finish(pass, Status(r.error()));
        const uint64_t count = *r && !(*r)->partitions.empty() ? (*r)->partitions[0].messages_count : 0;
        if (!*r || count != pass->written) {
          ++stats_.passes_abandoned;
          return finish(pass, Status(pass_error("generation " + pass->generation_topic + " holds " + std::to_string(count) +
                                                " messages, " + std::to_string(pass->written) + " were written")));
        }
        if (pass->written == 0) return commit(pass);
        iggy::PollRequest q;
        q.consumer = iggy::Consumer::consumer(iggy::Identifier::numeric(cfg_.iggy_consumer_id));
        q.stream = iggy::Identifier::named(cfg_.stream);
        q.topic = iggy::Identifier::named(pass->generation_topic);
        q.partition_id = 0;
        q.strategy = iggy::PollingStrategy::offset(pass->written - 1);
        q.count = 1;
        iggy_.poll_messages(q, [this, alive, pass](Result<iggy::PolledMessages> r) {
          if (!alive) return;
          if (!r) return finish(pass, Status(r.error()));
          if (r->messages.empty()) {
            ++stats_.passes_abandoned;
            return finish(pass, Status(pass_error("generation " + pass->generation_topic + " lost its last message")));
          }
          auto markers = read_generation_markers(r->messages.back().user_headers);
          if (!markers || markers->kafka_offset != pass->last_kept) {
            ++stats_.passes_abandoned;
            return finish(pass, Status(pass_error("generation " + pass->generation_topic +
                                                  " does not end with offset " + std::to_string(pass->last_kept))));
          }
          commit(pass);
        });
      });
}

void Cleaner::commit(std::shared_ptr<Pass> pass) {
  pass->log_start = std::max(pass->log_start, pass->retention_to);
  state::CompactionStateRow row;
  row.topic = pass->topic;
  row.partition = pass->partition;
  row.generation = pass->generation;
  row.generation_topic = pass->generation_topic;
  row.cleaner_point = pass->to;
  row.log_start = pass->log_start;
  row.kept_records = static_cast<int64_t>(pass->written);
  row.kept_bytes = static_cast<int64_t>(pass->written_bytes);
  row.last_pass_at = now_ms();
  row.last_pass_ms = static_cast<int64_t>(uv_now(loop_) - pass->started_loop_ms);
  std::vector<state::CompactionIndexRow> index;
  for (const IndexEntry& e : pass->index.entries())
    index.push_back({e.kafka_offset, static_cast<int64_t>(e.generation_offset), e.max_timestamp_ms});
  // Its topic was deleted while it wrote: nothing is recorded for a topic that is gone.
  if (pass->cancelled) return finish(pass, Status(pass_error("topic deleted")));
  auto head = std::make_shared<CleanedHead>();
  head->generation = pass->generation;
  head->stream = cfg_.stream;
  head->topic = pass->generation_topic;
  head->cleaner_point = pass->to;
  head->log_start = pass->log_start;
  head->index = pass->index.entries();
  state_.write([row, index](SQLite::Database& db) { state::commit_compaction_pass(db, row, index); },
               [this, alive = alive_.token(), pass, row, head](Status st) {
                 if (!alive) return;
                 if (!st) return finish(pass, st);
                 if (pass->cancelled) return finish(pass, Status(pass_error("topic deleted")));
                 // From here reads below C' go to the new generation.
                 // Reads that started before the swap hold the previous head; nothing else does.
                 std::weak_ptr<const CleanedHead> previous = log_.cleaned_head(pass->topic, PartitionId(pass->partition));
                 log_.set_cleaned_head(pass->topic, PartitionId(pass->partition), head);
                 pass->committed = true;
                 note_committed(*pass, row);
                 // Step 6, then 7.
                 at_step("committed", [this, pass, previous] {
                   barrier(pass->topic, pass->partition, pass->to, [this, alive = alive_.token(), pass, previous](Status) {
                     if (!alive) return;
                     at_step("deleted-segments", [this, pass, previous] { retire_unread(pass, previous); });
                   }, pass->from);
                 });
               });
}

// Step 7 once no read that started before the swap holds the previous generation (at most
// kRetireMaxWaitMs: a read longer than that does not keep it).
void Cleaner::retire_unread(std::shared_ptr<Pass> pass, std::weak_ptr<const CleanedHead> previous) {
  wait_until([previous] { return previous.expired(); }, kRetireMaxWaitMs, [this, pass] { retire(pass); });
}

// A partition's cleaned head as its compaction_state row says (at startup, and after a commit).
void Cleaner::adopt(Part& p, const state::CompactionStateRow& row) {
  p.generation = row.generation;
  p.generation_topic = row.generation_topic;
  p.log_start = row.log_start;
  p.kept_records = row.kept_records;
  p.kept_bytes = row.kept_bytes;
  p.model.cleaner_point = row.cleaner_point;
  p.model.clean_bytes = static_cast<uint64_t>(row.kept_bytes);
}

// A committed pass recorded in the cleaner's view of its partition and in its stats.
void Cleaner::note_committed(const Pass& pass, const state::CompactionStateRow& row) {
  Part& p = part(pass.topic, pass.partition);
  const uint64_t cleaned_dirty =
      p.model.high_watermark > p.model.cleaner_point
          ? static_cast<uint64_t>(double(p.model.dirty_bytes) * double(pass.to - p.model.cleaner_point) /
                                  double(p.model.high_watermark - p.model.cleaner_point))
          : p.model.dirty_bytes;
  p.model.dirty_bytes -= std::min(p.model.dirty_bytes, cleaned_dirty);
  adopt(p, row);
  if (p.model.dirty_bytes == 0) p.model.first_dirty_append_ms = -1;
  ++stats_.passes_committed;
  stats_.records_removed += pass.removed;
  stats_.last_pass_seconds = double(row.last_pass_ms) / 1000.0;
  spdlog::info("compaction: {}-{} cleaned to offset {} (generation {}: {} records kept, {} removed, {} ms)",
               pass.topic, pass.partition, pass.to, pass.generation, pass.written, pass.removed,
               row.last_pass_ms);
}

// Step 6: the cleaner's consumer offset C - 1 on the live partition, read back, then every sealed
// segment offered to DeleteSegments (Iggy deletes those ending at or below the barrier).
void Cleaner::barrier(const std::string& topic, int32_t partition, int64_t cleaner_point,
                      std::function<void(Status)> done, int64_t previous_point) {
  if (cleaner_point <= 0) return done(ok_status());
  const uint64_t previous = previous_point > 0 ? static_cast<uint64_t>(previous_point - 1) : UINT64_MAX;
  const auto consumer = iggy::Consumer::consumer(iggy::Identifier::numeric(cfg_.iggy_consumer_id));
  const auto stream = catalog_.stream();
  const auto t = iggy::Identifier::named(topic);
  const auto at = static_cast<uint64_t>(cleaner_point - 1);
  iggy_.get_consumer_offset(
      consumer, stream, t, static_cast<uint32_t>(partition),
      [this, alive = alive_.token(), consumer, stream, t, topic, partition, at, previous,
       done](Result<std::optional<iggy::ConsumerOffsetInfo>> found) {
        if (!alive) return;
        // Found neither where it is going nor where the last pass left it: moved by hand.
        if (found && *found && (*found)->stored_offset != at && (*found)->stored_offset != previous) {
          ++stats_.barrier_repairs;
          spdlog::warn("compaction: the barrier of {}-{} was at {}, not {}: stored again", topic, partition,
                       (*found)->stored_offset, at);
        }
        iggy_.store_consumer_offset(consumer, stream, t, static_cast<uint32_t>(partition), at,
                                    [this, alive, stream, t, topic, partition, done](Status st) {
                                      if (!alive) return;
                                      if (!st) {
                                        spdlog::warn("compaction: cannot store the barrier of {}-{}: {}", topic,
                                                     partition, st.error().message);
                                        return done(st);
                                      }
                                      at_step("stored-barrier", [this, stream, t, partition, done] {
                                        delete_sealed(stream, t, partition, done);
                                      });
                                    });
      });
}

// Every sealed segment of the live partition offered to DeleteSegments (segments_count - 1): Iggy
// deletes those that end at or below the barrier.
void Cleaner::delete_sealed(const iggy::Identifier& stream, const iggy::Identifier& topic, int32_t partition,
                            std::function<void(Status)> done) {
  iggy_.get_topic(stream, topic, [this, alive = alive_.token(), stream, topic, partition, done](
                                     Result<std::optional<iggy::TopicInfo>> r) {
    if (!alive) return;
    if (!r || !*r) return done(r ? ok_status() : Status(r.error()));
    uint32_t segments = 0;
    for (const auto& p : (*r)->partitions)
      if (p.id == static_cast<uint32_t>(partition)) segments = p.segments_count;
    if (segments <= 1) return done(ok_status());
    iggy_.delete_segments(stream, topic, static_cast<uint32_t>(partition), segments - 1, [alive, done](Status st) {
      if (!alive) return;
      done(st);
    });
  });
}

// Step 7: the previous generation goes, and the pass row.
void Cleaner::retire(std::shared_ptr<Pass> pass) {
  auto after = [this, alive = alive_.token(), pass] {
    if (!alive) return;
    state_.write(
        [pass](SQLite::Database& db) {
          state::delete_compaction_pass(db, pass->topic, pass->partition, pass->generation);
        },
        [this, alive, pass](Status st) {
          if (!alive) return;
          pass->row_written = false;
          finish(pass, st);
        });
  };
  if (pass->previous_topic.empty()) return after();
  delete_generation_topic(pass->previous_topic, after);
}

void Cleaner::finish(std::shared_ptr<Pass> pass, Status status) {
  if (!status && !pass->committed && !pass->undone) {
    // Not committed: the half-written generation and the row go; the pass is redone later.
    ++stats_.passes_failed;
    spdlog::warn("compaction: pass of {}-{} abandoned: {}", pass->topic, pass->partition, status.error().message);
    return undo(pass, [this, pass, status] {
      pass->undone = true;
      finish(pass, status);
    });
  }
  auto it = parts_.find({pass->topic, pass->partition});
  if (it != parts_.end()) it->second->running = false;
  if (stats_.running > 0) --stats_.running;
  pass->copies.clear();
  pass->buffers.clear();
  pass->map.reset();
  const bool progressed = status && pass->committed;
  if (pass->done) {
    auto done = std::move(pass->done);
    pass->done = nullptr;
    done(std::move(status));
  }
  // Kafka's cleaner threads go on at once while there is work and back off only when there is
  // none: after a committed pass its topic is checked again now, not backoff_ms later, so the
  // topic's other partitions do not wait a whole interval each.
  if (progressed && !stopped_ && cfg_.enabled) after_ms(0, [this, topic = pass->topic] { check_topic(topic); });
}

void Cleaner::undo(std::shared_ptr<Pass> pass, std::function<void()> then) {
  auto drop_row = [this, alive = alive_.token(), pass, then] {
    if (!alive) return;
    if (!pass->row_written) return then();
    state_.write(
        [pass](SQLite::Database& db) {
          state::delete_compaction_pass(db, pass->topic, pass->partition, pass->generation);
        },
        [alive, then](Status) {
          if (alive) then();
        });
  };
  if (!pass->topic_created) return drop_row();
  delete_generation_topic(pass->generation_topic, drop_row);
}

void Cleaner::paced(uint64_t bytes, std::function<void()> then) {
  if (cfg_.io_bytes_per_second == 0) return then();
  const double now = double(uv_now(loop_));
  io_free_at_ms_ = std::max(io_free_at_ms_, now) + double(bytes) * 1000.0 / double(cfg_.io_bytes_per_second);
  const double wait = io_free_at_ms_ - now;
  // Within a millisecond of the budget: on at once (a later pass turn still yields to the loop).
  if (wait < 1.0) return then();
  after_ms(static_cast<int64_t>(wait), std::move(then));
}

void Cleaner::after_ms(int64_t ms, std::function<void()> then) {
  // Timers whose callback ran are dropped here, the one running too (uv::Timer moved its
  // callback out before calling it, so it may be destroyed inside it).
  std::erase_if(waits_, [](const std::unique_ptr<uv::Timer>& t) { return !t->active(); });
  auto& timer = waits_.emplace_back(std::make_unique<uv::Timer>(loop_, "compaction wait"));
  timer->start(std::chrono::milliseconds(ms), std::move(then));
}

// The fault tests' hooks (tests/system/test_compaction_crash.py); unset, as in production, `next`
// runs at once. KIB_TEST_COMPACTION_CRASH naming the step ends the process (crash_point).
// KIB_TEST_COMPACTION_PAUSE naming it holds the first pass that reaches it, on the loop's timers
// (produce and fetch go on), while the file KIB_TEST_COMPACTION_PAUSE_FILE exists: created here,
// removed by the test (at most kPauseMaxMs), so the test can kill -9 iggy-server at that step.
void Cleaner::at_step(const char* step, std::function<void()> next) {
  crash_point(step);
  static const char* pause = std::getenv("KIB_TEST_COMPACTION_PAUSE");
  static const char* file = std::getenv("KIB_TEST_COMPACTION_PAUSE_FILE");
  if (paused_once_ || !pause || !file || std::strcmp(pause, step) != 0) return next();
  constexpr int64_t kPauseMaxMs = 120000;
  paused_once_ = true;
  std::ofstream(file) << step << "\n";
  spdlog::warn("compaction: KIB_TEST_COMPACTION_PAUSE={}: pass held while {} exists", step, file);
  wait_until(
      [] {
        std::error_code ec;
        return !std::filesystem::exists(file, ec);
      },
      kPauseMaxMs,
      [step, next] {
        spdlog::warn("compaction: KIB_TEST_COMPACTION_PAUSE={}: pass goes on", step);
        next();
      });
}

void Cleaner::wait_until(std::function<bool()> ready, int64_t max_ms, std::function<void()> then) {
  auto waited = std::make_shared<int64_t>(0);
  auto wait = std::make_shared<std::function<void()>>();
  *wait = [this, ready = std::move(ready), max_ms, then = std::move(then), waited, wait] {
    if (!ready() && *waited < max_ms) {
      *waited += kRetireWaitMs;
      after_ms(kRetireWaitMs, [w = std::weak_ptr<std::function<void()>>(wait)] {
        if (auto f = w.lock()) (*f)();
      });
      return;
    }
    // Clearing *wait destroys this closure: what follows uses a copy.
    std::function<void()> go = then;
    *wait = nullptr;
    go();
  };
  (*wait)();
}

}  // namespace kib::bridge::compaction
