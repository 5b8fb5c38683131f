// The TCP server on a TLS listener: the handshake on the loop, framing and backpressure over
// decrypted bytes, client authentication and the principal it names, what a bad or slow peer
// gets, and a new context for new connections (SIGHUP).
#include <boost/test/unit_test.hpp>

#include "tcp_server_test_support.h"
#include "tls_test_support.h"

using namespace kib;
using namespace kib::net;
using kib::test::Issued;
using kib::test::LoopClient;
using kib::test::ServerFixture;
using kib::test::TestPki;
using kib::test::TlsClientOptions;
using kib::test::TlsLoopClient;
using ClientAuth = kib::config::TlsConfig::ClientAuth;

namespace {

// A CA, the server's certificate, and two client certificates (one from another CA).
struct Pki {
  TestPki pki;
  Issued ca = pki.ca("Test CA");
  Issued other_ca = pki.ca("Other CA");
  Issued server = pki.server("server-one", ca);
  Issued alice = pki.client("alice", {{"C", "US"}, {"O", "Example"}, {"OU", "Eng"}, {"CN", "Alice"}}, ca);
  Issued mallory = pki.client("mallory", {{"CN", "Mallory"}}, other_ca);

  TlsClientOptions anonymous() const { return {ca.cert_file, "", "", 0, 0}; }
  TlsClientOptions as(const Issued& who) const { return {ca.cert_file, who.cert_file, who.key_file, 0, 0}; }
};

// A TLS listener with `ctx`, which says whether the handshake authenticates (SSL) or not
// (SASL_SSL), at the index the context was made for.
ListenOptions ssl(std::shared_ptr<const TlsContext> ctx) {
  ListenOptions o;
  o.listener = ctx->listener().index;
  o.authenticate = true;
  o.tls = std::move(ctx);
  return o;
}

const TlsListener kSaslSsl{0, "SASL_SSL://127.0.0.1:0", false};

uint64_t failures(ServerFixture& f, TlsFailure why) {
  return f.server->stats().tls_handshake_failures[static_cast<size_t>(why)];
}

uint64_t all_failures(ServerFixture& f) {
  uint64_t n = 0;
  for (uint64_t v : f.server->stats().tls_handshake_failures) n += v;
  return n;
}

// A SASL_SSL listener (index 0, the fixture's port) and an SSL listener whose client_auth is
// "required" (index 1, ssl_port) on one server, each with its own context from one load.
struct TwoListeners {
  Pki p;
  std::vector<std::shared_ptr<const TlsContext>> ctx = kib::test::load_tls_all(
      kib::test::tls_config(p.server, &p.ca, ClientAuth::kRequired),
      {{0, "SASL_SSL://127.0.0.1:0", false}, {1, "SSL://127.0.0.1:0", true}});
  ServerFixture f{{}, ssl(ctx[0])};
  uint16_t ssl_port = 0;

  TwoListeners() {
    auto port = f.server->listen({"127.0.0.1", 0}, ssl(ctx[1]));
    BOOST_REQUIRE(port.ok());
    ssl_port = *port;
    f.answer_at_once = [](uint64_t) { return true; };
  }

  // One request answered on `port`, then a clean close (close_notify): the session the client
  // can resume.
  std::shared_ptr<SSL_SESSION> session_from(uint16_t port, const TlsClientOptions& o) {
    TlsLoopClient c(port, o);
    c.send(kib::test::frame(1, 16));
    BOOST_REQUIRE(f.pump(c, [&] {
      c.read_frames();
      return !c.frames.empty() || c.peer_closed();
    }));
    BOOST_REQUIRE_MESSAGE(c.frames.size() == 1u, c.error());
    auto session = c.session();
    BOOST_REQUIRE(session != nullptr);
    BOOST_REQUIRE(SSL_SESSION_is_resumable(session.get()) == 1);
    return session;
  }
};

// The ways a client keeps a session: a TLS 1.3 ticket, a TLS 1.2 ticket, a TLS 1.2 session id.
struct SessionKind {
  const char* name;
  int version;
  bool no_ticket;
};
constexpr SessionKind kSessionKinds[] = {
    {"TLS 1.3 ticket", TLS1_3_VERSION, false},
    {"TLS 1.2 ticket", TLS1_2_VERSION, false},
    {"TLS 1.2 session id", TLS1_2_VERSION, true},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tcp_server_tls)

BOOST_AUTO_TEST_CASE(a_tls_client_gets_its_pipelined_requests_answered_in_order) {
  Pki p;
  ServerFixture f({}, ssl(kib::test::load_tls(kib::test::tls_config(p.server))));
  f.answer_at_once = [](uint64_t) { return true; };
  TlsLoopClient c(f.port, p.anonymous());
  Bytes all;
  for (int i = 0; i < 50; ++i) {
    Bytes fr = kib::test::frame(i, 20 + static_cast<size_t>(i) * 100);
    all.insert(all.end(), fr.begin(), fr.end());
  }
  c.send(all);
  BOOST_TEST(f.pump(c, [&] {
    c.read_frames();
    return c.frames.size() == 50 || c.peer_closed();
  }));
  BOOST_TEST_REQUIRE(c.frames.size() == 50u);
  for (int i = 0; i < 50; ++i) BOOST_TEST(kib::test::corr_of(c.frames[static_cast<size_t>(i)]) == i);
  BOOST_TEST(c.version() == "TLSv1.3");
  BOOST_TEST(f.server->stats().tls_handshakes.at("TLSv1.3") == 1u);
  BOOST_TEST(all_failures(f) == 0u);
}

// On TLS the pieces of a response written from shared buffers are encrypted in order.
BOOST_AUTO_TEST_CASE(a_tls_client_gets_a_response_of_shared_spans_whole) {
  Pki p;
  ServerFixture f({}, ssl(kib::test::load_tls(kib::test::tls_config(p.server))));
  TlsLoopClient c(f.port, p.anonymous());
  c.send(kib::test::api_versions_v0(9));
  BOOST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
  auto r = kib::test::scattered_response(9);
  f.held[0].conn->complete(f.held[0].seq, std::move(r.frame));
  f.held.clear();
  BOOST_TEST(f.pump(c, [&] {
    c.read_frames();
    return !c.frames.empty() || c.peer_closed();
  }));
  BOOST_REQUIRE(c.frames.size() == 1u);
  BOOST_TEST(c.frames[0] == r.want);
}

BOOST_AUTO_TEST_CASE(the_handshake_authenticates_an_ssl_connection_and_names_no_principal_without_a_certificate) {
  Pki p;
  ServerFixture f({}, ssl(kib::test::load_tls(kib::test::tls_config(p.server))));
  TlsLoopClient c(f.port, p.anonymous());
  c.send(kib::test::frame(7, 16));
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
  auto conn = f.held.front().conn;
  BOOST_TEST(conn->authenticated());
  BOOST_TEST_REQUIRE(conn->tls_peer() != nullptr);
  BOOST_TEST(!conn->tls_peer()->subject.has_value());
  BOOST_TEST(conn->tls_peer()->principal.str() == "User:ANONYMOUS");
  BOOST_TEST(!conn->tls_peer()->cipher.empty());
}

BOOST_AUTO_TEST_CASE(on_a_sasl_ssl_listener_the_handshake_leaves_the_connection_unauthenticated) {
  Pki p;
  ServerLimits limits;
  limits.max_unauthenticated_frame_bytes = 1024;
  // client_auth = "required" is for SSL listeners: a SASL_SSL client needs no certificate.
  ServerFixture f(limits, ssl(kib::test::load_tls(kib::test::tls_config(p.server, &p.ca, ClientAuth::kRequired), kSaslSsl)));
  TlsLoopClient c(f.port, p.anonymous());
  c.send(kib::test::frame(1, 1000));  // within the bound: handed over
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1; }));
  BOOST_TEST(!f.held.front().conn->authenticated());
  BOOST_TEST(f.held.front().conn->tls_peer() != nullptr);
  f.complete_held();
  c.send(kib::test::frame(2, 2000));  // above it before SASL: closed
  BOOST_TEST(f.pump(c, [&] { return c.peer_closed(); }));
  BOOST_TEST(f.dispatched == 1u);
}

BOOST_AUTO_TEST_CASE(large_responses_to_a_client_that_does_not_read_are_bounded_by_max_pending_response_bytes) {
  Pki p;
  ServerLimits limits;
  limits.max_pending_response_bytes = 64 * 1024;
  ServerFixture f(limits, ssl(kib::test::load_tls(kib::test::tls_config(p.server))));
  f.response_bytes = 2 << 20;
  f.answer_at_once = [](uint64_t) { return true; };
  TlsLoopClient c(f.port, p.anonymous());
  c.reading = false;
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return c.connected(); }));
  Bytes all;
  for (int i = 0; i < 20; ++i) {
    Bytes fr = kib::test::frame(i, 64);
    all.insert(all.end(), fr.begin(), fr.end());
  }
  c.send(all);
  f.settle(c, 500);
  // The first response is being written; nothing more is taken while it is.
  BOOST_TEST(f.dispatched <= 2u);
  BOOST_TEST_REQUIRE(f.server->connection_count() == 1u);
  c.reading = true;
  BOOST_TEST(f.pump(c, [&] {
    c.read_frames();
    return c.frames.size() == 20 || c.peer_closed();
  }, 30000));
  BOOST_TEST_REQUIRE(c.frames.size() == 20u);
  for (int i = 0; i < 20; ++i) {
    BOOST_TEST(kib::test::corr_of(c.frames[static_cast<size_t>(i)]) == i);
    BOOST_TEST(c.frames[static_cast<size_t>(i)].size() == size_t{2} << 20);
  }
}

BOOST_AUTO_TEST_CASE(a_client_certificate_names_the_principal_through_the_mapping_rules) {
  Pki p;
  auto cfg = kib::test::tls_config(p.server, &p.ca, ClientAuth::kRequired);
  cfg.principal_mapping_rules = "RULE:^CN=([^,]+),OU=Eng,.*$/$1/L, DEFAULT";
  ServerFixture f({}, ssl(kib::test::load_tls(cfg)));
  TlsLoopClient c(f.port, p.as(p.alice));
  c.send(kib::test::frame(1, 16));
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1 || c.peer_closed(); }));
  BOOST_TEST_REQUIRE(f.held.size() == 1u);
  const TlsPeer* peer = f.held.front().conn->tls_peer();
  BOOST_TEST_REQUIRE(peer != nullptr);
  BOOST_TEST(peer->subject.value_or("") == "CN=Alice,OU=Eng,O=Example,C=US");
  BOOST_TEST(peer->principal.str() == "User:alice");
}

BOOST_AUTO_TEST_CASE(a_resumed_session_keeps_the_client_certificates_principal) {
  Pki p;
  auto cfg = kib::test::tls_config(p.server, &p.ca, ClientAuth::kRequired);
  cfg.principal_mapping_rules = "RULE:^CN=([^,]+),.*$/$1/L";
  ServerFixture f({}, ssl(kib::test::load_tls(cfg)));
  f.answer_at_once = [](uint64_t) { return true; };
  std::shared_ptr<SSL_SESSION> session;
  {
    TlsLoopClient first(f.port, p.as(p.alice));
    first.send(kib::test::frame(1, 16));
    BOOST_TEST_REQUIRE(f.pump(first, [&] {
      first.read_frames();
      return first.frames.size() == 1 || first.peer_closed();
    }));
    session = first.session();
    BOOST_TEST_REQUIRE(!first.resumed());
  }
  BOOST_TEST_REQUIRE(session != nullptr);
  BOOST_TEST_REQUIRE(SSL_SESSION_is_resumable(session.get()) == 1);
  f.answer_at_once = [](uint64_t) { return false; };
  auto o = p.as(p.alice);
  o.resume = session.get();
  TlsLoopClient second(f.port, o);
  second.send(kib::test::frame(2, 16));
  BOOST_TEST_REQUIRE(f.pump(second, [&] { return !f.held.empty() || second.peer_closed(); }));
  BOOST_TEST_REQUIRE(f.held.size() == 1u);
  BOOST_TEST(second.resumed());
  BOOST_TEST(f.held.front().conn->tls_peer()->principal.str() == "User:alice");
}

// Each listener has its own context (session cache, ticket keys, session id context): a
// session made without a certificate on a SASL_SSL listener does not resume on an SSL listener
// whose client_auth is "required"; the full handshake that follows asks for the certificate.
BOOST_AUTO_TEST_CASE(a_session_made_on_one_listener_does_not_resume_on_another) {
  for (const SessionKind& kind : kSessionKinds) {
    BOOST_TEST_CONTEXT(kind.name) {
      TwoListeners t;
      TlsClientOptions o = t.p.anonymous();
      o.min_version = o.max_version = kind.version;
      o.no_ticket = kind.no_ticket;
      auto session = t.session_from(t.f.port, o);
      o.resume = session.get();
      TlsLoopClient c(t.ssl_port, o);
      c.send(kib::test::frame(2, 16));
      BOOST_TEST(t.f.pump(c, [&] {
        c.read_frames();
        return c.peer_closed();
      }));
      BOOST_TEST(c.frames.empty());
      BOOST_TEST(!c.resumed());
      BOOST_TEST(t.f.dispatched == 1u);  // the request on the SASL_SSL listener only
      BOOST_TEST(failures(t.f, TlsFailure::kNoClientCertificate) == 1u);
      // The same session still resumes where it was made.
      TlsLoopClient again(t.f.port, o);
      again.send(kib::test::frame(3, 16));
      BOOST_TEST_REQUIRE(t.f.pump(again, [&] {
        again.read_frames();
        return !again.frames.empty() || again.peer_closed();
      }));
      BOOST_TEST(again.frames.size() == 1u);
      BOOST_TEST(again.resumed());
    }
  }
}

// And a client with a certificate resumes on the SSL listener, keeping its principal.
BOOST_AUTO_TEST_CASE(a_session_with_a_certificate_resumes_on_its_own_ssl_listener) {
  for (const SessionKind& kind : kSessionKinds) {
    BOOST_TEST_CONTEXT(kind.name) {
      TwoListeners t;
      TlsClientOptions o = t.p.as(t.p.alice);
      o.min_version = o.max_version = kind.version;
      o.no_ticket = kind.no_ticket;
      auto session = t.session_from(t.ssl_port, o);
      o.resume = session.get();
      t.f.answer_at_once = [](uint64_t) { return false; };
      TlsLoopClient c(t.ssl_port, o);
      c.send(kib::test::frame(2, 16));
      BOOST_TEST_REQUIRE(t.f.pump(c, [&] { return !t.f.held.empty() || c.peer_closed(); }));
      BOOST_TEST_REQUIRE(t.f.held.size() == 1u);
      BOOST_TEST(c.resumed());
      BOOST_TEST(t.f.held.front().conn->tls_peer()->principal.str() == "User:CN=Alice,OU=Eng,O=Example,C=US");
      BOOST_TEST(all_failures(t.f) == 0u);
    }
  }
}

// The second defence: were the two contexts to share their ticket keys, session cache and
// session id context (as one context for every listener did), OpenSSL would resume the
// SASL_SSL session on the SSL listener without asking for a certificate; the handshake is
// refused all the same, before any request is read, and counted.
BOOST_AUTO_TEST_CASE(a_session_resumed_without_a_certificate_where_one_is_required_is_refused) {
  for (const SessionKind& kind : kSessionKinds) {
    BOOST_TEST_CONTEXT(kind.name) {
      TwoListeners t;
      SSL_CTX* sasl = t.ctx[0]->native();
      SSL_CTX* ssl = t.ctx[1]->native();
      unsigned char keys[80];
      BOOST_REQUIRE(SSL_CTX_get_tlsext_ticket_keys(sasl, keys, sizeof keys) == 1);
      BOOST_REQUIRE(SSL_CTX_set_tlsext_ticket_keys(ssl, keys, sizeof keys) == 1);
      static constexpr unsigned char kShared[] = "shared";
      BOOST_REQUIRE(SSL_CTX_set_session_id_context(sasl, kShared, sizeof kShared - 1) == 1);
      BOOST_REQUIRE(SSL_CTX_set_session_id_context(ssl, kShared, sizeof kShared - 1) == 1);
      TlsClientOptions o = t.p.anonymous();
      o.min_version = o.max_version = kind.version;
      o.no_ticket = kind.no_ticket;
      // A shared cache: the SASL_SSL listener's copy of the session goes into the SSL one's.
      static SSL_SESSION* server_copy = nullptr;
      SSL_CTX_sess_set_new_cb(sasl, [](SSL*, SSL_SESSION* made) {
        SSL_SESSION_free(server_copy);
        server_copy = made;
        return 1;
      });
      auto session = t.session_from(t.f.port, o);
      if (kind.no_ticket) {
        BOOST_REQUIRE(server_copy != nullptr);
        // A copy: a session is on one cache's list at a time.
        SSL_SESSION* copy = SSL_SESSION_dup(server_copy);
        BOOST_REQUIRE(copy != nullptr);
        BOOST_REQUIRE(SSL_CTX_add_session(ssl, copy) == 1);
        SSL_SESSION_free(copy);
      }
      SSL_SESSION_free(server_copy);
      server_copy = nullptr;
      o.resume = session.get();
      TlsLoopClient c(t.ssl_port, o);
      c.send(kib::test::frame(2, 16));
      BOOST_TEST(t.f.pump(c, [&] {
        c.read_frames();
        return c.peer_closed();
      }));
      BOOST_TEST(c.resumed());  // OpenSSL did resume: the refusal is the bridge's
      BOOST_TEST(c.frames.empty());
      BOOST_TEST(!c.close_notify);
      BOOST_TEST(t.f.dispatched == 1u);
      BOOST_TEST(failures(t.f, TlsFailure::kNoClientCertificate) == 1u);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_context_serves_only_the_listener_it_was_made_for) {
  TwoListeners t;
  // Listener 2 given listener 1's context.
  ListenOptions o = ssl(t.ctx[1]);
  o.listener = 2;
  auto port = t.f.server->listen({"127.0.0.1", 0}, o);
  BOOST_TEST_REQUIRE(!port.ok());
  BOOST_TEST(port.error().message.find("given the TLS context of listener 1") != std::string::npos,
             port.error().message);
  // A new context for a listener that is not there, or one that turns SASL_SSL into SSL.
  auto cfg = kib::test::tls_config(t.p.server, &t.p.ca, ClientAuth::kRequired);
  BOOST_TEST(!t.f.server->set_tls_context(kib::test::load_tls(cfg, {5, "SSL://127.0.0.1:0", true})).ok());
  BOOST_TEST(!t.f.server->set_tls_context(kib::test::load_tls(cfg, {0, "SSL://127.0.0.1:0", true})).ok());
  BOOST_TEST(t.f.server->set_tls_context(kib::test::load_tls(cfg, {0, "SASL_SSL://127.0.0.1:0", false})).ok());
}

BOOST_AUTO_TEST_CASE(client_auth_required_closes_a_connection_without_a_certificate_and_counts_it) {
  Pki p;
  ServerFixture f({}, ssl(kib::test::load_tls(kib::test::tls_config(p.server, &p.ca, ClientAuth::kRequired))));
  TlsLoopClient c(f.port, p.anonymous());
  c.send(kib::test::frame(1, 16));
  BOOST_TEST(f.pump(c, [&] { return c.peer_closed(); }));
  BOOST_TEST(f.dispatched == 0u);
  BOOST_TEST(failures(f, TlsFailure::kNoClientCertificate) == 1u);
  BOOST_TEST(c.error().find("certificate required") != std::string::npos, c.error());
}

BOOST_AUTO_TEST_CASE(client_auth_required_refuses_a_certificate_of_another_ca) {
  Pki p;
  ServerFixture f({}, ssl(kib::test::load_tls(kib::test::tls_config(p.server, &p.ca, ClientAuth::kRequired))));
  TlsLoopClient c(f.port, p.as(p.mallory));
  c.send(kib::test::frame(1, 16));
  BOOST_TEST(f.pump(c, [&] { return c.peer_closed(); }));
  BOOST_TEST(f.dispatched == 0u);
  BOOST_TEST(failures(f, TlsFailure::kClientCertificateRejected) == 1u);
}

BOOST_AUTO_TEST_CASE(client_auth_requested_takes_a_client_without_a_certificate_as_anonymous_and_one_with_it_by_name) {
  Pki p;
  ServerFixture f({}, ssl(kib::test::load_tls(kib::test::tls_config(p.server, &p.ca, ClientAuth::kRequested))));
  TlsLoopClient anon(f.port, p.anonymous());
  anon.send(kib::test::frame(1, 16));
  BOOST_TEST_REQUIRE(f.pump(anon, [&] { return f.held.size() == 1 || anon.peer_closed(); }));
  BOOST_TEST_REQUIRE(f.held.size() == 1u);
  BOOST_TEST(f.held.front().conn->tls_peer()->principal.str() == "User:ANONYMOUS");
  TlsLoopClient alice(f.port, p.as(p.alice));
  alice.send(kib::test::frame(2, 16));
  BOOST_TEST_REQUIRE(f.pump(alice, [&] { return f.held.size() == 2 || alice.peer_closed(); }));
  BOOST_TEST_REQUIRE(f.held.size() == 2u);
  BOOST_TEST(f.held.back().conn->tls_peer()->principal.str() == "User:CN=Alice,OU=Eng,O=Example,C=US");
  // Requested is not required: a certificate the CA did not sign is still refused.
  TlsLoopClient mallory(f.port, p.as(p.mallory));
  mallory.send(kib::test::frame(3, 16));
  BOOST_TEST(f.pump(mallory, [&] { return mallory.peer_closed(); }));
  BOOST_TEST(f.dispatched == 2u);
  BOOST_TEST(failures(f, TlsFailure::kClientCertificateRejected) == 1u);
}

BOOST_AUTO_TEST_CASE(client_auth_none_never_asks_for_a_certificate) {
  Pki p;
  ServerFixture f({}, ssl(kib::test::load_tls(kib::test::tls_config(p.server, &p.ca, ClientAuth::kNone))));
  TlsLoopClient c(f.port, p.as(p.alice));
  c.send(kib::test::frame(1, 16));
  BOOST_TEST_REQUIRE(f.pump(c, [&] { return f.held.size() == 1 || c.peer_closed(); }));
  BOOST_TEST_REQUIRE(f.held.size() == 1u);
  BOOST_TEST(!f.held.front().conn->tls_peer()->subject.has_value());
  BOOST_TEST(f.held.front().conn->tls_peer()->principal.str() == "User:ANONYMOUS");
}

BOOST_AUTO_TEST_CASE(a_certificate_no_mapping_rule_applies_to_is_refused_as_kafka_does) {
  Pki p;
  auto cfg = kib::test::tls_config(p.server, &p.ca, ClientAuth::kRequired);
  cfg.principal_mapping_rules = "RULE:^CN=([^,]+),OU=Ops,.*$/$1/";  // no DEFAULT
  ServerFixture f({}, ssl(kib::test::load_tls(cfg)));
  TlsLoopClient c(f.port, p.as(p.alice));
  c.send(kib::test::frame(1, 16));
  BOOST_TEST(f.pump(c, [&] { return c.peer_closed(); }));
  BOOST_TEST(f.dispatched == 0u);
  BOOST_TEST(failures(f, TlsFailure::kPrincipalMapping) == 1u);
}

BOOST_AUTO_TEST_CASE(tls_1_2_only_refuses_a_tls_1_3_only_client) {
  Pki p;
  auto cfg = kib::test::tls_config(p.server);
  cfg.protocols = {"TLSv1.2"};
  ServerFixture f({}, ssl(kib::test::load_tls(cfg)));
  f.answer_at_once = [](uint64_t) { return true; };
  TlsLoopClient ok(f.port, p.anonymous());
  ok.send(kib::test::frame(1, 16));
  BOOST_TEST(f.pump(ok, [&] {
    ok.read_frames();
    return ok.frames.size() == 1 || ok.peer_closed();
  }));
  BOOST_TEST(ok.version() == "TLSv1.2");
  auto only13 = p.anonymous();
  only13.min_version = TLS1_3_VERSION;
  TlsLoopClient refused(f.port, only13);
  refused.send(kib::test::frame(2, 16));
  BOOST_TEST(f.pump(refused, [&] { return refused.peer_closed(); }));
  BOOST_TEST(failures(f, TlsFailure::kProtocolVersion) == 1u);
  BOOST_TEST(f.server->stats().tls_handshakes.at("TLSv1.2") == 1u);
}

BOOST_AUTO_TEST_CASE(a_plaintext_kafka_request_instead_of_a_client_hello_is_closed_and_counted) {
  Pki p;
  ServerFixture f({}, ssl(kib::test::load_tls(kib::test::tls_config(p.server))));
  LoopClient kafka(f.port);
  kafka.send(kib::test::api_versions_v0(1));
  BOOST_TEST(f.pump(kafka, [&] { return kafka.peer_closed(); }));
  LoopClient http(f.port);
  std::string get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  http.send(Bytes(get.begin(), get.end()));
  BOOST_TEST(f.pump(http, [&] { return http.peer_closed(); }));
  BOOST_TEST(f.dispatched == 0u);
  BOOST_TEST(failures(f, TlsFailure::kNotTls) == 2u);
}

BOOST_AUTO_TEST_CASE(a_client_that_stalls_mid_handshake_is_closed_at_authentication_timeout_ms) {
  Pki p;
  ServerLimits limits;
  limits.idle_timeout_ms = 0;
  limits.frame_read_timeout_ms = 0;
  limits.authentication_timeout_ms = 300;
  ServerFixture f(limits, ssl(kib::test::load_tls(kib::test::tls_config(p.server))));
  Bytes hello = kib::test::client_hello();
  LoopClient c(f.port);
  c.send(Bytes(hello.begin(), hello.begin() + static_cast<std::ptrdiff_t>(hello.size() / 2)));
  uint64_t started = f.elapsed_ms();
  BOOST_TEST(f.pump(c, [&] { return c.peer_closed(); }, 5000));
  BOOST_TEST(f.elapsed_ms() - started >= 250u);
  BOOST_TEST(f.server->stats().authentication_timeouts == 1u);
  BOOST_TEST(failures(f, TlsFailure::kTimeout) == 1u);
}

BOOST_AUTO_TEST_CASE(a_record_trickled_after_the_handshake_is_held_to_frame_read_timeout_ms) {
  Pki p;
  ServerLimits limits;
  limits.idle_timeout_ms = 0;
  limits.frame_read_timeout_ms = 300;
  ServerFixture f(limits, ssl(kib::test::load_tls(kib::test::tls_config(p.server))));
  f.answer_at_once = [](uint64_t) { return true; };
  TlsLoopClient c(f.port, p.anonymous());
  c.send(kib::test::frame(1, 16));
  BOOST_TEST_REQUIRE(f.pump(c, [&] {
    c.read_frames();
    return c.frames.size() == 1;
  }));
  // The first bytes of an application-data record, then nothing: no frame byte is decrypted,
  // and yet the peer holds the connection mid-record.
  uint64_t started = f.elapsed_ms();
  c.send_bypassing_tls({0x17, 0x03, 0x03, 0x00, 0x40, 0x01, 0x02});
  BOOST_TEST(f.pump(c, [&] { return c.peer_closed(); }, 5000));
  BOOST_TEST(f.elapsed_ms() - started >= 250u);
  BOOST_TEST(f.server->stats().frame_read_timeouts == 1u);
}

BOOST_AUTO_TEST_CASE(a_connection_the_bridge_closes_gets_close_notify) {
  Pki p;
  ServerLimits limits;
  limits.idle_timeout_ms = 200;
  ServerFixture f(limits, ssl(kib::test::load_tls(kib::test::tls_config(p.server))));
  f.answer_at_once = [](uint64_t) { return true; };
  TlsLoopClient c(f.port, p.anonymous());
  c.send(kib::test::frame(1, 16));
  BOOST_TEST_REQUIRE(f.pump(c, [&] {
    c.read_frames();
    return c.frames.size() == 1;
  }));
  BOOST_TEST(f.pump(c, [&] { return c.peer_closed(); }, 5000));
  BOOST_TEST(c.close_notify, c.error());
  BOOST_TEST(f.server->stats().idle_timeouts == 1u);
}

BOOST_AUTO_TEST_CASE(a_new_context_serves_new_connections_while_established_ones_keep_theirs) {
  Pki p;
  Issued second = p.pki.server("server-two", p.ca);
  ServerFixture f({}, ssl(kib::test::load_tls(kib::test::tls_config(p.server))));
  f.answer_at_once = [](uint64_t) { return true; };
  TlsLoopClient old_conn(f.port, p.anonymous());
  old_conn.send(kib::test::frame(1, 16));
  BOOST_TEST_REQUIRE(f.pump(old_conn, [&] {
    old_conn.read_frames();
    return old_conn.frames.size() == 1;
  }));
  BOOST_TEST(old_conn.server_subject().find("O=server-one") != std::string::npos);

  BOOST_TEST_REQUIRE(f.server->set_tls_context(kib::test::load_tls(kib::test::tls_config(second))).ok());

  TlsLoopClient new_conn(f.port, p.anonymous());
  new_conn.send(kib::test::frame(2, 16));
  BOOST_TEST_REQUIRE(f.pump(new_conn, [&] {
    new_conn.read_frames();
    return new_conn.frames.size() == 1 || new_conn.peer_closed();
  }));
  BOOST_TEST(new_conn.server_subject().find("O=server-two") != std::string::npos, new_conn.server_subject());
  old_conn.send(kib::test::frame(3, 16));
  BOOST_TEST(f.pump(old_conn, [&] {
    old_conn.read_frames();
    return old_conn.frames.size() == 2 || old_conn.peer_closed();
  }));
  BOOST_TEST_REQUIRE(old_conn.frames.size() == 2u);
  BOOST_TEST(kib::test::corr_of(old_conn.frames[1]) == 3);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tls_context)

BOOST_AUTO_TEST_CASE(files_that_do_not_load_are_named_with_their_key) {
  Pki p;
  auto missing = kib::test::tls_config(p.server);
  missing.certificate_file = p.pki.dir() + "/nope.crt";
  auto r = TlsContext::load(missing);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().message.find("[tls] certificate_file " + missing.certificate_file + ": cannot open") == 0u,
             r.error().message);

  auto garbage = kib::test::tls_config(p.server);
  garbage.certificate_file = p.pki.write("garbage.crt", "not a certificate\n");
  r = TlsContext::load(garbage);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().message.find("[tls] certificate_file") == 0u, r.error().message);

  auto mismatched = kib::test::tls_config(p.server);
  mismatched.key_file = p.alice.key_file;
  r = TlsContext::load(mismatched);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().message.find("is not the key of certificate_file") != std::string::npos, r.error().message);

  auto ca = kib::test::tls_config(p.server, &p.ca, ClientAuth::kRequired);
  ca.ca_file = p.pki.write("empty-ca.pem", "");
  r = TlsContext::load(ca);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().message.find("[tls] ca_file") == 0u, r.error().message);

  auto ciphers = kib::test::tls_config(p.server);
  ciphers.cipher_list = "NO-SUCH-CIPHER";
  r = TlsContext::load(ciphers);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().message.find("[tls] cipher_list") == 0u, r.error().message);
}

BOOST_AUTO_TEST_CASE(an_encrypted_key_needs_its_key_password) {
  Pki p;
  Issued locked = p.pki.server("locked", p.ca, "s3cret");
  auto cfg = kib::test::tls_config(locked);
  auto r = TlsContext::load(cfg);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().message.find("[tls] key_file") == 0u, r.error().message);
  BOOST_TEST(r.error().message.find("s3cret") == std::string::npos);
  cfg.key_password = "wrong";
  BOOST_TEST(!TlsContext::load(cfg).ok());
  cfg.key_password = "s3cret";
  r = TlsContext::load(cfg);
  BOOST_TEST_REQUIRE(r.ok(), (r.ok() ? "" : r.error().message));
  BOOST_TEST((*r)->summary().find("O=locked,CN=localhost, valid until ") == 0u, (*r)->summary());
  BOOST_TEST((*r)->not_after() > 0);
}

BOOST_AUTO_TEST_SUITE_END()
