// SaslAuthenticate (key 36), v0-2: one token of the exchange SaslHandshake v1 started
// (server/security/sasl_session.h). A failed exchange is answered SASL_AUTHENTICATION_FAILED with Kafka's
// message, then the connection closes. A completed one carries, from v1, the session's
// lifetime (KIP-368: [sasl] connections_max_reauth_ms, 0 for none). On an authenticated
// connection, or a listener without SASL, KafkaApis' ILLEGAL_SASL_STATE.
#include "server/handlers/registry.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/sasl_authenticate.h"
#include "server/context/services.h"
#include "server/security/sasl_session.h"

namespace kib::kafka {
namespace {

void handle(const Services& s, Request&& req) {
  auto body = req.decode<msg::SaslAuthenticateRequest>();
  Session& session = *req.session;
  if (!config::uses_sasl(session.protocol) || session.sasl.stage != SaslSession::Stage::kHandshaken) {
    msg::SaslAuthenticateResponse resp;
    resp.error_code = to_int16(ErrorCode::kIllegalSaslState);
    resp.error_message = "SaslAuthenticate request received after successful authentication";
    req.respond.send(resp);
    return;
  }
  sasl_step(s, req.conn, session, std::move(body.auth_bytes), [respond = req.respond](SaslOutcome o) {
    msg::SaslAuthenticateResponse resp;
    if (o.error) {
      resp.error_code = to_int16(ErrorCode::kSaslAuthenticationFailed);
      resp.error_message = std::move(*o.error);
    } else {
      resp.auth_bytes = std::move(o.response);
      resp.session_lifetime_ms = o.session_lifetime_ms;
    }
    respond.send(resp);
  });
}

}  // namespace

HandlerSpec sasl_authenticate_handler() {
  return serve<msg::SaslAuthenticateRequest>(0, 2, [](const Services& s, Request&& req) { handle(s, std::move(req)); });
}

}  // namespace kib::kafka
