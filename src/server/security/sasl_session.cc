#include "server/security/sasl_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdint>

#include "bridge/security/sasl_authenticator.h"
#include "common/text.h"
#include "kafka/protocol/generated/api_keys.h"
#include "server/context/request.h"
#include "server/context/services.h"
#include "metrics/bridge_metrics.h"

namespace kib::kafka {
namespace {

constexpr int16_t kApiVersions = 18;
constexpr int16_t kSaslHandshake = 17;
constexpr int16_t kSaslAuthenticate = 36;

SaslRefusal refuse(std::string reason, const char* metric) { return SaslRefusal{std::move(reason), metric}; }

// A length placeholder (patched by Responder::finish) and the token. Written so because g++
// 12's -Wstringop-overflow misreads a vector insert after the 4-byte placeholder here.
ByteWriter bare_token_frame(const Bytes& token) {
  ByteWriter w(4 + token.size());
  w.zeros(4 + token.size());
  if (!token.empty()) std::memcpy(w.data() + 4, token.data(), token.size());
  return w;
}

}  // namespace

uint64_t sasl_clock_ms() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

std::optional<SaslRefusal> sasl_admission(const SaslSession& s, int16_t api_key, uint64_t now_ms) {
  const std::string api = msg::api_name(api_key);
  switch (s.stage) {
    case SaslSession::Stage::kInitial:
      if (api_key == kApiVersions || api_key == kSaslHandshake) return std::nullopt;
      if (api_key == kSaslAuthenticate)
        return refuse("SaslAuthenticate before SaslHandshake", "sasl_illegal_state");
      return refuse(api + " before SASL authentication (only ApiVersions, SaslHandshake and SaslAuthenticate are served)",
                    "sasl_unauthenticated_request");
    case SaslSession::Stage::kHandshaken:
      if (api_key != kSaslAuthenticate) {
        SaslRefusal r = refuse(api + " during SASL " + (s.reauthenticating ? "re-authentication" : "authentication") +
                                   " (only SaslAuthenticate may follow SaslHandshake)",
                               s.reauthenticating ? "sasl_illegal_state" : "sasl_unauthenticated_request");
        r.answer_illegal_sasl_state = true;
        return r;
      }
      if (s.exchange && s.exchange->busy())
        return refuse("SaslAuthenticate before the previous SASL token was answered", "sasl_illegal_state");
      return std::nullopt;
    case SaslSession::Stage::kAuthenticated:
      // KIP-368: once the session expired only a SaslHandshake (a re-authentication) is served.
      if (s.expires_at_ms != 0 && now_ms > s.expires_at_ms && api_key != kSaslHandshake)
        return refuse(api + " after the SASL session expired (connections_max_reauth_ms)", "sasl_session_expired");
      return std::nullopt;
    case SaslSession::Stage::kFailed:
      return refuse(api + " after a failed SASL authentication", "sasl_authentication_failed");
  }
  return std::nullopt;
}

namespace {

// The end of one step: the session becomes authenticated or failed when the exchange ended.
void conclude(const Services& services, const std::shared_ptr<net::Connection>& c,
              const std::shared_ptr<bridge::SaslExchange>& ex, bridge::SaslStepResult r,
              const std::function<void(SaslOutcome)>& done) {
  auto* session = static_cast<Session*>(c->attachment.get());
  if (!session || session->sasl.exchange != ex) return;
  SaslSession& s = session->sasl;
  const std::string mechanism(security::sasl_mechanism_name(ex->mechanism()));
  const bool reauth = s.reauthenticating;
  // SaslServerAuthenticator.ReauthInfo.ensurePrincipalUnchanged.
  if (!r.failure && r.complete && reauth && ex->username() != s.user)
    r.failure = security::SaslFailure{
        "Cannot change principals during re-authentication from User." + s.user + ": User." + ex->username(), true};
  SaslOutcome out;
  if (r.failure) {
    out.error = r.failure->tell_client
                    ? r.failure->reason
                    : "Authentication failed during " + std::string(reauth ? "re-authentication" : "authentication") +
                          " due to invalid credentials with SASL mechanism " + mechanism;
    s.stage = SaslSession::Stage::kFailed;
    s.exchange.reset();
    metrics::record_sasl_authentication(mechanism, reauth ? "reauthentication_failure" : "failure");
    spdlog::info("conn={} peer={} client={} SASL/{} {} failed for user {}: {}", c->id(), c->peer(),
                 esc(session->client_id), mechanism, reauth ? "re-authentication" : "authentication",
                 esc(ex->claimed_username()), esc(r.failure->reason));
    done(std::move(out));
    // The answer goes out, then the connection closes; nothing else is served on it.
    metrics::record_connection_closed("sasl_authentication_failed");
    c->close_after_responses("SASL authentication failed");
    return;
  }
  out.response = std::move(r.response);
  if (r.complete) {
    const uint64_t lifetime = services.config.sasl.connections_max_reauth_ms;
    s.stage = SaslSession::Stage::kAuthenticated;
    s.mechanism = ex->mechanism();
    s.user = ex->username();
    s.exchange.reset();
    s.raw_tokens = false;
    s.reauthenticating = false;
    s.expires_at_ms = lifetime == 0 ? 0 : sasl_clock_ms() + lifetime;
    session->principal = security::KafkaPrincipal::user(s.user);
    c->set_authenticated(true);
    out.complete = true;
    out.session_lifetime_ms = static_cast<int64_t>(std::min<uint64_t>(lifetime, INT64_MAX));
    metrics::record_sasl_authentication(mechanism, reauth ? "reauthentication_success" : "success");
    spdlog::info("conn={} peer={} client={} SASL/{} {} as {}{}", c->id(), c->peer(), esc(session->client_id), mechanism,
                 reauth ? "re-authenticated" : "authenticated", esc(session->principal.str()),
                 lifetime == 0 ? std::string() : fmt::format(" (session lifetime {} ms)", lifetime));
  }
  done(std::move(out));
}

}  // namespace

void sasl_step(const Services& services, const std::shared_ptr<net::Connection>& conn, Session& session, Bytes token,
               std::function<void(SaslOutcome)> done) {
  std::shared_ptr<bridge::SaslExchange> ex = session.sasl.exchange;
  if (!session.sasl.reauth_refusal.empty()) {
    // A re-authentication that changed the mechanism fails at its first token (Kafka's
    // REAUTH_BAD_MECHANISM state).
    bridge::SaslStepResult r;
    r.failure = security::SaslFailure{session.sasl.reauth_refusal, true};
    return conclude(services, conn, ex, std::move(r), done);
  }
  std::weak_ptr<net::Connection> weak = conn;
  const Services* svc = &services;
  services.sasl.step(
      ex, std::move(token),
      [svc, weak, ex, done = std::move(done)](bridge::SaslStepResult r) {
        auto c = weak.lock();
        if (!c || c->closed()) return;
        conclude(*svc, c, ex, std::move(r), done);
      },
      // A PLAIN check whose connection closed while it waited is dropped unhashed (the bridge
      // does not read a connection whose request is being answered, so it peeks).
      [weak] {
        auto c = weak.lock();
        return c && !c->peer_gone();
      });
}

void serve_raw_sasl_token(const Services& services, const std::shared_ptr<net::Connection>& conn, uint64_t seq,
                          Bytes frame, Session& session) {
  RequestHeaderInfo info;
  info.api_key = kSaslAuthenticate;  // what the token stands for, in the request metrics
  info.client_id = session.client_id;
  info.received_at = std::chrono::steady_clock::now();
  Responder respond(conn, seq, info, 0);
  if (!session.sasl.exchange || session.sasl.exchange->busy()) {
    metrics::record_connection_closed("sasl_illegal_state");
    respond.close("SASL token before the previous one was answered (SaslHandshake v0)");
    return;
  }
  sasl_step(services, conn, session, std::move(frame), [respond](SaslOutcome o) {
    if (o.error) return respond.no_response();  // sasl_step closes the connection next
    respond.finish(bare_token_frame(o.response));
  });
}

}  // namespace kib::kafka
