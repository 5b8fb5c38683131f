// SASL through the real KafkaServer on a SASL_PLAINTEXT listener (docs/security.md "SASL"):
// SaslHandshake v0-1 and SaslAuthenticate v0-2 with SCRAM-SHA-256/512 and PLAIN against
// credentials in the state database, the gate before authentication, the legacy v0 path of bare
// tokens, KIP-368 session lifetime and re-authentication, and the SCRAM credential APIs. The
// SCRAM client here is written from RFC 5802 on the crypto primitives the RFC 7677 vector checks
// (tests/unit/security_scram_test.cc).
#include <boost/test/unit_test.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <map>
#include <thread>

#include "handler_services_support.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/api_keys.h"
#include "kafka/protocol/generated/alter_user_scram_credentials.h"
#include "kafka/protocol/generated/api_versions.h"
#include "kafka/protocol/generated/describe_client_quotas.h"
#include "kafka/protocol/generated/describe_cluster.h"
#include "kafka/protocol/generated/describe_user_scram_credentials.h"
#include "kafka/protocol/generated/sasl_authenticate.h"
#include "kafka/protocol/generated/sasl_handshake.h"
#include "metrics/bridge_metrics.h"
#include "security/crypto.h"
#include "security/plain.h"
#include "security/scram.h"
#include "state/credential_store.h"
#include "support/kafka_test_client.h"

using namespace kib;
using namespace kib::kafka;
using security::ScramMechanism;

namespace {

constexpr int16_t kAuthFailed = 58, kIllegalState = 34, kUnsupportedMechanism = 33;

// A bridge with its first listener PLAINTEXT and its second SASL_PLAINTEXT.
struct SaslServer : test::IdleKafkaServer {
  uint16_t sasl_port = 0;
  explicit SaslServer(const std::function<void(config::Config&)>& configure = {})
      : IdleKafkaServer([&](config::Config& c) {
          c.kafka.listeners.push_back(
              {"SASL_PLAINTEXT", config::SecurityProtocol::kSaslPlaintext, {"127.0.0.1", 0}, std::nullopt});
          if (configure) configure(c);
        }) {
    sasl_port = listen_on(1);
  }
  void add_scram(const std::string& user, ScramMechanism m, const std::string& password, int32_t iterations = 4096) {
    auto c = security::make_scram_credential(m, password, iterations);
    BOOST_REQUIRE(store
                      ->run_blocking([&](SQLite::Database& db) {
                        state::upsert_scram_credential(db,
                                                       {user, std::string(security::scram_mechanism_name(m)), c.salt,
                                                        c.stored_key, c.server_key, c.iterations},
                                                       1);
                      })
                      .ok());
  }
  void add_plain(const std::string& user, const std::string& password) {
    auto c = security::make_plain_credential(password, 4096);
    BOOST_REQUIRE(store
                      ->run_blocking([&](SQLite::Database& db) {
                        state::upsert_plain_credential(db, {user, c.salt, c.hash, c.iterations}, 1);
                      })
                      .ok());
  }
};

Bytes bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }
std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }

struct Client : test::KafkaTestClient {
  uv_loop_t& loop;
  Client(SaslServer& s, uint16_t port) : test::KafkaTestClient(s.loop, port, "sasl-test"), loop(s.loop) {}
  explicit Client(SaslServer& s) : Client(s, s.sasl_port) {}

  msg::SaslHandshakeResponse handshake(const std::string& mechanism, int16_t version = 1) {
    msg::SaslHandshakeRequest r;
    r.mechanism = mechanism;
    return call<msg::SaslHandshakeResponse>(r, version);
  }
  msg::SaslAuthenticateResponse authenticate(const Bytes& token, int16_t version = 1) {
    msg::SaslAuthenticateRequest r;
    r.auth_bytes = token;
    return call<msg::SaslAuthenticateResponse>(r, version);
  }
  msg::DescribeClusterResponse describe_cluster() { return call<msg::DescribeClusterResponse>(msg::DescribeClusterRequest{}, 0); }

  // Runs the server's loop until the connection is closed (true) or a byte arrives or
  // `timeout_ms` passes (false).
  bool closed_by_server(int timeout_ms = 3000) {
    for (int waited = 0; waited < timeout_ms; waited += 2) {
      uv_run(&loop, UV_RUN_NOWAIT);
      if (!readable(2)) continue;
      uint8_t byte;
      ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK);
      return n <= 0;
    }
    return false;
  }
  // Every whole frame until the server closed the connection (the loop runs meanwhile);
  // nullopt if it did not close it within `timeout_ms`.
  std::optional<std::vector<Bytes>> frames_until_closed(int timeout_ms = 3000) {
    std::vector<Bytes> out;
    Bytes in;
    bool closed = false;
    for (int waited = 0; waited < timeout_ms && !closed; waited += 2) {
      uv_run(&loop, UV_RUN_NOWAIT);
      if (!readable(2)) continue;
      uint8_t buf[4096];
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) closed = true;
      else in.insert(in.end(), buf, buf + n);
    }
    if (!closed) return std::nullopt;
    size_t pos = 0;
    while (in.size() - pos >= 4) {
      uint32_t len = (uint32_t{in[pos]} << 24) | (uint32_t{in[pos + 1]} << 16) | (uint32_t{in[pos + 2]} << 8) | in[pos + 3];
      if (in.size() - pos - 4 < len) break;
      out.emplace_back(in.begin() + static_cast<long>(pos + 4), in.begin() + static_cast<long>(pos + 4 + len));
      pos += 4 + len;
    }
    return out;
  }
  // A bare length-prefixed frame (SaslHandshake v0's tokens).
  void send_raw(const Bytes& token) {
    uint8_t len[4] = {uint8_t(token.size() >> 24), uint8_t(token.size() >> 16), uint8_t(token.size() >> 8),
                      uint8_t(token.size())};
    BOOST_REQUIRE(test::write_all(fd, len, 4));
    if (!token.empty()) BOOST_REQUIRE(test::write_all(fd, token.data(), token.size()));
  }
  std::optional<Bytes> receive_raw(int timeout_ms = 5000) {
    for (int waited = 0; waited < timeout_ms; waited += 2) {
      uv_run(&loop, UV_RUN_NOWAIT);
      if (!readable(2)) continue;
      uint8_t prefix[4];
      if (!test::read_all(fd, prefix, 4)) return std::nullopt;
      uint32_t n = (uint32_t{prefix[0]} << 24) | (uint32_t{prefix[1]} << 16) | (uint32_t{prefix[2]} << 8) | prefix[3];
      Bytes out(n);
      if (n > 0 && !test::read_all(fd, out.data(), n)) return std::nullopt;
      return out;
    }
    return std::nullopt;
  }
};

// The client side of SCRAM (RFC 5802 §3), over any transport: `exchange` sends a token and
// returns the server's answer (nullopt: an error).
struct ScramClient {
  ScramClient(ScramMechanism m, std::string u, std::string p)
      : mechanism(m), user(std::move(u)), password(std::move(p)) {}
  ScramMechanism mechanism;
  std::string user, password;
  std::string client_nonce = "fyko+d2lbbFgONRv9qkxdawL";
  std::string bare, auth_message;
  Bytes server_key;

  Bytes first() {
    bare = "n=" + security::scram_saslname(user) + ",r=" + client_nonce;
    return bytes("n,," + bare);
  }
  // The client-final message for a server-first message; `tamper` flips a bit of the proof.
  Bytes final_message(const Bytes& server_first, bool tamper = false) {
    std::string sf = text(server_first);
    std::string nonce, salt;
    int32_t iterations = 0;
    for (size_t start = 0; start < sf.size();) {
      size_t comma = sf.find(',', start);
      std::string attr = sf.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (attr.rfind("r=", 0) == 0) nonce = attr.substr(2);
      if (attr.rfind("s=", 0) == 0) salt = attr.substr(2);
      if (attr.rfind("i=", 0) == 0) iterations = std::stoi(attr.substr(2));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    BOOST_REQUIRE(nonce.rfind(client_nonce, 0) == 0);
    const security::Digest d = security::scram_digest(mechanism);
    Bytes salted = security::pbkdf2(d, security::as_bytes(password), *security::base64_decode(salt), iterations);
    Bytes client_key = security::hmac(d, salted, security::as_bytes("Client Key"));
    Bytes stored_key = security::hash(d, client_key);
    server_key = security::hmac(d, salted, security::as_bytes("Server Key"));
    const std::string without_proof = "c=biws,r=" + nonce;
    auth_message = bare + "," + sf + "," + without_proof;
    Bytes proof = security::hmac(d, stored_key, security::as_bytes(auth_message));
    for (size_t i = 0; i < proof.size(); ++i) proof[i] ^= client_key[i];
    if (tamper) proof[0] ^= 1;
    return bytes(without_proof + ",p=" + security::base64_encode(proof));
  }
  bool server_signature_ok(const Bytes& server_final) {
    Bytes sig = security::hmac(security::scram_digest(mechanism), server_key, security::as_bytes(auth_message));
    return text(server_final) == "v=" + security::base64_encode(sig);
  }
};

std::string name(ScramMechanism m) { return std::string(security::scram_mechanism_name(m)); }

// Handshake and both SaslAuthenticate rounds; returns the last response.
msg::SaslAuthenticateResponse scram_login(Client& c, ScramMechanism m, const std::string& user,
                                          const std::string& password, int16_t version = 1, bool tamper = false) {
  BOOST_REQUIRE(c.handshake(name(m)).error_code == 0);
  ScramClient sc{m, user, password};
  auto first = c.authenticate(sc.first(), version);
  if (first.error_code != 0) return first;
  auto fin = c.authenticate(sc.final_message(first.auth_bytes, tamper), version);
  if (fin.error_code == 0) BOOST_TEST(sc.server_signature_ok(fin.auth_bytes));
  return fin;
}

Bytes plain_token(const std::string& authzid, const std::string& user, const std::string& password) {
  return bytes(authzid + '\0' + user + '\0' + password);
}

// Closed by the server with nothing sent first.
bool closed_silently(Client& c) {
  auto frames = c.frames_until_closed();
  return frames && frames->empty();
}

double sasl_count(const std::string& mechanism, const std::string& result) {
  return metrics::bridge_metrics().sasl_authentications.labels({mechanism, result}).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sasl_handlers)

BOOST_AUTO_TEST_CASE(scram_sha256_and_sha512_logins_open_every_api) {
  SaslServer s;
  s.add_scram("alice", ScramMechanism::kSha256, "alice-secret");
  s.add_scram("alice", ScramMechanism::kSha512, "alice-secret-512");
  for (auto [m, password] : {std::pair{ScramMechanism::kSha256, "alice-secret"},
                             std::pair{ScramMechanism::kSha512, "alice-secret-512"}}) {
    for (int16_t v : {0, 1, 2}) {
      const double before = sasl_count(name(m), "success");
      Client c(s);
      auto hs = c.handshake(name(m));
      BOOST_TEST(hs.error_code == 0);
      BOOST_TEST((hs.mechanisms == std::vector<std::string>{"SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"}));
      ScramClient sc{m, "alice", password};
      auto first = c.authenticate(sc.first(), v);
      BOOST_TEST(first.error_code == 0);
      BOOST_TEST(first.session_lifetime_ms == 0);
      auto fin = c.authenticate(sc.final_message(first.auth_bytes), v);
      BOOST_TEST(fin.error_code == 0);
      BOOST_TEST(sc.server_signature_ok(fin.auth_bytes));
      BOOST_TEST(fin.session_lifetime_ms == 0);  // [sasl] connections_max_reauth_ms = 0
      BOOST_TEST(c.describe_cluster().error_code == 0);
      BOOST_TEST(sasl_count(name(m), "success") == before + 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(api_versions_is_served_before_authentication) {
  SaslServer s;
  Client c(s);
  auto r = c.call<msg::ApiVersionsResponse>(msg::ApiVersionsRequest{}, 3);
  BOOST_TEST(r.error_code == 0);
  bool handshake = false, authenticate = false;
  for (const auto& k : r.api_keys) {
    if (k.api_key == 17) handshake = k.min_version == 0 && k.max_version == 1;
    if (k.api_key == 36) authenticate = k.min_version == 0 && k.max_version == 2;
  }
  BOOST_TEST(handshake);
  BOOST_TEST(authenticate);
  // Still unauthenticated: ApiVersions again, then a handshake.
  BOOST_TEST(c.call<msg::ApiVersionsResponse>(msg::ApiVersionsRequest{}, 0).error_code == 0);
  BOOST_TEST(c.handshake("PLAIN").error_code == 0);
}

BOOST_AUTO_TEST_CASE(another_api_before_authentication_closes_the_connection_without_an_answer) {
  SaslServer s;
  const double before = metrics::bridge_metrics().connections_closed.labels({"sasl_unauthenticated_request"}).value();
  Client c(s);
  c.send(msg::DescribeClusterRequest{}, 0);
  BOOST_TEST(closed_silently(c));
  BOOST_TEST(metrics::bridge_metrics().connections_closed.labels({"sasl_unauthenticated_request"}).value() == before + 1);
  // After the handshake, only SaslAuthenticate.
  Client d(s);
  BOOST_TEST(d.handshake("SCRAM-SHA-256").error_code == 0);
  d.send(msg::ApiVersionsRequest{}, 0);
  BOOST_TEST(closed_silently(d));
}

BOOST_AUTO_TEST_CASE(sasl_authenticate_before_the_handshake_closes_the_connection) {
  SaslServer s;
  Client c(s);
  msg::SaslAuthenticateRequest r;
  r.auth_bytes = plain_token("", "u", "p");
  c.send(r, 1);
  BOOST_TEST(closed_silently(c));
}

BOOST_AUTO_TEST_CASE(a_wrong_password_gets_sasl_authentication_failed_then_the_connection_closes) {
  SaslServer s;
  s.add_scram("bob", ScramMechanism::kSha512, "right");
  const double before = sasl_count("SCRAM-SHA-512", "failure");
  Client c(s);
  auto r = scram_login(c, ScramMechanism::kSha512, "bob", "wrong");
  BOOST_TEST(r.error_code == kAuthFailed);
  BOOST_TEST(*r.error_message ==
             "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512");
  BOOST_TEST(r.auth_bytes.empty());
  BOOST_TEST(c.closed_by_server());
  BOOST_TEST(sasl_count("SCRAM-SHA-512", "failure") == before + 1);
}

BOOST_AUTO_TEST_CASE(an_unknown_user_gets_the_same_answer_as_a_wrong_password) {
  SaslServer s;
  Client c(s);
  BOOST_TEST(c.handshake("SCRAM-SHA-256").error_code == 0);
  ScramClient sc{ScramMechanism::kSha256, "nobody", "x"};
  auto r = c.authenticate(sc.first());
  BOOST_TEST(r.error_code == kAuthFailed);
  BOOST_TEST(*r.error_message ==
             "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256");
  BOOST_TEST(c.closed_by_server());
}

// The test: a client-final message with a wrong proof, the server's error ignored,
// then an API: refused, the connection closed, no data.
BOOST_AUTO_TEST_CASE(a_wrong_proof_whose_error_is_ignored_leaves_nothing_usable) {
  SaslServer s;
  s.add_scram("carol", ScramMechanism::kSha256, "pw");
  Client c(s);
  BOOST_REQUIRE(c.handshake("SCRAM-SHA-256").error_code == 0);
  ScramClient sc{ScramMechanism::kSha256, "carol", "pw"};
  auto first = c.authenticate(sc.first());
  BOOST_REQUIRE(first.error_code == 0);
  msg::SaslAuthenticateRequest fin;
  fin.auth_bytes = sc.final_message(first.auth_bytes, /*tamper=*/true);
  const int32_t auth_corr = c.send(fin, 1);
  // Without reading the answer: an API, and another SaslAuthenticate with the right proof.
  const int32_t describe_corr = c.send(msg::DescribeClusterRequest{}, 0);
  msg::SaslAuthenticateRequest right;
  right.auth_bytes = sc.final_message(first.auth_bytes);
  const int32_t retry_corr = c.send(right, 1);
  auto frames = c.frames_until_closed();
  BOOST_REQUIRE_MESSAGE(frames, "the connection stayed open");
  // At most the SASL_AUTHENTICATION_FAILED answer came back; nothing for the later requests.
  BOOST_TEST(frames->size() <= 1u);
  for (const Bytes& f : *frames) {
    ByteReader r(f);
    int32_t corr = r.be<int32_t>();
    BOOST_TEST(corr == auth_corr);
    BOOST_TEST(corr != describe_corr);
    BOOST_TEST(corr != retry_corr);
  }
}

BOOST_AUTO_TEST_CASE(plain_logins_check_the_stored_hash_with_kafkas_messages) {
  SaslServer s;
  s.add_plain("dave", "plain-pw");
  {
    Client c(s);
    BOOST_TEST(c.handshake("PLAIN").error_code == 0);
    auto r = c.authenticate(plain_token("", "dave", "plain-pw"));
    BOOST_TEST(r.error_code == 0);
    BOOST_TEST(r.auth_bytes.empty());
    BOOST_TEST(c.describe_cluster().error_code == 0);
  }
  {
    Client c(s);
    BOOST_TEST(c.handshake("PLAIN").error_code == 0);
    auto r = c.authenticate(plain_token("", "dave", "other"));
    BOOST_TEST(r.error_code == kAuthFailed);
    BOOST_TEST(*r.error_message == "Authentication failed: Invalid username or password");
    BOOST_TEST(c.closed_by_server());
  }
  {
    Client c(s);
    BOOST_TEST(c.handshake("PLAIN").error_code == 0);
    auto r = c.authenticate(plain_token("", "nobody", "plain-pw"));
    BOOST_TEST(*r.error_message == "Authentication failed: Invalid username or password");
  }
  {
    Client c(s);
    BOOST_TEST(c.handshake("PLAIN").error_code == 0);
    auto r = c.authenticate(plain_token("eve", "dave", "plain-pw"));
    BOOST_TEST(r.error_code == kAuthFailed);
    BOOST_TEST(*r.error_message ==
               "Authentication failed: Client requested an authorization id that is different from username");
  }
  {
    Client c(s);
    BOOST_TEST(c.handshake("PLAIN").error_code == 0);
    auto r = c.authenticate(plain_token("", "dave", ""));
    BOOST_TEST(*r.error_message == "Authentication failed: password not specified");
  }
}

BOOST_AUTO_TEST_CASE(a_scram_credential_does_not_open_plain_and_the_reverse) {
  SaslServer s;
  s.add_scram("frank", ScramMechanism::kSha256, "pw");
  s.add_plain("grace", "pw");
  Client c(s);
  BOOST_TEST(c.handshake("PLAIN").error_code == 0);
  BOOST_TEST(c.authenticate(plain_token("", "frank", "pw")).error_code == kAuthFailed);
  Client d(s);
  BOOST_TEST(scram_login(d, ScramMechanism::kSha256, "grace", "pw").error_code == kAuthFailed);
  Client e(s);
  BOOST_TEST(scram_login(e, ScramMechanism::kSha512, "frank", "pw").error_code == kAuthFailed);
}

BOOST_AUTO_TEST_CASE(an_unsupported_mechanism_is_answered_with_the_enabled_ones_then_closed) {
  SaslServer s([](config::Config& c) { c.sasl.enabled_mechanisms = {"SCRAM-SHA-512"}; });
  Client c(s);
  auto r = c.handshake("PLAIN");
  BOOST_TEST(r.error_code == kUnsupportedMechanism);
  BOOST_TEST((r.mechanisms == std::vector<std::string>{"SCRAM-SHA-512"}));
  BOOST_TEST(c.closed_by_server());
  Client d(s);
  BOOST_TEST(d.handshake("GSSAPI").error_code == kUnsupportedMechanism);
}

BOOST_AUTO_TEST_CASE(legacy_v0_handshake_exchanges_bare_tokens) {
  SaslServer s;
  s.add_scram("henry", ScramMechanism::kSha512, "pw512");
  s.add_plain("ivy", "pwplain");
  {
    Client c(s);
    auto hs = c.handshake("SCRAM-SHA-512", 0);
    BOOST_TEST(hs.error_code == 0);
    ScramClient sc{ScramMechanism::kSha512, "henry", "pw512"};
    c.send_raw(sc.first());
    auto server_first = c.receive_raw();
    BOOST_REQUIRE(server_first);
    c.send_raw(sc.final_message(*server_first));
    auto server_final = c.receive_raw();
    BOOST_REQUIRE(server_final);
    BOOST_TEST(sc.server_signature_ok(*server_final));
    // Kafka requests again from here on.
    BOOST_TEST(c.describe_cluster().error_code == 0);
  }
  {
    Client c(s);
    BOOST_TEST(c.handshake("PLAIN", 0).error_code == 0);
    c.send_raw(plain_token("", "ivy", "pwplain"));
    auto answer = c.receive_raw();
    BOOST_REQUIRE(answer);
    BOOST_TEST(answer->empty());  // Kafka answers PLAIN with an empty token
    BOOST_TEST(c.describe_cluster().error_code == 0);
  }
  {
    // A failure has no room for an error code: the connection closes.
    Client c(s);
    BOOST_TEST(c.handshake("PLAIN", 0).error_code == 0);
    c.send_raw(plain_token("", "ivy", "wrong"));
    BOOST_TEST(closed_silently(c));
  }
  {
    Client c(s);
    BOOST_TEST(c.handshake("SCRAM-SHA-512", 0).error_code == 0);
    ScramClient sc{ScramMechanism::kSha512, "henry", "pw512"};
    c.send_raw(sc.first());
    auto server_first = c.receive_raw();
    BOOST_REQUIRE(server_first);
    c.send_raw(sc.final_message(*server_first, /*tamper=*/true));
    BOOST_TEST(closed_silently(c));
  }
}

BOOST_AUTO_TEST_CASE(on_a_plaintext_listener_the_sasl_requests_get_illegal_sasl_state) {
  SaslServer s;
  Client c(s, s.port);
  auto hs = c.handshake("PLAIN");
  BOOST_TEST(hs.error_code == kIllegalState);
  BOOST_TEST(hs.mechanisms.empty());
  auto a = c.authenticate(plain_token("", "u", "p"));
  BOOST_TEST(a.error_code == kIllegalState);
  BOOST_TEST(*a.error_message == "SaslAuthenticate request received after successful authentication");
  BOOST_TEST(c.describe_cluster().error_code == 0);
}

BOOST_AUTO_TEST_CASE(an_authenticated_connection_without_a_session_lifetime_cannot_reauthenticate) {
  SaslServer s;
  s.add_plain("jack", "pw");
  Client c(s);
  BOOST_TEST(c.handshake("PLAIN").error_code == 0);
  BOOST_TEST(c.authenticate(plain_token("", "jack", "pw")).error_code == 0);
  BOOST_TEST(c.handshake("PLAIN").error_code == kIllegalState);
  BOOST_TEST(c.authenticate(plain_token("", "jack", "pw")).error_code == kIllegalState);
  BOOST_TEST(c.describe_cluster().error_code == 0);
}

BOOST_AUTO_TEST_CASE(the_session_lifetime_is_sent_from_v1_and_an_expired_session_serves_nothing_else) {
  SaslServer s([](config::Config& c) { c.sasl.connections_max_reauth_ms = 400; });
  s.add_scram("kate", ScramMechanism::kSha256, "pw");
  Client c(s);
  auto r = scram_login(c, ScramMechanism::kSha256, "kate", "pw", 1);
  BOOST_TEST(r.error_code == 0);
  BOOST_TEST(r.session_lifetime_ms == 400);
  BOOST_TEST(c.describe_cluster().error_code == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(450));
  const double before = metrics::bridge_metrics().connections_closed.labels({"sasl_session_expired"}).value();
  c.send(msg::DescribeClusterRequest{}, 0);
  BOOST_TEST(closed_silently(c));
  BOOST_TEST(metrics::bridge_metrics().connections_closed.labels({"sasl_session_expired"}).value() == before + 1);
}

BOOST_AUTO_TEST_CASE(reauthentication_renews_an_expired_session_for_the_same_user) {
  SaslServer s([](config::Config& c) { c.sasl.connections_max_reauth_ms = 1500; });
  s.add_scram("liam", ScramMechanism::kSha512, "pw");
  Client c(s);
  BOOST_TEST(scram_login(c, ScramMechanism::kSha512, "liam", "pw", 2).error_code == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  const double before = sasl_count("SCRAM-SHA-512", "reauthentication_success");
  auto r = scram_login(c, ScramMechanism::kSha512, "liam", "pw", 2);
  BOOST_TEST(r.error_code == 0);
  BOOST_TEST(r.session_lifetime_ms == 1500);
  BOOST_TEST(sasl_count("SCRAM-SHA-512", "reauthentication_success") == before + 1);
  BOOST_TEST(c.describe_cluster().error_code == 0);
  // At most one re-authentication a second (KafkaChannel): another one at once is refused.
  BOOST_TEST(c.handshake("SCRAM-SHA-512").error_code == kIllegalState);
}

BOOST_AUTO_TEST_CASE(reauthentication_as_another_user_or_mechanism_fails_and_closes) {
  SaslServer s([](config::Config& c) { c.sasl.connections_max_reauth_ms = 60000; });
  s.add_scram("mia", ScramMechanism::kSha256, "pw");
  s.add_scram("noah", ScramMechanism::kSha256, "pw2");
  s.add_plain("mia", "pw");
  {
    Client c(s);
    BOOST_TEST(scram_login(c, ScramMechanism::kSha256, "mia", "pw").error_code == 0);
    auto r = scram_login(c, ScramMechanism::kSha256, "noah", "pw2");
    BOOST_TEST(r.error_code == kAuthFailed);
    BOOST_TEST(*r.error_message == "Cannot change principals during re-authentication from User.mia: User.noah");
    BOOST_TEST(c.closed_by_server());
  }
  {
    Client c(s);
    BOOST_TEST(scram_login(c, ScramMechanism::kSha256, "mia", "pw").error_code == 0);
    BOOST_TEST(c.handshake("PLAIN").error_code == 0);
    auto r = c.authenticate(plain_token("", "mia", "pw"));
    BOOST_TEST(r.error_code == kAuthFailed);
    BOOST_TEST(*r.error_message ==
               "SASL mechanism 'PLAIN' requested by client is not supported for re-authentication of mechanism "
               "'SCRAM-SHA-256'");
    BOOST_TEST(c.closed_by_server());
  }
  {
    // During a re-authentication only SaslAuthenticate is served.
    Client c(s);
    BOOST_TEST(scram_login(c, ScramMechanism::kSha256, "mia", "pw").error_code == 0);
    BOOST_TEST(c.handshake("SCRAM-SHA-256").error_code == 0);
    c.send(msg::DescribeClusterRequest{}, 0);
    BOOST_TEST(closed_silently(c));
  }
}

BOOST_AUTO_TEST_CASE(credentials_changed_while_the_server_runs_apply_to_the_next_login) {
  SaslServer s;
  Client before(s);
  BOOST_TEST(scram_login(before, ScramMechanism::kSha256, "olivia", "pw").error_code == kAuthFailed);
  s.add_scram("olivia", ScramMechanism::kSha256, "pw");
  Client after(s);
  BOOST_TEST(scram_login(after, ScramMechanism::kSha256, "olivia", "pw").error_code == 0);
  s.add_scram("olivia", ScramMechanism::kSha256, "new-pw");
  Client old_password(s);
  BOOST_TEST(scram_login(old_password, ScramMechanism::kSha256, "olivia", "pw").error_code == kAuthFailed);
  Client new_password(s);
  BOOST_TEST(scram_login(new_password, ScramMechanism::kSha256, "olivia", "new-pw").error_code == 0);
  // The connection that authenticated keeps working: a credential change ends no session.
  BOOST_TEST(after.describe_cluster().error_code == 0);
}

BOOST_AUTO_TEST_CASE(alter_user_scram_credentials_stores_keys_from_the_salted_password) {
  SaslServer s;
  Client admin(s, s.port);  // the PLAINTEXT listener: no authorizer, as a Kafka broker without one
  msg::AlterUserScramCredentialsRequest req;
  Bytes salt = security::random_bytes(20);
  msg::AlterUserScramCredentialsRequest::ScramCredentialUpsertion up;
  up.name = "pat";
  up.mechanism = 2;
  up.iterations = 8192;
  up.salt = salt;
  up.salted_password = security::scram_salted_password(ScramMechanism::kSha512, "pat-pw", salt, 8192);
  req.upsertions.push_back(up);
  auto r = admin.call<msg::AlterUserScramCredentialsResponse>(req, 0);
  BOOST_REQUIRE(r.results.size() == 1u);
  BOOST_TEST(r.results[0].user == "pat");
  BOOST_TEST(r.results[0].error_code == 0);
  BOOST_TEST(!r.results[0].error_message.has_value());
  Client c(s);
  BOOST_TEST(scram_login(c, ScramMechanism::kSha512, "pat", "pat-pw").error_code == 0);

  // Deleting it ends the next login.
  msg::AlterUserScramCredentialsRequest del;
  del.deletions.push_back({"pat", 2});
  BOOST_TEST(admin.call<msg::AlterUserScramCredentialsResponse>(del, 0).results.at(0).error_code == 0);
  Client d(s);
  BOOST_TEST(scram_login(d, ScramMechanism::kSha512, "pat", "pat-pw").error_code == kAuthFailed);
}

BOOST_AUTO_TEST_CASE(alter_user_scram_credentials_refuses_as_kafka_does) {
  SaslServer s;
  s.add_scram("quinn", ScramMechanism::kSha256, "pw");
  Client admin(s, s.port);
  auto upsert = [](std::string user, int8_t mechanism, int32_t iterations) {
    msg::AlterUserScramCredentialsRequest::ScramCredentialUpsertion u;
    u.name = std::move(user);
    u.mechanism = mechanism;
    u.iterations = iterations;
    u.salt = bytes("salt");
    u.salted_password = Bytes(32, 7);
    return u;
  };
  msg::AlterUserScramCredentialsRequest req;
  req.deletions.push_back({"nobody", 1});
  req.deletions.push_back({"quinn", 1});
  req.upsertions.push_back(upsert("quinn", 1, 4096));
  req.upsertions.push_back(upsert("few", 1, 4095));
  req.upsertions.push_back(upsert("many", 2, 16385));
  req.upsertions.push_back(upsert("", 1, 4096));
  req.upsertions.push_back(upsert("mech", 3, 4096));
  req.upsertions.push_back(upsert("fine", 1, 16384));
  auto r = admin.call<msg::AlterUserScramCredentialsResponse>(req, 0);
  std::map<std::string, std::pair<int16_t, std::string>> got;
  for (const auto& x : r.results) got[x.user] = {x.error_code, x.error_message.value_or("<null>")};
  using P = std::pair<int16_t, std::string>;
  BOOST_TEST(r.results.size() == 7u);
  BOOST_TEST((got["nobody"] == P{91, "Attempt to delete a user credential that does not exist"}));
  BOOST_TEST((got["quinn"] == P{92, "A user credential cannot be altered twice in the same request"}));
  BOOST_TEST((got["few"] == P{93, "Too few iterations"}));
  BOOST_TEST((got["many"] == P{93, "Too many iterations"}));
  BOOST_TEST((got[""] == P{93, "Username must not be empty"}));
  BOOST_TEST((got["mech"] == P{33, "Unknown SCRAM mechanism"}));
  BOOST_TEST((got["fine"] == P{0, "<null>"}));
  // "quinn" was refused as a whole: its deletion did not happen, its old password still works.
  msg::DescribeUserScramCredentialsRequest d;
  d.users = std::vector<msg::DescribeUserScramCredentialsRequest::UserName>{{"quinn"}, {"fine"}};
  auto described = admin.call<msg::DescribeUserScramCredentialsResponse>(d, 0);
  BOOST_REQUIRE(described.results.size() == 2u);
  BOOST_TEST(described.results[0].error_code == 0);
  BOOST_TEST(described.results[0].credential_infos.size() == 1u);
  BOOST_TEST(described.results[1].error_code == 0);
  Client c(s);
  BOOST_TEST(scram_login(c, ScramMechanism::kSha256, "quinn", "pw").error_code == 0);
}

BOOST_AUTO_TEST_CASE(describe_user_scram_credentials_lists_mechanisms_and_iterations_only) {
  SaslServer s;
  s.add_scram("rose", ScramMechanism::kSha256, "pw", 4096);
  s.add_scram("rose", ScramMechanism::kSha512, "pw", 8192);
  s.add_scram("sam", ScramMechanism::kSha512, "pw", 5000);
  s.add_plain("tina", "pw");  // PLAIN users are not SCRAM credentials
  Client admin(s, s.port);
  using Req = msg::DescribeUserScramCredentialsRequest;
  auto all = admin.call<msg::DescribeUserScramCredentialsResponse>(Req{}, 0);
  BOOST_TEST(all.error_code == 0);
  BOOST_REQUIRE(all.results.size() == 2u);
  BOOST_TEST(all.results[0].user == "rose");
  BOOST_REQUIRE(all.results[0].credential_infos.size() == 2u);
  BOOST_TEST(all.results[0].credential_infos[0].mechanism == 1);
  BOOST_TEST(all.results[0].credential_infos[0].iterations == 4096);
  BOOST_TEST(all.results[0].credential_infos[1].mechanism == 2);
  BOOST_TEST(all.results[0].credential_infos[1].iterations == 8192);
  BOOST_TEST(all.results[1].user == "sam");
  Req null_users;
  null_users.users = std::nullopt;
  BOOST_TEST(admin.call<msg::DescribeUserScramCredentialsResponse>(null_users, 0).results.size() == 2u);

  Req some;
  some.users = std::vector<Req::UserName>{{"sam"}, {"tina"}, {"sam"}, {"rose"}};
  auto r = admin.call<msg::DescribeUserScramCredentialsResponse>(some, 0);
  BOOST_REQUIRE(r.results.size() == 3u);
  BOOST_TEST(r.results[0].user == "sam");
  BOOST_TEST(r.results[0].error_code == 92);
  BOOST_TEST(*r.results[0].error_message == "Cannot describe SCRAM credentials for the same user twice in a single request: sam");
  BOOST_TEST(r.results[1].user == "tina");
  BOOST_TEST(r.results[1].error_code == 91);
  BOOST_TEST(*r.results[1].error_message == "Attempt to describe a user credential that does not exist: tina");
  BOOST_TEST(r.results[2].user == "rose");
  BOOST_TEST(r.results[2].credential_infos.size() == 2u);
}

BOOST_AUTO_TEST_CASE(describe_client_quotas_has_no_entries_and_checks_the_filter) {
  SaslServer s;
  Client c(s, s.port);
  using Req = msg::DescribeClientQuotasRequest;
  for (int16_t v : {0, 1}) {
    Req users;
    users.components.push_back({"user", 2, std::nullopt});
    auto r = c.call<msg::DescribeClientQuotasResponse>(users, v);
    BOOST_TEST(r.error_code == 0);
    BOOST_REQUIRE(r.entries.has_value());
    BOOST_TEST(r.entries->empty());
  }
  auto refused = [&](Req r) {
    auto resp = c.call<msg::DescribeClientQuotasResponse>(r, 1);
    BOOST_TEST(!resp.entries.has_value());
    return std::pair{resp.error_code, resp.error_message.value_or("")};
  };
  Req empty_type;
  empty_type.components.push_back({"", 2, std::nullopt});
  BOOST_TEST((refused(empty_type) == std::pair<int16_t, std::string>{42, "Invalid empty entity type."}));
  Req unknown;
  unknown.components.push_back({"group", 2, std::nullopt});
  BOOST_TEST((refused(unknown) == std::pair<int16_t, std::string>{35, "Unsupported entity type group"}));
  Req exact_null;
  exact_null.components.push_back({"user", 0, std::nullopt});
  BOOST_TEST(refused(exact_null).first == 42);
  Req ip_and_user;
  ip_and_user.components.push_back({"ip", 2, std::nullopt});
  ip_and_user.components.push_back({"user", 2, std::nullopt});
  BOOST_TEST(refused(ip_and_user).first == 42);
}

BOOST_AUTO_TEST_SUITE_END()
