// The SASL gate and exchange of one connection on a SASL listener, as Kafka's
// SaslServerAuthenticator and KIP-368 keep them (docs/security.md "SASL"); the connection's SASL
// state itself (SaslSession) is part of its Session (server/context/session.h):
//
//   initial --SaslHandshake--> handshaken --SaslAuthenticate...--> authenticated
//      |  ApiVersions              |  SaslAuthenticate only               |  every API; SaslHandshake
//      |  SaslHandshake only       |  (v0 handshake: bare token frames)   |  re-authenticates (when the
//      |                           |                                      |  session expires); once
//      '---- anything else closes the connection; a failed exchange is    |  expired, anything else
//            answered SASL_AUTHENTICATION_FAILED, then closed             '  closes the connection
//
// A connection is authenticated only by an exchange that completed (a verified SCRAM proof or
// PLAIN password); the session's principal and net::Connection::authenticated() change only
// then. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/bytes.h"
#include "security/sasl.h"
#include "server/context/session.h"

namespace kib::bridge {
class SaslExchange;
}
namespace kib::net {
class Connection;
}

namespace kib::kafka {

struct Services;


// Milliseconds on the steady clock, the clock of SaslSession's times.
uint64_t sasl_clock_ms();

// Whether the dispatcher may hand a request of `api_key` to its handler on a connection of a
// SASL listener; nullopt if so, else why the connection is closed (and the metric reason).
struct SaslRefusal {
  std::string reason;
  const char* metric_reason;
  // Kafka answers the request with its error response, ILLEGAL_SASL_STATE, before closing
  // (SaslServerAuthenticator.handleSaslToken: a request other than SaslAuthenticate after
  // SaslHandshake); otherwise the connection closes without an answer.
  bool answer_illegal_sasl_state = false;
};
std::optional<SaslRefusal> sasl_admission(const SaslSession& s, int16_t api_key, uint64_t now_ms);

// One client token of the session's exchange (the bytes of a SaslAuthenticate request or a bare
// v0 frame): evaluates it, and on the exchange's end makes the session authenticated (principal
// User:<name>, connection authenticated, session expiry) or failed, logging and counting it.
// `done` runs on the loop with the step's outcome, unless the connection closed meanwhile.
struct SaslOutcome {
  Bytes response;
  bool complete = false;
  int64_t session_lifetime_ms = 0;  // of a completed exchange; 0: no expiry
  std::optional<std::string> error;  // the failure as told to the client (SASL_AUTHENTICATION_FAILED)
};
void sasl_step(const Services& services, const std::shared_ptr<net::Connection>& conn, Session& session, Bytes token,
               std::function<void(SaslOutcome)> done);

// A bare token frame after SaslHandshake v0: answered with a bare length-prefixed token; a
// failure closes the connection (the frame has no room for an error code).
void serve_raw_sasl_token(const Services& services, const std::shared_ptr<net::Connection>& conn, uint64_t seq,
                          Bytes frame, Session& session);

}  // namespace kib::kafka
