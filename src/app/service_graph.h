// The bridge's services and how they are wired to one another: the one composition root. The
// daemon (app/bridge.cc) builds it on its state store and Iggy client; the tests that drive
// handlers over the wire build it the same way, on an Iggy pool that never starts
// (tests/unit/handler_services_support.h, tests/integration/data_path_test.cc), so what the tests
// exercise is what runs.
//
// Built in three steps, each named so a failure says where:
//   1. the constructor makes every service, in dependency order, and wires the listeners (a
//      deleted topic leaves the offset and producer caches; the Iggy identities follow topics and
//      ACLs); nothing is read yet;
//   2. load() reads what the services keep in SQLite, phase by phase (topic configs, producers,
//      log start offsets, committed offsets, groups, transactions, ACLs), before a listener opens;
//   3. services() hands the handlers a reference to each (server/context/services.h).
// stop() ends what waits on timers (groups, offsets, transactions), close() the Iggy identities'
// pools; the destructor takes the services down in the reverse order of their making.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>

#include "bridge/groups/group_timers.h"
#include "common/result.h"
#include "config/config.h"
#include "iggy/pool.h"
#include "server/context/services.h"

namespace kib::state {
class StateStore;
}
namespace kib::iggy {
class IggyClient;
}
namespace kib::bridge {
class TopicCatalog;
class ConfigService;
class ProducerRegistry;
class PartitionLog;
class SqliteHeldStore;
class IggyIdentities;
class CommittedOffsets;
class GroupCoordinator;
class PersistentTransactionCoordinator;
class Authorizer;
class SaslAuthenticator;
class ScramCredentials;
struct TopicListener;
namespace compaction {
class Cleaner;
}
}  // namespace kib::bridge

namespace kib::app {

struct ServiceGraphOptions {
  // The groups' clock: the loop's timers when null, or a test's hand-driven one.
  std::unique_ptr<bridge::GroupTimers> group_timers;
  // Whether an offset commit or delete must name a partition the catalog knows
  // (UNKNOWN_TOPIC_OR_PARTITION otherwise, as Kafka). A graph with no Iggy behind it has an empty
  // catalog: false accepts every partition there.
  bool offsets_check_partitions = true;
  // Whether consumer and streams group heartbeats wait (COORDINATOR_LOAD_IN_PROGRESS) until the
  // catalog has read the topics from Iggy. A graph with no Iggy behind it never reads them:
  // false serves those groups against its empty catalog.
  bool groups_wait_for_topics = true;
  // The base settings of the per-principal Iggy pools ([principals]); the [iggy] pool's are the
  // daemon's default.
  iggy::PoolConfig identity_pool{};
};

class ServiceGraph {
 public:
  ServiceGraph(uv_loop_t* loop, const config::Config& cfg, state::StateStore& state, iggy::IggyClient& iggy,
               ServiceGraphOptions options = {});
  ~ServiceGraph();
  ServiceGraph(const ServiceGraph&) = delete;
  ServiceGraph& operator=(const ServiceGraph&) = delete;

  // Reads what the services keep in SQLite, in dependency order (blocking: before the loop
  // serves). An error names the phase and what failed.
  Status load();
  // What the handlers are bound to. `cluster_id`: Metadata's and DescribeCluster's.
  kafka::Services services(std::string cluster_id) const;
  // Shutdown begins: waiting JoinGroup/SyncGroup requests are answered, the groups', offsets' and
  // transactions' timers stop. Idempotent.
  void stop();
  // Closes the Iggy identities' pools (once): `done` runs when they are closed; without one, the
  // loop runs until they are (a destructor's way).
  void close_identities(std::function<void()> done = nullptr);

  bridge::TopicCatalog& catalog() { return *catalog_; }
  bridge::ConfigService& configs() { return *configs_; }
  bridge::ProducerRegistry& producers() { return *producers_; }
  bridge::PartitionLog& log() { return *log_; }
  bridge::IggyIdentities& identities() { return *identities_; }
  bridge::CommittedOffsets& offsets() { return *offsets_; }
  bridge::GroupCoordinator& groups() { return *groups_; }
  bridge::PersistentTransactionCoordinator& transactions() { return *transactions_; }
  bridge::Authorizer& authorizer() { return *authorizer_; }
  bridge::SaslAuthenticator& sasl() { return *sasl_; }
  bridge::ScramCredentials& scram_credentials() { return *scram_credentials_; }
  bridge::compaction::Cleaner& cleaner() { return *cleaner_; }
  const bridge::compaction::Cleaner& cleaner() const { return *cleaner_; }
  const bridge::GroupCoordinator& groups() const { return *groups_; }
  const bridge::PartitionLog& log() const { return *log_; }
  const bridge::SaslAuthenticator& sasl() const { return *sasl_; }
  const bridge::IggyIdentities& identities() const { return *identities_; }
  const bridge::Authorizer& authorizer() const { return *authorizer_; }

 private:
  // The phases of load(), in order.
  Status load_topic_configs();
  Status load_producers();
  Status load_log_start_offsets();
  Status load_committed_offsets();
  Status load_groups();
  Status load_transactions();
  Status load_acls();

  uv_loop_t* loop_;
  const config::Config& cfg_;
  state::StateStore& state_;
  std::unique_ptr<bridge::TopicCatalog> catalog_;
  std::unique_ptr<bridge::ConfigService> configs_;  // after catalog_: it holds a reference to it
  std::unique_ptr<bridge::ProducerRegistry> producers_;
  std::unique_ptr<bridge::SqliteHeldStore> held_store_;  // before log_, which holds it
  std::unique_ptr<bridge::PartitionLog> log_;
  std::unique_ptr<bridge::compaction::Cleaner> cleaner_;  // after log_, which it observes
  std::unique_ptr<bridge::IggyIdentities> identities_;  // principals' Iggy users; a catalog listener
  std::unique_ptr<bridge::GroupTimers> group_timers_;
  std::unique_ptr<bridge::CommittedOffsets> offsets_;  // outlives groups_
  std::unique_ptr<bridge::GroupCoordinator> groups_;
  std::unique_ptr<bridge::PersistentTransactionCoordinator> transactions_;  // after log_, offsets_, producers_
  std::unique_ptr<bridge::Authorizer> authorizer_;  // [authorization]
  std::unique_ptr<bridge::SaslAuthenticator> sasl_;
  std::unique_ptr<bridge::ScramCredentials> scram_credentials_;
  bool identities_closed_ = false;
};

}  // namespace kib::app
