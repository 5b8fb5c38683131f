// Kafka-framed TCP server on one libuv loop: 4-byte big-endian length framing, a frame-size
// limit checked before anything is allocated, pipelined requests answered in request order,
// backpressure (a connection is neither read nor handed another buffered frame while its
// responses not yet written, its requests in flight or their bytes exceed their bounds), an
// idle timeout, a deadline to finish a started frame, connection limits (total and per client
// address, applied at accept by net::Listener), TCP_NODELAY and a graceful drain. On a TLS
// listener (net/tls.h) the same framing and bounds apply to the decrypted bytes.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "config/config.h"
#include "net/listener.h"
#include "net/tls_peer.h"
#include "uvx/tasks.h"
#include "uvx/timer.h"

namespace kib::net {

// The [limits] keys the server enforces; the defaults are the configuration's (config.h is
// their one definition), so a server built without a config file behaves like one built from
// an empty one.
struct ServerLimits {
  static constexpr config::LimitsConfig kDefaults{};
  // May exceed max_inflight_request_bytes: a frame larger than that bound is read to the end
  // once every earlier request of its connection is answered (can_take_more waives the bound).
  uint64_t max_frame_bytes = kDefaults.max_frame_bytes;
  uint32_t max_connections = kDefaults.max_connections;
  // Only whole requests read and responses written count as activity (Kafka's
  // connections.max.idle.ms); bytes of a frame that never completes do not.
  uint64_t idle_timeout_ms = kDefaults.idle_timeout_ms;
  // Answers not yet taken by the client, per connection (being written, waiting to be, or
  // finished and queued behind an earlier request still being handled), counted at their memory
  // cost (Connection::pending_response_cost()): past it the connection is not read. One with
  // nothing pending may always take a request.
  uint64_t max_pending_response_bytes = kDefaults.max_pending_response_bytes;
  // The same cost summed over every connection: past it no connection that has answers pending
  // is read until the sum is back under it.
  uint64_t max_pending_response_bytes_total = kDefaults.max_pending_response_bytes_total;
  uint32_t max_inflight_requests = kDefaults.max_inflight_requests;
  // Request bytes read but not yet answered, per connection, the frame being received
  // included: past it the connection is not read (a client pipelining 1 MB Produce requests
  // would otherwise hold up to max_inflight_requests of them in memory).
  uint64_t max_inflight_request_bytes = kDefaults.max_inflight_request_bytes;
  // A frame whose first byte has arrived must be complete within this (while the bridge is
  // reading the connection), else the connection is closed; 0 = no deadline.
  uint64_t frame_read_timeout_ms = kDefaults.frame_read_timeout_ms;
  // Open connections from one client IP address; the next one is closed at accept.
  uint32_t max_connections_per_ip = kDefaults.max_connections_per_ip;
  // Connections that must authenticate (TcpServer::listen's `authenticate`): closed unless
  // authenticated this long after accept; until then a larger frame closes them.
  uint64_t authentication_timeout_ms = kDefaults.authentication_timeout_ms;
  uint64_t max_unauthenticated_frame_bytes = kDefaults.max_unauthenticated_frame_bytes;
  // close_after_responses() closes this long after the last answer is written (the SASL
  // failures: Kafka's connection.failed.authentication.delay.ms); 0 closes at once.
  uint64_t failed_authentication_delay_ms = kDefaults.failed_authentication_delay_ms;
};

// The server's share of [limits].
ServerLimits server_limits(const config::LimitsConfig& limits);

// Totals since the server started, for /metrics.
struct ServerStats {
  uint64_t refused_max_connections = 0;   // closed at accept: max_connections reached
  uint64_t refused_per_ip = 0;            // closed at accept: max_connections_per_ip reached
  uint64_t frame_read_timeouts = 0;       // closed: a frame not completed within frame_read_timeout_ms
  uint64_t idle_timeouts = 0;             // closed: idle for idle_timeout_ms
  uint64_t authentication_timeouts = 0;   // closed: not authenticated within authentication_timeout_ms
  // TLS listeners: handshakes completed by protocol version ("TLSv1.3"), handshakes failed by
  // reason (indexed by TlsFailure), connections closed by a TLS error after the handshake.
  std::map<std::string, uint64_t> tls_handshakes;
  std::array<uint64_t, kTlsFailureCount> tls_handshake_failures{};
  uint64_t tls_errors = 0;
  // Connections that stopped being read because their client did not take its answers: past
  // max_pending_response_bytes, and past max_pending_response_bytes_total.
  uint64_t read_pauses_pending = 0;
  uint64_t read_pauses_pending_total = 0;
  uint64_t pending_response_cost = 0;  // now, over every connection
};

// How TcpServer::listen treats a listener's connections.
struct ListenOptions {
  uint32_t listener = 0;      // Connection::listener()
  bool authenticate = false;  // connections start unauthenticated (Connection::authenticated())
  // TLS on this listener: a context made for it (TlsContext::listener() is this listener), no
  // other's, so that no session made on another listener resumes here. Whether the completed
  // handshake authenticates the connection (Kafka's SSL) or another layer does (SASL_SSL) is
  // the context's TlsListener::authenticates.
  std::shared_ptr<const TlsContext> tls;
};

class TcpServer;

// A response as it goes on the wire: `head` with shared spans (ByteWriter::SharedAt) spliced in
// at their positions, e.g. a Fetch response's header fields around the record batches it refers
// to. Written with one vectored write, without copying the spans into `head`.
struct OutFrame {
  OutFrame() = default;
  OutFrame(Bytes h) : head(std::move(h)) {}  // NOLINT: a frame in one buffer
  OutFrame(Bytes h, std::vector<ByteWriter::SharedAt> s);

  Bytes head;
  std::vector<ByteWriter::SharedAt> shared;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // What the frame holds in memory while it waits to be written: its buffer's capacity, the
  // shared pieces it keeps alive and their list, and a share for the allocator and the queue.
  size_t memory_cost() const;
  // Appends a frame without shared pieces to this one (which has none either): small answers
  // queued behind a write go out together, in one buffer.
  void append(const OutFrame& small);
  // Calls fn(ByteSpan) for each piece in wire order (empty pieces skipped).
  template <typename Fn>
  void for_each_piece(Fn&& fn) const {
    size_t at = 0;
    for (const auto& s : shared) {
      if (s.at > at) fn(ByteSpan(head).subspan(at, s.at - at));
      at = s.at;
      if (!s.span.bytes.empty()) fn(s.span.bytes);
    }
    if (head.size() > at) fn(ByteSpan(head).subspan(at));
  }

 private:
  size_t size_ = head.size();
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(TcpServer& server, uint64_t id);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }
  bool closed() const { return closing_; }
  // Closed, or its peer closed (or reset) and the bridge has not read that yet because it holds
  // the connection (one request at a time before authentication, a bound): a peek at the socket,
  // for work that need not be done for a client that is gone. A peer that closed after sending
  // more bytes is not seen until they are read.
  bool peer_gone() const;

  // Completes request `seq`. `framed` is the whole response including its 4-byte length, or
  // nullopt for a request that gets no response (Kafka acks=0). Responses are written in
  // request order whatever order they complete in. A no-op once the connection is closed.
  void complete(uint64_t seq, std::optional<OutFrame> framed);

  // Counts `bytes` more against max_inflight_request_bytes until request `seq` completes (what
  // handling it holds beyond its frame, e.g. decompressed records). A no-op once completed.
  void charge(uint64_t seq, size_t bytes);

  // Closes the connection; `reason` is logged.
  void close(const std::string& reason);
  // Reads and hands over no further request, and closes once every request read so far is
  // answered and its response written; `reason` is logged then. A failed SASL authentication
  // ends so: its error response reaches the client, then the connection closes (Kafka's
  // SaslServerAuthenticator does the same).
  void close_after_responses(const std::string& reason);

  // Protocol-layer state attached to the connection (e.g. the Kafka session).
  std::shared_ptr<void> attachment;

  // Requests handed to the frame callback and not yet completed.
  size_t inflight() const { return slots_.size() - done_slots_; }
  // Requests read and not yet answered (in flight, or completed and queued behind one that is).
  size_t unanswered() const { return slots_.size(); }
  // Answers handed to the write side and not yet taken by the socket.
  uint64_t pending_write_bytes() const { return out_bytes_ + write_bytes_; }
  // Responses being written plus finished ones queued behind an unfinished earlier request.
  uint64_t pending_response_bytes() const { return pending_write_bytes() + queued_response_bytes_; }
  // What those answers cost in memory (OutFrame::memory_cost), what the bounds count.
  uint64_t pending_response_cost() const { return out_cost_ + write_cost_ + queued_response_cost_; }
  // Bytes of requests not yet completed, the frame being received included.
  uint64_t inflight_request_bytes() const { return inflight_request_bytes_; }
  // Bytes read from the socket but not yet parsed into frames (held while at a bound).
  // On a TLS listener, ciphertext not yet decrypted counts too.
  size_t buffered_bytes() const;
  bool reading() const { return reading_; }
  const std::string& ip() const { return ip_; }
  uv_loop_t* loop() const;  // the server's
  // Which of the server's listeners accepted it (the index given to TcpServer::listen).
  uint32_t listener() const { return listener_; }
  // A connection of a listener that authenticates starts unauthenticated: it is closed if not
  // authenticated within authentication_timeout_ms of accept, and its frames are bounded by
  // max_unauthenticated_frame_bytes until then. The layer that authenticates it (TLS on an SSL
  // listener, SASL on a SASL listener) says when it is; false again (KIP-368 re-authentication
  // under way) restores the frame bound, not the deadline.
  bool authenticated() const { return authenticated_; }
  void set_authenticated(bool yes);
  // On a TLS listener, once the handshake is complete: the protocol, cipher and the client
  // certificate's subject and principal; nullptr before, and on other listeners.
  const TlsPeer* tls_peer() const;
  bool tls() const { return tls_ != nullptr; }

 private:
  friend class TcpServer;
  struct Slot {
    bool done = false;
    size_t request_bytes = 0;
    std::optional<OutFrame> data;
  };
  struct WriteReq;
  // Why the connection may not take more input now (kNone: it may).
  enum class Hold { kNone, kClosing, kUnauthenticated, kRequests, kPending, kPendingTotal, kRequestBytes };
  Hold hold() const;
  void start();
  void on_read(ssize_t nread, const uv_buf_t* buf);
  // Parses frames from p..p+n, dispatching each whole one while can_take_more(); returns how
  // many bytes it used (all of them unless a bound was reached at a frame boundary).
  size_t parse(const uint8_t* p, size_t n);
  void drain_buffered();
  // Input already read that can be parsed without reading the socket again.
  bool input_waiting() const;
  bool can_take_more() const;
  void flush();
  // Queues bytes as they go on the wire (coalesced with small ones already queued); false once
  // closed. write_out() writes them.
  bool send_raw(OutFrame data);
  // Starts the one write in flight with everything queued, unless one is under way: what the
  // socket takes at once is written without a write request.
  void write_out();
  void on_write_done(WriteReq& w, int status);
  // Adds to (or takes from) this connection's and the server's pending answer cost.
  void account(int64_t cost);
  // TLS: advances the handshake, then decrypts and parses what was fed while bounds allow.
  void tls_input();
  void send_tls_output();
  void update_reading();
  // close_after_responses(): closes once nothing is left to answer or write.
  void close_if_drained();

  TcpServer& server_;
  uint64_t id_;
  uv_tcp_t* handle_;
  std::string peer_;
  std::string ip_;         // peer address without the port, counted by max_connections_per_ip
  uint32_t listener_ = 0;
  bool authenticated_ = true;
  bool was_authenticated_ = false;
  uint64_t accepted_ms_ = 0;
  bool ip_counted_ = false;
  bool reading_ = false;
  bool closing_ = false;
  bool parsing_ = false;   // inside parse(): a nested complete() must not re-enter it
  uint8_t len_buf_[4];
  size_t len_have_ = 0;
  int64_t frame_len_ = -1;  // length of the frame being assembled, -1 while reading the prefix
  Bytes frame_;
  uint64_t next_seq_ = 0;       // sequence number of the next request read
  uint64_t first_slot_seq_ = 0; // sequence number of slots_.front()
  std::deque<Slot> slots_;
  size_t done_slots_ = 0;                 // slots completed, queued behind an unfinished one
  uint64_t queued_response_bytes_ = 0;    // of completed slots not yet written
  uint64_t queued_response_cost_ = 0;
  // The write side: answers in order, waiting for the one write in flight (write_) to finish.
  std::deque<OutFrame> out_;
  uint64_t out_bytes_ = 0, out_cost_ = 0;
  WriteReq* write_ = nullptr;
  uint64_t write_bytes_ = 0, write_cost_ = 0;  // not yet taken by the socket; what it holds
  bool paused_total_ = false;  // in the server's list of connections held by the total bound
  bool paused_pending_ = false;  // held by its own pending answers (counted once per pause)
  uint64_t reauthentication_started_ms_ = 0;  // set_authenticated(false) after it was true
  uint64_t inflight_request_bytes_ = 0;   // of requests read and not yet completed, and frame_
  // Bytes read past a frame boundary at which a bound was reached; at most one read's worth,
  // since the connection is not read again until they are parsed.
  Bytes pending_in_;
  size_t pending_off_ = 0;
  uint64_t last_activity_ms_ = 0;         // last whole request read or response written
  uint64_t frame_started_ms_ = 0;         // when the frame being received started (or resumed)
  bool in_frame_ = false;                 // some bytes of the next frame have arrived
  std::unique_ptr<TlsSession> tls_;       // on a TLS listener
  bool tls_authenticates_ = false;
  bool in_tls_input_ = false;
  // Some bytes of a TLS record have arrived and not all of it: a slow peer is held to
  // frame_read_timeout_ms from then on, as one trickling a frame is.
  bool partial_record_ = false;
  uint64_t partial_record_started_ms_ = 0;
  bool closing_after_responses_ = false;  // close_after_responses() was called
  bool delayed_close_armed_ = false;      // its timer runs (failed_authentication_delay_ms)
  std::unique_ptr<uv::Timer> delayed_close_;
  std::string close_reason_;
};

class TcpServer {
 public:
  // Called on the loop thread for every complete frame (without its length prefix).
  using FrameFn = std::function<void(const std::shared_ptr<Connection>&, uint64_t seq, Bytes frame)>;
  using ConnFn = std::function<void(const std::shared_ptr<Connection>&)>;

  TcpServer(uv_loop_t* loop, ServerLimits limits, FrameFn on_frame);
  ~TcpServer();

  // Binds and listens; returns the bound port (useful with port 0). Connections accepted on it
  // report `listener` (Connection::listener()); with `authenticate` they start unauthenticated
  // (Connection::authenticated()).
  Result<uint16_t> listen(const config::HostPort& addr, uint32_t listener = 0, bool authenticate = false);
  Result<uint16_t> listen(const config::HostPort& addr, const ListenOptions& options);
  // The TLS context the listener it was made for gives the connections it accepts from now on
  // (SIGHUP reload); established connections keep the one they started with. An error (nothing
  // changed) when that listener is not a TLS listener of this server or the context would
  // change what its handshake does (SSL or SASL_SSL).
  Status set_tls_context(std::shared_ptr<const TlsContext> ctx);

  // Stops accepting, lets in-flight requests finish for up to `deadline_ms`, then closes
  // every connection and calls `done`.
  void shutdown(uint64_t deadline_ms, std::function<void()> done);

  ConnFn on_close;  // optional: called when a connection closes

  size_t connection_count() const { return connections_.size(); }
  // Closed at accept because of max_connections or max_connections_per_ip.
  uint64_t refused_connections() const {
    return listener_.stats().refused_max_connections + listener_.stats().refused_per_ip;
  }
  ServerStats stats() const;
  // Open connections from `ip` (as Connection::ip() spells it).
  uint32_t connections_from(const std::string& ip) const { return listener_.connections_from(ip); }
  const ServerLimits& limits() const { return limits_; }
  // Applies new limits to every connection from now on (SIGHUP): frames already being read
  // keep the bound they were checked against; connections above a lowered max_connections
  // or max_connections_per_ip stay open.
  void set_limits(const ServerLimits& limits);
  uv_loop_t* loop() const { return loop_; }

 private:
  friend class Connection;
  void accept_one(uv_stream_t* listener);
  void remove(Connection* c);
  void sweep_idle();
  void arm_idle_timer();
  void release_ip(Connection* c);
  void maybe_finish_shutdown();
  // The total pending answer cost went back under max_pending_response_bytes_total: the
  // connections it held are read again (on a later loop iteration, never inside a callback of
  // another connection).
  void resume_held_by_total();

  uv_loop_t* loop_;
  ServerLimits limits_;
  FrameFn on_frame_;
  Listener listener_;
  std::unordered_map<Connection*, std::shared_ptr<Connection>> connections_;
  uint64_t next_conn_id_ = 1;
  uint64_t frame_read_timeouts_ = 0;
  uint64_t idle_timeouts_ = 0;
  uint64_t authentication_timeouts_ = 0;
  std::unordered_map<uint32_t, bool> authenticating_listeners_;
  // Each TLS listener's own context (ListenOptions::tls).
  std::unordered_map<uint32_t, std::shared_ptr<const TlsContext>> tls_listeners_;
  std::map<std::string, uint64_t> tls_handshakes_;
  std::array<uint64_t, kTlsFailureCount> tls_handshake_failures_{};
  uint64_t tls_errors_ = 0;
  uint64_t pending_cost_total_ = 0;
  uint64_t read_pauses_pending_ = 0, read_pauses_pending_total_ = 0;
  std::unordered_map<uint64_t, std::weak_ptr<Connection>> held_by_total_;  // by connection id
  bool resume_posted_ = false;
  uint64_t total_warned_ms_ = 0;  // the last "answers pending in all" warning (one per 10 s)
  std::unique_ptr<uv::Tasks> tasks_;
  std::unique_ptr<uv::Timer> idle_timer_;      // the idle and frame-read sweep
  std::unique_ptr<uv::Timer> shutdown_timer_;  // the drain deadline
  bool shutting_down_ = false;
  std::function<void()> shutdown_done_;
};

}  // namespace kib::net
