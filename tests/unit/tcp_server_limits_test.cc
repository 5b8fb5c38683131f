// The TCP server's deadline to finish a frame, its per-address connection limit, and the
// counters and accessors that show its per-connection bounds (see tcp_server_test.cc).
#include <boost/test/unit_test.hpp>

#include "tcp_server_test_support.h"

using namespace kib;
using namespace kib::net;
using kib::test::LoopClient;
using kib::test::ServerFixture;

namespace {

std::shared_ptr<Connection> only_connection(ServerFixture& f) {
  return f.held.empty() ? nullptr : f.held.front().conn;
}

// `n` ApiVersions v0 frames back to back, correlation ids 0..n-1: what a pipelining client sends.
Bytes pipelined_api_versions(int n) {
  Bytes all;
  for (int i = 0; i < n; ++i) {
    Bytes fr = kib::test::api_versions_v0(i);
    all.insert(all.end(), fr.begin(), fr.end());
  }
  return all;
}

net::ListenOptions authenticating() {
  net::ListenOptions o;
  o.authenticate = true;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tcp_server_limits)

BOOST_AUTO_TEST_CASE(a_frame_trickled_a_byte_at_a_time_is_closed_after_frame_read_timeout_ms) {
  ServerLimits limits;
  limits.idle_timeout_ms = 0;  // only the frame deadline can close it
  limits.frame_read_timeout_ms = 300;
  ServerFixture f(limits);
  LoopClient c(f.port);
  // A whole request first: the connection works, and whole requests are not held to it.
  c.send(kib::test::frame(0, 20));
  f.pump(c, [&] { return f.dispatched == 1; });
  f.complete_held();
  Bytes fr = kib::test::frame(1, 100);
  size_t sent = 0;
  uint64_t first_byte_at = f.elapsed_ms();
  f.pump(c, [&] {
    if (c.peer_closed()) return true;
    if (sent < fr.size() && f.elapsed_ms() >= first_byte_at + sent * 50) c.send(Bytes{fr[sent++]});
    return false;
  }, 10000);
  BOOST_TEST(c.peer_closed());
  BOOST_TEST(f.dispatched == 1u);
  BOOST_TEST(sent < fr.size());
  BOOST_TEST(f.server->stats().frame_read_timeouts == 1u);
  BOOST_TEST(f.server->stats().idle_timeouts == 0u);
}

BOOST_AUTO_TEST_CASE(a_frame_paused_by_backpressure_is_not_timed_out) {
  ServerLimits limits;
  limits.idle_timeout_ms = 0;
  limits.frame_read_timeout_ms = 200;
  limits.max_inflight_request_bytes = 8192;
  ServerFixture f(limits);
  LoopClient c(f.port);
  c.send(kib::test::frame(0, 3000));
  f.pump(c, [&] { return f.held.size() == 1; });
  auto conn = only_connection(f);
  BOOST_REQUIRE(conn);
  Bytes second = kib::test::frame(1, 8000);
  c.send(Bytes(second.begin(), second.begin() + 6004));
  f.pump(c, [&] { return conn->inflight_request_bytes() == 9000; });
  BOOST_TEST(conn->inflight_request_bytes() == 9000u);  // 3000 in flight + 6000 being received
  BOOST_TEST(!conn->reading());
  c.send(Bytes(second.begin() + 6004, second.end()));
  f.settle(c, 600);  // three deadlines pass while the bridge is not reading
  BOOST_TEST(!c.peer_closed());
  BOOST_TEST(f.server->stats().frame_read_timeouts == 0u);
  f.complete_held();
  f.pump(c, [&] {
    f.complete_held();
    c.read_frames();
    return c.frames.size() == 2;
  });
  BOOST_TEST(c.frames.size() == 2u);
  BOOST_TEST(conn->inflight_request_bytes() == 0u);
}

// A frame larger than the whole budget (max_frame_bytes may exceed it) stops being read at the
// bound while an earlier request is unanswered, and is read to the end once that one is: the
// bound delays it, never strands it.
BOOST_AUTO_TEST_CASE(a_frame_larger_than_max_inflight_request_bytes_completes_after_the_earlier_ones) {
  ServerLimits limits;
  limits.max_inflight_request_bytes = 8192;
  limits.max_frame_bytes = 1u << 20;
  ServerFixture f(limits);
  LoopClient c(f.port);
  c.send(kib::test::frame(0, 3000));
  f.pump(c, [&] { return f.held.size() == 1; });
  c.send(kib::test::frame(1, 400000));  // several reads: reading stops at the bound
  f.settle(c);
  BOOST_TEST(f.dispatched == 1u);
  auto conn = only_connection(f);
  BOOST_REQUIRE(conn);
  BOOST_TEST(conn->inflight_request_bytes() < 3000u + 400000u);  // not read to the end
  f.complete_held();
  f.pump(c, [&] {
    f.complete_held();
    c.read_frames();
    return c.frames.size() == 2;
  });
  BOOST_TEST(f.dispatched == 2u);
  BOOST_REQUIRE(c.frames.size() == 2u);
  BOOST_TEST(kib::test::corr_of(c.frames[1]) == 1);
  BOOST_TEST(!c.peer_closed());
}

BOOST_AUTO_TEST_CASE(queued_responses_are_counted_in_pending_response_bytes) {
  ServerLimits limits;
  limits.max_pending_response_bytes = 4096;
  ServerFixture f(limits);
  f.answer_at_once = [](uint64_t seq) { return seq != 0; };
  f.response_bytes = 1000;
  LoopClient c(f.port);
  Bytes all;
  for (int i = 0; i < 50; ++i) {
    Bytes fr = kib::test::api_versions_v0(i);
    all.insert(all.end(), fr.begin(), fr.end());
  }
  c.send(all);
  f.pump(c, [&] { return f.dispatched >= 5; });
  f.settle(c);
  auto conn = only_connection(f);
  BOOST_REQUIRE(conn);
  // Four queued answers cost more than 4096 (each its 1004 bytes and a share for the allocator
  // and the queue), so the fifth frame is not handed over.
  BOOST_TEST(conn->pending_response_bytes() == 4u * 1004);
  BOOST_TEST(conn->pending_response_cost() > 4096u);
  BOOST_TEST(conn->inflight() == 1u);     // the head
  BOOST_TEST(conn->unanswered() == 5u);   // the head and the four queued behind it
  BOOST_TEST(conn->buffered_bytes() > 0u);
  BOOST_TEST(!conn->reading());
}

// Issue 31, finding 1: a client that pipelines small requests and never reads. Its answers are
// counted at what they cost in memory and go out together in one buffer behind the write in
// flight, not one write request each (which took ~2.3x their bytes), and the connection stops
// being read at the bound.
BOOST_AUTO_TEST_CASE(answers_a_client_does_not_read_cost_about_their_bytes_and_stop_at_the_bound) {
  ServerLimits limits;
  limits.max_pending_response_bytes = 256 * 1024;
  limits.max_inflight_requests = 100000;
  ServerFixture f(limits);
  f.answer_at_once = [](uint64_t) { return true; };
  f.response_bytes = 400;
  LoopClient c(f.port, nullptr, 4096);
  c.reading = false;
  const Bytes all = pipelined_api_versions(20000);
  c.send(all);
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.server->stats().read_pauses_pending > 0; }));
  f.settle(c);
  BOOST_TEST_REQUIRE(f.server->connection_count() == 1u);
  const ServerStats st = f.server->stats();
  // Held at the bound: over it by at most what one read's frames answered before the check.
  BOOST_TEST(st.pending_response_cost >= limits.max_pending_response_bytes);
  BOOST_TEST(st.pending_response_cost <= limits.max_pending_response_bytes + 64 * 1024 / 14 * (404 + 64));
  BOOST_TEST(f.dispatched < 20000u);
  const size_t held_at_bound = f.dispatched;
  f.settle(c);
  BOOST_TEST(f.dispatched == held_at_bound);  // not read while held
  // The client reads: everything is answered, in order, and nothing is pending any more.
  c.reading = true;
  BOOST_TEST(f.pump(c, [&] {
    c.read_frames();
    return c.frames.size() == 20000;
  }, 30000));
  BOOST_REQUIRE(c.frames.size() == 20000u);
  for (int i = 0; i < 20000; i += 997) BOOST_TEST(kib::test::corr_of(c.frames[static_cast<size_t>(i)]) == i);
  BOOST_TEST(f.server->stats().pending_response_cost == 0u);
}

BOOST_AUTO_TEST_CASE(small_answers_queued_behind_a_write_cost_little_more_than_their_bytes) {
  ServerLimits limits;
  limits.max_pending_response_bytes = 1 << 20;
  limits.max_inflight_requests = 100000;
  ServerFixture f(limits);
  f.answer_at_once = [](uint64_t) { return true; };
  f.response_bytes = 400;
  LoopClient c(f.port, nullptr, 4096);
  c.reading = false;
  const Bytes all = pipelined_api_versions(20000);
  c.send(all);
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.server->stats().read_pauses_pending > 0; }));
  f.settle(c);
  BOOST_TEST_REQUIRE(f.server->connection_count() == 1u);
  const uint64_t cost = f.server->stats().pending_response_cost;
  BOOST_TEST(cost >= limits.max_pending_response_bytes);
  // Coalesced: the cost of N 404-byte answers stays within 1.25x their bytes (one write request
  // each cost ~2.3x).
  const uint64_t answered_not_taken = static_cast<uint64_t>(f.dispatched) * 404;
  BOOST_TEST(cost <= answered_not_taken * 5 / 4);
}

// The total over every connection: two clients that do not read share the bound; a third that
// reads its answers is still served; when one of the two reads, the other is read again.
BOOST_AUTO_TEST_CASE(the_total_bound_holds_every_connection_with_answers_pending_and_releases_them) {
  ServerLimits limits;
  limits.max_pending_response_bytes = 1 << 20;
  limits.max_pending_response_bytes_total = 128 * 1024;
  limits.max_inflight_requests = 100000;
  ServerFixture f(limits);
  f.answer_at_once = [](uint64_t) { return true; };
  f.response_bytes = 400;
  const Bytes all = pipelined_api_versions(20000);
  LoopClient a(f.port, nullptr, 4096), b(f.port, nullptr, 4096);
  a.reading = b.reading = false;
  a.send(all);
  b.send(all);
  auto both = [&] {
    a.io();
    b.io();
    return f.server->stats().read_pauses_pending_total > 0;
  };
  BOOST_TEST_REQUIRE(f.pump(a, both));
  f.settle(a);
  f.settle(b);
  ServerStats st = f.server->stats();
  BOOST_TEST(st.pending_response_cost <= limits.max_pending_response_bytes_total + 2 * 64 * 1024 / 14 * (404 + 64));
  BOOST_TEST(st.read_pauses_pending == 0u);  // each is far below its own bound
  // A well-behaved client still gets its answer: it has nothing pending.
  LoopClient good(f.port);
  good.send(kib::test::api_versions_v0(7));
  BOOST_TEST(f.pump(good, [&] {
    good.read_frames();
    return good.frames.size() == 1;
  }));
  // a reads everything: the total drops, b is read again and gets all its answers too.
  a.reading = b.reading = true;
  BOOST_TEST(f.pump(a, [&] {
    a.read_frames();
    b.read_frames();
    return a.frames.size() == 20000 && b.frames.size() == 20000;
  }, 30000));
  BOOST_TEST(f.server->stats().pending_response_cost == 0u);
}

// Before authentication a connection holds one request at a time (Kafka mutes a channel until
// its answer is sent): 100 pipelined frames are handed over one by one, each once the last
// answer was written.
BOOST_AUTO_TEST_CASE(before_authentication_one_request_at_a_time) {
  ServerLimits limits;
  ServerFixture f(limits, authenticating());
  LoopClient c(f.port);
  c.send(pipelined_api_versions(100));
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
  f.settle(c);
  BOOST_TEST(f.dispatched == 1u);
  BOOST_TEST(f.held.front().conn->buffered_bytes() > 0u);  // the rest waits, read but not parsed
  for (int i = 1; i < 100; ++i) {
    f.complete_held();
    BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
    BOOST_TEST(f.max_outstanding == 1u);
  }
  f.complete_held();
  BOOST_TEST(f.pump(c, [&] {
    c.read_frames();
    return c.frames.size() == 100;
  }));
  for (int i = 0; i < 100; ++i) BOOST_TEST(kib::test::corr_of(c.frames[static_cast<size_t>(i)]) == i);
}

// Issue 31, finding 9: a re-authentication (KIP-368) started and never finished closes the
// connection after authentication_timeout_ms, as a first authentication does.
BOOST_AUTO_TEST_CASE(an_unfinished_reauthentication_is_closed_after_authentication_timeout_ms) {
  ServerLimits limits;
  limits.idle_timeout_ms = 0;
  limits.authentication_timeout_ms = 300;
  ServerFixture f(limits, authenticating());
  LoopClient c(f.port);
  c.send(kib::test::frame(1, 16));
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
  auto conn = f.held.front().conn;
  conn->set_authenticated(true);
  f.complete_held();
  f.settle(c, 500);  // past the first deadline: authenticated in time, still open
  BOOST_TEST_REQUIRE(!c.peer_closed());
  c.send(kib::test::frame(2, 16));  // a SaslHandshake that starts a re-authentication
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
  conn->set_authenticated(false);
  f.complete_held();
  const uint64_t started = f.elapsed_ms();
  BOOST_TEST(f.pump(c, [&] { return c.peer_closed(); }, 5000));
  BOOST_TEST(f.elapsed_ms() - started >= 250u);
  BOOST_TEST(f.server->stats().authentication_timeouts == 1u);
}

BOOST_AUTO_TEST_CASE(connections_past_max_connections_per_ip_are_refused_and_others_still_work) {
  ServerLimits limits;
  limits.max_connections_per_ip = 2;
  ServerFixture f(limits);
  f.answer_at_once = [](uint64_t) { return true; };
  auto a = std::make_unique<LoopClient>(f.port);
  LoopClient b(f.port);
  for (LoopClient* c : {a.get(), &b}) {
    c->send(kib::test::api_versions_v0(1));
    BOOST_TEST(f.pump(*c, [&] {
      c->read_frames();
      return c->frames.size() == 1;
    }));
  }
  LoopClient extra(f.port);
  BOOST_TEST(f.pump(extra, [&] { return extra.peer_closed(); }));
  BOOST_TEST(f.server->stats().refused_per_ip == 1u);
  BOOST_TEST(f.server->refused_connections() == 1u);
  BOOST_TEST(f.server->connections_from("127.0.0.1") == 2u);
  // The two open ones still work, and so does a client from another address.
  for (LoopClient* c : {a.get(), &b}) {
    c->send(kib::test::api_versions_v0(2));
    BOOST_TEST(f.pump(*c, [&] {
      c->read_frames();
      return c->frames.size() == 2;
    }));
  }
  LoopClient other(f.port, "127.0.0.2");
  other.send(kib::test::api_versions_v0(3));
  BOOST_TEST(f.pump(other, [&] {
    other.read_frames();
    return other.frames.size() == 1;
  }));
  // A closed connection frees its place.
  a.reset();
  BOOST_TEST(f.pump(b, [&] { return f.server->connections_from("127.0.0.1") == 1u; }));
  a = std::make_unique<LoopClient>(f.port);
  a->send(kib::test::api_versions_v0(4));
  BOOST_TEST(f.pump(*a, [&] {
    a->read_frames();
    return a->frames.size() == 1;
  }));
  BOOST_TEST(f.server->stats().refused_per_ip == 1u);
}

BOOST_AUTO_TEST_CASE(set_limits_applies_a_raised_max_inflight_requests_to_buffered_frames) {
  ServerLimits limits;
  limits.max_inflight_requests = 5;
  ServerFixture f(limits);
  LoopClient c(f.port);
  Bytes all;
  for (int i = 0; i < 100; ++i) {
    Bytes fr = kib::test::api_versions_v0(i);
    all.insert(all.end(), fr.begin(), fr.end());
  }
  c.send(all);
  f.pump(c, [&] { return f.dispatched >= 5; });
  f.settle(c);
  BOOST_TEST(f.dispatched == 5u);
  limits.max_inflight_requests = 200;  // SIGHUP
  f.server->set_limits(limits);
  BOOST_TEST(f.pump(c, [&] { return f.dispatched == 100; }));
  f.complete_held();
  f.pump(c, [&] {
    c.read_frames();
    return c.frames.size() == 100;
  });
  BOOST_REQUIRE(c.frames.size() == 100u);
  for (int i = 0; i < 100; ++i) BOOST_TEST(kib::test::corr_of(c.frames[i]) == i);
}

BOOST_AUTO_TEST_CASE(an_unauthenticated_connection_is_closed_at_authentication_timeout_ms_whatever_else_it_does) {
  ServerLimits limits;
  limits.idle_timeout_ms = 0;  // the authentication deadline alone must arm the sweep
  limits.frame_read_timeout_ms = 0;
  limits.authentication_timeout_ms = 300;
  ServerFixture f(limits, authenticating());
  f.answer_at_once = [](uint64_t) { return true; };
  LoopClient c(f.port);
  uint64_t started = f.elapsed_ms();
  // Requests keep it busy (a client that never finishes SASL), and it is closed all the same.
  int corr = 0;
  BOOST_TEST(f.pump(c, [&] {
    if (c.peer_closed()) return true;
    c.send(kib::test::frame(corr++, 16));
    return false;
  }, 5000));
  BOOST_TEST(f.elapsed_ms() - started >= 250u);
  BOOST_TEST(f.dispatched > 0u);
  BOOST_TEST(f.server->stats().authentication_timeouts == 1u);
  BOOST_TEST(f.server->stats().idle_timeouts == 0u);
}

BOOST_AUTO_TEST_CASE(a_connection_authenticated_in_time_is_not_closed_by_the_authentication_deadline) {
  ServerLimits limits;
  limits.idle_timeout_ms = 0;
  limits.authentication_timeout_ms = 200;
  ServerFixture f(limits, authenticating());
  LoopClient c(f.port);
  c.send(kib::test::frame(1, 16));
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
  BOOST_TEST(!f.held.front().conn->authenticated());
  f.held.front().conn->set_authenticated(true);  // what SASL does once the exchange succeeded
  f.complete_held();
  f.settle(c, 600);
  BOOST_TEST(!c.peer_closed());
  BOOST_TEST(f.server->stats().authentication_timeouts == 0u);
}

BOOST_AUTO_TEST_CASE(a_frame_above_max_unauthenticated_frame_bytes_closes_an_unauthenticated_connection) {
  ServerLimits limits;
  limits.max_unauthenticated_frame_bytes = 1024;
  ServerFixture f(limits, authenticating());
  LoopClient c(f.port);
  c.send(kib::test::frame(1, 1024));  // at the bound: handed over
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
  f.complete_held();
  c.send(kib::test::frame(2, 1025));
  BOOST_TEST(f.pump(c, [&] { return c.peer_closed(); }));
  BOOST_TEST(f.dispatched == 1u);

  // Once authenticated, frames up to max_frame_bytes are taken.
  LoopClient d(f.port);
  d.send(kib::test::frame(3, 16));
  BOOST_TEST_REQUIRE(f.pump(d, [&] { return f.held.size() == 1; }));
  f.held.front().conn->set_authenticated(true);
  f.complete_held();
  d.send(kib::test::frame(4, 100000));
  BOOST_TEST(f.pump(d, [&] { return f.held.size() == 1 || d.peer_closed(); }));
  BOOST_TEST(!d.peer_closed());
  BOOST_TEST(f.dispatched == 3u);
}

BOOST_AUTO_TEST_CASE(a_plain_listener_is_authenticated_from_the_start) {
  ServerLimits limits;
  limits.max_unauthenticated_frame_bytes = 1024;
  limits.authentication_timeout_ms = 100;
  ServerFixture f(limits);
  LoopClient c(f.port);
  c.send(kib::test::frame(1, 5000));
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1 || c.peer_closed(); }));
  BOOST_TEST(f.held.front().conn->authenticated());
  f.settle(c, 400);
  BOOST_TEST(!c.peer_closed());
}

BOOST_AUTO_TEST_SUITE_END()
