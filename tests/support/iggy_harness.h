// Real iggy-server for integration tests.
//
// IggyServer::instance() starts one iggy-server per test binary, lazily on first use: a fresh
// temporary data directory, a free loopback port, root credentials iggy/iggy, HTTP/QUIC/WebSocket
// off, one shard (docs/iggy-protocol.md §6.2). It is stopped at exit, on SIGINT/SIGTERM/SIGHUP, and killed
// by the kernel if the test process dies (PR_SET_PDEATHSIG). Binary: $IGGY_SERVER, else
// `iggy-server` on PATH, else /usr/local/bin/iggy-server.
//
// Reuse by other tests:
//   * C++: IggyServer::instance(), harness_pool_config(), IggyTestContext, and the precondition
//     decorators *boost::unit_test::precondition(kib::test::iggy_available) /
//     (kib::test::iggy_restartable) which report a test as skipped without a server.
//   * Other processes: once started, the address is exported to this process's environment as
//     IGGY_HARNESS_ADDRESS=127.0.0.1:<port> (with IGGY_HARNESS_USERNAME/PASSWORD), so child
//     processes (client scripts) inherit it.
//   * An already running server: IGGY_ADDRESS=host:port (IGGY_USERNAME / IGGY_PASSWORD, default
//     iggy/iggy) makes the harness use it instead of spawning one; restart() is then unsupported.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <boost/test/unit_test.hpp>
#include <uv.h>

#include "common/result.h"
#include "iggy/client.h"
#include "iggy/pool.h"

namespace kib::test {

class IggyServer {
 public:
  static IggyServer& instance();

  // Starts the server on first call. False when there is no binary or it did not come up
  // (skip_reason() says why; the server log is printed once on a failed start).
  bool available();
  const std::string& skip_reason() const { return skip_reason_; }
  bool external() const { return external_; }

  std::string host() const { return host_; }
  uint16_t port() const { return port_; }
  std::string address() const { return host_ + ":" + std::to_string(port_); }
  const std::string& username() const { return username_; }
  const std::string& password() const { return password_; }
  const std::string& data_dir() const { return data_dir_; }
  const std::string& log_path() const { return log_path_; }
  const std::string& binary() const { return binary_; }
  pid_t pid() const { return pid_; }
  // Reaps the child if it exited on its own.
  bool running();

  // Fault injection (spawned server only). kill() sends `sig` and waits for the exit; start() runs
  // the server again on the SAME port and data dir and waits until login works.
  bool kill(int sig = SIGKILL);
  bool start();
  bool restart(int sig = SIGKILL) { return kill(sig) && start(); }

  // Blocking probe: TCP connect + Register with the root credentials.
  bool login_works(std::string* why = nullptr) const;

  // Stops the server and removes the data dir (kept when IGGY_HARNESS_KEEP=1). Runs at exit.
  void shutdown();

 private:
  IggyServer() = default;
  bool first_start();
  bool spawn(bool fresh, const std::string& tcp_address);
  bool wait_ready(std::chrono::milliseconds limit, bool discover_port);
  void print_log_tail() const;

  bool attempted_ = false;
  bool ok_ = false;
  bool external_ = false;
  std::string skip_reason_;
  std::string binary_;
  std::string host_ = "127.0.0.1";
  uint16_t port_ = 0;
  std::string username_ = "iggy";
  std::string password_ = "iggy";
  std::string root_dir_;
  std::string data_dir_;
  std::string log_path_;
  pid_t pid_ = -1;
};

// Boost.Test preconditions: false => the test is reported as skipped ("SKIPPED: no iggy-server"
// is printed once).
boost::test_tools::assertion_result iggy_available(boost::unit_test::test_unit_id);
// Also requires a spawned (restartable) server.
boost::test_tools::assertion_result iggy_restartable(boost::unit_test::test_unit_id);

// Pool config pointing at the harness server (root credentials unless given), short timeouts
// suited to tests.
kib::iggy::PoolConfig harness_pool_config(size_t connections = 2,
                                          std::optional<kib::iggy::Credentials> credentials = std::nullopt);

// A name unique within this test run ("prefix-<pid>-<n>").
std::string unique_name(std::string_view prefix);

// One libuv loop + IggyPool + IggyClient for a test; closes everything and drains the loop in the
// destructor.
class IggyTestContext {
 public:
  explicit IggyTestContext(kib::iggy::PoolConfig config = harness_pool_config());
  ~IggyTestContext();
  IggyTestContext(const IggyTestContext&) = delete;
  IggyTestContext& operator=(const IggyTestContext&) = delete;

  uv_loop_t* loop() { return &loop_; }
  kib::iggy::IggyPool& pool() { return *pool_; }
  kib::iggy::IggyClient& client() { return client_; }

  // Runs the loop until `done()` or `limit` passes; returns done().
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::seconds(60));

  // Starts an async call and runs the loop until its callback fires:
  //   auto r = ctx.await<Unit>([&](auto cb) { ctx.client().ping(cb); });
  template <typename T, typename Start>
  kib::Result<T> await(Start&& start, std::chrono::milliseconds limit = std::chrono::seconds(60)) {
    std::optional<kib::Result<T>> out;
    start(kib::iggy::Callback<T>([&out](kib::Result<T> r) { out.emplace(std::move(r)); }));
    run_until([&] { return out.has_value(); }, limit);
    if (!out) return kib::Error{kib::ErrorDomain::kTransport, 0, "test: callback did not run in time"};
    return std::move(*out);
  }

 private:
  uv_loop_t loop_;
  std::unique_ptr<kib::iggy::IggyPool> pool_;
  kib::iggy::IggyClient client_;
};

}  // namespace kib::test
