#include "iggy/connection.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/guard.h"
#include "iggy/errors.h"

namespace kib::iggy {
namespace {

std::shared_ptr<spdlog::logger> log() {
  auto l = spdlog::get("iggy");
  return l ? l : spdlog::default_logger();
}

// What a guard hands to fail_connection when the bridge's own code threw inside a socket
// callback: the connection's framing state is unknown, so it starts over.
Error internal_error(std::string_view what) {
  return transport_error(TransportCode::kDisconnected, fmt::format("internal error: {}", what));
}

bool is_incompatible(const Error& e) {
  return e.domain == ErrorDomain::kIggy && e.code == code::kIncompatibleProtocolVersion;
}

bool is_transient(const Error& e) {
  return e.domain == ErrorDomain::kIggy &&
         (e.code == code::kTransientNotCommitted || e.code == code::kTransientNotAccepted);
}

}  // namespace

const char* connection_state_name(ConnectionState s) {
  switch (s) {
    case ConnectionState::kIdle: return "idle";
    case ConnectionState::kConnecting: return "connecting";
    case ConnectionState::kLoggingIn: return "logging-in";
    case ConnectionState::kReady: return "ready";
    case ConnectionState::kBackoff: return "backoff";
    case ConnectionState::kClosed: return "closed";
    case ConnectionState::kUnsupported: return "unsupported";
  }
  return "unknown";
}

// One TCP socket generation. Freed in its close callback; `owner` is cleared when the connection
// lets go of it, so late libuv callbacks of an old socket are ignored.
struct IggyConnection::Socket {
  uv_tcp_t tcp;
  uv_connect_t connect_req;
  IggyConnection* owner = nullptr;
};

// A libuv callback of socket `s`: an exception fails (and reconnects) that connection only.
template <typename Fn>
void IggyConnection::guarded_socket_callback(Socket* s, const char* what, Fn&& fn) {
  guard::run(guard::Boundary::kIggyConnection, what, std::forward<Fn>(fn), [s](std::string_view why) {
    if (s->owner) s->owner->fail_connection(internal_error(why));
  });
}

struct IggyConnection::WriteOp {
  uv_write_t req;
  Socket* socket = nullptr;
};

struct IggyConnection::Resolve {
  uv_getaddrinfo_t req;
  IggyConnection* owner = nullptr;
};

IggyConnection::IggyConnection(uv_loop_t* loop, ConnectionConfig config, Listener listener)
    : loop_(loop),
      config_(std::move(config)),
      listener_(std::move(listener)),
      state_timer_(loop),
      heartbeat_timer_(loop),
      tasks_(loop),
      rng_(std::random_device{}()) {}

IggyConnection::~IggyConnection() {
  close_socket();
  if (resolve_) resolve_->owner = nullptr;
}

void IggyConnection::set_state(ConnectionState s) {
  if (state_ == s) return;
  state_ = s;
  if (listener_.on_state) listener_.on_state(s);
}

U128 IggyConnection::new_client_id() {
  U128 id;
  do {
    id.lo = rng_();
    id.hi = rng_();
  } while (id.is_zero());
  return id;
}

void IggyConnection::start() {
  if (state_ != ConnectionState::kIdle) return;
  begin_connect();
}

void IggyConnection::begin_connect() {
  set_state(ConnectionState::kConnecting);
  client_id_ = new_client_id();
  session_ = 0;
  next_request_ = 1;
  state_timer_.start(config_.connect_timeout, [this] {
    fail_connection(transport_error(TransportCode::kConnectFailed,
                                    fmt::format("connect to {}:{} timed out", config_.host, config_.port)));
  });

  sockaddr_storage addr{};
  if (uv_ip4_addr(config_.host.c_str(), config_.port, reinterpret_cast<sockaddr_in*>(&addr)) == 0 ||
      uv_ip6_addr(config_.host.c_str(), config_.port, reinterpret_cast<sockaddr_in6*>(&addr)) == 0) {
    connect_to(reinterpret_cast<const sockaddr*>(&addr));
    return;
  }
  auto* r = new Resolve;
  r->owner = this;
  r->req.data = r;
  resolve_ = r;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string port = std::to_string(config_.port);
  int rc = uv_getaddrinfo(
      loop_, &r->req,
      [](uv_getaddrinfo_t* req, int status, addrinfo* res) {
        auto* r = static_cast<Resolve*>(req->data);
        IggyConnection* c = r->owner;
        delete r;
        if (c) guard::run(guard::Boundary::kIggyConnection, "resolve", [&] {
          c->resolve_ = nullptr;
          if (status < 0 || !res) {
            c->fail_connection(transport_error(TransportCode::kConnectFailed,
                                               fmt::format("resolve {}: {}", c->config_.host, uv_strerror(status))));
          } else {
            // Prefer IPv4: "localhost" often lists ::1 first while servers bind 127.0.0.1.
            const addrinfo* pick = res;
            for (const addrinfo* a = res; a; a = a->ai_next)
              if (a->ai_family == AF_INET) {
                pick = a;
                break;
              }
            c->connect_to(pick->ai_addr);
          }
        }, [&](std::string_view what) { c->fail_connection(internal_error(what)); });
        if (res) uv_freeaddrinfo(res);
      },
      config_.host.c_str(), port.c_str(), &hints);
  if (rc < 0) {
    resolve_ = nullptr;
    delete r;
    fail_connection(transport_error(TransportCode::kConnectFailed,
                                    fmt::format("resolve {}: {}", config_.host, uv_strerror(rc))));
  }
}

void IggyConnection::connect_to(const sockaddr* addr) {
  auto* s = new Socket;
  s->owner = this;
  uv_tcp_init(loop_, &s->tcp);
  s->tcp.data = s;
  s->connect_req.data = s;
  socket_ = s;
  uv_tcp_nodelay(&s->tcp, 1);
  int rc = uv_tcp_connect(&s->connect_req, &s->tcp, addr, [](uv_connect_t* req, int status) {
    auto* s = static_cast<Socket*>(req->data);
    if (s->owner) guarded_socket_callback(s, "connect", [&] { s->owner->on_connected(status); });
  });
  if (rc < 0)
    fail_connection(transport_error(TransportCode::kConnectFailed,
                                    fmt::format("connect to {}:{}: {}", config_.host, config_.port, uv_strerror(rc))));
}

void IggyConnection::on_connected(int status) {
  if (status < 0) {
    fail_connection(transport_error(TransportCode::kConnectFailed,
                                    fmt::format("connect to {}:{}: {}", config_.host, config_.port, uv_strerror(status))));
    return;
  }
  header_got_ = 0;
  body_.reset();
  body_got_ = 0;
  int rc = uv_read_start(
      reinterpret_cast<uv_stream_t*>(&socket_->tcp),
      [](uv_handle_t* h, size_t, uv_buf_t* buf) {
        auto* s = static_cast<Socket*>(h->data);
        IggyConnection* c = s->owner;
        if (!c) {
          *buf = uv_buf_init(nullptr, 0);
        } else if (c->header_got_ < wire::kHeaderSize) {
          *buf = uv_buf_init(reinterpret_cast<char*>(c->header_) + c->header_got_,
                             static_cast<unsigned>(wire::kHeaderSize - c->header_got_));
        } else {
          *buf = uv_buf_init(reinterpret_cast<char*>(c->body_->data()) + c->body_got_,
                             static_cast<unsigned>(c->body_->size() - c->body_got_));
        }
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t*) {
        auto* s = static_cast<Socket*>(stream->data);
        if (s->owner) guarded_socket_callback(s, "read", [&] { s->owner->on_read(nread); });
      });
  if (rc < 0) {
    fail_connection(transport_error(TransportCode::kDisconnected, fmt::format("read start: {}", uv_strerror(rc))));
    return;
  }

  const Credentials& cr = config_.credentials;
  Result<wire::RequestFrame> frame =
      cr.kind == Credentials::Kind::kPassword
          ? wire::encode_login_password(cr.username, cr.password, config_.client_version)
          : wire::encode_login_token(cr.token, config_.client_version);
  if (!frame) {
    Error e = frame.error();
    if (listener_.on_login_failed) listener_.on_login_failed(e);
    fail_connection(e);
    return;
  }
  set_state(ConnectionState::kLoggingIn);
  login_frame_ = std::make_shared<wire::RequestFrame>(std::move(frame.value()));
  wire::stamp_request(login_frame_->bytes, client_id_, 0, 0);
  state_timer_.start(config_.request_timeout, [this] {
    fail_connection(transport_error(TransportCode::kTimeout, "no reply to login"));
  });
  write_frame(login_frame_->bytes);
}

// The frame stays owned by the in-flight request (or login_frame_) until it completes; libuv does
// not touch the buffer after the socket is closed.
void IggyConnection::write_frame(const Bytes& bytes) {
  auto* op = new WriteOp;
  op->socket = socket_;
  op->req.data = op;
  uv_buf_t buf = uv_buf_init(const_cast<char*>(reinterpret_cast<const char*>(bytes.data())),
                             static_cast<unsigned>(bytes.size()));
  last_send_ms_ = uv_now(loop_);
  int rc = uv_write(&op->req, reinterpret_cast<uv_stream_t*>(&socket_->tcp), &buf, 1, [](uv_write_t* req, int status) {
    auto* op = static_cast<WriteOp*>(req->data);
    Socket* s = op->socket;
    delete op;
    if (status < 0 && s->owner)
      guarded_socket_callback(s, "write", [&] {
        s->owner->fail_connection(
            transport_error(TransportCode::kDisconnected, fmt::format("write failed: {}", uv_strerror(status))));
      });
  });
  if (rc < 0) {
    delete op;
    fail_connection(transport_error(TransportCode::kDisconnected, fmt::format("write failed: {}", uv_strerror(rc))));
  }
}

void IggyConnection::on_read(ssize_t nread) {
  if (nread == 0) return;  // EAGAIN
  if (nread < 0) {
    fail_connection(transport_error(TransportCode::kDisconnected,
                                    nread == UV_EOF ? std::string("connection closed by server")
                                                    : fmt::format("read failed: {}", uv_strerror(static_cast<int>(nread)))));
    return;
  }
  auto n = static_cast<size_t>(nread);
  if (header_got_ < wire::kHeaderSize) {
    header_got_ += n;
    if (state_ == ConnectionState::kLoggingIn && legacy_framing_reply()) {
      stop_unsupported(iggy_error(
          code::kIncompatibleProtocolVersion,
          fmt::format("the Iggy server answered the Register in the legacy framing of Iggy <= 0.8 "
                      "([u32 status {}][u32 length]); this bridge speaks protocol {} and supports {}",
                      load_le<uint32_t>(header_), format_protocol_version(wire::kProtocolVersion), supported_servers_text())));
      return;
    }
    if (header_got_ < wire::kHeaderSize) return;
    auto h = wire::decode_frame_header(ByteSpan(header_, wire::kHeaderSize), config_.max_frame_size);
    if (!h) {
      fail_connection(h.error());
      return;
    }
    size_t body_size = h->body_size();
    if (body_size == 0) {
      body_ = std::make_shared<UninitializedBytes>();
      handle_frame();
      return;
    }
    body_ = std::make_shared<UninitializedBytes>(body_size);
    body_got_ = 0;
    return;
  }
  body_got_ += n;
  if (body_got_ == body_->size()) handle_frame();
}

void IggyConnection::handle_frame() {
  auto h = wire::decode_frame_header(ByteSpan(header_, wire::kHeaderSize), config_.max_frame_size);
  std::shared_ptr<UninitializedBytes> body = std::move(body_);
  header_got_ = 0;
  body_got_ = 0;
  if (!h) {
    fail_connection(h.error());
    return;
  }
  if (state_ == ConnectionState::kLoggingIn) {
    handle_login_reply(*h, *body);
    return;
  }
  if (state_ != ConnectionState::kReady) return;
  if (h->command == wire::Command::kEviction) {
    fail_connection(wire::eviction_error(*h));
    return;
  }
  if (!in_flight_) {
    fail_connection(protocol_error(fmt::format("unsolicited reply (operation {})", h->operation)));
    return;
  }
  handle_reply(*h, std::move(body));
}

// A legacy server reads the 256-byte VSR header as a run of [u32 length][u32 code] requests and
// answers each with an 8-byte [u32 status][u32 length = 0] error. A VSR frame from the server
// starts with its 16-byte checksum, which is 0 on every client-facing frame, so a non-zero status
// word followed by a zero length cannot be the start of one.
bool IggyConnection::legacy_framing_reply() const {
  if (header_got_ < 8) return false;
  const uint32_t status = load_le<uint32_t>(header_);
  const uint32_t length = load_le<uint32_t>(header_ + 4);
  return status != 0 && status < 100000 && length == 0;
}

void IggyConnection::stop_unsupported(const Error& error) {
  if (state_ == ConnectionState::kClosed || state_ == ConnectionState::kUnsupported) return;
  log()->error("iggy server not supported iggy={}:{} error=\"{}\"; not reconnecting: install a supported Iggy "
               "server and restart the bridge",
               config_.host, config_.port, error.message);
  unsupported_reason_ = error.message;
  state_timer_.stop();
  heartbeat_timer_.stop();
  close_socket();
  session_ = 0;
  login_frame_.reset();
  auto req = std::move(in_flight_);
  in_flight_is_heartbeat_ = false;
  set_state(ConnectionState::kUnsupported);
  if (listener_.on_login_failed) listener_.on_login_failed(error);
  if (req && req->done) guard::run(guard::Boundary::kIggyCompletion, "Iggy request failed", [&] { req->done(error); });
}

void IggyConnection::handle_login_reply(const wire::FrameHeader& h, ByteSpan body) {
  state_timer_.stop();
  auto payload = wire::reply_payload(h, body);
  if (!payload) {
    Error e = payload.error();
    if (is_incompatible(e)) {
      stop_unsupported(iggy_error(code::kIncompatibleProtocolVersion,
                                  fmt::format("the Iggy server refused protocol {}: it accepts {} to {}.{}.x; this "
                                              "bridge supports {}",
                                              format_protocol_version(wire::kProtocolVersion),
                                              format_protocol_version(h.server_protocol_version_min),
                                              (h.server_protocol_version >> 20) & 1023u,
                                              (h.server_protocol_version >> 10) & 1023u, supported_servers_text())));
      return;
    }
    if (!is_transient(e)) {
      // Warn once per distinct refusal; the backoff retries repeat it.
      auto level = e.code == last_refusal_code_ ? spdlog::level::debug : spdlog::level::warn;
      last_refusal_code_ = e.code;
      log()->log(level, "iggy login refused iggy={}:{} user={} error=\"{}\"", config_.host, config_.port,
                 config_.credentials.display_name(), e.message);
      if (listener_.on_login_failed) listener_.on_login_failed(e);
    }
    fail_connection(e);
    return;
  }
  auto info = wire::decode_login(*payload);
  if (!info) {
    Error e = info.error();
    if (listener_.on_login_failed) listener_.on_login_failed(e);
    fail_connection(e);
    return;
  }
  ProfileResult profile = profile_from_login(info->server_protocol_version, info->server_version);
  if (!profile.refusal.empty()) {
    stop_unsupported(iggy_error(code::kIncompatibleProtocolVersion, profile.refusal));
    return;
  }
  if (profile.profile.version != profile_.version || profile.profile.protocol != profile_.protocol)
    log()->debug("iggy server iggy={}:{} version={} protocol={} generation={}", config_.host, config_.port,
                profile.profile.version, format_protocol_version(profile.profile.protocol),
                server_generation_name(profile.profile.generation));
  profile_ = std::move(profile.profile);
  login_ = std::move(info.value());
  session_ = login_.session;
  next_request_ = 1;
  backoff_attempts_ = 0;
  last_refusal_code_ = 0;
  login_frame_.reset();
  if (logged_in_once_) ++reconnects_;
  logged_in_once_ = true;
  log()->debug("iggy logged in iggy={}:{} user={} user_id={} session={} server={}", config_.host, config_.port,
               config_.credentials.display_name(), login_.user_id, session_, login_.server_version);
  set_state(ConnectionState::kReady);
  arm_heartbeat();
  if (state_ == ConnectionState::kReady && !in_flight_ && listener_.on_available) listener_.on_available();
}

void IggyConnection::handle_reply(const wire::FrameHeader& h, std::shared_ptr<UninitializedBytes> body) {
  state_timer_.stop();
  auto payload = wire::reply_payload(h, *body);
  if (!payload) {
    const Error& e = payload.error();
    const wire::Operation op = in_flight_->frame.operation;
    bool retry = in_flight_->retries_left > 0 && is_transient(e) &&
                 (wire::is_deduplicated_op(op) ||
                  (wire::is_partition_op(op) && e.code == code::kTransientNotAccepted));
    if (retry) {
      --in_flight_->retries_left;
      log()->debug("iggy transient error, retrying cmd={} error=\"{}\"", wire::command_name(in_flight_->frame.code), e.message);
      state_timer_.start(config_.transient_retry_delay, [this] {
        if (state_ == ConnectionState::kReady && in_flight_) transmit_in_flight();
      });
      return;
    }
    complete_in_flight(payload.error());
    return;
  }
  Reply r;
  r.payload = *payload;
  r.operation = h.operation;
  r.generation = profile_.generation;
  r.body = std::move(body);
  complete_in_flight(std::move(r));
}

void IggyConnection::send(std::unique_ptr<PendingRequest> request) {
  if (!available()) {
    auto shared = std::shared_ptr<PendingRequest>(std::move(request));
    tasks_.post([shared] {
      shared->done(transport_error(TransportCode::kDisconnected, "connection not available"));
    });
    return;
  }
  in_flight_ = std::move(request);
  in_flight_->retries_left = config_.transient_retries;
  in_flight_is_heartbeat_ = false;
  transmit_in_flight();
}

void IggyConnection::transmit_in_flight() {
  auto& f = in_flight_->frame;
  if (!in_flight_->stamped) {
    if (in_flight_->encode) {
      Result<wire::RequestFrame> encoded = in_flight_->encode(profile_);
      in_flight_->encode = nullptr;
      if (!encoded) {
        auto req = std::shared_ptr<PendingRequest>(std::move(in_flight_));
        tasks_.post([this, req, e = encoded.error()] {
          if (req->done) guard::run(guard::Boundary::kIggyCompletion, "Iggy request", [&] { req->done(e); });
          if (state_ == ConnectionState::kReady && !in_flight_ && listener_.on_available) listener_.on_available();
        });
        return;
      }
      f = std::move(encoded.value());
    }
    // Every replicated op (metadata, partition: send, store/delete offset) takes a fresh request
    // number: the release server deduplicates partition writes on (client, request) too, and
    // answers a reused number with an empty reply without appending (iggy 0.11.0 vsr.rs). Both
    // generations accept gaps. Reads (NonReplicated) carry the current number without consuming it.
    uint64_t number =
        wire::is_deduplicated_op(f.operation) || wire::is_partition_op(f.operation) ? next_request_++ : next_request_;
    wire::stamp_request(f.bytes, client_id_, session_, number);
    in_flight_->stamped = true;
  }
  const uint32_t code = f.code;
  state_timer_.start(config_.request_timeout, [this, code] {
    fail_connection(transport_error(TransportCode::kTimeout,
                                    fmt::format("no reply to {} within {} ms", wire::command_name(code),
                                                config_.request_timeout.count())));
  });
  write_frame(f.bytes);
}

void IggyConnection::complete_in_flight(Result<Reply> result) {
  auto req = std::move(in_flight_);
  in_flight_is_heartbeat_ = false;
  if (req && req->done)
    guard::run(guard::Boundary::kIggyCompletion, "Iggy reply", [&] { req->done(std::move(result)); });
  if (state_ == ConnectionState::kReady && !in_flight_ && listener_.on_available) listener_.on_available();
}

void IggyConnection::fail_connection(const Error& error) {
  if (state_ == ConnectionState::kClosed || state_ == ConnectionState::kUnsupported) return;
  if (state_ == ConnectionState::kReady || in_flight_)
    log()->warn("iggy connection lost iggy={}:{} error=\"{}\"", config_.host, config_.port, error.message);
  else
    log()->debug("iggy connect failed iggy={}:{} error=\"{}\"", config_.host, config_.port, error.message);
  state_timer_.stop();
  heartbeat_timer_.stop();
  close_socket();
  if (resolve_) {
    resolve_->owner = nullptr;
    resolve_ = nullptr;
  }
  session_ = 0;
  login_frame_.reset();
  auto req = std::move(in_flight_);
  in_flight_is_heartbeat_ = false;
  schedule_reconnect();
  if (req && req->done) guard::run(guard::Boundary::kIggyCompletion, "Iggy request failed", [&] { req->done(error); });
}

void IggyConnection::schedule_reconnect() {
  set_state(ConnectionState::kBackoff);
  const auto initial = std::max<int64_t>(1, config_.reconnect_backoff_initial.count());
  const auto cap = std::max<int64_t>(initial, config_.reconnect_backoff_max.count());
  int64_t delay = initial;
  for (uint32_t i = 0; i < backoff_attempts_ && delay < cap; ++i) delay *= 2;
  delay = std::min(delay, cap);
  delay += static_cast<int64_t>(rng_() % static_cast<uint64_t>(delay / 4 + 1));  // jitter up to 25%
  ++backoff_attempts_;
  state_timer_.start(std::chrono::milliseconds(delay), [this] {
    if (state_ == ConnectionState::kBackoff) begin_connect();
  });
}

void IggyConnection::close_socket() {
  Socket* s = socket_;
  if (!s) return;
  socket_ = nullptr;
  s->owner = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&s->tcp), [](uv_handle_t* h) { delete static_cast<Socket*>(h->data); });
  header_got_ = 0;
  body_.reset();
  body_got_ = 0;
}

void IggyConnection::close(std::function<void()> done) {
  if (state_ == ConnectionState::kClosed) {
    if (done) tasks_.post(std::move(done));
    return;
  }
  set_state(ConnectionState::kClosed);
  state_timer_.stop();
  heartbeat_timer_.stop();
  if (resolve_) {
    resolve_->owner = nullptr;
    resolve_ = nullptr;
  }
  close_socket();
  session_ = 0;
  if (in_flight_) {
    auto req = std::shared_ptr<PendingRequest>(std::move(in_flight_));
    if (req->done)
      tasks_.post([req] { req->done(transport_error(TransportCode::kClosed, "connection closed by its owner")); });
  }
  if (done) tasks_.post(std::move(done));
}

void IggyConnection::arm_heartbeat() {
  if (config_.heartbeat_interval.count() <= 0) return;
  heartbeat_timer_.start(config_.heartbeat_interval, [this] { send_heartbeat(); });
}

void IggyConnection::send_heartbeat() {
  if (state_ != ConnectionState::kReady) return;
  const uint64_t interval = static_cast<uint64_t>(config_.heartbeat_interval.count());
  const uint64_t idle = uv_now(loop_) - last_send_ms_;
  if (in_flight_ || idle < interval) {
    heartbeat_timer_.start(std::chrono::milliseconds(in_flight_ ? interval : interval - idle),
                           [this] { send_heartbeat(); });
    return;
  }
  auto req = std::make_unique<PendingRequest>();
  req->frame = wire::encode_ping();
  req->done = [](Result<Reply>) {};
  in_flight_ = std::move(req);
  in_flight_->retries_left = 0;
  in_flight_is_heartbeat_ = true;
  transmit_in_flight();
  arm_heartbeat();
}

}  // namespace kib::iggy
