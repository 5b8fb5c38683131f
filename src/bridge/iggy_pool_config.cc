#include "bridge/iggy_pool_config.h"

namespace kib {

iggy::PoolConfig iggy_pool_config(const config::Config& cfg) {
  iggy::PoolConfig pc;
  pc.connection.host = cfg.iggy.address.host;
  pc.connection.port = cfg.iggy.address.port;
  pc.connection.credentials = cfg.iggy.personal_access_token.empty()
                                  ? iggy::Credentials::password_login(cfg.iggy.username, cfg.iggy.password)
                                  : iggy::Credentials::personal_access_token(cfg.iggy.personal_access_token);
  pc.connection.request_timeout = std::chrono::milliseconds(cfg.iggy.request_timeout_ms);
  pc.connections = cfg.iggy.pool_size;
  pc.max_queue_per_owner = cfg.limits.max_iggy_queue_per_connection;
  return pc;
}

}  // namespace kib
