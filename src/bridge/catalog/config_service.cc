#include "bridge/catalog/config_service.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <memory>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "common/text.h"
#include "state/state_store.h"
#include "state/topic_store.h"

namespace kib::bridge {

using kafka::ErrorCode;
namespace tc = topic_configs;

namespace {

// Broker keys whose dynamic value is the default of topics without an override.
bool is_topic_synonym(const std::string& broker_key) {
  for (const auto& d : tc::topic_defs())
    for (const auto& s : tc::synonyms_of(d.name))
      if (s.broker_key == broker_key) return true;
  return false;
}

}  // namespace

ConfigService::ConfigService(const config::Config& cfg, TopicCatalog& catalog, state::StateStore& state)
    : cfg_(cfg), catalog_(catalog), state_(state) {}

Status ConfigService::load() {
  auto st = state_.run_blocking([this](SQLite::Database& db) {
    dynamic_ = state::load_broker_configs(db);
    groups_ = state::load_group_configs(db);
  });
  if (!st) return st;
  catalog_.set_broker_layers([this] { return layers(); });
  return ok_status();
}

tc::BrokerLayers ConfigService::layers() const {
  static_ = tc::static_broker_layer(cfg_);
  tc::BrokerLayers l;
  auto node = dynamic_.find(std::to_string(cfg_.kafka.node_id));
  auto def = dynamic_.find("");
  l.dynamic_broker = node == dynamic_.end() ? nullptr : &node->second;
  l.dynamic_default = def == dynamic_.end() ? nullptr : &def->second;
  l.static_broker = &static_;
  return l;
}

Status ConfigService::check_broker_name(const std::string& name, bool describe) const {
  if (name.empty()) return ok_status();
  int64_t id = 0;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc() || p != name.data() + name.size() || id < INT32_MIN || id > INT32_MAX)
    return kafka_error(ErrorCode::kInvalidRequest, "Broker id must be an integer, but it is: " + truncate_message(name, 256));
  if (id != cfg_.kafka.node_id)
    return kafka_error(ErrorCode::kInvalidRequest, "Unexpected broker id, expected " + std::to_string(cfg_.kafka.node_id) +
                                                       (describe ? " or empty string" : "") + ", but received " +
                                                       std::to_string(id));
  return ok_status();
}

void ConfigService::describe(int8_t type, const std::string& name,
                             std::function<void(Result<std::vector<tc::Entry>>)> done) {
  if (type == static_cast<int8_t>(ConfigResourceType::kBroker)) {
    if (auto st = check_broker_name(name, true); !st) return done(st.error());
    return done(tc::resolve_broker(layers(), !name.empty()));
  }
  if (type == static_cast<int8_t>(ConfigResourceType::kGroup)) {
    // ConfigHelper: any group id, whether the group exists or not.
    if (name.empty()) return done(kafka_error(ErrorCode::kInvalidRequest, "Group name must not be empty"));
    return done(group_configs::resolve(group_overrides(name), group_configs::broker_of(cfg_)));
  }
  if (type != static_cast<int8_t>(ConfigResourceType::kTopic))
    return done(kafka_error(ErrorCode::kInvalidRequest, "Unsupported resource type"));
  if (auto why = TopicCatalog::invalid_topic_name(name)) return done(kafka_error(ErrorCode::kInvalidTopicException, *why));
  catalog_.ensure(name, false, [this, done](Result<const TopicMetadata*> t) {
    if (!t) {
      if (to_kafka_error(t.error()) == ErrorCode::kUnknownTopicOrPartition)
        return done(kafka_error(ErrorCode::kUnknownTopicOrPartition, ""));
      return done(t.error());
    }
    done(catalog_.config_entries(**t));
  });
}

void ConfigService::alter_incremental(int8_t type, const std::string& name, const std::vector<tc::AlterOp>& ops,
                                      bool validate_only, std::function<void(Status)> done) {
  if (auto st = tc::check_alter_ops(ops); !st) return done(st);
  if (type == static_cast<int8_t>(ConfigResourceType::kBroker)) {
    if (auto st = check_broker_name(name, false); !st) return done(st);
    auto cur = dynamic_.find(name.empty() ? "" : std::to_string(cfg_.kafka.node_id));
    auto next = tc::apply_incremental(cur == dynamic_.end() ? tc::ConfigMap{} : cur->second, ops, false);
    if (!next) return done(next.error());
    // Only what the ops set is checked, as Kafka's DynamicBrokerConfig.validate does.
    tc::ConfigMap set;
    for (const auto& o : ops)
      if (o.op != static_cast<int8_t>(tc::Op::kDelete) && next->count(o.name)) set[o.name] = next->at(o.name);
    std::string readonly;
    for (const auto& [k, v] : set) {
      const tc::ConfigDef* d = tc::find_broker_def(k);
      if (d && !d->dynamic) readonly += (readonly.empty() ? "" : ", ") + k;
    }
    if (!readonly.empty())
      return done(kafka_error(ErrorCode::kInvalidRequest, "Cannot update these configs dynamically: Set(" + readonly + ")"));
    for (auto& [k, v] : set) {
      auto c = tc::validate_broker_value(k, v);
      if (!c) return done(kafka_error(ErrorCode::kInvalidRequest, c.error().message));
      (*next)[k] = *c;
    }
    return alter_broker(name.empty() ? "" : std::to_string(cfg_.kafka.node_id), std::move(*next), validate_only,
                        std::move(done));
  }
  if (type == static_cast<int8_t>(ConfigResourceType::kGroup)) {
    return alter_group(name, tc::apply_incremental(group_overrides(name), ops, true), validate_only, std::move(done));
  }
  if (type != static_cast<int8_t>(ConfigResourceType::kTopic))
    return done(kafka_error(ErrorCode::kInvalidRequest, "Unsupported resource type"));
  const TopicMetadata* t = catalog_.find(name);
  tc::ConfigMap current = t ? t->overrides : tc::ConfigMap{};
  alter_topic(name, tc::apply_incremental(current, ops, true), validate_only, std::move(done));
}

void ConfigService::alter_replace(int8_t type, const std::string& name,
                                  const std::vector<std::pair<std::string, std::optional<std::string>>>& values,
                                  bool validate_only, std::function<void(Status)> done) {
  auto next = tc::apply_replace(values);
  if (type == static_cast<int8_t>(ConfigResourceType::kBroker)) {
    if (auto st = check_broker_name(name, false); !st) return done(st);
    if (!next) return done(next.error());
    std::string readonly;
    for (auto& [k, v] : *next) {
      const tc::ConfigDef* d = tc::find_broker_def(k);
      if (d && !d->dynamic) readonly += (readonly.empty() ? "" : ", ") + k;
    }
    if (!readonly.empty())
      return done(kafka_error(ErrorCode::kInvalidRequest, "Cannot update these configs dynamically: Set(" + readonly + ")"));
    for (auto& [k, v] : *next) {
      auto c = tc::validate_broker_value(k, v);
      if (!c) return done(kafka_error(ErrorCode::kInvalidRequest, c.error().message));
      v = *c;
    }
    return alter_broker(name.empty() ? "" : std::to_string(cfg_.kafka.node_id), std::move(*next), validate_only,
                        std::move(done));
  }
  if (type == static_cast<int8_t>(ConfigResourceType::kGroup)) return alter_group(name, std::move(next), validate_only, std::move(done));
  if (type != static_cast<int8_t>(ConfigResourceType::kTopic))
    return done(kafka_error(ErrorCode::kInvalidRequest, "Unsupported resource type"));
  if (next) {
    // The iggy.* keys are create-only: a replace that leaves them out keeps them.
    if (const TopicMetadata* t = catalog_.find(name))
      for (const auto& [k, v] : t->overrides)
        if (const tc::ConfigDef* d = tc::find_topic_def(k); d && d->create_only && !next->count(k)) (*next)[k] = v;
  }
  alter_topic(name, std::move(next), validate_only, std::move(done));
}

void ConfigService::alter_topic(const std::string& name, Result<tc::ConfigMap> next_or, bool validate_only,
                                std::function<void(Status)> done) {
  if (!next_or) return done(next_or.error());
  if (auto why = TopicCatalog::invalid_topic_name(name)) return done(kafka_error(ErrorCode::kInvalidTopicException, *why));
  tc::ConfigMap next;
  if (auto st = tc::validate_topic_configs(*next_or, &next); !st) return done(st);
  // The existence check comes after validation, as in Kafka's controller.
  catalog_.ensure(name, false, [this, name, next = std::move(next), validate_only, done](Result<const TopicMetadata*> t) {
    if (!t) {
      if (to_kafka_error(t.error()) == ErrorCode::kUnknownTopicOrPartition)
        return done(kafka_error(ErrorCode::kUnknownTopicOrPartition,
                                "The topic '" + truncate_message(name, 256) + "' does not exist."));
      return done(t.error());
    }
    for (const auto& d : tc::topic_defs()) {
      if (!d.create_only) continue;
      const std::string k(d.name);
      auto a = (*t)->overrides.find(k);
      auto b = next.find(k);
      const bool same = (a == (*t)->overrides.end()) == (b == next.end()) && (b == next.end() || a->second == b->second);
      if (!same) return done(kafka_error(ErrorCode::kInvalidConfig, k + " can be set only when the topic is created"));
    }
    if (validate_only) return done(ok_status());
    catalog_.apply_settings(name, next, done);
  });
}

// ControllerConfigurationValidator for GROUP: the default resource refused, then
// GroupConfigManager.validate on the group's whole new set; stored and applied once committed.
void ConfigService::alter_group(const std::string& name, Result<tc::ConfigMap> next_or, bool validate_only,
                                std::function<void(Status)> done) {
  if (!next_or) return done(next_or.error());
  if (name.empty()) return done(kafka_error(ErrorCode::kInvalidRequest, "Default group resources are not allowed."));
  tc::ConfigMap next;
  if (auto st = group_configs::validate(*next_or, group_configs::broker_of(cfg_), &next); !st) return done(st);
  if (validate_only) return done(ok_status());
  state_.write([name, next](SQLite::Database& db) { state::replace_group_configs(db, name, next); },
               [this, name, next, done](Status s) {
                 if (!s) {
                   spdlog::error("configs: cannot store the configs of group '{}': {}", name, s.error().message);
                   return done(s);
                 }
                 if (next.empty()) groups_.erase(name);
                 else groups_[name] = next;
                 spdlog::info("configs: group '{}' now has {} config(s) of its own", name, next.size());
                 done(ok_status());
                 if (group_listener_) group_listener_(name);
               });
}

std::vector<std::string> ConfigService::configured_groups() const {
  std::vector<std::string> out;
  for (const auto& [g, m] : groups_) out.push_back(g);
  return out;
}

group_configs::ConsumerTimeouts ConfigService::consumer_timeouts(const std::string& group_id) const {
  return group_configs::consumer_timeouts(group_overrides(group_id), group_configs::broker_of(cfg_));
}

group_configs::StreamsSettings ConfigService::streams_settings(const std::string& group_id) const {
  return group_configs::streams_settings(group_overrides(group_id), group_configs::broker_of(cfg_));
}

const tc::ConfigMap& ConfigService::group_overrides(const std::string& group_id) const {
  static const tc::ConfigMap kNone;
  auto it = groups_.find(group_id);
  return it == groups_.end() ? kNone : it->second;
}

void ConfigService::alter_broker(const std::string& scope, tc::ConfigMap next, bool validate_only,
                                 std::function<void(Status)> done) {
  if (validate_only) return done(ok_status());
  auto cur = dynamic_.find(scope);
  const tc::ConfigMap before = cur == dynamic_.end() ? tc::ConfigMap{} : cur->second;
  bool topics_affected = false;
  for (const auto& [k, v] : next)
    if (is_topic_synonym(k) && (!before.count(k) || before.at(k) != v)) topics_affected = true;
  for (const auto& [k, v] : before)
    if (is_topic_synonym(k) && !next.count(k)) topics_affected = true;
  state_.write([scope, next](SQLite::Database& db) { state::replace_broker_configs(db, scope, next); },
               [this, scope, next, topics_affected, done](Status s) {
                 if (!s) {
                   spdlog::error("configs: cannot store broker configs of '{}': {}", scope, s.error().message);
                   return done(s);
                 }
                 if (next.empty()) dynamic_.erase(scope);
                 else dynamic_[scope] = next;
                 spdlog::info("configs: dynamic broker configs of '{}' now: {} key(s)", scope, next.size());
                 done(ok_status());
                 if (topics_affected) reapply_topics();
               });
}

void ConfigService::reapply_topics() {
  // A dynamic log.retention.ms (or another topic synonym) is the new default of every topic
  // without an override: re-resolve each topic; the catalog sends Iggy what changed.
  for (const TopicMetadata* t : catalog_.all()) {
    const std::string name = t->name;
    catalog_.apply_settings(name, t->overrides, [name](Status s) {
      if (!s) spdlog::warn("configs: cannot re-apply broker defaults to topic {}: {}", name, s.error().message);
    });
  }
}

}  // namespace kib::bridge
