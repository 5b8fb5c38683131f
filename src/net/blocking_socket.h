// Blocking TCP for the command line (`status`, `topics`, `groups`, `offsets`): connect with a
// deadline, whole-buffer send and receive, each bounded by the same timeout. Never used on the
// event loop. Errors are ErrorDomain::kTransport and name the address.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "common/result.h"
#include "config/config.h"

namespace kib::net {

// "0.0.0.0", "" and "::" (a wildcard listen address) mean this host's loopback.
std::string connectable_host(const std::string& host);

class BlockingSocket {
 public:
  // Tries every address `addr.host` resolves to; `timeout` bounds the connect and, later,
  // every single send or receive wait.
  static Result<BlockingSocket> connect(const config::HostPort& addr, std::chrono::milliseconds timeout);

  BlockingSocket(BlockingSocket&& o) noexcept;
  BlockingSocket& operator=(BlockingSocket&& o) noexcept;
  ~BlockingSocket();

  Status send_all(const void* data, size_t n);
  // Up to `n` bytes; 0 = the peer closed the connection.
  Result<size_t> receive_some(void* data, size_t n);
  // Exactly `n` bytes, or an error (a close before `n` bytes is one).
  Status receive_exact(void* data, size_t n);

  // "host:port" as connected, bracketed for IPv6, for messages.
  const std::string& where() const { return where_; }

 private:
  BlockingSocket(int fd, std::string where, std::chrono::milliseconds timeout)
      : fd_(fd), where_(std::move(where)), timeout_(timeout) {}
  int fd_ = -1;
  std::string where_;
  std::chrono::milliseconds timeout_{};
};

}  // namespace kib::net
