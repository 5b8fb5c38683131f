// net::Listener, the accept path the Kafka and HTTP servers share: connection limits in all
// and per client address with their counters, release, listen errors, close.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <memory>
#include <vector>

#include "net/listener.h"

using namespace kib;
using namespace kib::net;

namespace {

struct Fixture {
  uv_loop_t loop{};
  std::unique_ptr<Listener> listener;
  std::vector<uv_tcp_t*> handles;
  std::vector<Accepted> accepted;
  std::vector<int> fds;
  uint16_t port = 0;

  explicit Fixture(AcceptLimits limits) {
    uv_loop_init(&loop);
    listener = std::make_unique<Listener>(&loop, guard::Boundary::kKafkaConnection,
                                          ListenerNames{"test: ", "listening on", "[test] listen "}, limits,
                                          [this](uv_stream_t* l) {
                                            auto* h = new uv_tcp_t;
                                            uv_tcp_init(&loop, h);
                                            handles.push_back(h);
                                            accepted.push_back(listener->accept(l, h));
                                          });
    auto p = listener->listen({"127.0.0.1", 0}, 16);
    BOOST_REQUIRE(p.ok());
    port = *p;
  }
  ~Fixture() {
    for (int fd : fds) ::close(fd);
    for (auto* h : handles)
      uv_close(reinterpret_cast<uv_handle_t*>(h), [](uv_handle_t* x) { delete reinterpret_cast<uv_tcp_t*>(x); });
    bool closed = false;
    listener->close([&] { closed = true; });
    while (!closed) uv_run(&loop, UV_RUN_ONCE);
    listener.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    BOOST_CHECK(uv_loop_close(&loop) == 0);
  }
  // Connects from `ip` and runs the loop until the listener has accepted it.
  const Accepted& connect_from(const char* ip) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in src{};
    src.sin_family = AF_INET;
    inet_pton(AF_INET, ip, &src.sin_addr);
    BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) == 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    fds.push_back(fd);
    size_t before = accepted.size();
    for (int i = 0; i < 1000 && accepted.size() == before; ++i) {
      uv_run(&loop, UV_RUN_NOWAIT);
      if (accepted.size() == before) ::usleep(1000);
    }
    BOOST_REQUIRE(accepted.size() == before + 1);
    return accepted.back();
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(net_listener)

BOOST_AUTO_TEST_CASE(limits_refuse_past_max_connections_and_per_address_and_count_each) {
  Fixture f({2, 1});
  const Accepted& first = f.connect_from("127.0.0.1");
  BOOST_TEST(first.ok);
  BOOST_TEST(first.refused.empty());
  BOOST_TEST(first.name.ip == "127.0.0.1");
  BOOST_TEST(first.name.peer.starts_with("127.0.0.1:"));
  const Accepted& same_ip = f.connect_from("127.0.0.1");
  BOOST_TEST(same_ip.ok);
  BOOST_TEST(same_ip.refused == "refused: max_connections_per_ip 1 reached for 127.0.0.1");
  BOOST_TEST(f.connect_from("127.0.0.2").refused.empty());
  BOOST_TEST(f.connect_from("127.0.0.3").refused == "refused: max_connections 2 reached");
  BOOST_TEST(f.listener->stats().refused_per_ip == 1u);
  BOOST_TEST(f.listener->stats().refused_max_connections == 1u);
  BOOST_TEST(f.listener->open() == 2u);
  BOOST_TEST(f.listener->connections_from("127.0.0.1") == 1u);
  // A released connection no longer counts: its address and the total have room again.
  f.listener->release("127.0.0.1");
  BOOST_TEST(f.listener->open() == 1u);
  BOOST_TEST(f.listener->connections_from("127.0.0.1") == 0u);
  BOOST_TEST(f.connect_from("127.0.0.1").refused.empty());
}

BOOST_AUTO_TEST_CASE(raised_limits_apply_to_the_next_connection) {
  Fixture f({0, 0});
  BOOST_TEST(f.connect_from("127.0.0.1").refused == "refused: max_connections 0 reached");
  f.listener->set_limits({1, 1});
  BOOST_TEST(f.connect_from("127.0.0.1").refused.empty());
}

BOOST_AUTO_TEST_CASE(listen_errors_carry_the_servers_prefix_and_close_runs_done_once_freed) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  bool done = false;
  {
    Listener l(&loop, guard::Boundary::kHttp, {"http: ", "listening on", "[http] listen "}, {1, 1}, [](uv_stream_t*) {});
    auto r = l.listen({"not-an-ip", 1}, 16);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().message == "[http] listen not-an-ip:1: not an IP address");
    BOOST_REQUIRE(l.listen({"127.0.0.1", 0}, 16).ok());
    l.close([&] { done = true; });
    BOOST_TEST(l.closed());
    while (!done) uv_run(&loop, UV_RUN_ONCE);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  BOOST_TEST(uv_loop_close(&loop) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
