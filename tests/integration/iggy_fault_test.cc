// Fault tests against a real iggy-server: kill / restart it under the pool. In-flight requests
// fail with a retriable transport error, the pool reconnects and logs in again, later requests
// succeed. The server is restarted on the same port and data dir by the harness.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "iggy/client.h"
#include "iggy/errors.h"
#include "support/iggy_harness.h"

using namespace kib;
using namespace kib::iggy;
using kib::test::IggyServer;
using kib::test::IggyTestContext;
namespace utf = boost::unit_test;
using namespace std::chrono_literals;

namespace {

ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

PoolConfig fault_config() {
  PoolConfig cfg = kib::test::harness_pool_config(2);
  cfg.connection.request_timeout = 10s;
  cfg.connection.reconnect_backoff_max = 200ms;
  cfg.queue_timeout = 120s;  // queued requests must outlive the restart
  return cfg;
}

struct FaultFixture {
  IggyTestContext ctx{fault_config()};
  IggyClient& client = ctx.client();
  std::string stream_name = kib::test::unique_name("fault");
  Identifier stream = Identifier::named(stream_name);
  Identifier topic = Identifier::named("t");

  FaultFixture() {
    BOOST_REQUIRE(ctx.await<StreamInfo>([&](auto cb) { client.create_stream(stream_name, cb); }).ok());
    TopicConfig c;
    c.name = "t";
    c.partitions_count = 1;
    c.enforce_fsync = true;
    c.messages_required_to_save = 1;
    auto t = ctx.await<TopicInfo>([&](auto cb) { client.create_topic(stream, c, cb); });
    BOOST_REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message));
  }
  ~FaultFixture() {
    if (!IggyServer::instance().running()) IggyServer::instance().start();
    auto r = ctx.await<Unit>([&](auto cb) { client.delete_stream(stream, cb); });
    BOOST_TEST(r.ok());
  }

  void send_async(const std::string& payload, std::function<void(Result<SendConfirmation>)> cb) {
    OutgoingMessage m;
    m.payload = span_of(payload);
    client.send_messages(stream, topic, Partitioning::partition(0), std::span<const OutgoingMessage>(&m, 1), std::move(cb));
  }

  Result<SendConfirmation> send(const std::string& payload) {
    return ctx.await<SendConfirmation>([&](auto cb) { send_async(payload, cb); });
  }

  std::vector<std::string> poll_all() {
    PollRequest q;
    q.stream = stream;
    q.topic = topic;
    q.partition_id = 0;
    q.strategy = PollingStrategy::first();
    q.count = 10000;
    auto p = ctx.await<PolledMessages>([&](auto cb) { client.poll_messages(q, cb); });
    BOOST_REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error().message));
    std::vector<std::string> out;
    for (const auto& m : p->messages) out.emplace_back(m.payload.begin(), m.payload.end());
    return out;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(iggy_fault, *utf::precondition(kib::test::iggy_restartable))

BOOST_FIXTURE_TEST_CASE(kill_9_mid_stream_fails_in_flight_retriably_and_later_requests_succeed, FaultFixture) {
  for (int i = 0; i < 5; ++i) BOOST_REQUIRE(send("before-" + std::to_string(i)).ok());

  // A burst of sends; the server is killed from inside the first completion, while the other
  // connection still has a request in flight and the rest are queued.
  constexpr int kBurst = 30;
  std::vector<std::optional<Result<SendConfirmation>>> results(kBurst);
  std::vector<std::string> payloads;
  for (int i = 0; i < kBurst; ++i) payloads.push_back("burst-" + std::to_string(i));
  bool killed = false;
  int done = 0;
  for (int i = 0; i < kBurst; ++i) {
    send_async(payloads[static_cast<size_t>(i)], [&, i](Result<SendConfirmation> r) {
      results[static_cast<size_t>(i)] = std::move(r);
      ++done;
      if (!killed) {
        killed = true;
        BOOST_REQUIRE(IggyServer::instance().kill(SIGKILL));
      }
    });
  }
  // Run until every request either finished or sits in the queue with nothing in flight.
  BOOST_REQUIRE(ctx.run_until([&] {
    auto st = ctx.pool().stats();
    return killed && st.busy == 0 && done + static_cast<int>(st.queued) == kBurst && st.connected == 0;
  }, 30s));
  const int finished_while_down = done;
  BOOST_TEST_MESSAGE("finished before restart: " << finished_while_down << ", queued: " << ctx.pool().stats().queued);

  BOOST_REQUIRE(IggyServer::instance().start());
  BOOST_REQUIRE(ctx.run_until([&] { return done == kBurst; }, 60s));

  int ok = 0, transport = 0;
  for (const auto& r : results) {
    if (r->ok()) {
      ++ok;
      continue;
    }
    BOOST_TEST((r->error().domain == ErrorDomain::kTransport), r->error().message);
    BOOST_TEST(is_retriable(r->error()));
    ++transport;
  }
  BOOST_TEST(transport >= 1);
  BOOST_TEST(ok + transport == kBurst);
  BOOST_TEST(ok >= kBurst - finished_while_down);  // everything queued during the outage succeeded
  auto st = ctx.pool().stats();
  BOOST_TEST(st.reconnects >= 1u);
  BOOST_TEST(st.connected == 2u);

  // The pool keeps working: new sends and a poll.
  auto after = send("after");
  BOOST_REQUIRE_MESSAGE(after.ok(), (after.ok() ? "" : after.error().message));
  auto stored = poll_all();
  BOOST_TEST(!stored.empty());
  BOOST_TEST(stored.back() == "after");
  // Durability after kill -9 is Iggy's business (journal flushed per messages_required_to_save);
  // report it without asserting.
  int before_kept = 0;
  for (const auto& s : stored) before_kept += s.rfind("before-", 0) == 0;
  BOOST_TEST_MESSAGE("kill -9: " << before_kept << "/5 acknowledged pre-kill messages survived, "
                                 << stored.size() << " stored in total");
}

BOOST_FIXTURE_TEST_CASE(sigterm_restart_keeps_acknowledged_messages_and_the_pool_recovers, FaultFixture) {
  for (int i = 0; i < 20; ++i) BOOST_REQUIRE(send("m-" + std::to_string(i)).ok());
  BOOST_REQUIRE(IggyServer::instance().kill(SIGTERM));
  // While the server is down the connections notice and keep retrying.
  BOOST_REQUIRE(ctx.run_until([&] { return ctx.pool().stats().connected == 0; }, 10s));
  BOOST_REQUIRE(IggyServer::instance().start());
  auto ping = ctx.await<Unit>([&](auto cb) { client.ping(cb); });
  BOOST_REQUIRE_MESSAGE(ping.ok(), (ping.ok() ? "" : ping.error().message));
  auto stored = poll_all();
  BOOST_REQUIRE(stored.size() == 20u);
  BOOST_TEST(stored.front() == "m-0");
  BOOST_TEST(stored.back() == "m-19");
  auto c = send("m-20");
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->base_offset == 20u);
}

BOOST_FIXTURE_TEST_CASE(requests_submitted_while_the_server_is_down_run_after_it_returns, FaultFixture) {
  // One message first, as the other kill tests do: iggy-server killed right after creating a
  // topic can fail its next start recovering the partition's index file ("failed to open sparse
  // index during recovery ... Cannot read file", seen once in CI), which is not what this tests.
  BOOST_REQUIRE(send("first").ok());
  BOOST_REQUIRE(IggyServer::instance().kill(SIGKILL));
  BOOST_REQUIRE(ctx.run_until([&] { return ctx.pool().stats().connected == 0; }, 10s));
  // Owned by the callback too: if a check below ends the test early, the fixture's teardown still
  // runs the loop and the queued ping completes into it, not into a dead stack frame.
  auto r = std::make_shared<std::optional<Result<Unit>>>();
  client.ping([r](Result<Unit> res) { *r = std::move(res); });
  ctx.run_until([&] { return r->has_value(); }, 300ms);
  BOOST_TEST(!r->has_value());  // queued, not failed
  BOOST_TEST(ctx.pool().stats().queued == 1u);
  BOOST_REQUIRE(IggyServer::instance().start());
  BOOST_REQUIRE(ctx.run_until([&] { return r->has_value(); }, 30s));
  BOOST_TEST((*r)->ok());
}

BOOST_AUTO_TEST_SUITE_END()
