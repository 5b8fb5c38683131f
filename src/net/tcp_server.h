// Kafka-framed TCP server on one libuv loop: 4-byte big-endian length framing, a frame-size
// limit checked before anything is allocated, pipelined requests answered in request order,
// backpressure (a connection is not read while its unwritten responses or in-flight requests
// exceed their bounds), idle timeout, a connection limit, TCP_NODELAY and a graceful drain.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "config/config.h"

namespace kib::net {

struct ServerLimits {
  uint64_t max_frame_bytes = 100u << 20;
  uint32_t max_connections = 10000;
  uint64_t idle_timeout_ms = 600000;
  uint64_t max_pending_response_bytes = 64u << 20;
  uint32_t max_inflight_requests = 1000;
  // Request bytes read but not yet answered, per connection: past it the connection is not read
  // (a client pipelining 1 MB Produce requests would otherwise hold up to max_inflight_requests
  // of them in memory).
  uint64_t max_inflight_request_bytes = 64u << 20;
};

class TcpServer;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(TcpServer& server, uint64_t id);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }
  bool closed() const { return closing_; }

  // Completes request `seq`. `framed` is the whole response including its 4-byte length, or
  // nullopt for a request that gets no response (Kafka acks=0). Responses are written in
  // request order whatever order they complete in. A no-op once the connection is closed.
  void complete(uint64_t seq, std::optional<Bytes> framed);

  // Counts `bytes` more against max_inflight_request_bytes until request `seq` completes (what
  // handling it holds beyond its frame, e.g. decompressed records). A no-op once completed.
  void charge(uint64_t seq, size_t bytes);

  // Closes the connection; `reason` is logged.
  void close(const std::string& reason);

  // Protocol-layer state attached to the connection (e.g. the Kafka session).
  std::shared_ptr<void> attachment;

  size_t inflight() const { return slots_.size(); }
  uint64_t pending_write_bytes() const { return pending_write_bytes_; }

 private:
  friend class TcpServer;
  struct Slot {
    bool done = false;
    size_t request_bytes = 0;
    std::optional<Bytes> data;
  };
  void start();
  void on_read(ssize_t nread, const uv_buf_t* buf);
  void consume(const uint8_t* p, size_t n);
  void flush();
  void update_reading();
  void on_write_done(size_t bytes, int status);

  TcpServer& server_;
  uint64_t id_;
  uv_tcp_t* handle_;
  std::string peer_;
  bool reading_ = false;
  bool closing_ = false;
  uint8_t len_buf_[4];
  size_t len_have_ = 0;
  int64_t frame_len_ = -1;  // length of the frame being assembled, -1 while reading the prefix
  Bytes frame_;
  uint64_t next_seq_ = 0;       // sequence number of the next request read
  uint64_t first_slot_seq_ = 0; // sequence number of slots_.front()
  std::deque<Slot> slots_;
  uint64_t pending_write_bytes_ = 0;
  uint64_t inflight_request_bytes_ = 0;  // of requests read and not yet completed
  uint64_t last_activity_ms_ = 0;
};

class TcpServer {
 public:
  // Called on the loop thread for every complete frame (without its length prefix).
  using FrameFn = std::function<void(const std::shared_ptr<Connection>&, uint64_t seq, Bytes frame)>;
  using ConnFn = std::function<void(const std::shared_ptr<Connection>&)>;

  TcpServer(uv_loop_t* loop, ServerLimits limits, FrameFn on_frame);
  ~TcpServer();

  // Binds and listens; returns the bound port (useful with port 0).
  Result<uint16_t> listen(const config::HostPort& addr);

  // Stops accepting, lets in-flight requests finish for up to `deadline_ms`, then closes
  // every connection and calls `done`.
  void shutdown(uint64_t deadline_ms, std::function<void()> done);

  ConnFn on_close;  // optional: called when a connection closes

  size_t connection_count() const { return connections_.size(); }
  uint64_t refused_connections() const { return refused_; }
  const ServerLimits& limits() const { return limits_; }
  // Applies new limits to every connection from now on (SIGHUP): frames already being read
  // keep the bound they were checked against; connections above a lowered max_connections
  // stay open.
  void set_limits(const ServerLimits& limits);
  uv_loop_t* loop() const { return loop_; }

 private:
  friend class Connection;
  static void on_connection(uv_stream_t* listener, int status);
  void accept_one(uv_stream_t* listener);
  void remove(Connection* c);
  void sweep_idle();
  void arm_idle_timer();
  void maybe_finish_shutdown();

  uv_loop_t* loop_;
  ServerLimits limits_;
  FrameFn on_frame_;
  std::vector<uv_tcp_t*> listeners_;
  std::unordered_map<Connection*, std::shared_ptr<Connection>> connections_;
  uint64_t next_conn_id_ = 1;
  uint64_t refused_ = 0;
  uv_timer_t* idle_timer_ = nullptr;
  uv_timer_t* shutdown_timer_ = nullptr;
  bool shutting_down_ = false;
  std::function<void()> shutdown_done_;
};

}  // namespace kib::net
