// The harness of the consumer group unit tests (consumer_group_test.cc, group_migration_test.cc):
// the real GroupCoordinator over a real SQLite state store in a temporary directory, a manual
// clock, a topic list the tests change, and a stop/start that is a bridge restart.
#pragma once

#include <boost/test/unit_test.hpp>

#include <uv.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_coordinator.h"
#include "state/state_store.h"
#include "support/manual_group_timers.h"

namespace kib::bridge::cg_test {

constexpr int64_t kStart = 1'700'000'000'000;
using Parts = std::map<std::string, std::set<int32_t>>;

struct Harness {
  std::filesystem::path dir;
  uv_loop_t loop{};
  ManualGroupTimers timers{kStart};
  GroupCoordinatorOptions options;
  std::unique_ptr<state::StateStore> store;
  std::unique_ptr<CommittedOffsets> offsets;
  std::unique_ptr<GroupCoordinator> gc;
  std::map<std::string, int32_t> topics{{"orders", 6}};

  Harness() {
    char tmpl[] = "/tmp/kib-cgroups-XXXXXX";
    dir = mkdtemp(tmpl);
    uv_loop_init(&loop);
    options.consumer_session_timeout_ms = 10'000;
    options.consumer_heartbeat_interval_ms = 1'000;
    options.topic_partitions = [this](const std::string& t) -> std::optional<int32_t> {
      auto it = topics.find(t);
      if (it == topics.end()) return std::nullopt;
      return it->second;
    };
    options.topic_names = [this] {
      std::vector<std::string> names;
      for (const auto& [t, _] : topics) names.push_back(t);
      return names;
    };
    start();
  }
  ~Harness() {
    stop();
    uv_loop_close(&loop);
    std::filesystem::remove_all(dir);
  }
  void start() {
    auto s = state::StateStore::open((dir / "state.db").string(), &loop);
    BOOST_REQUIRE(s.ok());
    store = std::move(*s);
    offsets = std::make_unique<CommittedOffsets>(*store, timers);
    BOOST_REQUIRE(offsets->load().ok());
    gc = std::make_unique<GroupCoordinator>(*store, timers, *offsets, options);
    BOOST_REQUIRE(gc->load().ok());
  }
  void stop() {
    settle();
    gc.reset();
    offsets.reset();
    if (store) store->close();
    store.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  void settle() {
    while ((gc && gc->pending_writes() > 0) || (offsets && offsets->pending_writes() > 0)) uv_run(&loop, UV_RUN_ONCE);
  }
  void advance(int64_t ms) {
    timers.advance(ms);
    settle();
  }

  ConsumerHeartbeatResult beat(ConsumerHeartbeatParams p, int16_t version = 1) {
    std::optional<ConsumerHeartbeatResult> out;
    gc->consumer_group_heartbeat(std::move(p), version, [&out](ConsumerHeartbeatResult r) { out = std::move(r); });
    while (!out) uv_run(&loop, UV_RUN_ONCE);
    settle();
    return std::move(*out);
  }
};

}  // namespace kib::bridge::cg_test
