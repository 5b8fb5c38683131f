// What the bridge keeps per Kafka connection (net::Connection::attachment): the client, the
// listener, the principal, the Iggy identity its data requests run as and, on SASL listeners,
// the SASL state that server/security/sasl_session.h moves along.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "config/config.h"
#include "security/principal.h"
#include "security/sasl.h"

namespace kib::bridge {
class SaslExchange;
struct IggyIdentity;
}  // namespace kib::bridge

namespace kib::kafka {

// The SASL state of one connection on a SASL listener (server/security/sasl_session.h draws its
// stages).
struct SaslSession {
  enum class Stage { kInitial, kHandshaken, kAuthenticated, kFailed };
  Stage stage = Stage::kInitial;
  // The exchange under way, from SaslHandshake to its end.
  std::shared_ptr<bridge::SaslExchange> exchange;
  // SaslHandshake v0: the exchange's tokens arrive as bare length-prefixed frames (no request
  // header) and are answered so.
  bool raw_tokens = false;
  // A re-authentication (KIP-368) is under way: the connection keeps its principal until it
  // completes, and must end with the same one.
  bool reauthenticating = false;
  // The last successful authentication: its mechanism and user (what a re-authentication must
  // repeat), and when its session ends (ms on the steady clock; 0: never).
  std::optional<security::SaslMechanism> mechanism;
  std::string user;
  uint64_t expires_at_ms = 0;
  uint64_t reauthentication_started_ms = 0;
  // A re-authentication's SaslHandshake named another mechanism: its first token fails with
  // this (Kafka answers the handshake, then fails the exchange).
  std::string reauth_refusal;
};

// Per-connection Kafka state.
struct Session {
  std::string client_id;
  std::string client_software_name;
  std::string client_software_version;
  // The listener the connection came in on: an index into config.kafka.listeners (what
  // Metadata, FindCoordinator and DescribeCluster advertise) and its security protocol.
  size_t listener = 0;
  config::SecurityProtocol protocol = config::SecurityProtocol::kPlaintext;
  // The client's address, as ACLs' host field matches it.
  std::string client_host;
  // Who the connection's requests are authorized as (docs/security.md "Principals"):
  // User:ANONYMOUS until TLS or SASL says otherwise.
  security::KafkaPrincipal principal;
  // The Iggy identity its Produce and Fetch run as (server/security/iggy_identity.h), once known.
  std::shared_ptr<const bridge::IggyIdentity> iggy_identity;
  // SASL listeners only: the exchange and session behind `principal` (server/security/sasl_session.h).
  SaslSession sasl;
};

}  // namespace kib::kafka
