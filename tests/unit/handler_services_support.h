// Every service a KafkaServer's handlers are bound to (server/context/services.h), for unit tests that
// drive APIs over the wire: the daemon's own composition root (app/service_graph.h) on an Iggy
// pool that is never started, so nothing reaches Iggy. Destroy it after the KafkaServer, before the
// state store closes, on the loop it was built on.
#pragma once

#include <uv.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "app/service_graph.h"
#include "bridge/catalog/config_service.h"
#include "bridge/catalog/topic_catalog.h"
#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/log/partition_log.h"
#include "bridge/producers/producer_registry_impl.h"
#include "bridge/security/authorizer.h"
#include "bridge/security/iggy_identities.h"
#include "bridge/security/sasl_authenticator.h"
#include "bridge/security/scram_credentials.h"
#include "bridge/transactions/transaction_coordinator_impl.h"
#include "config/config.h"
#include "iggy/client.h"
#include "iggy/pool.h"
#include "server/context/services.h"
#include "server/kafka_server.h"
#include "state/state_store.h"

namespace kib::test {

// The services of an idle bridge. `configure` edits the config before any service reads it.
struct IdleServices {
  uv_loop_t* loop;
  config::Config config;
  iggy::IggyPool pool;
  iggy::IggyClient iggy;
  app::ServiceGraph graph;
  // The graph's services, by the names tests use.
  bridge::TopicCatalog& catalog;
  bridge::ConfigService& configs;
  bridge::ProducerRegistry& producers;
  bridge::PartitionLog& log;
  bridge::CommittedOffsets& offsets;
  bridge::GroupCoordinator& groups;
  bridge::PersistentTransactionCoordinator& transactions;
  bridge::IggyIdentities& identities;
  bridge::SaslAuthenticator& sasl;
  bridge::ScramCredentials& scram_credentials;
  bridge::Authorizer& authorizer;  // disabled unless a test configures [authorization]

  IdleServices(uv_loop_t* loop, state::StateStore& store, const std::function<void(config::Config&)>& configure = {})
      : loop(loop),
        config(configured(configure)),
        pool(loop, iggy::PoolConfig{}),
        iggy(pool),
        graph(loop, config, store, iggy, idle_options()),
        catalog(graph.catalog()),
        configs(graph.configs()),
        producers(graph.producers()),
        log(graph.log()),
        offsets(graph.offsets()),
        groups(graph.groups()),
        transactions(graph.transactions()),
        identities(graph.identities()),
        sasl(graph.sasl()),
        scram_credentials(graph.scram_credentials()),
        authorizer(graph.authorizer()) {
    BOOST_REQUIRE(graph.load().ok());
  }
  ~IdleServices() {
    graph.stop();
    graph.close_identities();
    bool closed = false;
    pool.close([&closed] { closed = true; });
    while (!closed) uv_run(loop, UV_RUN_ONCE);
  }
  IdleServices(const IdleServices&) = delete;
  IdleServices& operator=(const IdleServices&) = delete;

 private:
  static config::Config configured(const std::function<void(config::Config&)>& configure) {
    config::Config c;
    if (configure) configure(c);
    return c;
  }
  // No Iggy behind the graph: its catalog stays empty, so offsets are taken for any partition.
  static app::ServiceGraphOptions idle_options() {
    app::ServiceGraphOptions o;
    o.offsets_check_partitions = false;
    o.groups_wait_for_topics = false;
    return o;
  }
};

// A KafkaServer on loopback bound to IdleServices only, with its state store in a temporary
// directory, for handler tests that need nothing else running. `configure` edits the config
// before the services read it.
struct IdleKafkaServer {
  std::filesystem::path dir;
  uv_loop_t loop{};
  std::unique_ptr<state::StateStore> store;
  std::unique_ptr<IdleServices> idle;
  std::unique_ptr<kafka::Services> services;
  std::unique_ptr<kafka::KafkaServer> kafka;
  uint16_t port = 0;

  explicit IdleKafkaServer(const std::function<void(config::Config&)>& configure = {},
                           std::string cluster_id = "") {
    char tmpl[] = "/tmp/kib-handlers-XXXXXX";
    dir = mkdtemp(tmpl);
    uv_loop_init(&loop);
    auto s = state::StateStore::open((dir / "state.db").string(), &loop);
    BOOST_REQUIRE(s.ok());
    store = std::move(*s);
    idle = std::make_unique<IdleServices>(&loop, *store, configure);
    services = std::make_unique<kafka::Services>(idle->graph.services(std::move(cluster_id)));
    kafka = std::make_unique<kafka::KafkaServer>(*services, &loop, net::ServerLimits{});
    auto p = kafka->listen(config::HostPort{"127.0.0.1", 0});
    BOOST_REQUIRE(p.ok());
    port = *p;
  }
  // Listens on config.kafka.listeners[index] at an ephemeral port of its host (its protocol
  // applies to the connections accepted there, e.g. SASL_PLAINTEXT).
  uint16_t listen_on(size_t index) {
    config::ListenerConfig l = idle->config.kafka.listeners.at(index);
    l.address.port = 0;
    auto p = kafka->listen(l, index);
    BOOST_REQUIRE(p.ok());
    return *p;
  }
  ~IdleKafkaServer() {
    bool down = false;
    kafka->shutdown(1000, [&] { down = true; });
    while (!down) uv_run(&loop, UV_RUN_ONCE);
    kafka.reset();
    services.reset();
    idle.reset();
    store->close();
    store.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    std::filesystem::remove_all(dir);
  }
  IdleKafkaServer(const IdleKafkaServer&) = delete;
  IdleKafkaServer& operator=(const IdleKafkaServer&) = delete;
};

}  // namespace kib::test
