// Every service a KafkaServer's handlers are bound to (server/context/services.h), for unit tests that
// drive a few APIs over the wire: real objects, idle. The Iggy pool is never started, so nothing
// reaches Iggy; a test binds the services it exercises to its own objects and the rest to these.
// Destroy it after the KafkaServer, before the state store closes, on the loop it was built on.
#pragma once

#include <uv.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "bridge/catalog/config_service.h"
#include "bridge/catalog/topic_catalog.h"
#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/groups/group_timers.h"
#include "bridge/log/partition_log.h"
#include "bridge/producers/producer_registry_impl.h"
#include "bridge/security/iggy_identities.h"
#include "bridge/security/sasl_authenticator.h"
#include "bridge/security/scram_credentials.h"
#include "bridge/security/authorizer.h"
#include "bridge/transactions/transaction_coordinator_impl.h"
#include "config/config.h"
#include "iggy/client.h"
#include "iggy/pool.h"
#include "server/kafka_server.h"
#include "server/context/services.h"
#include "state/state_store.h"

namespace kib::test {

struct IdleServices {
  uv_loop_t* loop;
  config::Config config;
  iggy::IggyPool pool;
  iggy::IggyClient iggy;
  bridge::TopicCatalog catalog;
  std::unique_ptr<bridge::ProducerRegistry> producers;
  bridge::PartitionLog log;
  std::unique_ptr<bridge::GroupTimers> timers;
  bridge::CommittedOffsets offsets;
  bridge::GroupCoordinator groups;
  bridge::ConfigService configs;
  std::unique_ptr<bridge::PersistentTransactionCoordinator> transactions;
  bridge::IggyIdentities identities;
  std::unique_ptr<bridge::SaslAuthenticator> sasl;  // made once `config` is final (IdleKafkaServer)
  bridge::ScramCredentials scram_credentials;
  bridge::Authorizer authorizer;  // disabled unless a test configures [authorization]

  IdleServices(uv_loop_t* loop, state::StateStore& store)
      : loop(loop),
        pool(loop, iggy::PoolConfig{}),
        iggy(pool),
        catalog(config, iggy, store, loop),
        producers(bridge::make_producer_registry(store, loop)),
        log(loop, iggy, catalog, producers.get(), config),
        timers(bridge::make_uv_group_timers(loop)),
        offsets(store, *timers),
        groups(store, *timers, offsets),
        configs(config, catalog, store),
        transactions(bridge::make_transaction_coordinator(
            bridge::TransactionServices{store, loop, *producers, log, offsets, config.transactions})),
        identities(loop, config, store, iggy, iggy::PoolConfig{}),
        sasl(std::make_unique<bridge::SaslAuthenticator>(store, loop, config.sasl)),
        scram_credentials(store),
        authorizer(config.authorization, store, loop) {}
  ~IdleServices() {
    transactions->stop();
    groups.stop();
    offsets.stop();
    bool closed = false;
    identities.close([&closed] { closed = true; });
    while (!closed) uv_run(loop, UV_RUN_ONCE);
    closed = false;
    pool.close([&closed] { closed = true; });
    while (!closed) uv_run(loop, UV_RUN_ONCE);
  }
  IdleServices(const IdleServices&) = delete;
  IdleServices& operator=(const IdleServices&) = delete;
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
    idle = std::make_unique<IdleServices>(&loop, *store);
    if (configure) configure(idle->config);
    idle->sasl = std::make_unique<bridge::SaslAuthenticator>(*store, &loop, idle->config.sasl);
    BOOST_REQUIRE(idle->configs.load().ok());
    idle->authorizer.configure(idle->config.authorization);
    BOOST_REQUIRE(idle->authorizer.load().ok());
    services = std::make_unique<kafka::Services>(kafka::Services{.config = idle->config,
                                                                 .catalog = idle->catalog,
                                                                 .producers = *idle->producers,
                                                                 .log = idle->log,
                                                                 .groups = idle->groups,
                                                                 .offsets = idle->offsets,
                                                                 .configs = idle->configs,
                                                                 .transactions = *idle->transactions,
                                                                 .identities = idle->identities,
                                                                 .sasl = *idle->sasl,
                                                                 .scram_credentials = idle->scram_credentials,
                                                                 .authorizer = idle->authorizer,
                                                                 .cluster_id = std::move(cluster_id)});
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
