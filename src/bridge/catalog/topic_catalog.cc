#include "bridge/catalog/topic_catalog.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>

#include "bridge/errors.h"
#include "common/liveness.h"
#include "common/text.h"
#include "iggy/errors.h"
#include "iggy/pool.h"
#include "state/state_store.h"
#include "state/topic_store.h"
#include "uvx/timer.h"

namespace kib::bridge {

using kafka::ErrorCode;

namespace {

constexpr std::chrono::milliseconds kRefreshInterval{10000};
constexpr int32_t kMaxPartitions = 1000;  // Iggy: partitions per create request
constexpr const char* kOffsetsTopicIdKey = "consumer_offsets_topic_id";  // bridge_meta

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

state::TopicRow to_row(const TopicMetadata& t) {
  state::TopicRow r;
  r.name = t.name;
  r.topic_id = state::uuid_to_string(t.topic_id);
  r.created_at_ms = now_ms();
  r.retention_ms = t.settings.retention_ms;
  r.retention_bytes = t.settings.retention_bytes;
  r.max_message_bytes = t.settings.max_message_bytes;
  r.segment_bytes = t.settings.segment_bytes;
  r.enforce_fsync = t.settings.enforce_fsync;
  r.messages_required_to_save = t.settings.messages_required_to_save;
  return r;
}

// A piece of client input quoted in an error message.
std::string quoted(const std::string& s) { return truncate_message(s, 256); }

}  // namespace

struct TopicCatalog::Impl {
  const config::Config& cfg;
  iggy::IggyClient& iggy;
  state::StateStore& state;
  uv_loop_t* loop;
  iggy::Identifier stream;
  std::map<std::string, TopicMetadata> topics;
  std::map<std::string, state::TopicRow> rows;  // what SQLite knows, by name
  std::map<std::string, topic_configs::ConfigMap> stored_overrides;  // topic_configs, by topic
  // The retention Iggy last reported or acknowledged, by topic: apply_settings compares with it,
  // so broker defaults changed while the bridge was down reach Iggy at the next start.
  std::map<std::string, topic_configs::IggyRetention> applied;
  std::function<topic_configs::BrokerLayers()> layers_provider;
  topic_configs::ConfigMap static_layer;  // without a provider
  std::map<std::string, std::vector<std::function<void(Result<const TopicMetadata*>)>>> pending_ensure;
  std::unique_ptr<uv::Timer> timer;  // the periodic refresh, from the first successful start()
  bool rows_loaded = false;
  // Until start() has made sure the stream exists, creating or looking up a topic in Iggy
  // fails with StreamIdNotFound (on a fresh Iggy). Requests that arrive while start() is under
  // way wait for it; requests before it or between its retries get LEADER_NOT_AVAILABLE.
  bool started = false;
  bool starting = false;
  std::vector<std::function<void(Status)>> after_start;

  Impl(const config::Config& c, iggy::IggyClient& i, state::StateStore& s, uv_loop_t* l)
      : cfg(c), iggy(i), state(s), loop(l), stream(iggy::Identifier::named(c.iggy.stream)) {}

  topic_configs::BrokerLayers layers() {
    if (layers_provider) return layers_provider();
    static_layer = topic_configs::static_broker_layer(cfg);
    topic_configs::BrokerLayers l;
    l.static_broker = &static_layer;
    return l;
  }

  TopicSettings defaults() const {
    TopicSettings s;
    s.enforce_fsync = cfg.topics.enforce_fsync;
    s.messages_required_to_save = cfg.topics.messages_required_to_save;
    s.segment_bytes = cfg.topics.segment_bytes ? static_cast<int64_t>(cfg.topics.segment_bytes) : -1;
    return s;
  }

  // Adds or updates the cache entry for an Iggy topic; mints and persists a topic id for a
  // name SQLite has not seen.
  const TopicMetadata* learn(const iggy::TopicInfo& info) {
    const bool is_new = topics.count(info.name) == 0;
    TopicMetadata& t = topics[info.name];
    t.name = info.name;
    applied[info.name] = topic_configs::IggyRetention{
        info.message_expiry_us == 0 ? iggy::kNeverExpire : info.message_expiry_us,
        info.max_topic_size == 0 ? iggy::kUnlimitedSize : info.max_topic_size};
    t.partitions = static_cast<int32_t>(info.partitions_count);
    auto row = rows.find(info.name);
    if (row != rows.end() && state::uuid_from_string(row->second.topic_id, t.topic_id)) {
      TopicSettings base;
      base.segment_bytes = row->second.segment_bytes;
      base.enforce_fsync = row->second.enforce_fsync;
      base.messages_required_to_save = row->second.messages_required_to_save;
      auto ov = stored_overrides.find(info.name);
      if (ov != stored_overrides.end()) t.overrides = ov->second;
      t.settings = topic_configs::settings_of(t.overrides, layers(), base);
    } else {
      // A topic created outside the bridge (native Iggy): Kafka sees its Iggy retention, as an
      // override of the topic.
      t.topic_id = state::random_uuid();
      t.overrides.clear();
      if (info.message_expiry_us != iggy::kNeverExpire && info.message_expiry_us != 0)
        t.overrides["retention.ms"] = std::to_string(info.message_expiry_us / 1000);
      TopicSettings base;
      base.segment_bytes = -1;
      t.settings = topic_configs::settings_of(t.overrides, layers(), base);
      persist(t, nullptr);
    }
    if (is_new) notify_created(info.name);
    return &t;
  }

  void persist(const TopicMetadata& t, std::function<void(Status)> done) {
    state::TopicRow row = to_row(t);
    rows[t.name] = row;
    stored_overrides[t.name] = t.overrides;
    state.write([row, overrides = t.overrides](SQLite::Database& db) {
                  state::upsert_topic(db, row);
                  state::replace_topic_configs(db, row.name, overrides);
                },
                [done = std::move(done), name = t.name](Status s) {
                  if (!s) spdlog::error("catalog: cannot store topic id of {}: {}", name, s.error().message);
                  if (done) done(std::move(s));
                });
  }

  // The topic is gone from Iggy: out of the cache now (so commits and produces of it are
  // refused from here on), its rows out of SQLite in one job, then the listeners forget it.
  // `done` (may be empty) runs after the listeners.
  void forget(const std::string& name, std::function<void(Status)> done = nullptr) {
    topics.erase(name);
    rows.erase(name);
    stored_overrides.erase(name);
    applied.erase(name);
    state.write([name](SQLite::Database& db) { state::delete_topic_everywhere(db, name); },
                [this, alive = alive.token(), name, done = std::move(done)](Status s) {
                  if (!alive) return;
                  if (!s)
                    spdlog::error("catalog: topic {} deleted in Iggy but its bridge state is still in SQLite ({}); "
                                  "the next start removes it",
                                  name, s.error().message);
                  notify_deleted(name);
                  if (done) done(std::move(s));
                });
  }

  void notify_deleted(const std::string& name) {
    auto copy = listeners;  // a listener may remove itself
    for (TopicListener* l : copy) {
      try {
        l->on_topic_deleted(name);
      } catch (const std::exception& e) {
        spdlog::error("catalog: a listener failed on the delete of {}: {}", name, e.what());
      }
    }
  }

  void notify_created(const std::string& name) {
    auto copy = listeners;
    for (TopicListener* l : copy) {
      try {
        l->on_topic_created(name);
      } catch (const std::exception& e) {
        spdlog::error("catalog: a listener failed on the new topic {}: {}", name, e.what());
      }
    }
  }

  void notify_partitions_added(const std::string& name, int32_t total) {
    auto copy = listeners;
    for (TopicListener* l : copy) {
      try {
        l->on_partitions_added(name, total);
      } catch (const std::exception& e) {
        spdlog::error("catalog: a listener failed on new partitions of {}: {}", name, e.what());
      }
    }
  }

  void set_offsets_topic(const TopicId& id) {
    TopicMetadata t;
    t.name = TopicCatalog::kOffsetsTopic;
    t.topic_id = id;
    t.partitions = static_cast<int32_t>(cfg.groups.offsets_topic_partitions);
    t.internal = true;
    offsets_topic = t;
  }

  // Once, after the first topic list Iggy gave: the state rows of topics Iggy does not have.
  void sweep() {
    if (swept) return;
    swept = true;
    std::vector<std::string> keep;
    for (auto& [n, t] : topics) keep.push_back(n);
    auto swept_topics = std::make_shared<std::vector<std::string>>();
    state.write([keep, swept_topics](SQLite::Database& db) { *swept_topics = state::delete_state_of_topics_not_in(db, keep); },
                [this, alive = alive.token(), swept_topics](Status s) {
                  if (!alive) return;
                  if (!s) return spdlog::error("catalog: startup sweep of deleted topics' state failed: {}", s.error().message);
                  for (const auto& name : *swept_topics) {
                    if (topics.count(name)) continue;  // created again meanwhile
                    spdlog::info("catalog: removed the committed offsets and producer state of deleted topic {}", name);
                    notify_deleted(name);
                  }
                });
  }

  std::vector<TopicListener*> listeners;
  std::vector<std::unique_ptr<TopicListener>> owned_listeners;
  std::optional<TopicMetadata> offsets_topic;  // __consumer_offsets, once used
  bool swept = false;
  // Deletes done by this bridge, numbered: a topic list requested before a delete does not
  // bring the deleted topic back.
  uint64_t delete_seq = 0;
  std::map<std::string, uint64_t> deleted_at;
  Liveness alive;  // state-store completions check it
};

TopicCatalog::TopicCatalog(const config::Config& cfg, iggy::IggyClient& iggy, state::StateStore& state,
                           uv_loop_t* loop)
    : impl_(std::make_unique<Impl>(cfg, iggy, state, loop)), stream_(iggy::Identifier::named(cfg.iggy.stream)) {}

TopicCatalog::~TopicCatalog() { stop(); }

// Runs `then` once the catalog is started, or answers `not_ready` (a retriable Kafka error)
// when it is not and no start is under way; true = the caller goes on now.
static bool when_started(bool started, bool starting, std::vector<std::function<void(Status)>>& after_start,
                         std::function<void(Status)> then) {
  if (started) return true;
  if (starting) {
    after_start.push_back(std::move(then));
    return false;
  }
  then(kafka_error(ErrorCode::kLeaderNotAvailable, "the bridge has not initialised its Iggy stream yet; retry"));
  return false;
}

void TopicCatalog::start(std::function<void(Status)> user_done) {
  Impl* self = impl_.get();
  self->starting = true;
  auto done = [self, user_done = std::move(user_done)](Status s) {
    self->starting = false;
    self->started = self->started || bool(s);
    user_done(s);
    auto waiting = std::move(self->after_start);
    self->after_start.clear();
    for (auto& w : waiting) w(s);
  };
  if (!impl_->rows_loaded) {
    // Startup only (a retry after Iggy was unreachable skips this): a blocking read is fine.
    std::optional<std::string> offsets_id;
    auto st = impl_->state.run_blocking([this, &offsets_id](SQLite::Database& db) {
      for (auto& r : state::load_topics(db)) impl_->rows[r.name] = r;
      impl_->stored_overrides = state::load_topic_configs(db);
      offsets_id = state::load_meta(db, kOffsetsTopicIdKey);
    });
    if (!st) return done(st.error());
    impl_->rows_loaded = true;
    TopicId id{};
    if (offsets_id && state::uuid_from_string(*offsets_id, id)) impl_->set_offsets_topic(id);
  }
  Impl* impl = impl_.get();
  impl->iggy.get_stream(stream_, [this, impl, done](Result<std::optional<iggy::StreamInfo>> r) {
    if (!r) return done(r.error());
    auto refresh_then_done = [this, impl, done] {
      if (impl->timer) return refresh(done);
      impl->timer = std::make_unique<uv::Timer>(impl->loop, "catalog refresh");
      impl->timer->start_repeating(kRefreshInterval, [this] { refresh([](Status) {}); });
      impl->timer->unref();
      refresh(done);
    };
    if (r->has_value()) return refresh_then_done();
    spdlog::info("catalog: creating Iggy stream '{}'", impl->cfg.iggy.stream);
    impl->iggy.create_stream(impl->cfg.iggy.stream, [refresh_then_done, done](Result<iggy::StreamInfo> c) {
      if (!c && !(iggy::is_iggy(c.error(), iggy::code::kStreamNameAlreadyExists))) return done(c.error());
      refresh_then_done();
    });
  });
}

void TopicCatalog::stop() {
  if (impl_) impl_->timer.reset();
}

const TopicMetadata* TopicCatalog::find(const std::string& name) const {
  auto it = impl_->topics.find(name);
  return it == impl_->topics.end() ? nullptr : &it->second;
}

const TopicMetadata* TopicCatalog::find(const TopicId& id) const {
  for (auto& [n, t] : impl_->topics)
    if (t.topic_id == id) return &t;
  return nullptr;
}

bool TopicCatalog::started() const { return impl_->started; }

std::vector<const TopicMetadata*> TopicCatalog::all() const {
  std::vector<const TopicMetadata*> out;
  for (auto& [n, t] : impl_->topics) out.push_back(&t);
  return out;
}

void TopicCatalog::refresh(std::function<void(Status)> done) {
  Impl* impl = impl_.get();
  const uint64_t sent_at = impl->delete_seq;
  impl->iggy.get_topics(stream_, [impl, done, sent_at](Result<std::vector<iggy::TopicInfo>> r) {
    if (!r) {
      spdlog::warn("catalog: refresh failed: {}", r.error().message);
      return done(r.error());
    }
    std::set<std::string> seen;
    for (const auto& info : *r) {
      seen.insert(info.name);
      // A list read before this bridge deleted the topic must not bring it back.
      auto d = impl->deleted_at.find(info.name);
      if (d != impl->deleted_at.end() && d->second > sent_at) continue;
      impl->learn(info);
    }
    for (auto d = impl->deleted_at.begin(); d != impl->deleted_at.end();)
      d = d->second <= sent_at ? impl->deleted_at.erase(d) : std::next(d);
    std::vector<std::string> gone;
    for (auto& [name, t] : impl->topics)
      if (!seen.count(name)) gone.push_back(name);
    for (auto& name : gone) {
      spdlog::info("catalog: topic {} no longer exists in Iggy", name);
      impl->forget(name);
    }
    impl->sweep();
    done(ok_status());
  });
}

void TopicCatalog::list_all(std::function<void(std::vector<const TopicMetadata*>)> done) {
  if (impl_->iggy.pool().stats().connected == 0) return done(all());
  refresh([this, done = std::move(done)](Status) { done(all()); });
}

std::optional<std::string> TopicCatalog::invalid_topic_name(const std::string& name) {
  if (name.empty()) return "topic name is empty";
  if (name == "." || name == "..") return "topic name cannot be '.' or '..'";
  if (name.size() > 249) return "topic name is longer than 249 characters";
  for (unsigned char c : name)
    if (!(std::isalnum(c) || c == '.' || c == '_' || c == '-'))
      return "topic name '" + truncate_message(name, 256) + "' contains a character other than ASCII alphanumerics, '.', '_' and '-'";
  return std::nullopt;
}

void TopicCatalog::ensure(const std::string& name, bool auto_create,
                          std::function<void(Result<const TopicMetadata*>)> done) {
  if (const TopicMetadata* t = find(name)) return done(t);
  if (auto why = invalid_topic_name(name)) return done(kafka_error(ErrorCode::kInvalidTopicException, *why));
  Impl* impl = impl_.get();
  if (impl->iggy.pool().stats().connected == 0)
    return done(kafka_error(ErrorCode::kLeaderNotAvailable, "Iggy is not reachable; retry"));
  if (!when_started(impl->started, impl->starting, impl->after_start, [this, name, auto_create, done](Status s) {
        if (!s) return done(kafka_error(ErrorCode::kLeaderNotAvailable, "Iggy is not reachable; retry"));
        ensure(name, auto_create, done);
      }))
    return;
  auto& waiters = impl->pending_ensure[name];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // a lookup of this name is already under way
  auto finish = [impl, name](Result<const TopicMetadata*> r) {
    auto ws = std::move(impl->pending_ensure[name]);
    impl->pending_ensure.erase(name);
    for (auto& w : ws) w(r);
  };
  impl->iggy.get_topic(stream_, iggy::Identifier::named(name),
                       [this, impl, name, auto_create, finish](Result<std::optional<iggy::TopicInfo>> r) {
                         if (!r) return finish(r.error());
                         if (r->has_value()) return finish(impl->learn(**r));
                         if (!auto_create)
                           return finish(kafka_error(ErrorCode::kUnknownTopicOrPartition, "unknown topic " + name));
                         CreateTopicRequest req;
                         req.name = name;
                         create(req, [this, name, finish](Result<TopicMetadata> c) {
                           if (!c && to_kafka_error(c.error()) != ErrorCode::kTopicAlreadyExists)
                             return finish(c.error());
                           const TopicMetadata* t = find(name);
                           if (!t) return finish(kafka_error(ErrorCode::kLeaderNotAvailable, "topic being created"));
                           finish(t);
                         });
                       });
}

void TopicCatalog::create(const CreateTopicRequest& req, std::function<void(Result<TopicMetadata>)> done) {
  if (auto why = invalid_topic_name(req.name)) return done(kafka_error(ErrorCode::kInvalidTopicException, *why));
  if (!req.validate_only &&
      !when_started(impl_->started, impl_->starting, impl_->after_start, [this, req, done](Status s) {
        if (!s) return done(kafka_error(ErrorCode::kLeaderNotAvailable, "Iggy is not reachable; retry"));
        create(req, done);
      }))
    return;
  if (find(req.name))
    return done(kafka_error(ErrorCode::kTopicAlreadyExists, "Topic '" + req.name + "' already exists."));
  int32_t partitions = req.partitions == -1 ? impl_->cfg.kafka.default_partitions : req.partitions;
  if (partitions < 1 || partitions > kMaxPartitions)
    return done(kafka_error(ErrorCode::kInvalidPartitions,
                            "Number of partitions must be between 1 and " + std::to_string(kMaxPartitions) + "."));
  if (req.replication_factor != -1 && req.replication_factor != 1)
    return done(kafka_error(ErrorCode::kInvalidReplicationFactor,
                            "Replication factor must be 1 or -1: the bridge is a single broker (Iggy replicates "
                            "cluster-wide, not per topic)."));

  TopicMetadata t;
  t.name = req.name;
  t.partitions = partitions;
  t.settings = impl_->defaults();
  // One validator for CreateTopics and the alters (topic_configs.h); null values mean "the
  // broker's default", as in Kafka.
  topic_configs::ConfigMap given;
  for (const auto& [key, value] : req.configs)
    if (value) given[key] = *value;
  topic_configs::ConfigMap overrides;
  if (auto st = topic_configs::validate_topic_configs(given, &overrides); !st) return done(st.error());
  if (auto it = overrides.find("segment.bytes"); it != overrides.end()) {
    // Iggy takes the segment size at creation only, 1 MiB..1 GiB in multiples of 512.
    int64_t v = std::stoll(it->second);
    if (v > (1 << 30))
      return done(kafka_error(ErrorCode::kInvalidConfig, "Invalid value " + it->second +
                                                             " for configuration segment.bytes: Iggy segments are 1 MiB..1 GiB"));
    t.settings.segment_bytes = v / 512 * 512;
  }
  if (auto it = overrides.find("iggy.enforce.fsync"); it != overrides.end())
    t.settings.enforce_fsync = it->second == "true";
  if (auto it = overrides.find("iggy.messages.required.to.save"); it != overrides.end())
    t.settings.messages_required_to_save = static_cast<uint32_t>(std::stoll(it->second));
  t.overrides = overrides;
  t.settings = topic_configs::settings_of(t.overrides, impl_->layers(), t.settings);
  if (req.validate_only) {
    t.topic_id = TopicId{};
    return done(t);
  }

  iggy::TopicConfig ic;
  ic.name = t.name;
  ic.partitions_count = static_cast<uint32_t>(partitions);
  // Kafka's retention.bytes is per partition; Iggy's max_topic_size is per topic.
  const auto retention = topic_configs::iggy_retention(t.settings, partitions);
  ic.message_expiry_us = retention.message_expiry_us;
  ic.max_topic_size = retention.max_topic_size;
  if (t.settings.segment_bytes > 0) ic.segment_size = static_cast<uint64_t>(t.settings.segment_bytes);
  ic.enforce_fsync = t.settings.enforce_fsync;
  ic.messages_required_to_save = t.settings.messages_required_to_save;
  Impl* impl = impl_.get();
  impl->iggy.create_topic(stream_, ic, [impl, t, done](Result<iggy::TopicInfo> r) mutable {
    if (!r) return done(r.error());
    t.topic_id = state::random_uuid();
    t.partitions = static_cast<int32_t>(r->partitions_count);
    const bool is_new = impl->topics.count(t.name) == 0;
    impl->topics[t.name] = t;
    impl->applied[t.name] = topic_configs::iggy_retention(t.settings, t.partitions);
    spdlog::info("catalog: created topic {} with {} partitions", t.name, t.partitions);
    if (is_new) impl->notify_created(t.name);
    // Answer only once the topic id is durable, so it is stable across a crash right after.
    impl->persist(t, [t, done](Status s) {
      if (!s) return done(s.error());
      done(t);
    });
  });
}

void TopicCatalog::set_broker_layers(std::function<topic_configs::BrokerLayers()> provider) {
  impl_->layers_provider = std::move(provider);
}

topic_configs::BrokerLayers TopicCatalog::broker_layers() const { return impl_->layers(); }

std::vector<topic_configs::Entry> TopicCatalog::config_entries(const TopicMetadata& t) const {
  topic_configs::ConfigMap bridge_values{
      {"iggy.enforce.fsync", t.settings.enforce_fsync ? "true" : "false"},
      {"iggy.messages.required.to.save", std::to_string(t.settings.messages_required_to_save)}};
  return topic_configs::resolve_topic(t.overrides, impl_->layers(), bridge_values);
}

void TopicCatalog::apply_settings(const std::string& name, std::map<std::string, std::string> overrides,
                                  std::function<void(Status)> done) {
  const TopicMetadata* cur = find(name);
  if (!cur) return done(kafka_error(ErrorCode::kUnknownTopicOrPartition, "unknown topic " + quoted(name)));
  TopicMetadata next = *cur;
  next.overrides = std::move(overrides);
  next.settings = topic_configs::settings_of(next.overrides, impl_->layers(), cur->settings);
  auto known = impl_->applied.find(name);
  const auto before = known != impl_->applied.end() ? known->second
                                                    : topic_configs::iggy_retention(cur->settings, cur->partitions);
  const auto after = topic_configs::iggy_retention(next.settings, next.partitions);
  Impl* impl = impl_.get();
  auto commit = [impl, next, after, done](Status s) {
    if (!s) return done(s);
    impl->applied[next.name] = after;
    auto it = impl->topics.find(next.name);
    if (it == impl->topics.end()) return done(kafka_error(ErrorCode::kUnknownTopicOrPartition, "unknown topic " + next.name));
    // Answer once SQLite has the new overrides, so an acknowledged alter survives a crash.
    impl->persist(next, [impl, next, done](Status p) {
      if (!p) return done(p);
      auto it = impl->topics.find(next.name);
      if (it != impl->topics.end()) {
        it->second.overrides = next.overrides;
        it->second.settings = next.settings;
      }
      done(ok_status());
    });
  };
  if (before == after && cur->overrides == next.overrides && cur->settings == next.settings) return done(ok_status());
  if (before == after) return commit(ok_status());
  iggy::TopicUpdate u;
  u.name = name;  // UpdateTopic renames unless the current name is sent again
  u.message_expiry_us = after.message_expiry_us;
  u.max_topic_size = after.max_topic_size;
  spdlog::info("catalog: topic {}: Iggy message_expiry {} µs, max_topic_size {}", name, after.message_expiry_us,
               after.max_topic_size);
  impl->iggy.update_topic(stream_, iggy::Identifier::named(name), u, std::move(commit));
}

// The checks of ReplicationControlManager.validateManualPartitionAssignment, for one broker.
static std::optional<std::string> invalid_assignment(const std::vector<int32_t>& replicas, int32_t node_id) {
  if (replicas.empty()) return "The manual partition assignment includes an empty replica list.";
  std::vector<int32_t> sorted = replicas;
  std::sort(sorted.begin(), sorted.end());
  std::optional<int32_t> prev;
  for (int32_t b : sorted) {
    if (b != node_id)
      return "The manual partition assignment includes broker " + std::to_string(b) +
             ", but no such broker is registered.";
    if (prev && *prev == b)
      return "The manual partition assignment includes the broker " + std::to_string(b) + " more than once.";
    prev = b;
  }
  return std::nullopt;  // one replica on this broker: the replication factor every topic has
}

void TopicCatalog::create_partitions(const std::string& name, int32_t total, bool validate_only,
                                     std::function<void(Status)> done,
                                     std::optional<std::vector<std::vector<int32_t>>> assignments) {
  ensure(name, false, [this, name, total, validate_only, done,
                       assignments = std::move(assignments)](Result<const TopicMetadata*> found) {
    if (!found) return done(found.error());
    const TopicMetadata* t = *found;
    const int32_t current = t->partitions;
    // The KRaft controller's checks and texts (ReplicationControlManager.createPartitions).
    if (total < current)
      return done(kafka_error(ErrorCode::kInvalidPartitions, "The topic " + name + " currently has " +
                                                                 std::to_string(current) + " partition(s); " +
                                                                 std::to_string(total) + " would not be an increase."));
    const int32_t additional = total - current;
    if (additional == 0)
      return done(kafka_error(ErrorCode::kInvalidPartitions,
                              "Topic already has " + std::to_string(current) + " partition(s)."));
    if (assignments && static_cast<int64_t>(assignments->size()) != additional)
      return done(kafka_error(ErrorCode::kInvalidReplicaAssignment,
                              "Attempted to add " + std::to_string(additional) + " additional partition(s), but only " +
                                  std::to_string(assignments->size()) + " assignment(s) were specified."));
    if (assignments)
      for (const auto& replicas : *assignments)
        if (auto why = invalid_assignment(replicas, impl_->cfg.kafka.node_id))
          return done(kafka_error(ErrorCode::kInvalidReplicaAssignment, *why));
    if (total > kMaxPartitions)
      return done(kafka_error(ErrorCode::kInvalidPartitions,
                              "Number of partitions must be between 1 and " + std::to_string(kMaxPartitions) +
                                  " (Iggy's limit)."));
    if (validate_only) return done(ok_status());
    Impl* impl = impl_.get();
    const TopicSettings settings = t->settings;
    impl->iggy.create_partitions(
        stream_, iggy::Identifier::named(name), static_cast<uint32_t>(additional),
        [this, impl, name, total, settings, done](Status s) {
          if (!s) return done(s);
          auto it = impl->topics.find(name);
          if (it != impl->topics.end()) it->second.partitions = total;
          spdlog::info("catalog: topic {} grown to {} partitions", name, total);
          impl->notify_partitions_added(name, total);
          // Kafka's retention.bytes is per partition, Iggy's max_topic_size per topic: it grows
          // with the partitions (the same mapping as create and the alters, compaction included).
          const auto after = topic_configs::iggy_retention(settings, total);
          auto known = impl->applied.find(name);
          if (known != impl->applied.end() && known->second == after) return done(ok_status());
          iggy::TopicUpdate u;
          u.name = name;  // UpdateTopic renames unless the current name is sent again
          u.message_expiry_us = after.message_expiry_us;
          u.max_topic_size = after.max_topic_size;
          impl->iggy.update_topic(stream_, iggy::Identifier::named(name), u, [impl, name, after, done](Status us) {
            if (!us)
              spdlog::error("catalog: topic {} grown, but Iggy's max_topic_size was not raised: {}", name,
                            us.error().message);
            else
              impl->applied[name] = after;
            done(ok_status());  // the partitions exist: that is what the client asked for
          });
        });
  });
}

void TopicCatalog::remove(const std::string& name, std::function<void(Result<RemovedTopic>)> done) {
  // Kafka 4.1 deletes __consumer_offsets, and every committed offset with it. The bridge keeps
  // offsets in SQLite and refuses (documented deviation).
  if (name == kOffsetsTopic && impl_->offsets_topic)
    return done(kafka_error(ErrorCode::kInvalidRequest,
                            "__consumer_offsets is internal to the bridge: committed offsets are kept in its state "
                            "database and are not deleted with a topic."));
  // Through ensure(): a topic created natively in Iggy that the cache has not seen yet.
  ensure(name, false, [this, name, done](Result<const TopicMetadata*> found) {
    if (!found) return done(found.error());
    RemovedTopic removed{name, (*found)->topic_id};
    Impl* impl = impl_.get();
    impl->iggy.delete_topic(stream_, iggy::Identifier::named(name), [impl, removed, done](Status s) {
      if (!s) {
        if (iggy::is_iggy(s.error(), iggy::code::kTopicIdNotFound) ||
            iggy::is_iggy(s.error(), iggy::code::kTopicNameNotFound)) {
          if (impl->topics.count(removed.name)) impl->forget(removed.name);
          return done(kafka_error(ErrorCode::kUnknownTopicOrPartition, "unknown topic " + removed.name));
        }
        return done(s.error());
      }
      spdlog::info("catalog: deleted topic {}", removed.name);
      impl->deleted_at[removed.name] = ++impl->delete_seq;
      // The topic is gone: the answer is success even if SQLite failed (logged; the startup
      // sweep removes the rows).
      impl->forget(removed.name, [removed, done](Status) { done(removed); });
    });
  });
}

void TopicCatalog::use_offsets_topic() {
  if (impl_->offsets_topic) return;
  const TopicId id = state::random_uuid();
  impl_->set_offsets_topic(id);
  impl_->state.write(
      [value = state::uuid_to_string(id)](SQLite::Database& db) { state::store_meta(db, kOffsetsTopicIdKey, value); },
      [](Status s) {
        if (!s) spdlog::error("catalog: cannot store the topic id of __consumer_offsets: {}", s.error().message);
      });
}

const TopicMetadata* TopicCatalog::offsets_topic() const {
  return impl_->offsets_topic ? &*impl_->offsets_topic : nullptr;
}

void TopicCatalog::add_listener(TopicListener* listener) { impl_->listeners.push_back(listener); }

void TopicCatalog::adopt_listener(std::unique_ptr<TopicListener> listener) {
  add_listener(listener.get());
  impl_->owned_listeners.push_back(std::move(listener));
}

void TopicCatalog::remove_listener(TopicListener* listener) {
  auto& ls = impl_->listeners;
  ls.erase(std::remove(ls.begin(), ls.end(), listener), ls.end());
}

}  // namespace kib::bridge
