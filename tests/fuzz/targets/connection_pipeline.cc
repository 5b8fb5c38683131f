// The Kafka TCP server's read side under pipelining (src/net/tcp_server.cc): a real TcpServer on a
// libuv loop and a loopback client that sends the input's bytes as they come (frames, partial
// frames, garbage lengths), reading its answers or not. Every complete frame is answered at once
// with an answer whose size the frame's first body byte picks; a frame whose body starts with
// 0xAA authenticates the connection (what SASL does on success), one starting with 0xBB is held
// until the end (a long poll).
//
// Checked at every frame the server hands over (issue 31, finding 1): a connection that is not
// authenticated has no other request unanswered and no answer unwritten (one request at a time);
// a connection with answers pending is within max_pending_response_bytes, and the server's total
// within max_pending_response_bytes_total. After the client goes: nothing is pending anywhere.
//
// Input: byte 0 flags (bit 0: the listener authenticates; bit 1: the client reads its answers),
// byte 1 the answer size unit, then the client's bytes.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <vector>

#include "fuzz/targets/fuzz_targets.h"
#include "net/tcp_server.h"

namespace kib::fuzz {
namespace {

struct Held {
  std::shared_ptr<net::Connection> conn;
  uint64_t seq;
};

net::OutFrame answer(size_t body_bytes) {
  Bytes b(4 + body_bytes, 0);
  b[0] = static_cast<uint8_t>(body_bytes >> 24);
  b[1] = static_cast<uint8_t>(body_bytes >> 16);
  b[2] = static_cast<uint8_t>(body_bytes >> 8);
  b[3] = static_cast<uint8_t>(body_bytes);
  return net::OutFrame(std::move(b));
}

}  // namespace

int fuzz_connection_pipeline(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  // The client closes with answers unread: the server's next write gets EPIPE, which the bridge
  // ignores as SIGPIPE (app/bridge.cc) and so must this process.
  std::signal(SIGPIPE, SIG_IGN);
  const bool authenticate = data[0] & 1, reads = data[0] & 2;
  const size_t unit = static_cast<size_t>(data[1]) + 1;
  const uint8_t* in = data + 2;
  const size_t n = size - 2;

  net::ServerLimits limits;
  limits.max_pending_response_bytes = 4096;
  limits.max_pending_response_bytes_total = 6144;
  limits.max_inflight_requests = 64;
  limits.max_inflight_request_bytes = 16384;
  limits.max_frame_bytes = 32768;
  limits.max_unauthenticated_frame_bytes = 2048;
  limits.idle_timeout_ms = 0;
  limits.frame_read_timeout_ms = 0;
  limits.authentication_timeout_ms = 60000;
  limits.failed_authentication_delay_ms = 0;

  uv_loop_t loop;
  uv_loop_init(&loop);
  std::vector<Held> held;
  net::TcpServer* server_ptr = nullptr;
  auto server = std::make_unique<net::TcpServer>(
      &loop, limits, [&](const std::shared_ptr<net::Connection>& c, uint64_t seq, Bytes frame) {
        const net::ServerStats st = server_ptr->stats();
        if (!c->authenticated())
          FUZZ_CHECK(c->unanswered() == 1 && c->pending_response_cost() == 0,
                     "a second request read before authentication, or before the last answer was written");
        if (c->pending_response_cost() > 0) {
          FUZZ_CHECK(c->pending_response_cost() <= limits.max_pending_response_bytes,
                     "a request read past max_pending_response_bytes");
          FUZZ_CHECK(st.pending_response_cost <= limits.max_pending_response_bytes_total,
                     "a request read past max_pending_response_bytes_total");
        }
        const uint8_t first = frame.empty() ? 0 : frame[0];
        if (first == 0xBB) return held.push_back({c, seq});
        if (first == 0xAA) c->set_authenticated(true);
        c->complete(seq, answer(unit * (first % 16 + 1)));
      });
  server_ptr = server.get();
  net::ListenOptions options;
  options.authenticate = authenticate;
  auto port = server->listen({"127.0.0.1", 0}, options);
  FUZZ_CHECK(port.ok(), "cannot listen on loopback");

  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  FUZZ_CHECK(fd >= 0, "no socket");
  int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(*port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  FUZZ_CHECK(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0, "cannot connect");
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

  // Send what the server takes, read (or not) what it answers, until nothing moves for a while.
  size_t sent = 0;
  int still = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (still < 50 && std::chrono::steady_clock::now() < deadline) {
    uv_run(&loop, UV_RUN_NOWAIT);
    bool moved = false;
    if (sent < n) {
      ssize_t w = ::send(fd, in + sent, n - sent, MSG_NOSIGNAL);
      if (w > 0) sent += static_cast<size_t>(w), moved = true;
    }
    if (reads) {
      uint8_t buf[65536];
      ssize_t r = ::recv(fd, buf, sizeof buf, 0);
      if (r > 0) moved = true;
      if (r == 0) break;
    }
    still = moved ? 0 : still + 1;
  }
  ::close(fd);
  // The long polls end: their connection is gone, so these answers go nowhere.
  for (auto& h : held) h.conn->complete(h.seq, answer(8));
  held.clear();
  for (int i = 0; i < 100 && server->connection_count() > 0; ++i) uv_run(&loop, UV_RUN_NOWAIT);
  FUZZ_CHECK(server->connection_count() > 0 || server->stats().pending_response_cost == 0,
             "answers still counted after every connection closed");
  bool done = false;
  server->shutdown(0, [&] { done = true; });
  while (!done) uv_run(&loop, UV_RUN_ONCE);
  server.reset();
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return 0;
}

}  // namespace kib::fuzz
