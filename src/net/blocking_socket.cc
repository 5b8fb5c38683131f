#include "net/blocking_socket.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace kib::net {
namespace {

Error transport(std::string msg) { return Error{ErrorDomain::kTransport, 0, std::move(msg)}; }

bool wait_for(int fd, short events, std::chrono::milliseconds timeout) {
  pollfd p{fd, events, 0};
  int rc;
  do rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
  while (rc < 0 && errno == EINTR);
  return rc > 0;
}

}  // namespace

std::string connectable_host(const std::string& host) {
  if (host == "0.0.0.0" || host.empty()) return "127.0.0.1";
  if (host == "::") return "::1";
  return host;
}

Result<BlockingSocket> BlockingSocket::connect(const config::HostPort& addr, std::chrono::milliseconds timeout) {
  const std::string host = connectable_host(addr.host);
  const std::string where = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                            std::to_string(addr.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(addr.port).c_str(), &hints, &res); rc != 0)
    return transport(where + ": " + gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);

  std::string last_error = "no address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    BlockingSocket s(fd, where, timeout);
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last_error = std::strerror(errno);
        continue;
      }
      if (!wait_for(fd, POLLOUT, timeout)) {
        last_error = "connect timed out";
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        last_error = std::strerror(err);
        continue;
      }
    }
    return s;
  }
  return transport(where + ": " + last_error);
}

BlockingSocket::BlockingSocket(BlockingSocket&& o) noexcept
    : fd_(o.fd_), where_(std::move(o.where_)), timeout_(o.timeout_) {
  o.fd_ = -1;
}

BlockingSocket& BlockingSocket::operator=(BlockingSocket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    where_ = std::move(o.where_);
    timeout_ = o.timeout_;
    o.fd_ = -1;
  }
  return *this;
}

BlockingSocket::~BlockingSocket() {
  if (fd_ >= 0) ::close(fd_);
}

Status BlockingSocket::send_all(const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  size_t sent = 0;
  while (sent < n) {
    ssize_t k = ::send(fd_, p + sent, n - sent, MSG_NOSIGNAL);
    if (k > 0) sent += static_cast<size_t>(k);
    else if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(fd_, POLLOUT, timeout_)) return transport(where_ + ": send timed out");
    } else return transport(where_ + ": send failed: " + std::strerror(errno));
  }
  return ok_status();
}

Result<size_t> BlockingSocket::receive_some(void* data, size_t n) {
  for (;;) {
    ssize_t k = ::recv(fd_, data, n, 0);
    if (k >= 0) return static_cast<size_t>(k);
    if (errno == EAGAIN || errno == EINTR) {
      if (!wait_for(fd_, POLLIN, timeout_)) return transport(where_ + ": read timed out");
    } else {
      return transport(where_ + ": read failed: " + std::strerror(errno));
    }
  }
}

Status BlockingSocket::receive_exact(void* data, size_t n) {
  auto* p = static_cast<char*>(data);
  size_t have = 0;
  while (have < n) {
    auto k = receive_some(p + have, n - have);
    if (!k) return k.error();
    if (*k == 0) return transport(where_ + ": connection closed by the peer");
    have += *k;
  }
  return ok_status();
}

}  // namespace kib::net
