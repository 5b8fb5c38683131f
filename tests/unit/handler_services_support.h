// Every service a KafkaServer's handlers are bound to (kafka/services.h), for unit tests that
// drive a few APIs over the wire: real objects, idle. The Iggy pool is never started, so nothing
// reaches Iggy; a test binds the services it exercises to its own objects and the rest to these.
// Destroy it after the KafkaServer, before the state store closes, on the loop it was built on.
#pragma once

#include <uv.h>

#include <memory>

#include "bridge/catalog/config_service.h"
#include "bridge/catalog/topic_catalog.h"
#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/groups/group_timers.h"
#include "bridge/log/partition_log.h"
#include "bridge/producers/producer_registry_impl.h"
#include "config/config.h"
#include "iggy/client.h"
#include "iggy/pool.h"
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
        configs(config, catalog, store) {}
  ~IdleServices() {
    groups.stop();
    offsets.stop();
    bool closed = false;
    pool.close([&closed] { closed = true; });
    while (!closed) uv_run(loop, UV_RUN_ONCE);
  }
  IdleServices(const IdleServices&) = delete;
  IdleServices& operator=(const IdleServices&) = delete;
};

}  // namespace kib::test
