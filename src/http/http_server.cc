#include "http/http_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "common/guard.h"
#include "common/text.h"
#include "metrics/bridge_metrics.h"
#include "metrics/metrics.h"
#include "uvx/timer.h"

namespace kib::http {
namespace {

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

ParseResult fail(ParseStatus status, std::string why) {
  ParseResult r;
  r.status = status;
  r.error = std::move(why);
  return r;
}

}  // namespace

ParseResult parse_request(std::string_view data, size_t max_request_bytes) {
  // The head ends at the first empty line; bare LF line endings are tolerated (RFC 9112 2.2).
  size_t end = std::string_view::npos, body_at = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] != '\n') continue;
    if (i + 1 < data.size() && data[i + 1] == '\n') {
      end = i + 1;
      body_at = i + 2;
      break;
    }
    if (i + 2 < data.size() && data[i + 1] == '\r' && data[i + 2] == '\n') {
      end = i + 1;
      body_at = i + 3;
      break;
    }
  }
  if (end == std::string_view::npos || body_at > max_request_bytes) {
    if (data.size() > max_request_bytes || (end != std::string_view::npos))
      return fail(ParseStatus::kTooLarge, "request head exceeds " + std::to_string(max_request_bytes) + " bytes");
    return {};
  }

  std::vector<std::string_view> lines;
  std::string_view head = data.substr(0, end);
  while (!head.empty()) {
    size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
  }
  if (lines.empty()) return fail(ParseStatus::kBadRequest, "empty request");

  for (std::string_view line : lines)
    for (char ch : line)
      if ((static_cast<unsigned char>(ch) < 0x20 && ch != '\t') || ch == 0x7f)
        return fail(ParseStatus::kBadRequest, "control character in request head");

  ParseResult r;
  Request& req = r.request;
  std::string_view rl = lines[0];
  size_t sp1 = rl.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : rl.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || rl.find(' ', sp2 + 1) != std::string_view::npos)
    return fail(ParseStatus::kBadRequest, "malformed request line");
  std::string_view method = rl.substr(0, sp1), target = rl.substr(sp1 + 1, sp2 - sp1 - 1), version = rl.substr(sp2 + 1);
  if (!is_token(method)) return fail(ParseStatus::kBadRequest, "malformed method");
  if (target.empty() || target.front() != '/') return fail(ParseStatus::kBadRequest, "request target must be a path");
  if (version.size() != 8 || !version.starts_with("HTTP/") || version[6] != '.' || !isdigit(version[5]) ||
      !isdigit(version[7]))
    return fail(ParseStatus::kBadRequest, "malformed HTTP version");
  if (version != "HTTP/1.1" && version != "HTTP/1.0")
    return fail(ParseStatus::kVersionNotSupported, std::string(version) + " is not supported");
  req.method = method;
  req.target = target;
  req.version = version;
  size_t q = target.find('?');
  req.path = target.substr(0, q);
  if (q != std::string_view::npos) req.query = target.substr(q + 1);

  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.front() == ' ' || line.front() == '\t') return fail(ParseStatus::kBadRequest, "folded header line");
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
      return fail(ParseStatus::kBadRequest, "malformed header line");
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string_view value = trim_ows(line.substr(colon + 1));
    auto [it, inserted] = req.headers.try_emplace(name, value);
    if (!inserted) it->second += ", " + std::string(value);
  }
  r.status = ParseStatus::kComplete;
  return r;
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

Response route(const Handlers& handlers, const Request& request) {
  auto it = handlers.find(request.path);
  if (it == handlers.end()) return Response{404, "text/plain; charset=utf-8", "not found\n", {}};
  if (request.method != "GET" && request.method != "HEAD")
    return Response{405, "text/plain; charset=utf-8", "method not allowed\n", {{"Allow", "GET, HEAD"}}};
  try {
    return it->second(request);
  } catch (const std::exception& e) {
    spdlog::error("http: {} failed: {}", esc(request.path), esc(e.what(), 1024));
    return Response{500, "text/plain; charset=utf-8", "internal error\n", {}};
  }
}

std::string serialize(const Response& r, bool head) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + std::string(reason_phrase(r.status)) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  out += "Cache-Control: no-store\r\n";
  for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head) out += r.body;
  return out;
}

HttpLimits http_limits(const config::HttpConfig& http) {
  HttpLimits l;
  l.max_connections_per_ip = http.max_connections_per_ip;
  return l;
}

struct HttpServer::Conn {
  HttpServer* server = nullptr;  // null once the server is destroyed
  uv_tcp_t tcp{};
  std::unique_ptr<uv::Timer> timer;  // the request/response deadline; closes itself with the Conn
  uv_write_t write_req{};
  uv_shutdown_t shutdown_req{};
  std::string in, out;
  std::string ip;   // the peer's address
  bool closing = false;
  bool responded = false;
  bool counted = false;  // admitted by the listener: counts against its limits until closed
  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp); }
};

namespace {

net::AcceptLimits accept_limits(const HttpLimits& l) { return {l.max_connections, l.max_connections_per_ip}; }

}  // namespace

HttpServer::HttpServer(uv_loop_t* loop, Handlers handlers, HttpLimits limits)
    : loop_(loop),
      handlers_(std::move(handlers)),
      limits_(limits),
      listener_(loop, guard::Boundary::kHttp, {"http: ", "listening on", "[http] listen "}, accept_limits(limits),
                [this](uv_stream_t* l) { accept_one(l); }) {}

HttpServer::~HttpServer() {
  close();
  // Handles still closing must not call back into a destroyed server.
  for (auto* c : connections_) c->server = nullptr;
}

Result<uint16_t> HttpServer::listen(const config::HostPort& addr) { return listener_.listen(addr, 64); }

HttpStats HttpServer::stats() const {
  HttpStats s;
  s.refused_max_connections = listener_.stats().refused_max_connections;
  s.refused_per_ip = listener_.stats().refused_per_ip;
  s.timeouts = timeouts_;
  return s;
}

void HttpServer::set_limits(const HttpLimits& limits) {
  limits_ = limits;
  listener_.set_limits(accept_limits(limits));
}

void HttpServer::on_close_conn_handle(uv_handle_t* h) {
  auto* c = static_cast<Conn*>(h->data);
  HttpServer* self = c->server;
  if (self) {
    auto& cs = self->connections_;
    cs.erase(std::remove(cs.begin(), cs.end(), c), cs.end());
  }
  delete c;
  if (self) self->maybe_finish_close();
}

void HttpServer::maybe_finish_close() {
  if (closing_ && listener_closed_ && connections_.empty() && close_done_) {
    auto done = std::move(close_done_);
    close_done_ = nullptr;
    done();
  }
}

void HttpServer::close(std::function<void()> done) {
  if (!closing_) {
    closing_ = true;
    listener_.close([this] {
      listener_closed_ = true;
      maybe_finish_close();
    });
    for (auto* c : std::vector<Conn*>(connections_)) close_conn(c);
  }
  if (!done) return;
  if (listener_closed_ && connections_.empty()) done();
  else close_done_ = std::move(done);
}

void HttpServer::accept_one(uv_stream_t* listener) {
  auto* c = new Conn;
  c->server = this;
  uv_tcp_init(loop_, &c->tcp);
  c->tcp.data = c;
  c->timer = std::make_unique<uv::Timer>(loop_, "http connection timeout");
  connections_.push_back(c);
  net::Accepted a = listener_.accept(listener, &c->tcp);
  if (!a.ok) return close_conn(c);
  c->ip = a.name.ip;
  if (!a.refused.empty()) {
    spdlog::warn("http: connection from {} {}", c->ip, a.refused);
    return close_conn(c);
  }
  c->counted = true;
  if (closing_) return close_conn(c);
  arm_timeout(c);
  uv_read_start(c->stream(), &net::alloc_read_buffer, [](uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
    auto* conn = static_cast<Conn*>(s->data);
    guard::run(guard::Boundary::kHttp, "read", [&] {
      if (nread > 0) conn->server->on_data(conn, buf->base, static_cast<size_t>(nread));
      else if (nread < 0) conn->server->close_conn(conn);  // EOF before a whole request, or an error
    }, [&](std::string_view) { conn->server->close_conn(conn); });
  });
}

void HttpServer::on_data(Conn* c, const char* data, size_t n) {
  if (c->closing || c->responded) return;
  c->in.append(data, n);
  ParseResult p = parse_request(c->in, limits_.max_request_bytes);
  switch (p.status) {
    case ParseStatus::kIncomplete:
      return;
    case ParseStatus::kComplete: {
      p.request.peer = c->ip;
      Response r;
      guard::run(guard::Boundary::kHttp, "request handler", [&] { r = route(handlers_, p.request); },
                 [&](std::string_view) { r = Response{500, "text/plain; charset=utf-8", "internal error\n", {}}; });
      spdlog::debug("http: {} {} -> {}", esc(p.request.method), esc(p.request.target), r.status);
      return respond(c, r, p.request.method == "HEAD");
    }
    case ParseStatus::kBadRequest:
      return respond(c, Response{400, "text/plain; charset=utf-8", "bad request: " + p.error + "\n", {}}, false);
    case ParseStatus::kTooLarge:
      return respond(c, Response{431, "text/plain; charset=utf-8", p.error + "\n", {}}, false);
    case ParseStatus::kVersionNotSupported:
      return respond(c, Response{505, "text/plain; charset=utf-8", p.error + "\n", {}}, false);
  }
}

void HttpServer::respond(Conn* c, const Response& r, bool head) {
  c->responded = true;
  ++served_;
  uv_read_stop(c->stream());
  c->in.clear();
  c->out = serialize(r, head);
  // The timer keeps guarding the write: a client that does not read its response is dropped.
  arm_timeout(c);
  c->write_req.data = c;
  uv_buf_t buf = uv_buf_init(c->out.data(), static_cast<unsigned>(c->out.size()));
  int rc = uv_write(&c->write_req, c->stream(), &buf, 1, [](uv_write_t* req, int status) {
    auto* conn = static_cast<Conn*>(req->data);
    guard::run(guard::Boundary::kHttp, "write done", [&] {
      if (conn->closing) return;
      if (status < 0) return conn->server->close_conn(conn);
      conn->shutdown_req.data = conn;
      int rc = uv_shutdown(&conn->shutdown_req, conn->stream(), [](uv_shutdown_t* sreq, int) {
        auto* sc = static_cast<Conn*>(sreq->data);
        guard::run(guard::Boundary::kHttp, "shutdown", [&] {
          if (!sc->closing) sc->server->close_conn(sc);
        });
      });
      if (rc != 0) conn->server->close_conn(conn);
    }, [&](std::string_view) { conn->server->close_conn(conn); });
  });
  if (rc != 0) close_conn(c);
}

void HttpServer::on_timeout(Conn* c) {
  if (c->closing) return;
  ++timeouts_;
  spdlog::info("http: connection from {} closed: {} within {} ms", c->ip,
               c->responded ? "response not read" : "no whole request", limits_.timeout_ms);
  close_conn(c);
}

void HttpServer::arm_timeout(Conn* c) {
  c->timer->start(std::chrono::milliseconds(limits_.timeout_ms), [this, c] { on_timeout(c); });
}

void HttpServer::close_conn(Conn* c) {
  if (c->closing) return;
  c->closing = true;
  if (c->counted) {
    c->counted = false;
    listener_.release(c->ip);
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), on_close_conn_handle);
  c->timer->stop();
}

namespace {

// Refusals of /metrics are logged at most once per kRefusalLogInterval: a scraper with a stale
// token, or someone guessing, must not flood the log. The line after a quiet spell says how
// many went unlogged.
struct RefusalLog {
  std::chrono::steady_clock::time_point last{};
  bool logged = false;
  uint64_t unlogged = 0;
};

Response refuse(const Request& req, Bearer why, RefusalLog& log) {
  metrics::bridge_metrics().http_requests_refused.labels({"unauthorized"}).inc();
  const auto now = std::chrono::steady_clock::now();
  if (!log.logged || now - log.last >= kRefusalLogInterval) {
    spdlog::warn("http: /metrics refused to {}: {}{}", req.peer, describe(why),
                 log.unlogged ? fmt::format(" ({} more refused since the last such line)", log.unlogged) : "");
    log.logged = true;
    log.last = now;
    log.unlogged = 0;
  } else {
    ++log.unlogged;
  }
  // RFC 6750 3.1: a credential that was presented but is not the token is an invalid_token.
  std::string challenge = "Bearer realm=\"kafka-iggy-bridge\"";
  if (why == Bearer::kWrongToken) challenge += ", error=\"invalid_token\"";
  return Response{401, "text/plain; charset=utf-8", "unauthorized\n", {{"WWW-Authenticate", std::move(challenge)}}};
}

}  // namespace

Handlers ops_handlers(std::function<Readiness()> readiness, std::shared_ptr<const MetricsAccess> access) {
  if (!access) access = std::make_shared<const MetricsAccess>();
  Handlers h;
  h["/metrics"] = [readiness, access, log = std::make_shared<RefusalLog>()](const Request& req) {
    if (!access->bearer_token.empty()) {
      auto it = req.headers.find("authorization");
      Bearer b = check_bearer(it == req.headers.end() ? nullptr : &it->second, access->bearer_token);
      if (b != Bearer::kAccepted) return refuse(req, b, *log);
    }
    metrics::bridge_metrics().ready.set(readiness().ready ? 1 : 0);
    return Response{200, "text/plain; version=0.0.4; charset=utf-8", metrics::global().render(access->names), {}};
  };
  h["/healthz"] = [](const Request&) { return Response{200, "text/plain; charset=utf-8", "ok\n", {}}; };
  h["/readyz"] = [readiness](const Request&) {
    Readiness r = readiness();
    if (r.ready) return Response{200, "text/plain; charset=utf-8", "ready\n", {}};
    return Response{503, "text/plain; charset=utf-8", "not ready: " + r.reason + "\n", {}};
  };
  return h;
}

}  // namespace kib::http
