// A decoded Kafka request frame and the one-shot Responder that answers it.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "config/config.h"
#include "server/context/session.h"
#include "net/tcp_server.h"
#include "security/acl.h"
#include "security/principal.h"

namespace kib::bridge {
class Authorizer;
enum class Audit;  // bridge/security/authorizer.h: whether a denial is logged as one or filters
}  // namespace kib::bridge

namespace kib::kafka {

struct Services;

// Kafka's ACL names, as handlers write them: req.authorized(Op::kWrite, Res::kTopic, name).
using Op = security::AclOperation;
using Res = security::ResourceType;

struct RequestHeaderInfo {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::string client_id;  // empty when the client sent null
  std::chrono::steady_clock::time_point received_at{};  // for kib_request_duration_seconds
};


// Answers exactly one request. Copies share one state: the first send/no_response/close wins,
// later calls are ignored. Safe to call after the connection closed (it then does nothing).
//
// Never throws: a response that cannot be encoded (a string or array over the wire format's
// bounds) closes the connection with a log line and counts in kib_request_errors_total
// {code="encode_failed"} and kib_callback_exceptions_total{boundary="kafka_response"}. And a
// request whose last Responder copy goes away unanswered (the callback that held it failed
// or was dropped) closes its connection too: the client would otherwise wait forever behind it.
class Responder {
 public:
  static constexpr size_t kMinSharedSpanBytes = 4096;

  Responder() = default;
  Responder(std::weak_ptr<net::Connection> conn, uint64_t seq, RequestHeaderInfo header, int16_t response_header_version)
      : state_(std::make_shared<State>(std::move(conn), seq, std::move(header), response_header_version)) {}

  // Encodes `msg` at the request's version behind the right response header. `size_hint`:
  // bytes to reserve up front (a Fetch response's record bytes), so encoding does not regrow.
  template <typename Msg>
  void send(const Msg& msg, size_t size_hint = 256) const noexcept {
    if (!state_ || state_->answered) return;
    try {
      if constexpr (requires { msg.error_code; }) count_error(static_cast<int16_t>(msg.error_code));
      finish(encode_frame(msg, size_hint));
    } catch (...) {
      encode_failed(std::current_exception());
    }
  }
  // As send(), with the encoding done on libuv's thread pool of `loop`: for an answer of
  // megabytes (ListOffsets naming 200,000 partitions: 11 ms to encode), so that the loop serves
  // other connections meanwhile. `msg` is shared with the worker and must not change until it is
  // sent; it is released on the worker once encoded. Without a loop, or if the pool refuses the
  // work, it is encoded here.
  template <typename Msg>
  void send_off_loop(uv_loop_t* loop, std::shared_ptr<const Msg> msg, size_t size_hint = 256) const noexcept {
    if (!state_ || state_->answered || !msg) return;
    if constexpr (requires { msg->error_code; }) count_error(static_cast<int16_t>(msg->error_code));
    struct Work {
      uv_work_t req{};
      Responder self;
      std::shared_ptr<const Msg> msg;
      size_t size_hint;
      std::optional<ByteWriter> out;
      std::exception_ptr failed;
    };
    auto* work = new Work{{}, *this, std::move(msg), size_hint, std::nullopt, nullptr};
    work->req.data = work;
    auto encode = [](uv_work_t* req) {  // a pool thread: touches only the Work and what it owns
      auto* wk = static_cast<Work*>(req->data);
      try {
        wk->out.emplace(wk->self.encode_frame(*wk->msg, wk->size_hint));
      } catch (...) {
        wk->failed = std::current_exception();
      }
      wk->msg.reset();  // the answer's teardown stays off the loop too
    };
    auto sent = [](uv_work_t* req, int status) {  // the loop again
      std::unique_ptr<Work> wk(static_cast<Work*>(req->data));
      if (status != 0) return;  // cancelled: the loop is closing
      if (wk->failed) return wk->self.encode_failed(wk->failed);
      if (wk->out) wk->self.finish(std::move(*wk->out));
    };
    if (loop == nullptr || uv_queue_work(loop, &work->req, encode, sent) != 0) {
      encode(&work->req);
      sent(&work->req, 0);
    }
  }
  // For requests that get no response (Produce with acks=0).
  void no_response() const;
  // Memory the request holds while it is handled (decompressed records), counted against the
  // connection's in-flight request bytes until it is answered.
  void charge(size_t bytes) const;
  // Closes the connection (protocol violation); `reason` is logged with the request's context.
  void close(const std::string& reason) const;

  const RequestHeaderInfo& header() const;

  // Low level: writes the length placeholder and response header into `w`.
  void begin(ByteWriter& w) const;
  void finish(ByteWriter&& w) const noexcept;
  // Counts a non-zero Kafka error code in kib_request_errors_total.
  void count_error(int16_t error_code) const;

 private:
  // The response frame of `msg`: header, then the body at the request's version (throws what the
  // encoder throws). Reads only what never changes after the Responder is made, so a pool thread
  // may call it (send_off_loop).
  template <typename Msg>
  ByteWriter encode_frame(const Msg& msg, size_t size_hint) const {
    ByteWriter w(size_hint);
    // Record batches of at least this size are written from where they are (the produced-batch
    // cache, a rebuilt batch's buffer) instead of being copied into the frame.
    w.collect_shared(kMinSharedSpanBytes);
    begin(w);
    msg.encode(w, state_->header.api_version);
    return w;
  }

  struct State {
    State(std::weak_ptr<net::Connection> c, uint64_t s, RequestHeaderInfo h, int16_t v)
        : conn(std::move(c)), seq(s), header(std::move(h)), response_header_version(v) {}
    ~State();
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    std::weak_ptr<net::Connection> conn;
    uint64_t seq = 0;
    RequestHeaderInfo header;
    int16_t response_header_version = 0;
    bool answered = false;
  };
  void encode_failed(std::exception_ptr e) const noexcept;

  std::shared_ptr<State> state_;
};

struct Request {
  RequestHeaderInfo header;
  // The whole frame, header included. Shared: a decoded `records` field (Produce) is a view
  // into it that keeps it alive, rather than a copy.
  std::shared_ptr<const Bytes> frame;
  size_t body_offset = 0;  // where the request body starts in `frame`
  std::shared_ptr<net::Connection> conn;
  Session* session = nullptr;
  // Who answers the request's authorized() questions: the one authorizer, set by KafkaServer.
  bridge::Authorizer* authorizer = nullptr;
  Responder respond;

  ByteReader body() const { return ByteReader(frame ? ByteSpan(*frame).subspan(body_offset) : ByteSpan()); }

  // Decodes the body as `Msg` at the request's version; throws DecodeError.
  template <typename Msg>
  Msg decode() const {
    Msg m;
    ByteReader r = body();
    const std::shared_ptr<const void> owner = frame;
    r.set_owner(&owner);
    m.decode(r, header.api_version);
    return m;
  }

  // Whether the request's principal, from its client's address, may `op` the named resource (or
  // the cluster), as Redpanda's request_context::authorized and KafkaApis' authHelper ask it. A
  // refusal is logged and counted as one unless `audit` is bridge::Audit::kFilter (a list
  // filtered by what the principal may see).
  //
  // Declared here, defined in server/security/authorization.cc: the answer is
  // bridge::Authorizer's, and this layer sits below bridge/ (docs/architecture.md's table), so it
  // only names the authorizer, as services.h names every service. An interface the layer above
  // implements would keep the arrows down as well, but there is one authorizer and nothing else
  // to stand in for it (handler tests run the real one), so it would be a virtual call for no one.
  bool authorized(Op op, Res type, std::string_view name) const;
  bool authorized(Op op, Res type, std::string_view name, bridge::Audit audit) const;
  bool authorized_cluster(Op op) const;
  bool authorized_cluster(Op op, bridge::Audit audit) const;
};

}  // namespace kib::kafka
