// What handlers may call. Handlers decode, call one service, encode; the domain logic lives
// in the services under src/bridge/.
#pragma once

#include <uv.h>

#include "config/config.h"

namespace kib::state {
class StateStore;
}

namespace kib::kafka {

struct Services {
  const config::Config* config = nullptr;
  uv_loop_t* loop = nullptr;
  state::StateStore* state = nullptr;
};

}  // namespace kib::kafka
