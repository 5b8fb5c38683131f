// Test support for the TCP server's unit tests: a server on a real loop whose frame callback
// holds requests until told to answer, and a non-blocking loopback client pumped by the same
// thread, so a test can stop at any point and look.
#pragma once

#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/bytes.h"
#include "net/tcp_server.h"

namespace kib::test {

inline void put_be32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}

// A frame of `body_bytes` (>= 8) whose body starts like a Kafka request header v0:
// api key 18, version 0, correlation id `corr`, then zeros.
inline Bytes frame(int32_t corr, size_t body_bytes) {
  Bytes b;
  put_be32(b, static_cast<uint32_t>(body_bytes));
  b.insert(b.end(), {0, 18, 0, 0});
  put_be32(b, static_cast<uint32_t>(corr));
  b.resize(4 + body_bytes, 0);
  return b;
}

// ApiVersions v0 with a null client id: 14 bytes on the wire.
inline Bytes api_versions_v0(int32_t corr) {
  Bytes b = frame(corr, 10);
  b[12] = 0xff;
  b[13] = 0xff;
  return b;
}

// The correlation id a frame (request or response, length prefix included) carries: bytes
// 8..12 of a request frame made above, 4..8 of a response.
inline int32_t request_corr(const Bytes& body) {  // frame body, without the length prefix
  return static_cast<int32_t>((uint32_t(body[4]) << 24) | (uint32_t(body[5]) << 16) | (uint32_t(body[6]) << 8) | body[7]);
}
inline int32_t corr_of(const Bytes& response_body) {  // response body, without the length prefix
  return static_cast<int32_t>((uint32_t(response_body[0]) << 24) | (uint32_t(response_body[1]) << 16) |
                              (uint32_t(response_body[2]) << 8) | response_body[3]);
}

// A response frame for request `corr` written as a Fetch response is: fields in the writer's own
// buffer around spans it shares (ByteWriter::shared), two of them back to back. `want` is the
// frame body the client must receive; `owner` the buffer the spans live in.
struct ScatteredResponse {
  net::OutFrame frame;
  Bytes want;
  std::shared_ptr<const Bytes> owner;
};
inline ScatteredResponse scattered_response(int32_t corr) {
  auto buf = std::make_shared<Bytes>(90000);
  for (size_t i = 0; i < buf->size(); ++i) (*buf)[i] = static_cast<uint8_t>(i * 7 + 3);
  ScatteredResponse r;
  r.owner = buf;
  ByteWriter w;
  w.collect_shared(16);
  w.be<int32_t>(0);
  w.be<int32_t>(corr);
  w.string("AB");
  w.shared({buf, ByteSpan(*buf).subspan(0, 5000)});
  w.string("CD");
  w.shared({buf, ByteSpan(*buf).subspan(5000, 70000)});
  w.shared({buf, ByteSpan(*buf).subspan(75000, 15000)});
  w.shared({buf, ByteSpan(*buf).subspan(3, 8)});  // under the threshold: copied
  w.string("EF");
  w.patch_be<int32_t>(0, static_cast<int32_t>(w.total_size() - 4));
  put_be32(r.want, static_cast<uint32_t>(corr));
  r.want.insert(r.want.end(), {'A', 'B'});
  r.want.insert(r.want.end(), buf->begin(), buf->begin() + 5000);
  r.want.insert(r.want.end(), {'C', 'D'});
  r.want.insert(r.want.end(), buf->begin() + 5000, buf->end());
  r.want.insert(r.want.end(), buf->begin() + 3, buf->begin() + 11);
  r.want.insert(r.want.end(), {'E', 'F'});
  auto spans = w.take_shared_spans();
  r.frame = net::OutFrame(w.take(), std::move(spans));
  return r;
}

class LoopClient {
 public:
  // `rcvbuf`: a receive buffer this small (SO_RCVBUF, set before connecting), 0 = the default.
  explicit LoopClient(uint16_t port, const char* from_ip = nullptr, int rcvbuf = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    BOOST_REQUIRE(fd_ >= 0);
    if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (from_ip) {
      sockaddr_in src{};
      src.sin_family = AF_INET;
      inet_pton(AF_INET, from_ip, &src.sin_addr);
      BOOST_REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&src), sizeof src) == 0);
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // Completes from the listen backlog before the server accepts.
    BOOST_REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  }
  ~LoopClient() { ::close(fd_); }
  LoopClient(const LoopClient&) = delete;
  LoopClient& operator=(const LoopClient&) = delete;

  void send(const Bytes& b) {
    out_.insert(out_.end(), b.begin(), b.end());
    io();
  }
  // Writes what the socket takes and reads what has arrived.
  void io() {
    while (!out_.empty() && !closed_) {
      ssize_t n = ::send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      out_.erase(out_.begin(), out_.begin() + n);
    }
    uint8_t buf[65536];
    for (; reading;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        in_.insert(in_.end(), buf, buf + n);
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) closed_ = true;
      break;
    }
  }
  // Moves whole response frames (bodies, without their length) into `frames`.
  void read_frames() {
    io();
    size_t at = 0;
    while (in_.size() - at >= 4) {
      uint32_t len = (uint32_t(in_[at]) << 24) | (uint32_t(in_[at + 1]) << 16) | (uint32_t(in_[at + 2]) << 8) | in_[at + 3];
      if (in_.size() - at - 4 < len) break;
      frames.emplace_back(in_.begin() + at + 4, in_.begin() + at + 4 + len);
      at += 4 + len;
    }
    in_.erase(in_.begin(), in_.begin() + at);
  }
  bool peer_closed() {
    io();
    return closed_;
  }
  size_t unsent() const { return out_.size(); }

  std::vector<Bytes> frames;
  bool reading = true;  // false: a client that does not read its answers

 private:
  int fd_ = -1;
  bool closed_ = false;
  Bytes out_, in_;
};

struct Held {
  std::shared_ptr<net::Connection> conn;
  uint64_t seq;
  int32_t corr;
};

struct ServerFixture {
  uv_loop_t loop{};
  std::unique_ptr<net::TcpServer> server;
  uint16_t port = 0;
  std::vector<Held> held;       // handed over, not yet answered
  size_t dispatched = 0;        // frames handed to the callback
  size_t outstanding = 0;       // handed over and not yet answered
  size_t max_outstanding = 0;
  size_t response_bytes = 4;    // response body size (starts with the correlation id)
  std::function<bool(uint64_t seq)> answer_at_once = [](uint64_t) { return false; };
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  // `options`: how the server listens (authentication, TLS); the default is a plain listener.
  explicit ServerFixture(net::ServerLimits limits, net::ListenOptions options = {}) {
    uv_loop_init(&loop);
    server = std::make_unique<net::TcpServer>(&loop, limits,
                                              [this](const std::shared_ptr<net::Connection>& c, uint64_t seq, Bytes fr) {
                                                ++dispatched;
                                                max_outstanding = std::max(max_outstanding, ++outstanding);
                                                Held h{c, seq, request_corr(fr)};
                                                if (answer_at_once(seq)) answer(h);
                                                else held.push_back(h);
                                              });
    auto p = server->listen({"127.0.0.1", 0}, options);
    BOOST_REQUIRE(p.ok());
    port = *p;
  }
  ~ServerFixture() {
    held.clear();
    bool done = false;
    server->shutdown(0, [&] { done = true; });
    while (!done) uv_run(&loop, UV_RUN_ONCE);
    server.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    BOOST_CHECK(uv_loop_close(&loop) == 0);
  }

  void answer(const Held& h) {
    --outstanding;
    Bytes r;
    put_be32(r, static_cast<uint32_t>(response_bytes));
    put_be32(r, static_cast<uint32_t>(h.corr));
    r.resize(4 + response_bytes, 0);
    h.conn->complete(h.seq, std::move(r));
  }
  // Answers every held request (those handed over meanwhile wait for the next call).
  size_t complete_held() {
    std::vector<Held> now;
    now.swap(held);
    for (const Held& h : now) answer(h);
    return now.size();
  }

  uint64_t elapsed_ms() const {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count());
  }

  // Runs the loop and the client until `until` holds or `timeout_ms` passes (a guard against
  // a hang, not a measure of speed).
  // (Any client with io(): LoopClient, or the TLS client of tls_test_support.h.)
  template <typename Client>
  bool pump(Client& c, const std::function<bool()>& until, uint64_t timeout_ms = 10000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      uv_run(&loop, UV_RUN_NOWAIT);
      c.io();
      if (until()) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }
  // Runs both for a while, for a test that something does NOT happen: loopback delivers in
  // microseconds, so 300 ms is ample for what would happen.
  template <typename Client>
  void settle(Client& c, uint64_t ms = 300) {
    pump(c, [] { return false; }, ms);
  }
};

}  // namespace kib::test
