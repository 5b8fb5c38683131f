#include "net/listener.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace kib::net {
namespace {

thread_local char g_read_buf[kReadChunk];

}  // namespace

PeerName peer_name(uv_tcp_t* h) {
  sockaddr_storage ss{};
  int len = sizeof(ss);
  if (uv_tcp_getpeername(h, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  char ip[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    uv_ip4_name(a, ip, sizeof(ip));
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    uv_ip6_name(a, ip, sizeof(ip));
    port = ntohs(a->sin6_port);
  }
  return {std::string(ip), std::string(ip) + ":" + std::to_string(port)};
}

void alloc_read_buffer(uv_handle_t*, size_t, uv_buf_t* buf) { *buf = uv_buf_init(g_read_buf, kReadChunk); }

Listener::Listener(uv_loop_t* loop, guard::Boundary boundary, ListenerNames names, AcceptLimits limits,
                   IncomingFn on_incoming)
    : loop_(loop), boundary_(boundary), names_(std::move(names)), limits_(limits), on_incoming_(std::move(on_incoming)) {}

Listener::~Listener() {
  close();
  // Handles still closing must not call back into a destroyed listener.
  for (auto* h : handles_) h->data = nullptr;
}

Result<uint16_t> Listener::listen(const config::HostPort& addr, int backlog, uint32_t tag) {
  sockaddr_storage ss{};
  std::string host = addr.host == "localhost" ? "127.0.0.1" : addr.host;
  int rc = host.find(':') != std::string::npos
               ? uv_ip6_addr(host.c_str(), addr.port, reinterpret_cast<sockaddr_in6*>(&ss))
               : uv_ip4_addr(host.c_str(), addr.port, reinterpret_cast<sockaddr_in*>(&ss));
  if (rc != 0) return Error{ErrorDomain::kInvalid, 0, names_.error_prefix + addr.str() + ": not an IP address"};
  auto* h = new uv_tcp_t;
  uv_tcp_init(loop_, h);
  h->data = this;
  handles_.push_back(h);
  tags_[h] = tag;
  ++open_handles_;
  rc = uv_tcp_bind(h, reinterpret_cast<sockaddr*>(&ss), 0);
  if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(h), backlog, &Listener::on_connection);
  if (rc != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(h), &Listener::on_handle_closed);
    return Error{ErrorDomain::kTransport, static_cast<uint32_t>(-rc),
                 names_.error_prefix + addr.str() + ": " + uv_strerror(rc)};
  }
  sockaddr_storage bound{};
  int len = sizeof(bound);
  uv_tcp_getsockname(h, reinterpret_cast<sockaddr*>(&bound), &len);
  uint16_t port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                    : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  spdlog::info("{}{} {}:{}", names_.log_prefix, names_.listening_on, host, port);
  return port;
}

void Listener::on_connection(uv_stream_t* listener, int status) {
  auto* self = static_cast<Listener*>(listener->data);
  if (!self) return;
  if (status < 0) {
    spdlog::warn("{}accept failed: {}", self->names_.log_prefix, uv_strerror(status));
    return;
  }
  guard::run(self->boundary_, "accept", [&] { self->on_incoming_(listener); });
}

Accepted Listener::accept(uv_stream_t* listener, uv_tcp_t* handle) {
  Accepted a;
  if (uv_accept(listener, reinterpret_cast<uv_stream_t*>(handle)) != 0) return a;
  a.ok = true;
  a.name = peer_name(handle);
  if (auto it = tags_.find(listener); it != tags_.end()) a.tag = it->second;
  if (open_ >= limits_.max_connections) {
    ++stats_.refused_max_connections;
    a.refused = "refused: max_connections " + std::to_string(limits_.max_connections) + " reached";
    return a;
  }
  auto it = per_ip_.find(a.name.ip);
  if ((it == per_ip_.end() ? 0 : it->second) >= limits_.max_connections_per_ip) {
    ++stats_.refused_per_ip;
    a.refused = "refused: max_connections_per_ip " + std::to_string(limits_.max_connections_per_ip) +
                " reached for " + a.name.ip;
    return a;
  }
  ++per_ip_[a.name.ip];
  ++open_;
  return a;
}

void Listener::release(const std::string& ip) {
  auto it = per_ip_.find(ip);
  if (it == per_ip_.end()) return;
  if (--it->second == 0) per_ip_.erase(it);
  --open_;
}

uint32_t Listener::connections_from(const std::string& ip) const {
  auto it = per_ip_.find(ip);
  return it == per_ip_.end() ? 0 : it->second;
}

void Listener::close(std::function<void()> done) {
  if (!closed_) {
    closed_ = true;
    for (auto* h : handles_)
      if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(h)))
        uv_close(reinterpret_cast<uv_handle_t*>(h), &Listener::on_handle_closed);
  }
  if (!done) return;
  if (open_handles_ == 0) done();
  else close_done_ = std::move(done);
}

void Listener::on_handle_closed(uv_handle_t* h) {
  auto* self = static_cast<Listener*>(h->data);
  if (self) {
    auto& hs = self->handles_;
    hs.erase(std::remove(hs.begin(), hs.end(), reinterpret_cast<uv_tcp_t*>(h)), hs.end());
    self->tags_.erase(h);
  }
  delete reinterpret_cast<uv_tcp_t*>(h);
  if (self) self->handle_closed();
}

void Listener::handle_closed() {
  --open_handles_;
  if (closed_ && open_handles_ == 0 && close_done_) {
    auto done = std::move(close_done_);
    close_done_ = nullptr;
    guard::run(boundary_, "listener closed", [&] { done(); });
  }
}

}  // namespace kib::net
