#include "http/http_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>

namespace kib::http {
namespace {

constexpr size_t kMaxResponseBytes = 64u << 20;

Error transport(std::string msg) { return Error{ErrorDomain::kTransport, 0, std::move(msg)}; }
Error protocol(std::string msg) { return Error{ErrorDomain::kProtocol, 0, std::move(msg)}; }

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

bool wait_for(int fd, short events, std::chrono::milliseconds timeout) {
  pollfd p{fd, events, 0};
  int rc;
  do rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
  while (rc < 0 && errno == EINTR);
  return rc > 0;
}

}  // namespace

Result<Response> parse_response(const std::string& raw) {
  size_t head_end = raw.find("\r\n\r\n");
  size_t body_at = head_end + 4;
  if (head_end == std::string::npos) {
    head_end = raw.find("\n\n");
    body_at = head_end + 2;
  }
  if (head_end == std::string::npos) return protocol("incomplete HTTP response head");
  std::string head = raw.substr(0, head_end);
  size_t eol = head.find('\n');
  std::string status_line = head.substr(0, eol);
  if (!status_line.empty() && status_line.back() == '\r') status_line.pop_back();
  // "HTTP/1.1 200 OK"
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12 || status_line[8] != ' ' ||
      !std::isdigit(static_cast<unsigned char>(status_line[9])) || !std::isdigit(static_cast<unsigned char>(status_line[10])) ||
      !std::isdigit(static_cast<unsigned char>(status_line[11])))
    return protocol("malformed HTTP status line \"" + status_line + "\"");
  Response r;
  r.status = std::stoi(status_line.substr(9, 3));
  r.content_type.clear();
  long long content_length = -1;
  size_t pos = eol == std::string::npos ? head.size() : eol + 1;
  while (pos < head.size()) {
    size_t next = head.find('\n', pos);
    std::string line = head.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    pos = next == std::string::npos ? head.size() : next + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t colon = line.find(':');
    if (colon == std::string::npos) return protocol("malformed HTTP header line");
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    size_t v = line.find_first_not_of(" \t", colon + 1);
    std::string value = v == std::string::npos ? "" : line.substr(v);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
    if (name == "content-type") r.content_type = value;
    else if (name == "content-length") {
      if (value.empty() || value.size() > 18 || value.find_first_not_of("0123456789") != std::string::npos)
        return protocol("malformed Content-Length");
      content_length = std::stoll(value);
    } else r.headers.emplace_back(name, value);
  }
  r.body = raw.substr(std::min(body_at, raw.size()));
  if (content_length >= 0) {
    if (r.body.size() < static_cast<size_t>(content_length))
      return protocol("HTTP response body shorter than its Content-Length");
    r.body.resize(static_cast<size_t>(content_length));
  }
  return r;
}

Result<Response> get(const config::HostPort& addr, const std::string& path, std::chrono::milliseconds timeout) {
  std::string host = addr.host;
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  else if (host == "::") host = "::1";
  const std::string where = "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                            std::to_string(addr.port) + path;

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(addr.port).c_str(), &hints, &res); rc != 0)
    return transport(where + ": " + gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);

  std::string last_error = "no address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    Socket s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (s.fd() < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    if (::connect(s.fd(), ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last_error = std::strerror(errno);
        continue;
      }
      if (!wait_for(s.fd(), POLLOUT, timeout)) {
        last_error = "connect timed out";
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        last_error = std::strerror(err);
        continue;
      }
    }
    std::string request = "GET " + path + " HTTP/1.1\r\nHost: " +
                          (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                          std::to_string(addr.port) +
                          "\r\nUser-Agent: kafka-iggy-bridge\r\nAccept: */*\r\nConnection: close\r\n\r\n";
    size_t sent = 0;
    while (sent < request.size()) {
      ssize_t n = ::send(s.fd(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<size_t>(n);
      else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!wait_for(s.fd(), POLLOUT, timeout)) return transport(where + ": send timed out");
      } else return transport(where + ": send failed: " + std::strerror(errno));
    }
    std::string raw;
    char buf[16384];
    for (;;) {
      ssize_t n = ::recv(s.fd(), buf, sizeof buf, 0);
      if (n > 0) {
        raw.append(buf, static_cast<size_t>(n));
        if (raw.size() > kMaxResponseBytes) return protocol(where + ": response larger than 64 MiB");
      } else if (n == 0) {
        break;
      } else if (errno == EAGAIN || errno == EINTR) {
        if (!wait_for(s.fd(), POLLIN, timeout)) return transport(where + ": read timed out");
      } else {
        return transport(where + ": read failed: " + std::strerror(errno));
      }
    }
    auto r = parse_response(raw);
    if (!r) return protocol(where + ": " + r.error().message);
    return r;
  }
  return transport(where + ": " + last_error);
}

}  // namespace kib::http
