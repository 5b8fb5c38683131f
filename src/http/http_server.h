// A minimal HTTP/1.1 server on the libuv loop for the operations endpoints (/metrics,
// /healthz, /readyz). One request per connection (the response carries Connection: close),
// GET and HEAD only, the request head bounded (HttpLimits), exact-path routing: an unknown
// path is 404, a known path with another method 405. Handlers run on the loop thread and
// must be quick (they render from memory; they never wait on Iggy or SQLite).
// Listening, accepting and the connection limits are net::Listener's, as for the Kafka
// listener.
//
// Lifetime: close(done) stops listening and closes open connections; destroying the server
// does the same. Either way the loop must run once more so libuv can free the handles.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "http/metrics_access.h"
#include "net/listener.h"

namespace kib::http {

struct Request {
  std::string method;   // "GET"
  std::string target;   // "/metrics?x=1"
  std::string path;     // "/metrics"
  std::string query;    // "x=1"
  std::string version;  // "HTTP/1.1"
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string peer;     // the client's address (set by the server, not parsed)
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (e.g. Allow)
};

using Handler = std::function<Response(const Request&)>;
using Handlers = std::map<std::string, Handler>;  // by exact path

struct HttpLimits {
  size_t max_request_bytes = 8192;  // request line + headers; larger gets 431
  uint32_t max_connections = config::HttpConfig::kMaxConnections;  // above: accepted and closed at once
  // From one client address ([http] max_connections_per_ip, whose default this is): one host
  // cannot take every one of max_connections and lock the monitoring out.
  uint32_t max_connections_per_ip = config::HttpConfig{}.max_connections_per_ip;
  // A connection that has not sent a whole request this long after it was accepted is closed,
  // however it trickles its bytes (no byte extends it); the same bound then covers the write.
  uint64_t timeout_ms = 5000;
};

// The limits [http] sets (max_connections_per_ip); the rest keep their defaults.
HttpLimits http_limits(const config::HttpConfig& http);

// Totals since the server started, for /metrics (kib_http_connections_closed_total).
struct HttpStats {
  uint64_t refused_max_connections = 0;
  uint64_t refused_per_ip = 0;
  uint64_t timeouts = 0;
};

// Parsing, exposed for tests.
enum class ParseStatus { kIncomplete, kComplete, kBadRequest, kTooLarge, kVersionNotSupported };
struct ParseResult {
  ParseStatus status = ParseStatus::kIncomplete;
  Request request;    // valid when kComplete
  std::string error;  // why, for the other outcomes
};
ParseResult parse_request(std::string_view data, size_t max_request_bytes);

// Routes a parsed request: 404, 405 (with Allow), 500 if the handler throws; HEAD gets the
// GET response without a body.
Response route(const Handlers& handlers, const Request& request);
// The whole response on the wire (status line, Content-Type, Content-Length, Connection:
// close); `head` omits the body but keeps its Content-Length.
std::string serialize(const Response& response, bool head = false);
std::string_view reason_phrase(int status);

class HttpServer {
 public:
  HttpServer(uv_loop_t* loop, Handlers handlers, HttpLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the bound port (useful with port 0).
  Result<uint16_t> listen(const config::HostPort& addr);
  // Stops listening and closes every connection; `done` runs on the loop once all handles
  // are closed.
  void close(std::function<void()> done = {});

  size_t connection_count() const { return connections_.size(); }
  uint64_t requests_served() const { return served_; }
  HttpStats stats() const;
  // New limits for connections accepted from now on (SIGHUP).
  void set_limits(const HttpLimits& limits);

 private:
  struct Conn;
  void accept_one(uv_stream_t* listener);
  void on_data(Conn* c, const char* data, size_t n);
  void respond(Conn* c, const Response& r, bool head);
  void close_conn(Conn* c);
  void on_timeout(Conn* c);
  void maybe_finish_close();
  static void on_close_conn_handle(uv_handle_t* h);
  void arm_timeout(Conn* c);

  uv_loop_t* loop_;
  Handlers handlers_;
  HttpLimits limits_;
  net::Listener listener_;
  std::vector<Conn*> connections_;  // until their socket has closed
  bool listener_closed_ = false;
  uint64_t served_ = 0;
  uint64_t timeouts_ = 0;
  bool closing_ = false;
  std::function<void()> close_done_;
};

// /readyz answers 200 "ready" when `ready` is true, else 503 with `reason`.
struct Readiness {
  bool ready = false;
  std::string reason;
};

// The operations routes: /metrics (metrics::global(), text format 0.0.4), /healthz (200
// "ok" while the process runs), /readyz (from `readiness`, evaluated on every request).
// /metrics follows `access` as it is at each request (the bridge changes it on SIGHUP; null =
// no token, every name shown): without its bearer token, 401 with WWW-Authenticate: Bearer,
// counted in kib_http_requests_refused_total{reason="unauthorized"} and logged at most once per
// kRefusalLogInterval.
inline constexpr std::chrono::seconds kRefusalLogInterval{10};
Handlers ops_handlers(std::function<Readiness()> readiness, std::shared_ptr<const MetricsAccess> access = nullptr);

}  // namespace kib::http
