// SaslHandshake (key 17), v0-1: the client names its mechanism; the enabled ones are listed
// back. v1 announces SaslAuthenticate requests; v0 (Kafka's legacy path, still served by Kafka
// 4.1) bare token frames (server/security/sasl_session.h). An unsupported mechanism is answered
// UNSUPPORTED_SASL_MECHANISM, then the connection closes (SaslServerAuthenticator). On an
// authenticated connection it starts a KIP-368 re-authentication when the session has a
// lifetime and none started within the last second; otherwise, and on listeners without SASL,
// it gets KafkaApis' ILLEGAL_SASL_STATE.
#include <spdlog/spdlog.h>

#include "bridge/security/sasl_authenticator.h"
#include "common/text.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/sasl_handshake.h"
#include "server/context/services.h"
#include "metrics/bridge_metrics.h"
#include "server/security/sasl_session.h"

namespace kib::kafka {
namespace {

// KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS.
constexpr uint64_t kMinReauthenticationIntervalMs = 1000;

void handle(const Services& s, Request&& req) {
  auto body = req.decode<msg::SaslHandshakeRequest>();
  Session& session = *req.session;
  SaslSession& sasl = session.sasl;
  msg::SaslHandshakeResponse resp;
  const uint64_t now = sasl_clock_ms();
  const bool reauthentication = sasl.stage == SaslSession::Stage::kAuthenticated;
  if (!config::uses_sasl(session.protocol) ||
      (reauthentication && (sasl.expires_at_ms == 0 || (sasl.reauthentication_started_ms != 0 &&
                                                         now - sasl.reauthentication_started_ms < kMinReauthenticationIntervalMs)))) {
    resp.error_code = to_int16(ErrorCode::kIllegalSaslState);
    req.respond.send(resp);
    return;
  }
  resp.mechanisms = s.sasl.enabled_mechanisms();
  auto mechanism = s.sasl.enabled(body.mechanism);
  if (!mechanism) {
    resp.error_code = to_int16(ErrorCode::kUnsupportedSaslMechanism);
    req.respond.send(resp);
    sasl.stage = SaslSession::Stage::kFailed;
    sasl.exchange.reset();
    spdlog::info("conn={} peer={} client={} SASL mechanism {} is not enabled", req.conn->id(), req.conn->peer(),
                 esc(session.client_id), esc(body.mechanism));
    metrics::record_connection_closed("sasl_authentication_failed");
    req.conn->close_after_responses("unsupported SASL mechanism " + escape(body.mechanism, 256));
    return;
  }
  if (reauthentication) {
    sasl.reauthenticating = true;
    sasl.reauthentication_started_ms = now;
    if (*mechanism != *sasl.mechanism)
      sasl.reauth_refusal = "SASL mechanism '" + body.mechanism +
                            "' requested by client is not supported for re-authentication of mechanism '" +
                            std::string(security::sasl_mechanism_name(*sasl.mechanism)) + "'";
    req.conn->set_authenticated(false);  // the unauthenticated frame bound applies again
  }
  sasl.exchange = std::make_shared<bridge::SaslExchange>(*mechanism);
  sasl.stage = SaslSession::Stage::kHandshaken;
  sasl.raw_tokens = req.header.api_version == 0;
  resp.error_code = to_int16(ErrorCode::kNone);
  req.respond.send(resp);
}

}  // namespace

HandlerSpec sasl_handshake_handler() {
  return serve<msg::SaslHandshakeRequest>(0, 1, [](const Services& s, Request&& req) { handle(s, std::move(req)); });
}

}  // namespace kib::kafka
