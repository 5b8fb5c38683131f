#include "app/service_graph.h"

#include "app/log_start_persistence.h"
#include "bridge/catalog/config_service.h"
#include "bridge/catalog/topic_catalog.h"
#include "bridge/cleaner/cleaner.h"
#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/groups/group_timers.h"
#include "bridge/log/partition_log.h"
#include "bridge/producers/producer_registry_impl.h"
#include "bridge/security/authorizer.h"
#include "bridge/security/iggy_identities.h"
#include "bridge/security/sasl_authenticator.h"
#include "bridge/security/scram_credentials.h"
#include "bridge/transactions/sqlite_held_store.h"
#include "bridge/transactions/transaction_coordinator_impl.h"
#include "iggy/client.h"
#include "state/state_store.h"

namespace kib::app {
namespace {

// A deleted topic's committed offsets and producer state leave the caches (their rows already
// left SQLite with the catalog's delete).
struct TopicStateListener final : bridge::TopicListener {
  TopicStateListener(bridge::CommittedOffsets& o, bridge::ProducerRegistry& p) : offsets(o), producers(p) {}
  void on_topic_deleted(const std::string& name) override {
    offsets.forget_topic(name);
    producers.forget_topic(name);
  }
  bridge::CommittedOffsets& offsets;
  bridge::ProducerRegistry& producers;
};

bridge::CommittedOffsetsOptions offsets_options(const config::Config& cfg, bridge::TopicCatalog& catalog,
                                                bool check_partitions) {
  bridge::CommittedOffsetsOptions o;
  o.offsets_retention_ms = static_cast<int64_t>(cfg.groups.offsets_retention_minutes) * 60 * 1000;
  o.offset_metadata_max_bytes = static_cast<int32_t>(cfg.groups.offset_metadata_max_bytes);
  if (check_partitions)
    o.partition_count = [&catalog](const std::string& topic) -> std::optional<int32_t> {
      const bridge::TopicMetadata* t = catalog.find(topic);
      if (!t) return std::nullopt;
      return t->partitions;
    };
  return o;
}

bridge::GroupCoordinatorOptions group_options(const config::Config& cfg, bridge::TopicCatalog& catalog,
                                              const bridge::ConfigService& configs) {
  bridge::GroupCoordinatorOptions o;
  o.consumer_timeouts = [&configs](const std::string& group_id) {
    const auto t = configs.consumer_timeouts(group_id);
    return std::pair<int32_t, int32_t>(t.session_timeout_ms, t.heartbeat_interval_ms);
  };
  o.consumer_session_timeout_ms = static_cast<int32_t>(cfg.groups.consumer_session_timeout_ms);
  o.consumer_heartbeat_interval_ms = static_cast<int32_t>(cfg.groups.consumer_heartbeat_interval_ms);
  o.consumer_max_regex_bytes = static_cast<int32_t>(cfg.groups.consumer_max_regex_bytes);
  o.consumer_max_subscribed_topics = static_cast<int32_t>(cfg.groups.consumer_max_subscribed_topics);
  o.consumer_upgrade = cfg.groups.consumer_migration_policy == "bidirectional" ||
                       cfg.groups.consumer_migration_policy == "upgrade";
  o.consumer_downgrade = cfg.groups.consumer_migration_policy == "bidirectional" ||
                         cfg.groups.consumer_migration_policy == "downgrade";
  o.topic_partitions = [&catalog](const std::string& topic) -> std::optional<int32_t> {
    const bridge::TopicMetadata* t = catalog.find(topic);
    if (!t) return std::nullopt;
    return t->partitions;
  };
  o.topic_names = [&catalog] {
    std::vector<std::string> names;
    for (const bridge::TopicMetadata* t : catalog.all()) names.push_back(t->name);
    return names;
  };
  o.initial_rebalance_delay_ms = static_cast<int32_t>(cfg.groups.initial_rebalance_delay_ms);
  o.min_session_timeout_ms = static_cast<int32_t>(cfg.groups.min_session_timeout_ms);
  o.max_session_timeout_ms = static_cast<int32_t>(cfg.groups.max_session_timeout_ms);
  o.max_size = static_cast<int32_t>(cfg.groups.max_size);
  o.streams.session_timeout_ms = static_cast<int32_t>(cfg.groups.streams_session_timeout_ms);
  o.streams.heartbeat_interval_ms = static_cast<int32_t>(cfg.groups.streams_heartbeat_interval_ms);
  o.streams.num_standby_replicas = static_cast<int32_t>(cfg.groups.streams_num_standby_replicas);
  o.streams.max_size = static_cast<int32_t>(cfg.groups.streams_max_size);
  o.streams.initial_rebalance_delay_ms = static_cast<int32_t>(cfg.groups.streams_initial_rebalance_delay_ms);
  o.streams.assignment_interval_ms = static_cast<int32_t>(cfg.groups.streams_assignment_interval_ms);
  o.streams_options = [&configs, base = o.streams](const std::string& group_id) {
    const auto own = configs.streams_settings(group_id);
    bridge::streams::StreamsGroupOptions s = base;
    s.session_timeout_ms = own.session_timeout_ms;
    s.heartbeat_interval_ms = own.heartbeat_interval_ms;
    s.num_standby_replicas = own.num_standby_replicas;
    return s;
  };
  // A streams group's internal topics, as a CreateTopics with the application's configs would.
  o.create_topic = [&catalog](const std::string& name, int32_t partitions, int16_t replication_factor,
                              const std::vector<std::pair<std::string, std::string>>& configs,
                              std::function<void(Status)> done) {
    bridge::CreateTopicRequest cr;
    cr.name = name;
    cr.partitions = partitions;
    cr.replication_factor = replication_factor;
    for (const auto& [k, v] : configs) cr.configs.emplace_back(k, v);
    catalog.create(cr, [done = std::move(done)](Result<bridge::TopicMetadata> r) {
      done(r ? ok_status() : Status(r.error()));
    });
  };
  return o;
}

// Names the phase of load() that failed.
Status in_phase(const char* phase, Status st) {
  if (st) return st;
  Error e = st.error();
  e.message = std::string(phase) + ": " + e.message;
  return e;
}

}  // namespace

ServiceGraph::ServiceGraph(uv_loop_t* loop, const config::Config& cfg, state::StateStore& state, iggy::IggyClient& iggy,
                           ServiceGraphOptions options)
    : loop_(loop), cfg_(cfg), state_(state) {
  catalog_ = std::make_unique<bridge::TopicCatalog>(cfg, iggy, state, loop);
  configs_ = std::make_unique<bridge::ConfigService>(cfg, *catalog_, state);
  producers_ = bridge::make_producer_registry(state, loop);
  log_ = std::make_unique<bridge::PartitionLog>(loop, iggy, *catalog_, producers_.get(), cfg);
  // Batches held behind open transactions wait in SQLite (docs/transactions.md).
  held_store_ = std::make_unique<bridge::SqliteHeldStore>(state);
  log_->set_held_store(held_store_.get());
  // Compacted topics' cleaner (docs/compaction.md); started by the daemon once the catalog is.
  cleaner_ = std::make_unique<bridge::compaction::Cleaner>(loop, cfg.compaction, iggy, *catalog_, *log_, state);
  identities_ = std::make_unique<bridge::IggyIdentities>(loop, cfg, state, iggy, options.identity_pool);
  catalog_->add_listener(identities_.get());
  group_timers_ = options.group_timers ? std::move(options.group_timers) : bridge::make_uv_group_timers(loop);
  offsets_ = std::make_unique<bridge::CommittedOffsets>(
      state, *group_timers_, offsets_options(cfg, *catalog_, options.offsets_check_partitions));
  catalog_->adopt_listener(std::make_unique<TopicStateListener>(*offsets_, *producers_));
  auto group_opts = group_options(cfg, *catalog_, *configs_);
  if (options.groups_wait_for_topics) group_opts.topics_known = [&catalog = *catalog_] { return catalog.started(); };
  groups_ = std::make_unique<bridge::GroupCoordinator>(state, *group_timers_, *offsets_, std::move(group_opts));
  configs_->set_group_config_listener([this](const std::string& group_id) { groups_->group_config_changed(group_id); });
  transactions_ = bridge::make_transaction_coordinator(
      bridge::TransactionServices{state, loop, *producers_, *log_, *offsets_, *groups_, cfg.transactions});
  authorizer_ = std::make_unique<bridge::Authorizer>(cfg.authorization, state, loop);
  // The mapped Iggy users' permissions follow the ACLs (docs/security.md "ACLs as Iggy permissions").
  identities_->use_authorizer(*authorizer_);
  authorizer_->add_listener(*identities_);
  sasl_ = std::make_unique<bridge::SaslAuthenticator>(state, loop, cfg.sasl);
  scram_credentials_ = std::make_unique<bridge::ScramCredentials>(state);
}

ServiceGraph::~ServiceGraph() {
  scram_credentials_.reset();
  sasl_.reset();
  identities_->set_rights({}, {});  // it refers to the authorizer
  authorizer_.reset();
  stop();
  transactions_.reset();
  groups_.reset();
  offsets_.reset();
  group_timers_.reset();
  cleaner_.reset();
  log_.reset();
  catalog_->remove_listener(identities_.get());
  close_identities();
  identities_.reset();
  producers_.reset();
  configs_.reset();
  catalog_.reset();
}

Status ServiceGraph::load() {
  for (auto phase : {&ServiceGraph::load_topic_configs, &ServiceGraph::load_producers,
                     &ServiceGraph::load_log_start_offsets, &ServiceGraph::load_committed_offsets,
                     &ServiceGraph::load_groups, &ServiceGraph::load_transactions, &ServiceGraph::load_acls})
    if (auto st = (this->*phase)(); !st) return st;
  return ok_status();
}

Status ServiceGraph::load_topic_configs() { return in_phase("loading topic configs", configs_->load()); }
Status ServiceGraph::load_producers() { return in_phase("loading producer state", producers_->load()); }
Status ServiceGraph::load_log_start_offsets() {
  if (Status st = in_phase("loading log start offsets", attach_log_start_store(*log_, state_)); !st) return st;
  return in_phase("loading cleaned heads", restore_cleaned_heads(*log_, state_, cfg_.compaction.stream));
}
// Groups need their offsets loaded first (GroupCoordinator::load).
Status ServiceGraph::load_committed_offsets() { return in_phase("loading committed offsets", offsets_->load()); }
Status ServiceGraph::load_groups() { return in_phase("loading groups", groups_->load()); }
// Before the listeners open: a commit decided before a crash holds its partitions' last stable
// offsets from here on; recover() completes it once Iggy is reachable (docs/transactions.md).
Status ServiceGraph::load_transactions() { return in_phase("loading transactions", transactions_->load()); }
// Every ACL in memory before the first request is authorized.
Status ServiceGraph::load_acls() { return in_phase("loading ACLs", authorizer_->load()); }

kafka::Services ServiceGraph::services(std::string cluster_id) const {
  return kafka::Services{
      .config = cfg_,
      .catalog = *catalog_,
      .producers = *producers_,
      .log = *log_,
      .groups = *groups_,
      .offsets = *offsets_,
      .configs = *configs_,
      .transactions = *transactions_,
      .identities = *identities_,
      .sasl = *sasl_,
      .scram_credentials = *scram_credentials_,
      .authorizer = *authorizer_,
      .cluster_id = std::move(cluster_id),
  };
}

void ServiceGraph::stop() {
  if (cleaner_) cleaner_->stop();
  if (transactions_) transactions_->stop();
  if (groups_) groups_->stop();
  if (offsets_) offsets_->stop();
}

void ServiceGraph::close_identities(std::function<void()> done) {
  if (identities_closed_) {
    if (done) done();
    return;
  }
  identities_closed_ = true;
  if (done) return identities_->close(std::move(done));
  bool closed = false;
  identities_->close([&closed] { closed = true; });
  while (!closed && uv_run(loop_, UV_RUN_ONCE) != 0) {
  }
}

}  // namespace kib::app
