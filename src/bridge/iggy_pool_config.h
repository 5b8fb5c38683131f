// The Iggy connection pool settings of a bridge configuration ([iggy]), shared by the daemon
// and the admin subcommands that talk to Iggy themselves.
#pragma once

#include "config/config.h"
#include "iggy/pool.h"

namespace kib {

iggy::PoolConfig iggy_pool_config(const config::Config& cfg);

}  // namespace kib
