// IggyConnection / IggyPool behaviour against a scripted in-process fake server on loopback
// (no iggy-server needed): lockstep, request numbering, timeouts, evictions, transient retries,
// reconnect and re-login, queue timeouts, close.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <uv.h>

#include "iggy/client.h"
#include "iggy/errors.h"
#include "iggy/pool.h"
#include "iggy/protocol.h"
#include "uvx/work_owner.h"

using namespace kib;
using namespace kib::iggy;
using namespace std::chrono_literals;

namespace {

uint32_t rd32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t rd64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// One request as the fake server saw it.
struct SeenRequest {
  uint8_t operation = 0;
  uint32_t code = 0;  // NonReplicated only
  uint64_t request = 0;
  uint64_t session = 0;
  U128 client;
  int connection = 0;  // accept order
  Bytes body;
};

class FakeIggy;

struct FakeClient {
  uv_tcp_t tcp;
  FakeIggy* server = nullptr;
  int index = 0;
  Bytes in;
  bool awaiting_reply = false;
  bool closed = false;
};

// What to do with a request: reply, stay silent, evict, drop the connection.
enum class Action { kReply, kSilent, kEvict, kDrop, kStatus };

class FakeIggy {
 public:
  struct Decision {
    Action action = Action::kReply;
    uint32_t status = 0;            // kStatus
    Bytes payload;                  // kReply
    uint8_t eviction_reason = 0;    // kEvict
  };
  using Script = std::function<Decision(const SeenRequest&)>;

  FakeIggy(uv_loop_t* loop, Script script) : loop_(loop), script_(std::move(script)) {
    uv_tcp_init(loop_, &listener_);
    listener_.data = this;
    sockaddr_in addr;
    uv_ip4_addr("127.0.0.1", 0, &addr);
    uv_tcp_bind(&listener_, reinterpret_cast<const sockaddr*>(&addr), 0);
    uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), 16, [](uv_stream_t* s, int status) {
      if (status == 0) static_cast<FakeIggy*>(s->data)->accept();
    });
    sockaddr_storage bound;
    int len = sizeof bound;
    uv_tcp_getsockname(&listener_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }

  ~FakeIggy() {
    for (auto& c : clients_) drop(*c);
    uv_close(reinterpret_cast<uv_handle_t*>(&listener_), nullptr);
    uv_run(loop_, UV_RUN_NOWAIT);
  }

  uint16_t port() const { return port_; }
  // What the Register reply says about the server (server_profile.h).
  std::string server_version = "0.9.0-edge.5";
  uint32_t server_protocol = wire::kProtocolVersion;
  // Answer everything as an Iggy <= 0.8 server does: 8-byte [status][length 0] per 8 bytes read.
  bool legacy_framing = false;
  std::vector<SeenRequest> seen;
  int registers = 0;
  int lockstep_violations = 0;
  int accepted = 0;

  void drop_all() {
    for (auto& c : clients_) drop(*c);
  }

 private:
  void accept() {
    auto c = std::make_unique<FakeClient>();
    c->server = this;
    c->index = accepted++;
    uv_tcp_init(loop_, &c->tcp);
    c->tcp.data = c.get();
    if (uv_accept(reinterpret_cast<uv_stream_t*>(&listener_), reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0) return;
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&c->tcp),
        [](uv_handle_t*, size_t suggested, uv_buf_t* buf) { *buf = uv_buf_init(new char[suggested], static_cast<unsigned>(suggested)); },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
          auto* c = static_cast<FakeClient*>(s->data);
          if (n > 0) c->in.insert(c->in.end(), buf->base, buf->base + n);
          delete[] buf->base;
          if (n < 0) {
            c->server->drop(*c);
            return;
          }
          c->server->process(*c);
        });
    clients_.push_back(std::move(c));
  }

  void process(FakeClient& c) {
    if (legacy_framing) {
      // [u32 length][u32 code] read from the VSR header: length 0, code 0 -> InvalidCommand (3)
      while (c.in.size() >= 8) {
        c.in.erase(c.in.begin(), c.in.begin() + 8);
        write(c, Bytes{3, 0, 0, 0, 0, 0, 0, 0});
      }
      return;
    }
    while (!c.closed && c.in.size() >= wire::kHeaderSize) {
      uint32_t size = rd32(c.in.data() + 48);
      if (c.in.size() < size) return;
      SeenRequest r;
      const uint8_t* h = c.in.data();
      r.operation = h[176];
      r.code = rd32(h + 196);
      r.request = rd64(h + 168);
      r.session = rd64(h + 184);
      r.client = U128{rd64(h + 128), rd64(h + 136)};
      r.connection = c.index;
      r.body.assign(c.in.begin() + wire::kHeaderSize, c.in.begin() + size);
      c.in.erase(c.in.begin(), c.in.begin() + size);
      if (c.awaiting_reply) ++lockstep_violations;
      seen.push_back(r);
      handle(c, r);
    }
  }

  void handle(FakeClient& c, const SeenRequest& r) {
    if (r.operation == 1) {
      ++registers;
      Decision d = script_(r);
      if (d.action == Action::kEvict) return send_eviction(c, d.eviction_reason);
      if (d.action == Action::kDrop) return drop(c);
      ByteWriter w;
      w.le<uint32_t>(0);  // result section: success
      w.le<uint32_t>(0);  // user id
      w.le<uint64_t>(1000 + static_cast<uint64_t>(registers));
      w.le<uint32_t>(server_protocol);
      w.le<uint8_t>(static_cast<uint8_t>(server_version.size()));
      w.string(server_version);
      return send_reply(c, r, 0, w.take());
    }
    Decision d = script_(r);
    switch (d.action) {
      case Action::kSilent: c.awaiting_reply = true; return;
      case Action::kEvict: return send_eviction(c, d.eviction_reason);
      case Action::kDrop: return drop(c);
      case Action::kStatus: return send_reply(c, r, d.status, {});
      case Action::kReply: {
        Bytes body;
        if (wire::reply_is_result_framed(r.operation, 1)) body = {0, 0, 0, 0};
        body.insert(body.end(), d.payload.begin(), d.payload.end());
        return send_reply(c, r, 0, std::move(body));
      }
    }
  }

  void write(FakeClient& c, Bytes frame) {
    struct Op {
      uv_write_t req;
      Bytes data;
    };
    auto* op = new Op;
    op->data = std::move(frame);
    uv_buf_t buf = uv_buf_init(reinterpret_cast<char*>(op->data.data()), static_cast<unsigned>(op->data.size()));
    op->req.data = op;
    uv_write(&op->req, reinterpret_cast<uv_stream_t*>(&c.tcp), &buf, 1,
             [](uv_write_t* req, int) { delete static_cast<Op*>(req->data); });
  }

  void send_reply(FakeClient& c, const SeenRequest& r, uint32_t status, Bytes body) {
    Bytes f(wire::kHeaderSize, 0);
    uint32_t size = static_cast<uint32_t>(wire::kHeaderSize + body.size());
    std::memcpy(f.data() + 48, &size, 4);
    f[60] = 8;
    std::memcpy(f.data() + 200, &r.request, 8);
    f[208] = r.operation;
    std::memcpy(f.data() + 216, &status, 4);
    f.insert(f.end(), body.begin(), body.end());
    c.awaiting_reply = false;
    write(c, std::move(f));
  }

  void send_eviction(FakeClient& c, uint8_t reason) {
    Bytes f(wire::kHeaderSize, 0);
    uint32_t size = wire::kHeaderSize;
    std::memcpy(f.data() + 48, &size, 4);
    f[60] = 13;
    f[255] = reason;
    if (reason == 14) {  // IncompatibleProtocol carries the accepted window [min, max]
      const uint32_t max = wire::kProtocolVersion + (1u << 10), min = max & ~1023u;
      std::memcpy(f.data() + 144, &max, 4);
      std::memcpy(f.data() + 148, &min, 4);
    }
    c.awaiting_reply = false;
    write(c, std::move(f));
  }

  void drop(FakeClient& c) {
    if (c.closed) return;
    c.closed = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&c.tcp), nullptr);
  }

  uv_loop_t* loop_;
  Script script_;
  uv_tcp_t listener_;
  uint16_t port_ = 0;
  std::vector<std::unique_ptr<FakeClient>> clients_;
};

struct Loop {
  uv_loop_t loop;
  Loop() { uv_loop_init(&loop); }
  ~Loop() {
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s) {
    uint64_t deadline = uv_now(&loop) + static_cast<uint64_t>(limit.count());
    uv_timer_t tick;
    uv_timer_init(&loop, &tick);
    uv_timer_start(&tick, [](uv_timer_t*) {}, 10, 10);
    while (!done() && uv_now(&loop) < deadline) uv_run(&loop, UV_RUN_ONCE);
    uv_close(reinterpret_cast<uv_handle_t*>(&tick), nullptr);
    uv_run(&loop, UV_RUN_NOWAIT);
    return done();
  }
};

PoolConfig fake_config(uint16_t port, size_t connections = 1) {
  PoolConfig c;
  c.connections = connections;
  c.connection.host = "127.0.0.1";
  c.connection.port = port;
  c.connection.request_timeout = 2s;
  c.connection.connect_timeout = 2s;
  c.connection.reconnect_backoff_initial = 10ms;
  c.connection.reconnect_backoff_max = 50ms;
  c.connection.transient_retry_delay = 5ms;
  c.queue_timeout = 5s;
  return c;
}

void close_pool(Loop& l, IggyPool& pool) {
  bool closed = false;
  pool.close([&] { closed = true; });
  l.run_until([&] { return closed; });
}

FakeIggy::Decision reply() { return {}; }

}  // namespace

BOOST_AUTO_TEST_SUITE(iggy_connection)

BOOST_AUTO_TEST_CASE(one_request_in_flight_per_connection_in_fifo_order_with_vsr_numbering) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  {
    IggyPool pool(&l.loop, fake_config(server.port()));
    IggyClient client(pool);
    std::vector<int> order;
    client.ping([&](Result<Unit> r) { BOOST_TEST(r.ok()); order.push_back(1); });
    client.create_stream("a", [&](Result<StreamInfo> r) { BOOST_TEST(!r.ok()); order.push_back(2); });  // empty payload
    client.delete_stream(Identifier::named("a"), [&](Result<Unit> r) { BOOST_TEST(r.ok()); order.push_back(3); });
    client.store_consumer_offset(Consumer::consumer(Identifier::numeric(1)), Identifier::numeric(0),
                                 Identifier::numeric(0), 0u, 0, [&](Result<Unit> r) { BOOST_TEST(r.ok()); order.push_back(4); });
    client.purge_stream(Identifier::named("a"), [&](Result<Unit> r) { BOOST_TEST(r.ok()); order.push_back(5); });
    BOOST_TEST(order.empty());  // never synchronous
    BOOST_REQUIRE(l.run_until([&] { return order.size() == 5; }));
    BOOST_TEST(order == (std::vector<int>{1, 2, 3, 4, 5}), boost::test_tools::per_element());
    BOOST_TEST(server.lockstep_violations == 0);
    BOOST_REQUIRE(server.seen.size() == 6u);
    const auto& reg = server.seen[0];
    BOOST_TEST(reg.operation == 1);
    BOOST_TEST(reg.request == 0u);
    BOOST_TEST(reg.session == 0u);
    BOOST_TEST(!reg.client.is_zero());
    // ping (NR) carries the next number without consuming it; metadata ops and partition ops
    // consume 1, 2, ... (the release server deduplicates partition writes on the number too).
    BOOST_TEST(server.seen[1].operation == 2);
    BOOST_TEST(server.seen[1].code == wire::cmd::kPing);
    BOOST_TEST(server.seen[1].request == 1u);
    BOOST_TEST(server.seen[2].request == 1u);  // create stream
    BOOST_TEST(server.seen[3].request == 2u);  // delete stream
    BOOST_TEST(server.seen[4].operation == 161);
    BOOST_TEST(server.seen[4].request == 3u);
    BOOST_TEST(server.seen[5].request == 4u);  // purge stream
    for (size_t i = 1; i < server.seen.size(); ++i) {
      BOOST_TEST(server.seen[i].session == 1001u);
      BOOST_TEST((server.seen[i].client == reg.client));
    }
    close_pool(l, pool);
  }
}

BOOST_AUTO_TEST_CASE(timeout_fails_the_request_with_a_transport_error_and_the_connection_recovers) {
  Loop l;
  int pings = 0;
  FakeIggy server(&l.loop, [&](const SeenRequest& r) {
    FakeIggy::Decision d;
    if (r.code == wire::cmd::kPing && ++pings == 1) d.action = Action::kSilent;
    return d;
  });
  PoolConfig cfg = fake_config(server.port());
  cfg.connection.request_timeout = 300ms;
  IggyPool pool(&l.loop, cfg);
  IggyClient client(pool);
  std::optional<Result<Unit>> first, second;
  client.ping([&](Result<Unit> r) { first = std::move(r); });
  client.ping([&](Result<Unit> r) { second = std::move(r); });
  BOOST_REQUIRE(l.run_until([&] { return first && second; }));
  BOOST_REQUIRE(!first->ok());
  BOOST_TEST((first->error().domain == ErrorDomain::kTransport));
  BOOST_TEST(first->error().code == static_cast<uint32_t>(TransportCode::kTimeout));
  BOOST_TEST(is_retriable(first->error()));
  BOOST_TEST(second->ok());
  BOOST_TEST(server.registers == 2);  // re-login on a new socket with a new client id
  BOOST_TEST(server.accepted == 2);
  BOOST_TEST(pool.stats().reconnects == 1u);
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(eviction_fails_the_in_flight_request_and_the_next_one_succeeds_after_relogin) {
  Loop l;
  int calls = 0;
  FakeIggy server(&l.loop, [&](const SeenRequest&) {
    FakeIggy::Decision d;
    if (++calls == 2) {
      d.action = Action::kEvict;
      d.eviction_reason = 13;  // StaleClient
    }
    return d;
  });
  IggyPool pool(&l.loop, fake_config(server.port()));
  IggyClient client(pool);
  std::optional<Result<Unit>> r1, r2;
  client.ping([&](Result<Unit> r) { r1 = std::move(r); });
  client.ping([&](Result<Unit> r) { r2 = std::move(r); });
  BOOST_REQUIRE(l.run_until([&] { return r1 && r2; }));
  BOOST_REQUIRE(!r1->ok());  // Register was call 1, this ping is call 2
  BOOST_TEST((r1->error().domain == ErrorDomain::kIggy));
  BOOST_TEST(r1->error().code == code::kStaleClient);
  BOOST_TEST(is_retriable(r1->error()));
  BOOST_TEST(r2->ok());
  BOOST_TEST(server.registers == 2);
  BOOST_TEST((server.seen.back().client != server.seen.front().client));
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(dropped_socket_fails_in_flight_with_transport_error_and_queued_requests_wait) {
  Loop l;
  int pings = 0;
  FakeIggy server(&l.loop, [&](const SeenRequest& r) {
    FakeIggy::Decision d;
    if (r.code == wire::cmd::kPing && ++pings == 1) d.action = Action::kDrop;
    return d;
  });
  IggyPool pool(&l.loop, fake_config(server.port()));
  IggyClient client(pool);
  std::vector<Result<Unit>> results;
  for (int i = 0; i < 4; ++i) client.ping([&](Result<Unit> r) { results.push_back(std::move(r)); });
  BOOST_REQUIRE(l.run_until([&] { return results.size() == 4; }));
  BOOST_REQUIRE(!results[0].ok());
  BOOST_TEST((results[0].error().domain == ErrorDomain::kTransport));
  BOOST_TEST(results[0].error().code == static_cast<uint32_t>(TransportCode::kDisconnected));
  for (int i = 1; i < 4; ++i) BOOST_TEST(results[static_cast<size_t>(i)].ok());
  auto st = pool.stats();
  BOOST_TEST(st.transport_failures == 1u);
  BOOST_TEST(st.completed_ok == 3u);
  BOOST_TEST(st.connected == 1u);
  BOOST_TEST(st.queued == 0u);
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(transient_not_accepted_is_retried_with_the_same_request_number) {
  Loop l;
  int deletes = 0;
  FakeIggy server(&l.loop, [&](const SeenRequest& r) {
    FakeIggy::Decision d;
    if (r.operation == 130 && ++deletes <= 2) {
      d.action = Action::kStatus;
      d.status = code::kTransientNotAccepted;
    }
    return d;
  });
  IggyPool pool(&l.loop, fake_config(server.port()));
  IggyClient client(pool);
  std::optional<Result<Unit>> r;
  client.delete_stream(Identifier::named("x"), [&](Result<Unit> res) { r = std::move(res); });
  BOOST_REQUIRE(l.run_until([&] { return r.has_value(); }));
  BOOST_TEST(r->ok());
  BOOST_REQUIRE(server.seen.size() == 4u);
  BOOST_TEST(server.seen[1].request == 1u);
  BOOST_TEST(server.seen[2].request == 1u);
  BOOST_TEST(server.seen[3].request == 1u);
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(status_errors_are_iggy_errors_with_names) {
  Loop l;
  FakeIggy server(&l.loop, [&](const SeenRequest& r) {
    FakeIggy::Decision d;
    if (r.code == wire::cmd::kGetStats) {
      d.action = Action::kStatus;
      d.status = code::kUnauthorized;
    }
    return d;
  });
  IggyPool pool(&l.loop, fake_config(server.port()));
  IggyClient client(pool);
  std::optional<Result<Stats>> r;
  client.get_stats([&](Result<Stats> res) { r = std::move(res); });
  BOOST_REQUIRE(l.run_until([&] { return r.has_value(); }));
  BOOST_REQUIRE(!r->ok());
  BOOST_TEST((r->error().domain == ErrorDomain::kIggy));
  BOOST_TEST(r->error().code == code::kUnauthorized);
  BOOST_TEST(r->error().message.find("Unauthorized") != std::string::npos);
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(malformed_reply_is_a_protocol_error_for_the_caller) {
  Loop l;
  FakeIggy server(&l.loop, [&](const SeenRequest& r) {
    FakeIggy::Decision d;
    if (r.code == wire::cmd::kGetMe) d.payload = {1, 2, 3};  // too short for ClientDetails
    return d;
  });
  IggyPool pool(&l.loop, fake_config(server.port()));
  IggyClient client(pool);
  std::optional<Result<ClientInfo>> r;
  client.get_me([&](Result<ClientInfo> res) { r = std::move(res); });
  BOOST_REQUIRE(l.run_until([&] { return r.has_value(); }));
  BOOST_REQUIRE(!r->ok());
  BOOST_TEST((r->error().domain == ErrorDomain::kProtocol));
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(login_refused_with_incompatible_protocol_fails_queued_requests) {
  Loop l;
  FakeIggy server(&l.loop, [&](const SeenRequest& r) {
    FakeIggy::Decision d;
    if (r.operation == 1) {
      d.action = Action::kEvict;
      d.eviction_reason = 14;
    }
    return d;
  });
  IggyPool pool(&l.loop, fake_config(server.port(), 2));
  IggyClient client(pool);
  std::optional<Result<Unit>> r;
  client.ping([&](Result<Unit> res) { r = std::move(res); });
  BOOST_REQUIRE(l.run_until([&] { return r.has_value(); }));
  BOOST_REQUIRE(!r->ok());
  BOOST_TEST(r->error().code == code::kIncompatibleProtocolVersion);
  // names both versions, and the connections stop instead of logging in again and again
  BOOST_TEST(r->error().message.find("0.11.0") != std::string::npos);
  BOOST_TEST(r->error().message.find("0.12") != std::string::npos);
  BOOST_TEST(pool.stats().login_refused);
  BOOST_REQUIRE(l.run_until([&] { return pool.stats().unsupported_server; }));
  const int registers = server.registers;
  BOOST_TEST(registers == 2);  // one per connection
  l.run_until([] { return false; }, 300ms);  // several reconnect backoffs (10-50 ms)
  BOOST_TEST(server.registers == registers);
  BOOST_TEST((pool.connection(0).state() == ConnectionState::kUnsupported));
  // later requests fail at once with the same error
  std::optional<Result<Unit>> later;
  client.ping([&](Result<Unit> res) { later = std::move(res); });
  BOOST_REQUIRE(l.run_until([&] { return later.has_value(); }, 1s));
  BOOST_REQUIRE(!later->ok());
  BOOST_TEST(later->error().code == code::kIncompatibleProtocolVersion);
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(a_server_that_accepts_the_login_but_speaks_another_protocol_minor_is_refused) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  server.server_protocol = wire::kProtocolVersion + (1u << 10);  // 0.12.0
  server.server_version = "0.10.0-edge.1";
  IggyPool pool(&l.loop, fake_config(server.port()));
  IggyClient client(pool);
  std::optional<Result<Unit>> r;
  client.ping([&](Result<Unit> res) { r = std::move(res); });
  BOOST_REQUIRE(l.run_until([&] { return r.has_value(); }));
  BOOST_REQUIRE(!r->ok());
  BOOST_TEST(r->error().code == code::kIncompatibleProtocolVersion);
  BOOST_TEST(r->error().message.find("0.12.0") != std::string::npos);
  BOOST_TEST(r->error().message.find("0.10.0-edge.1") != std::string::npos);
  BOOST_TEST(pool.stats().unsupported_server);
  l.run_until([] { return false; }, 200ms);
  BOOST_TEST(server.registers == 1);
  BOOST_TEST(server.seen.size() == 1u);  // the Register only: the ping was never sent
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(a_legacy_framing_server_is_detected_at_login_instead_of_waiting_for_ever) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  server.legacy_framing = true;
  PoolConfig cfg = fake_config(server.port());
  cfg.connection.request_timeout = 30s;  // detection must not wait for the login timeout
  IggyPool pool(&l.loop, cfg);
  IggyClient client(pool);
  std::optional<Result<Unit>> r;
  client.ping([&](Result<Unit> res) { r = std::move(res); });
  BOOST_REQUIRE(l.run_until([&] { return r.has_value(); }, 3s));
  BOOST_REQUIRE(!r->ok());
  BOOST_TEST(r->error().code == code::kIncompatibleProtocolVersion);
  BOOST_TEST(r->error().message.find("legacy") != std::string::npos);
  BOOST_TEST(r->error().message.find("0.11.0") != std::string::npos);
  BOOST_TEST(pool.stats().unsupported_server);
  BOOST_TEST(pool.stats().unsupported_reason.find("legacy") != std::string::npos);
  const int accepted = server.accepted;
  l.run_until([] { return false; }, 200ms);
  BOOST_TEST(server.accepted == accepted);  // no reconnect
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(an_empty_send_reply_is_a_success_only_from_an_edge_server) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });  // empty bodies
  std::vector<OutgoingMessage> msgs(1);
  msgs[0].payload = ByteSpan(reinterpret_cast<const uint8_t*>("v"), 1);
  for (const char* version : {"0.9.0-edge.5", "0.9.0"}) {
    server.server_version = version;
    IggyPool pool(&l.loop, fake_config(server.port()));
    IggyClient client(pool);
    std::optional<Result<SendConfirmation>> r;
    client.send_messages(Identifier::named("s"), Identifier::named("t"), Partitioning::partition(0), msgs,
                         [&](Result<SendConfirmation> res) { r = std::move(res); });
    BOOST_REQUIRE(l.run_until([&] { return r.has_value(); }));
    BOOST_TEST_CONTEXT(version) {
      if (std::string(version) == "0.9.0") {
        // the release's answer to a request it classified as a duplicate: never a stored batch
        BOOST_REQUIRE(!r->ok());
        BOOST_TEST((r->error().domain == ErrorDomain::kTransport));
        BOOST_TEST(r->error().code == static_cast<uint32_t>(TransportCode::kUnconfirmed));
        BOOST_TEST(pool.stats().unconfirmed_sends == 1u);
        BOOST_TEST((pool.server_profile().generation == ServerGeneration::kRelease));
      } else {
        BOOST_TEST(r->ok());
        BOOST_TEST(pool.stats().unconfirmed_sends == 0u);
        BOOST_TEST((pool.server_profile().generation == ServerGeneration::kEdge));
      }
    }
    close_pool(l, pool);
  }
}

BOOST_AUTO_TEST_CASE(create_topic_options_follow_the_server_it_is_sent_to) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  TopicConfig c;
  c.name = "t";
  c.enforce_fsync = true;
  for (const char* version : {"0.9.0-edge.5", "0.9.0"}) {
    server.server_version = version;
    server.seen.clear();
    IggyPool pool(&l.loop, fake_config(server.port()));
    IggyClient client(pool);
    bool done = false;
    // queued before any login: encoded only once the connection knows its server
    client.create_topic(Identifier::named("s"), c, [&](Result<TopicInfo>) { done = true; });
    BOOST_REQUIRE(l.run_until([&] { return done; }));
    BOOST_REQUIRE(server.seen.size() == 2u);
    const Bytes& body = server.seen[1].body;
    const std::string text(body.begin(), body.end());
    BOOST_TEST_CONTEXT(version) {
      if (std::string(version) == "0.9.0") {
        BOOST_TEST(text.find("durability") != std::string::npos);
        BOOST_TEST(text.find("persisted") != std::string::npos);
        BOOST_TEST(text.find("enforce_fsync") == std::string::npos);
      } else {
        BOOST_TEST(text.find("enforce_fsync") != std::string::npos);
        BOOST_TEST(text.find("durability") == std::string::npos);
      }
    }
    close_pool(l, pool);
  }
}

BOOST_AUTO_TEST_CASE(requests_queued_without_any_server_fail_after_the_queue_timeout) {
  Loop l;
  uint16_t dead_port;
  {
    FakeIggy probe(&l.loop, [](const SeenRequest&) { return reply(); });
    dead_port = probe.port();
  }
  PoolConfig cfg = fake_config(dead_port);
  cfg.queue_timeout = 200ms;
  IggyPool pool(&l.loop, cfg);
  IggyClient client(pool);
  std::optional<Result<Unit>> r;
  client.ping([&](Result<Unit> res) { r = std::move(res); });
  BOOST_REQUIRE(l.run_until([&] { return r.has_value(); }));
  BOOST_REQUIRE(!r->ok());
  BOOST_TEST((r->error().domain == ErrorDomain::kTransport));
  BOOST_TEST(r->error().code == static_cast<uint32_t>(TransportCode::kQueueTimeout));
  BOOST_TEST(pool.stats().connected == 0u);
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(close_fails_queued_and_in_flight_requests_and_later_submits) {
  Loop l;
  FakeIggy server(&l.loop, [&](const SeenRequest&) {
    FakeIggy::Decision d;
    d.action = Action::kSilent;
    return d;
  });
  PoolConfig cfg = fake_config(server.port());
  cfg.connection.request_timeout = 10s;
  IggyPool pool(&l.loop, cfg);
  IggyClient client(pool);
  std::vector<Result<Unit>> results;
  for (int i = 0; i < 3; ++i) client.ping([&](Result<Unit> r) { results.push_back(std::move(r)); });
  BOOST_REQUIRE(l.run_until([&] { return pool.stats().busy == 1; }));
  bool closed = false;
  pool.close([&] { closed = true; });
  BOOST_TEST(results.empty());
  client.ping([&](Result<Unit> r) { results.push_back(std::move(r)); });
  BOOST_REQUIRE(l.run_until([&] { return closed && results.size() == 4; }));
  for (const auto& r : results) {
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.error().code == static_cast<uint32_t>(TransportCode::kClosed));
    BOOST_TEST(!is_retriable(r.error()));
  }
}

BOOST_AUTO_TEST_CASE(pinned_requests_only_run_on_their_connection) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  IggyPool pool(&l.loop, fake_config(server.port(), 3));
  IggyClient client(pool);
  int done = 0;
  for (int i = 0; i < 6; ++i) client.pinned(2).ping([&](Result<Unit> r) { BOOST_TEST(r.ok()); ++done; });
  BOOST_REQUIRE(l.run_until([&] { return done == 6; }));
  std::optional<U128> pinned_client;
  int pings = 0;
  for (const auto& s : server.seen) {
    if (s.code != wire::cmd::kPing) continue;
    ++pings;
    if (!pinned_client) pinned_client = s.client;
    BOOST_TEST((s.client == *pinned_client));
  }
  BOOST_TEST(pings == 6);
  std::optional<Result<Unit>> bad;
  client.pinned(7).ping([&](Result<Unit> r) { bad = std::move(r); });
  BOOST_REQUIRE(l.run_until([&] { return bad.has_value(); }));
  BOOST_TEST((bad->error().domain == ErrorDomain::kInvalid));
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(owners_are_served_round_robin_so_a_late_small_owner_is_not_queued_behind_a_big_one) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  IggyPool pool(&l.loop, fake_config(server.port(), 1));
  IggyClient client(pool);
  BOOST_REQUIRE(l.run_until([&] {
    pool.start();
    return pool.stats().connected == 1;
  }));
  std::vector<uint64_t> order;  // owner of each completed ping
  {
    uv::OwnerScope big(1);
    for (int i = 0; i < 50; ++i) client.ping([&](Result<Unit>) { order.push_back(1); });
  }
  {
    uv::OwnerScope small(2);
    client.ping([&](Result<Unit> r) {
      BOOST_TEST(r.ok());
      order.push_back(2);
    });
  }
  BOOST_REQUIRE(l.run_until([&] { return order.size() == 51; }));
  const auto pos = std::find(order.begin(), order.end(), 2u) - order.begin();
  BOOST_TEST(pos <= 2);  // after at most the big owner's request in flight and one more
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(one_owner_may_queue_at_most_its_share_and_others_still_queue) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  PoolConfig cfg = fake_config(server.port(), 1);
  cfg.max_queue_per_owner = 5;
  IggyPool pool(&l.loop, cfg);
  IggyClient client(pool);
  int ok = 0, refused = 0;
  auto count = [&](Result<Unit> r) {
    if (r.ok()) {
      ++ok;
    } else {
      BOOST_TEST(r.error().code == static_cast<uint32_t>(TransportCode::kQueueTimeout));
      BOOST_TEST(is_retriable(r.error()));
      ++refused;
    }
  };
  {
    uv::OwnerScope owner(7);
    for (int i = 0; i < 12; ++i) client.ping(count);
  }
  for (int i = 0; i < 8; ++i) client.ping(count);  // the bridge's own work: no share bound
  BOOST_REQUIRE(l.run_until([&] { return ok + refused == 20; }));
  BOOST_TEST(ok == 13);
  BOOST_TEST(refused == 7);
  BOOST_TEST(pool.stats().owner_queue_full == 7u);
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(cancel_owner_drops_its_queued_cancellable_requests_unsent) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  IggyPool pool(&l.loop, fake_config(server.port(), 1));
  IggyClient client(pool);
  BOOST_REQUIRE(l.run_until([&] {
    pool.start();
    return pool.stats().connected == 1;
  }));
  int cancelled = 0, ok = 0, others = 0;
  {
    uv::OwnerScope reads(uv::WorkOwner{3, true});
    for (int i = 0; i < 5; ++i)
      client.ping([&](Result<Unit> r) {
        if (r.ok()) return void(++ok);
        BOOST_TEST(r.error().code == static_cast<uint32_t>(TransportCode::kClosed));
        ++cancelled;
      });
  }
  {
    uv::OwnerScope write(3);  // not cancellable: still sent
    client.ping([&](Result<Unit> r) { ok += r.ok(); });
  }
  {
    uv::OwnerScope other(uv::WorkOwner{4, true});
    client.ping([&](Result<Unit> r) { others += r.ok(); });
  }
  const size_t pings_before = server.seen.size();
  pool.cancel_owner(3);
  BOOST_TEST(cancelled == 0);  // callbacks never run inside the call
  BOOST_REQUIRE(l.run_until([&] { return cancelled + ok + others == 7; }));
  BOOST_TEST(cancelled == 5);
  BOOST_TEST(ok == 1);
  BOOST_TEST(others == 1);
  BOOST_TEST(pool.stats().cancelled == 5u);
  BOOST_TEST(server.seen.size() - pings_before == 2u);
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(a_reply_callback_runs_as_its_request_owner_and_loop_tasks_keep_the_owner) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  IggyPool pool(&l.loop, fake_config(server.port(), 1));
  IggyClient client(pool);
  uv::Tasks tasks(&l.loop);
  uint64_t in_callback = 99, in_task = 99;
  bool done = false;
  {
    uv::OwnerScope owner(uv::WorkOwner{11, true});
    client.ping([&](Result<Unit>) {
      in_callback = uv::current_owner().id;
      BOOST_TEST(!uv::current_owner().cancellable);  // what it starts is not cancellable by default
      tasks.post([&] {
        in_task = uv::current_owner().id;
        done = true;
      });
    });
  }
  BOOST_TEST(uv::current_owner().id == 0u);
  BOOST_REQUIRE(l.run_until([&] { return done; }));
  BOOST_TEST(in_callback == 11u);
  BOOST_TEST(in_task == 11u);
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(requests_spread_over_all_connections) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  IggyPool pool(&l.loop, fake_config(server.port(), 3));
  IggyClient client(pool);
  int done = 0;
  BOOST_REQUIRE(l.run_until([&] {
    pool.start();
    return pool.stats().connected == 3;
  }));
  for (int i = 0; i < 30; ++i) client.ping([&](Result<Unit>) { ++done; });
  BOOST_REQUIRE(l.run_until([&] { return done == 30; }));
  std::vector<int> per_connection(3, 0);
  for (const auto& s : server.seen)
    if (s.code == wire::cmd::kPing) ++per_connection[static_cast<size_t>(s.connection)];
  for (int n : per_connection) BOOST_TEST(n > 0);
  BOOST_TEST(server.lockstep_violations == 0);
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(host_names_are_resolved) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  PoolConfig cfg = fake_config(server.port());
  cfg.connection.host = "localhost";
  IggyPool pool(&l.loop, cfg);
  IggyClient client(pool);
  std::optional<Result<Unit>> r;
  client.ping([&](Result<Unit> res) { r = std::move(res); });
  BOOST_REQUIRE(l.run_until([&] { return r.has_value(); }));
  BOOST_TEST(r->ok());
  close_pool(l, pool);
}

BOOST_AUTO_TEST_CASE(heartbeat_pings_an_idle_connection) {
  Loop l;
  FakeIggy server(&l.loop, [](const SeenRequest&) { return reply(); });
  PoolConfig cfg = fake_config(server.port());
  cfg.connection.heartbeat_interval = 50ms;
  IggyPool pool(&l.loop, cfg);
  pool.start();
  auto pings = [&] {
    int n = 0;
    for (const auto& s : server.seen) n += s.code == wire::cmd::kPing;
    return n;
  };
  BOOST_TEST(l.run_until([&] { return pings() >= 2; }, 5s));
  close_pool(l, pool);
}

BOOST_AUTO_TEST_SUITE_END()
