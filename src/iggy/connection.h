// One non-blocking TCP connection to iggy-server on a caller-supplied libuv loop.
//
// Lifecycle: start() connects, logs in (Register with username/password or personal access
// token) and becomes available. Exactly one request is in flight at a time (lockstep): the owner
// calls send() only when available() and is told through Listener::on_available when the
// connection can take the next one. A request that gets no reply within request_timeout closes
// the socket (a late reply would desynchronise framing) and fails with a kTransport kTimeout
// error. Socket errors, EOF, malformed frames and evictions fail the in-flight request and
// reconnect with bounded exponential backoff, minting a fresh client id and logging in again.
// Iggy's transient codes 57/58 on deduplicated (metadata) ops, and 58 on partition ops, are
// retried on the same session with the same frame.
//
// The Register reply says which server this is (server_profile.h). A server of another protocol
// minor — one that evicts the Register with IncompatibleProtocol, accepts it but reports another
// protocol, or answers in the legacy (Iggy <= 0.8) framing — stops the connection for good
// (kUnsupported, no reconnect) with one error line and Iggy error 14003 naming both versions.
//
// Thread-safety: none; every call and every callback is on the loop thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include <uv.h>

#include "common/bytes.h"
#include "common/result.h"
#include "iggy/protocol.h"
#include "iggy/server_profile.h"
#include "iggy/types.h"
#include "uvx/tasks.h"
#include "uvx/timer.h"

namespace kib::iggy {

struct ConnectionConfig {
  std::string host = "127.0.0.1";  // IPv4/IPv6 literal or a name (resolved on each connect)
  uint16_t port = 8090;
  Credentials credentials = Credentials::password_login("iggy", "iggy");
  wire::ClientVersion client_version;
  std::chrono::milliseconds connect_timeout{5000};    // TCP connect incl. name resolution
  std::chrono::milliseconds request_timeout{30000};   // per request in flight, also the login
  std::chrono::milliseconds reconnect_backoff_initial{50};
  std::chrono::milliseconds reconnect_backoff_max{5000};
  std::chrono::milliseconds heartbeat_interval{0};    // >0: PING when idle that long
  uint32_t transient_retries = 5;
  std::chrono::milliseconds transient_retry_delay{50};
  size_t max_frame_size = wire::kMaxFrameSize;
};

// A reply: `payload` views `*body` (after any result section).
struct Reply {
  std::shared_ptr<const UninitializedBytes> body;
  ByteSpan payload;
  uint8_t operation = 0;
  ServerGeneration generation = ServerGeneration::kUnknown;  // of the server that answered
};
using ReplyCallback = std::function<void(Result<Reply>)>;

// Encodes a request for the server it is about to be sent to (topic options differ by server).
using FrameEncoder = std::function<Result<wire::RequestFrame>(const ServerProfile&)>;

struct PendingRequest {
  wire::RequestFrame frame;   // replaced by encode(profile) at first transmission when encode is set
  FrameEncoder encode;
  ReplyCallback done;
  int affinity = -1;           // pool: connection index, -1 = any
  uint64_t deadline_ms = 0;    // pool: fail if still queued at this loop time
  uint32_t retries_left = 0;   // connection: transient retries
  bool stamped = false;        // connection: header carries a session/request already
};

enum class ConnectionState : uint8_t {
  kIdle,        // not started
  kConnecting,  // resolving / TCP connect
  kLoggingIn,   // Register sent
  kReady,       // logged in
  kBackoff,     // waiting to reconnect
  kClosed,      // close() called
  kUnsupported, // the server speaks a protocol this client does not: stopped, no reconnect
};
const char* connection_state_name(ConnectionState s);

class IggyConnection {
 public:
  struct Listener {
    std::function<void()> on_available;                  // ready and nothing in flight
    std::function<void(const Error&)> on_login_failed;   // Register refused (credentials, version)
    std::function<void(ConnectionState)> on_state;       // every state change
  };

  IggyConnection(uv_loop_t* loop, ConnectionConfig config, Listener listener = {});
  // Closes without invoking callbacks; close() first to fail the in-flight request cleanly.
  ~IggyConnection();
  IggyConnection(const IggyConnection&) = delete;
  IggyConnection& operator=(const IggyConnection&) = delete;

  void start();
  // Precondition: available(). The callback runs later on the loop thread.
  void send(std::unique_ptr<PendingRequest> request);
  // Fails the in-flight request (kTransport kClosed), closes the socket; `done` runs once the
  // socket is closed. Idempotent.
  void close(std::function<void()> done = {});

  bool available() const { return state_ == ConnectionState::kReady && !in_flight_; }
  bool busy() const { return in_flight_ != nullptr; }
  ConnectionState state() const { return state_; }
  uint64_t session() const { return session_; }
  uint32_t user_id() const { return login_.user_id; }
  const LoginInfo& login_info() const { return login_; }
  // Of the last successful login (generation kUnknown before one).
  const ServerProfile& server_profile() const { return profile_; }
  // Why the connection stopped in kUnsupported (empty otherwise).
  const std::string& unsupported_reason() const { return unsupported_reason_; }
  uint64_t reconnects() const { return reconnects_; }  // successful logins after the first
  const ConnectionConfig& config() const { return config_; }

 private:
  struct Socket;
  struct WriteOp;
  struct Resolve;

  // Runs a libuv callback of socket `s`; an exception fails (and reconnects) this connection only.
  template <typename Fn>
  static void guarded_socket_callback(Socket* s, const char* what, Fn&& fn);

  void set_state(ConnectionState s);
  void begin_connect();
  void connect_to(const sockaddr* addr);
  void on_connected(int status);
  void on_read(ssize_t nread);
  void handle_frame();
  void handle_login_reply(const wire::FrameHeader& h, ByteSpan body);
  void handle_reply(const wire::FrameHeader& h, std::shared_ptr<UninitializedBytes> body);
  void write_frame(const Bytes& bytes);
  void transmit_in_flight();
  void complete_in_flight(Result<Reply> result);
  void fail_connection(const Error& error);
  // The server cannot be spoken to: fail, close, stay in kUnsupported.
  void stop_unsupported(const Error& error);
  bool legacy_framing_reply() const;
  void schedule_reconnect();
  void close_socket();
  void arm_heartbeat();
  void send_heartbeat();
  U128 new_client_id();

  uv_loop_t* loop_;
  ConnectionConfig config_;
  Listener listener_;
  ConnectionState state_ = ConnectionState::kIdle;

  Socket* socket_ = nullptr;    // current socket, owned by libuv until its close callback
  Resolve* resolve_ = nullptr;  // pending name resolution
  uv::Timer state_timer_;       // connect / login / request timeout, backoff, retry delay
  uv::Timer heartbeat_timer_;
  uv::Tasks tasks_;

  // Frame reader: header into header_, then body straight into a fresh shared buffer (not
  // zero-filled first: the socket read fills it).
  uint8_t header_[wire::kHeaderSize] = {};
  size_t header_got_ = 0;
  std::shared_ptr<UninitializedBytes> body_;
  size_t body_got_ = 0;

  U128 client_id_;
  uint64_t session_ = 0;
  uint64_t next_request_ = 1;
  LoginInfo login_;
  ServerProfile profile_;
  std::string unsupported_reason_;
  bool logged_in_once_ = false;
  uint64_t reconnects_ = 0;
  uint32_t backoff_attempts_ = 0;
  uint32_t last_refusal_code_ = 0;
  uint64_t last_send_ms_ = 0;
  std::shared_ptr<wire::RequestFrame> login_frame_;
  std::unique_ptr<PendingRequest> in_flight_;
  bool in_flight_is_heartbeat_ = false;
  std::function<void()> on_closed_;
  std::mt19937_64 rng_;
};

}  // namespace kib::iggy
