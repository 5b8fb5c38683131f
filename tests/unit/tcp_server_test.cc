// The Kafka-framed TCP server's per-connection bounds on a real libuv loop, driven over
// loopback by a non-blocking client in the same thread (the test pumps both). The frame
// callback stands in for the Kafka handlers: it holds requests and completes them when the
// test says, as a handler waiting on Iggy would.
#include <boost/test/unit_test.hpp>

#include "tcp_server_test_support.h"

using namespace kib;
using namespace kib::net;
using kib::test::LoopClient;
using kib::test::ServerFixture;

BOOST_AUTO_TEST_SUITE(tcp_server)

// 5,000 tiny ApiVersions requests in one write land in a couple of 64 KiB reads: each read
// used to hand every whole frame in it to the handlers, thousands past max_inflight_requests.
BOOST_AUTO_TEST_CASE(pipelined_requests_in_one_read_never_exceed_max_inflight_requests) {
  ServerLimits limits;
  limits.max_inflight_requests = 10;
  ServerFixture f(limits);
  LoopClient c(f.port);
  constexpr int kN = 5000;
  Bytes all;
  for (int i = 0; i < kN; ++i) {
    Bytes fr = kib::test::api_versions_v0(i);
    all.insert(all.end(), fr.begin(), fr.end());
  }
  c.send(all);
  // Until the server stops taking frames: at the bound, with the rest read but not handed over.
  f.pump(c, [&] { return f.held.size() >= 10; });
  f.settle(c);
  BOOST_TEST(f.held.size() == 10u);
  BOOST_TEST(f.max_outstanding <= 10u);
  // Answering them one batch at a time lets the next ones through, never more than 10 at once.
  size_t answered = 0;
  f.pump(c, [&] {
    answered += f.complete_held();
    c.read_frames();
    return c.frames.size() == static_cast<size_t>(kN);
  }, 30000);
  BOOST_TEST(f.dispatched == static_cast<size_t>(kN));
  BOOST_TEST(f.max_outstanding <= 10u);
  BOOST_REQUIRE(c.frames.size() == static_cast<size_t>(kN));
  for (int i = 0; i < kN; ++i) BOOST_TEST(kib::test::corr_of(c.frames[i]) == i);
}

// A response written from several buffers (a Fetch response's fields around the record batches
// it shares with the produced-batch cache) arrives as one frame, byte for byte, and the shared
// buffers are let go once it is written.
BOOST_AUTO_TEST_CASE(a_response_of_shared_spans_arrives_whole_and_lets_them_go_once_written) {
  ServerFixture f({});
  LoopClient c(f.port);
  c.send(kib::test::api_versions_v0(7));
  BOOST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
  std::weak_ptr<const Bytes> owner;
  Bytes want;
  {
    auto r = kib::test::scattered_response(7);
    BOOST_TEST(r.frame.size() == 4 + r.want.size());
    BOOST_TEST(r.frame.shared.size() == 3u);  // the 8-byte span was copied
    owner = r.owner;
    want = r.want;
    f.held[0].conn->complete(f.held[0].seq, std::move(r.frame));
    f.held.clear();
  }
  BOOST_TEST(f.pump(c, [&] {
    c.read_frames();
    return !c.frames.empty();
  }));
  BOOST_REQUIRE(c.frames.size() == 1u);
  BOOST_TEST(c.frames[0] == want);
  BOOST_TEST(f.pump(c, [&] { return owner.expired(); }));
}

// Finished responses waiting behind a slow first request used to be held without limit: a
// client could pipeline cheap requests with large answers behind one long poll.
BOOST_AUTO_TEST_CASE(responses_queued_behind_a_slow_head_count_against_max_pending_response_bytes) {
  ServerLimits limits;
  limits.max_pending_response_bytes = 4096;
  ServerFixture f(limits);
  f.answer_at_once = [](uint64_t seq) { return seq != 0; };  // all but the head answer at once
  f.response_bytes = 1000;
  LoopClient c(f.port);
  constexpr int kN = 200;
  Bytes all;
  for (int i = 0; i < kN; ++i) {
    Bytes fr = kib::test::api_versions_v0(i);
    all.insert(all.end(), fr.begin(), fr.end());
  }
  c.send(all);
  f.pump(c, [&] { return f.dispatched >= 5; });
  f.settle(c);
  // The head and four answered requests: four 1004-byte answers, counted at what they hold in
  // memory, pass 4096, so the sixth frame is never handed over.
  BOOST_TEST(f.dispatched == 5u);
  BOOST_TEST(c.frames.empty());
  // The head completes: everything is answered, in order.
  f.complete_held();
  f.pump(c, [&] {
    c.read_frames();
    return c.frames.size() == static_cast<size_t>(kN);
  });
  BOOST_REQUIRE(c.frames.size() == static_cast<size_t>(kN));
  for (int i = 0; i < kN; ++i) BOOST_TEST(kib::test::corr_of(c.frames[i]) == i);
}

// A frame being received holds memory as much as one read: with a 3,000-byte request in
// flight and a budget of 8,192, 6,000 bytes of the next frame reach the bound, and the rest of
// it is not read until the first is answered.
BOOST_AUTO_TEST_CASE(a_frame_being_received_counts_toward_max_inflight_request_bytes) {
  ServerLimits limits;
  limits.max_inflight_request_bytes = 8192;
  ServerFixture f(limits);
  LoopClient c(f.port);
  c.send(kib::test::frame(0, 3000));
  f.pump(c, [&] { return f.held.size() == 1; });
  Bytes second = kib::test::frame(1, 8000);
  c.send(Bytes(second.begin(), second.begin() + 6004));
  f.settle(c);
  c.send(Bytes(second.begin() + 6004, second.end()));
  c.send(kib::test::frame(2, 10));
  f.settle(c);
  BOOST_TEST(f.dispatched == 1u);  // neither the second frame nor the third
  f.complete_held();
  f.pump(c, [&] {
    f.complete_held();
    c.read_frames();
    return c.frames.size() == 3;
  });
  BOOST_TEST(f.dispatched == 3u);
  BOOST_REQUIRE(c.frames.size() == 3u);
  for (int i = 0; i < 3; ++i) BOOST_TEST(kib::test::corr_of(c.frames[i]) == i);
}

// Kafka's connections.max.idle.ms counts requests, not bytes: a client that sends one byte
// now and then without ever finishing a request is idle.
BOOST_AUTO_TEST_CASE(bytes_of_an_unfinished_frame_do_not_reset_the_idle_clock) {
  ServerLimits limits;
  limits.idle_timeout_ms = 400;
  ServerFixture f(limits);
  LoopClient c(f.port);
  Bytes fr = kib::test::frame(0, 100);
  size_t sent = 0;
  // One byte every 50 ms: 104 bytes would take 5.2 s.
  f.pump(c, [&] {
    if (c.peer_closed()) return true;
    if (sent < fr.size() && f.elapsed_ms() >= sent * 50) c.send(Bytes{fr[sent++]});
    return false;
  }, 10000);
  BOOST_TEST(c.peer_closed());
  BOOST_TEST(f.dispatched == 0u);
  BOOST_TEST(sent < fr.size());
}

// close_after_responses() (a failed SASL authentication): the answer is written, the
// connection reads nothing more and closes failed_authentication_delay_ms later (Kafka's
// connection.failed.authentication.delay.ms), or at once when it is 0.
BOOST_AUTO_TEST_CASE(close_after_responses_waits_failed_authentication_delay_ms_after_the_answer) {
  for (uint64_t delay_ms : {uint64_t{0}, uint64_t{600}}) {
    ServerLimits limits;
    limits.failed_authentication_delay_ms = delay_ms;
    ServerFixture f(limits);
    LoopClient c(f.port);
    c.send(kib::test::api_versions_v0(7));
    BOOST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
    f.held.front().conn->close_after_responses("test: authentication failed");
    f.complete_held();
    BOOST_REQUIRE(f.pump(c, [&] {
      c.read_frames();
      return c.frames.size() == 1;
    }));
    BOOST_TEST(kib::test::corr_of(c.frames[0]) == 7);
    const uint64_t answered_at = f.elapsed_ms();
    // A request sent after the answer is never handed over.
    c.send(kib::test::api_versions_v0(8));
    BOOST_REQUIRE(f.pump(c, [&] { return c.peer_closed(); }, 10000));
    const uint64_t closed_after = f.elapsed_ms() - answered_at;
    BOOST_TEST(f.dispatched == 1u);
    // The timer cannot fire before its delay (a third of it is margin for the loop's clock,
    // which is read at the start of an iteration); without a delay the close follows the answer.
    if (delay_ms > 0) BOOST_TEST(closed_after >= delay_ms * 2 / 3, "closed " << closed_after << " ms after");
  }
}

BOOST_AUTO_TEST_SUITE_END()
