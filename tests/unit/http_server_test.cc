// The operations HTTP server on a real libuv loop, driven over loopback by the blocking
// client from another thread.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <optional>
#include <thread>

#include "http/http_client.h"
#include "http/http_server.h"
#include "metrics/bridge_metrics.h"

using namespace kib;
using namespace kib::http;

namespace {

// Runs the loop until `client` (on another thread) has finished.
template <typename T>
T with_loop(uv_loop_t* loop, std::function<T()> client) {
  uv_async_t wake;
  uv_async_init(loop, &wake, [](uv_async_t*) {});
  std::optional<T> result;
  std::atomic<bool> done{false};
  std::thread t([&] {
    result.emplace(client());
    done = true;
    uv_async_send(&wake);
  });
  while (!done) uv_run(loop, UV_RUN_ONCE);
  t.join();
  uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
  uv_run(loop, UV_RUN_NOWAIT);
  return std::move(*result);
}

std::string raw_exchange(uint16_t port, const std::string& bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return "connect failed";
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

struct Fixture {
  uv_loop_t loop{};
  bool ready = false;
  std::unique_ptr<HttpServer> server;
  uint16_t port = 0;

  explicit Fixture(HttpLimits limits = {}, std::shared_ptr<const MetricsAccess> access = nullptr) {
    uv_loop_init(&loop);
    server = std::make_unique<HttpServer>(
        &loop, ops_handlers([this] { return Readiness{ready, "Iggy at 127.0.0.1:8090 not connected"}; }, access),
        limits);
    auto p = server->listen({"127.0.0.1", 0});
    BOOST_REQUIRE(p.ok());
    port = *p;
  }
  ~Fixture() {
    bool closed = false;
    server->close([&] { closed = true; });
    while (!closed) uv_run(&loop, UV_RUN_ONCE);
    server.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    BOOST_CHECK(uv_loop_close(&loop) == 0);
  }
  Result<Response> get(const std::string& path, const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    return with_loop<Result<Response>>(
        &loop, [&] { return http::get({"127.0.0.1", port}, path, std::chrono::milliseconds(3000), headers); });
  }
  std::string raw(const std::string& bytes) {
    return with_loop<std::string>(&loop, [&] { return raw_exchange(port, bytes); });
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(http_server)

BOOST_AUTO_TEST_CASE(healthz_answers_ok_while_the_process_runs) {
  Fixture f;
  auto r = f.get("/healthz");
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->body == "ok\n");
}

BOOST_AUTO_TEST_CASE(readyz_follows_the_readiness_callback_with_the_reason) {
  Fixture f;
  auto r = f.get("/readyz");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->status == 503);
  BOOST_TEST(r->body == "not ready: Iggy at 127.0.0.1:8090 not connected\n");
  f.ready = true;
  r = f.get("/readyz");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->status == 200);
}

BOOST_AUTO_TEST_CASE(metrics_are_served_in_text_format_0_0_4) {
  Fixture f;
  f.ready = true;
  auto r = f.get("/metrics");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->content_type == "text/plain; version=0.0.4; charset=utf-8");
  BOOST_TEST(r->body.find("# TYPE kib_ready gauge\nkib_ready 1\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(unknown_path_is_404_and_post_is_405) {
  Fixture f;
  auto r = f.get("/nope");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->status == 404);
  std::string wire = f.raw("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  BOOST_TEST(wire.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
  BOOST_TEST(wire.find("\r\nAllow: GET, HEAD\r\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(head_gets_headers_only) {
  Fixture f;
  std::string wire = f.raw("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  BOOST_TEST(wire.starts_with("HTTP/1.1 200 OK\r\n"));
  BOOST_TEST(wire.ends_with("\r\n\r\n"));
}

BOOST_AUTO_TEST_CASE(garbage_is_400_and_oversized_heads_are_431) {
  HttpLimits limits;
  limits.max_request_bytes = 256;
  Fixture f(limits);
  BOOST_TEST(f.raw("\x16\x03\x01 hello\r\n\r\n").starts_with("HTTP/1.1 400 Bad Request\r\n"));
  BOOST_TEST(f.raw("GET / HTTP/1.1\r\nX: " + std::string(1000, 'a') + "\r\n\r\n")
                 .starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
}

BOOST_AUTO_TEST_CASE(a_client_that_never_finishes_its_request_is_disconnected) {
  HttpLimits limits;
  limits.timeout_ms = 200;
  Fixture f(limits);
  std::string wire = f.raw("GET /healthz HTTP/1.1\r\n");  // no blank line: the server times out
  BOOST_TEST(wire.empty());
  BOOST_TEST(f.server->connection_count() == 0u);
}

// Slowloris: a byte every 50 ms keeps a connection busy, but the deadline runs from accept
// and no byte extends it.
BOOST_AUTO_TEST_CASE(a_request_trickled_a_byte_at_a_time_is_cut_off_at_the_deadline) {
  HttpLimits limits;
  limits.timeout_ms = 300;
  Fixture f(limits);
  std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n" + std::string(200, 'X') + ": y\r\n\r\n";
  struct Out {
    std::string got;
    size_t sent = 0;
  };
  Out out = with_loop<Out>(&f.loop, [&] {
    Out o;
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(f.port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return o;
    for (; o.sent < request.size(); ++o.sent) {
      if (::send(fd, &request[o.sent], 1, MSG_NOSIGNAL) != 1) break;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) break;  // closed (or answered)
    }
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) o.got.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return o;
  });
  BOOST_TEST(out.sent < request.size());  // cut off before the request was complete
  BOOST_TEST(out.got.empty());
  BOOST_TEST(f.server->stats().timeouts == 1u);
}

BOOST_AUTO_TEST_CASE(connections_from_one_address_past_max_connections_per_ip_are_refused) {
  HttpLimits limits;
  limits.max_connections_per_ip = 2;
  Fixture f(limits);
  struct Out {
    std::string third, other, after;
  };
  Out out = with_loop<Out>(&f.loop, [&] {
    Out o;
    auto open_from = [&](const char* ip) {
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in src{};
      src.sin_family = AF_INET;
      inet_pton(AF_INET, ip, &src.sin_addr);
      ::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(f.port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
      return fd;
    };
    auto exchange = [](int fd) {
      std::string req = "GET /healthz HTTP/1.1\r\n\r\n", got;
      ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
      char buf[4096];
      ssize_t n;
      while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) got.append(buf, static_cast<size_t>(n));
      ::close(fd);
      return got;
    };
    int a = open_from("127.0.0.1"), b = open_from("127.0.0.1");
    // Both are accepted before the third arrives: their requests are half sent.
    ::send(a, "GET", 3, MSG_NOSIGNAL);
    ::send(b, "GET", 3, MSG_NOSIGNAL);
    ::usleep(100000);
    o.third = exchange(open_from("127.0.0.1"));
    o.other = exchange(open_from("127.0.0.2"));
    ::close(a);
    ::close(b);
    ::usleep(100000);
    o.after = exchange(open_from("127.0.0.1"));
    return o;
  });
  BOOST_TEST(out.third.empty());
  BOOST_TEST(out.other.starts_with("HTTP/1.1 200 OK\r\n"));
  BOOST_TEST(out.after.starts_with("HTTP/1.1 200 OK\r\n"));
  BOOST_TEST(f.server->stats().refused_per_ip == 1u);
}

BOOST_AUTO_TEST_CASE(connections_above_the_limit_are_closed_at_once) {
  HttpLimits limits;
  limits.max_connections = 0;
  Fixture f(limits);
  BOOST_TEST(f.raw("GET /healthz HTTP/1.1\r\n\r\n").empty());
}

BOOST_AUTO_TEST_CASE(listen_reports_bad_addresses_naming_the_key) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  {
    HttpServer s(&loop, {});
    auto r = s.listen({"not-an-ip", 1});
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message.find("[http] listen") != std::string::npos);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  BOOST_TEST(uv_loop_close(&loop) == 0);
}

namespace {

std::string header(const Response& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "";
}

double refused_unauthorized() {
  return metrics::bridge_metrics().http_requests_refused.labels({"unauthorized"}).value();
}

}  // namespace

BOOST_AUTO_TEST_CASE(with_a_token_metrics_is_401_without_it_and_health_stays_open) {
  auto access = std::make_shared<MetricsAccess>();
  access->bearer_token = "s3cr3t";
  Fixture f({}, access);
  f.ready = true;
  const double refused_before = refused_unauthorized();
  for (const auto& headers : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {}, {{"Authorization", "Bearer wrong"}}, {{"Authorization", "Basic s3cr3t"}}, {{"Authorization", "s3cr3t"}}}) {
    auto r = f.get("/metrics", headers);
    BOOST_REQUIRE(r.ok());
    BOOST_TEST(r->status == 401);
    BOOST_TEST(header(*r, "www-authenticate").starts_with("Bearer realm=\"kafka-iggy-bridge\""));
    BOOST_TEST(r->body == "unauthorized\n");
  }
  BOOST_TEST(refused_unauthorized() - refused_before == 4);
  auto wrong = f.get("/metrics", {{"Authorization", "Bearer wrong"}});
  BOOST_REQUIRE(wrong.ok());
  BOOST_TEST(header(*wrong, "www-authenticate").find("error=\"invalid_token\"") != std::string::npos);
  std::string head = f.raw("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  BOOST_TEST(head.starts_with("HTTP/1.1 401 Unauthorized\r\n"));

  auto ok = f.get("/metrics", {{"Authorization", "Bearer s3cr3t"}});
  BOOST_REQUIRE(ok.ok());
  BOOST_TEST(ok->status == 200);
  BOOST_TEST(ok->body.find("# TYPE kib_ready gauge\nkib_ready 1\n") != std::string::npos);
  BOOST_TEST(f.get("/healthz")->status == 200);
  BOOST_TEST(f.get("/readyz")->status == 200);

  // The server reads the access on every request: SIGHUP's new token holds at once.
  access->bearer_token = "n3w";
  BOOST_TEST(f.get("/metrics", {{"Authorization", "Bearer s3cr3t"}})->status == 401);
  BOOST_TEST(f.get("/metrics", {{"Authorization", "Bearer n3w"}})->status == 200);
  access->bearer_token.clear();
  BOOST_TEST(f.get("/metrics")->status == 200);
}

BOOST_AUTO_TEST_CASE(metrics_leave_group_and_topic_labels_out_when_the_access_says_so) {
  auto access = std::make_shared<MetricsAccess>();
  access->names = metrics::ClientNames::kRedacted;
  Fixture f({}, access);
  metrics::bridge_metrics().group_lag.labels({"secret-group", "secret-topic", "3"}).set(9);
  auto redacted = f.get("/metrics");
  access->names = metrics::ClientNames::kShown;
  auto shown = f.get("/metrics");
  metrics::bridge_metrics().group_lag.clear();
  BOOST_REQUIRE(redacted.ok());
  BOOST_REQUIRE(shown.ok());
  BOOST_TEST(redacted->body.find("secret") == std::string::npos);
  BOOST_TEST(redacted->body.find("\nkib_group_lag 9\n") != std::string::npos);
  BOOST_TEST(shown->body.find("kib_group_lag{group=\"secret-group\",topic=\"secret-topic\",partition=\"3\"} 9\n") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(client_reports_a_closed_port_as_a_transport_error) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);  // the port is now (very likely) closed
  auto r = http::get({"127.0.0.1", ntohs(a.sin_port)}, "/healthz", std::chrono::milliseconds(500));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((r.error().domain == ErrorDomain::kTransport));
}

BOOST_AUTO_TEST_SUITE_END()
