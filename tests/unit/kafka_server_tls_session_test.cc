// The Kafka session of a TLS connection (docs/security.md "Principals"): on an SSL listener the
// principal is the client certificate's subject through principal_mapping_rules, User:ANONYMOUS
// without a certificate; on SASL_SSL a certificate names nothing (SASL does).
#include <boost/test/unit_test.hpp>

#include <optional>

#include "handler_services_support.h"
#include "server/kafka_server.h"
#include "server/context/request.h"
#include "tcp_server_test_support.h"
#include "tls_test_support.h"

using namespace kib;
using kib::test::Issued;
using kib::test::TestPki;
using kib::test::TlsLoopClient;

namespace {

struct Fixture {
  TestPki pki;
  Issued ca = pki.ca("Test CA");
  Issued server_cert = pki.server("server", ca);
  Issued alice = pki.client("alice", {{"O", "Example"}, {"CN", "Alice"}}, ca);
  test::IdleKafkaServer server{[](config::Config& c) {
    c.kafka.listeners = {{"SSL", config::SecurityProtocol::kSsl, {"127.0.0.1", 0}, std::nullopt},
                         {"SASL_SSL", config::SecurityProtocol::kSaslSsl, {"127.0.0.1", 0}, std::nullopt}};
  }};
  uint16_t ssl_port = 0;
  uint16_t sasl_ssl_port = 0;
  std::optional<kafka::Session> closed_session;  // the session of the last connection that closed

  Fixture() {
    auto cfg = kib::test::tls_config(server_cert, &ca, config::TlsConfig::ClientAuth::kRequested);
    cfg.principal_mapping_rules = "RULE:^CN=([^,]+),.*$/$1/L";
    const auto& listeners = server.services->config.kafka.listeners;
    BOOST_REQUIRE(server.kafka->set_tls_contexts(kib::test::load_tls_all(cfg, net::tls_listeners(listeners))).ok());
    auto p = server.kafka->listen(listeners[0], 0);
    BOOST_REQUIRE(p.ok());
    ssl_port = *p;
    p = server.kafka->listen(listeners[1], 1);
    BOOST_REQUIRE(p.ok());
    sasl_ssl_port = *p;
    server.kafka->tcp().on_close = [this](const std::shared_ptr<net::Connection>& c) {
      if (c->attachment) closed_session = *static_cast<kafka::Session*>(c->attachment.get());
    };
  }

  // An ApiVersions round trip over TLS, then the client goes away: the session it had.
  kafka::Session session_of(uint16_t port, const kib::test::TlsClientOptions& o) {
    closed_session.reset();
    {
      TlsLoopClient c(port, o);
      c.send(kib::test::api_versions_v0(1));
      pump(c, [&] {
        c.read_frames();
        return !c.frames.empty() || c.peer_closed();
      });
      BOOST_REQUIRE_MESSAGE(c.frames.size() == 1u, c.error());
    }
    LoopPumpDummy none;
    pump(none, [&] { return closed_session.has_value(); });
    BOOST_REQUIRE(closed_session.has_value());
    return *closed_session;
  }

  struct LoopPumpDummy {
    void io() {}
  };
  template <typename Client>
  void pump(Client& c, const std::function<bool()>& until) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!until() && std::chrono::steady_clock::now() < deadline) {
      uv_run(&server.loop, UV_RUN_NOWAIT);
      c.io();
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(kafka_server_tls_session)

BOOST_AUTO_TEST_CASE(an_ssl_session_is_named_by_the_client_certificate_through_the_mapping_rules) {
  Fixture f;
  kafka::Session s = f.session_of(f.ssl_port, {f.ca.cert_file, f.alice.cert_file, f.alice.key_file, 0, 0});
  BOOST_TEST(s.principal.str() == "User:alice");
  BOOST_TEST(s.listener == 0u);
  BOOST_TEST(config::security_protocol_name(s.protocol) == "SSL");
  BOOST_TEST(s.client_host == "127.0.0.1");
}

BOOST_AUTO_TEST_CASE(an_ssl_session_without_a_certificate_is_anonymous) {
  Fixture f;
  kafka::Session s = f.session_of(f.ssl_port, {f.ca.cert_file, "", "", 0, 0});
  BOOST_TEST(s.principal.str() == "User:ANONYMOUS");
}

BOOST_AUTO_TEST_CASE(a_sasl_ssl_session_takes_no_principal_from_a_certificate) {
  Fixture f;
  kafka::Session s = f.session_of(f.sasl_ssl_port, {f.ca.cert_file, f.alice.cert_file, f.alice.key_file, 0, 0});
  BOOST_TEST(s.principal.str() == "User:ANONYMOUS");
  BOOST_TEST(config::security_protocol_name(s.protocol) == "SASL_SSL");
}

BOOST_AUTO_TEST_CASE(a_tls_listener_without_a_context_is_refused) {
  test::IdleKafkaServer server;
  auto r = server.kafka->listen({"SSL", config::SecurityProtocol::kSsl, {"127.0.0.1", 0}, std::nullopt}, 0);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().message.find("uses TLS and no [tls] context is loaded") != std::string::npos);
}

// A SASL_SSL listener's context asks for no certificate: an SSL listener must not get it.
BOOST_AUTO_TEST_CASE(a_listener_is_refused_the_context_of_another_kind_of_listener) {
  TestPki pki;
  Issued ca = pki.ca("Test CA");
  Issued cert = pki.server("server", ca);
  test::IdleKafkaServer server;
  auto cfg = kib::test::tls_config(cert, &ca, config::TlsConfig::ClientAuth::kRequired);
  BOOST_REQUIRE(server.kafka->set_tls_contexts({kib::test::load_tls(cfg, {0, "SASL_SSL://127.0.0.1:0", false})}).ok());
  auto r = server.kafka->listen({"SSL", config::SecurityProtocol::kSsl, {"127.0.0.1", 0}, std::nullopt}, 0);
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().message.find("given the TLS context of a SASL_SSL listener") != std::string::npos,
             r.error().message);
}

BOOST_AUTO_TEST_SUITE_END()
