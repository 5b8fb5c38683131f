// What handlers may call. Handlers decode, call one service, encode; the domain logic lives
// in the services under src/bridge/. Everything here lives as long as the Bridge and is used
// on the loop thread only.
#pragma once

#include <uv.h>

#include "config/config.h"

namespace kib::state {
class StateStore;
}
namespace kib::iggy {
class IggyPool;
class IggyClient;
}  // namespace kib::iggy
namespace kib::bridge {
class TopicCatalog;
class ProducerRegistry;
class PartitionLog;
class GroupCoordinator;
}  // namespace kib::bridge

namespace kib::kafka {

struct Services {
  const config::Config* config = nullptr;
  uv_loop_t* loop = nullptr;
  state::StateStore* state = nullptr;
  iggy::IggyPool* iggy_pool = nullptr;
  iggy::IggyClient* iggy = nullptr;
  bridge::TopicCatalog* catalog = nullptr;
  bridge::ProducerRegistry* producers = nullptr;
  bridge::PartitionLog* log = nullptr;
  bridge::GroupCoordinator* groups = nullptr;
  std::string cluster_id;  // stable: from config or generated once and kept in SQLite
};

}  // namespace kib::kafka
