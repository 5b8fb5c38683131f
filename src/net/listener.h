// The one libuv TCP accept path of the bridge's servers (the Kafka listener in tcp_server,
// the operations endpoint in http/http_server): address parsing, bind and listen, accepting
// into the caller's handle, naming the peer, the connection limits (open connections in all
// and per client address, with the counts of those refused), the loop-wide read buffer, and
// closing the listening sockets. What a connection then does (framing, timeouts, drain) is
// the server's.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/guard.h"
#include "common/result.h"
#include "config/config.h"

namespace kib::net {

// The peer of a connected socket: its address ("127.0.0.1", what max_connections_per_ip
// counts) and "address:port"; "?" when the socket has no peer any more.
struct PeerName {
  std::string ip = "?";
  std::string peer = "?";
};
PeerName peer_name(uv_tcp_t* handle);

// Reads land in one buffer per loop thread and are consumed synchronously in the read
// callback, so an idle connection holds no read buffer at all. An alloc callback for
// uv_read_start.
inline constexpr size_t kReadChunk = 64 * 1024;
void alloc_read_buffer(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);

// Checked when a connection is accepted; connections already open above lowered limits stay.
struct AcceptLimits {
  uint32_t max_connections = 0;         // open connections in all; the next one is refused
  uint32_t max_connections_per_ip = 0;  // open connections from one client address
};

// Totals since the listener started (the servers' refused_* counters, for /metrics).
struct AcceptStats {
  uint64_t refused_max_connections = 0;
  uint64_t refused_per_ip = 0;
};

// How Listener::accept went.
struct Accepted {
  bool ok = false;  // a connection was accepted into the handle (else the caller just closes it)
  PeerName name;
  uint32_t tag = 0;  // the listening socket's, from listen()
  // Set when the connection is over a limit (counted in stats()): the caller closes it with
  // this as the reason. Empty = admitted: it counts against the limits until release().
  std::string refused;
};

// How the listener names itself in logs and errors, as each server always has.
struct ListenerNames {
  std::string log_prefix;    // before every log line ("http: ")
  std::string listening_on;  // "listening for Kafka clients on"
  std::string error_prefix;  // before the address in listen() errors ("[http] listen ")
};

class Listener {
 public:
  // Called (inside the callback guard of `boundary`) for every incoming connection; it calls
  // accept() with a handle of its own.
  using IncomingFn = std::function<void(uv_stream_t* listener)>;

  Listener(uv_loop_t* loop, guard::Boundary boundary, ListenerNames names, AcceptLimits limits, IncomingFn on_incoming);
  // Closes the listening sockets if close() was not called; the loop must run once more to
  // free them (their close callbacks no longer reach this object).
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds and listens (one more socket per call); returns the bound port (useful with port 0).
  // "localhost" is 127.0.0.1; an address with a colon is IPv6. Connections accepted on this
  // socket carry `tag` (Accepted::tag: which of the server's listeners it is).
  Result<uint16_t> listen(const config::HostPort& addr, int backlog, uint32_t tag = 0);

  // Accepts the connection pending on `listener` into `handle` (uv_tcp_init'ed on this loop),
  // names its peer and applies the limits.
  Accepted accept(uv_stream_t* listener, uv_tcp_t* handle);
  // An admitted connection from `ip` is closing: it no longer counts against the limits.
  void release(const std::string& ip);

  // Stops accepting: closes the listening sockets; `done` runs on the loop once they are freed.
  void close(std::function<void()> done = {});
  bool closed() const { return closed_; }

  // New limits for connections accepted from now on (SIGHUP).
  void set_limits(const AcceptLimits& limits) { limits_ = limits; }
  const AcceptLimits& limits() const { return limits_; }
  const AcceptStats& stats() const { return stats_; }
  // Admitted connections not yet released, in all and from `ip` (as PeerName::ip spells it).
  size_t open() const { return open_; }
  uint32_t connections_from(const std::string& ip) const;

 private:
  static void on_connection(uv_stream_t* listener, int status);
  static void on_handle_closed(uv_handle_t* h);
  void handle_closed();

  uv_loop_t* loop_;
  guard::Boundary boundary_;
  ListenerNames names_;
  AcceptLimits limits_;
  IncomingFn on_incoming_;
  std::vector<uv_tcp_t*> handles_;  // listening, or failed to and closing
  std::unordered_map<const void*, uint32_t> tags_;  // by listening handle
  size_t open_handles_ = 0;         // of handles_ not yet freed
  bool closed_ = false;
  std::function<void()> close_done_;
  AcceptStats stats_;
  size_t open_ = 0;
  std::unordered_map<std::string, uint32_t> per_ip_;  // admitted connections by peer address
};

}  // namespace kib::net
