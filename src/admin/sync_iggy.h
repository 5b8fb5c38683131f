// One pinned Iggy connection on a private loop, called synchronously: what the admin
// subcommands that talk to Iggy themselves (`offsets export`, `principals map --create`) use,
// with the [iggy] address and credentials.
#pragma once

#include <uv.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "bridge/iggy_pool_config.h"
#include "common/result.h"
#include "config/config.h"
#include "iggy/client.h"
#include "iggy/errors.h"
#include "iggy/pool.h"

namespace kib::admin {

class SyncIggy {
 public:
  explicit SyncIggy(const config::Config& cfg) {
    uv_loop_init(&loop_);
    iggy::PoolConfig pc = iggy_pool_config(cfg);
    pc.connections = 1;  // Iggy group membership belongs to one connection
    pc.queue_timeout = std::chrono::milliseconds(10000);
    pool_ = std::make_unique<iggy::IggyPool>(&loop_, pc);
    pool_->start();
    client_ = std::make_unique<iggy::IggyClient>(iggy::IggyClient(*pool_).pinned(0));
  }
  ~SyncIggy() {
    bool closed = false;
    pool_->close([&closed] { closed = true; });
    while (!closed && uv_run(&loop_, UV_RUN_ONCE) != 0) {
    }
    client_.reset();
    pool_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
  }

  template <typename T, typename F>
  Result<T> run(F&& f) {
    std::optional<Result<T>> out;
    f(*client_, [&out](Result<T> r) { out.emplace(std::move(r)); });
    while (!out && uv_run(&loop_, UV_RUN_ONCE) != 0) {
    }
    if (!out) return Error{ErrorDomain::kTransport, 0, "the Iggy request was dropped"};
    return std::move(*out);
  }

 private:
  uv_loop_t loop_{};
  std::unique_ptr<iggy::IggyPool> pool_;
  std::unique_ptr<iggy::IggyClient> client_;
};

// An Iggy error as an operator reads it: its name and code, or the transport's message.
inline std::string iggy_message(const Error& e) {
  if (e.domain == ErrorDomain::kIggy) return std::string(iggy::iggy_error_name(e.code)) + " (Iggy " + std::to_string(e.code) + ")";
  return e.message;
}

}  // namespace kib::admin
