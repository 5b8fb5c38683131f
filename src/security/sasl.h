// What the SASL mechanisms share: their names (Kafka's sasl.enabled.mechanisms spelling) and
// how an exchange step fails.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.h"

namespace kib::security {

enum class SaslMechanism { kScramSha256, kScramSha512, kPlain };

std::string_view sasl_mechanism_name(SaslMechanism m);  // "SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"
std::optional<SaslMechanism> parse_sasl_mechanism(std::string_view name);
inline bool is_scram(SaslMechanism m) { return m != SaslMechanism::kPlain; }

// A failed exchange, as Kafka's SASL servers fail one: a SaslAuthenticationException's
// message is told to the client (`tell_client`), a SaslException's is not (the client gets
// Kafka's generic "Authentication failed during authentication due to invalid credentials
// with SASL mechanism M", which does not say whether the user exists). `reason` is for the
// log: it never holds a password, a proof or a key.
struct SaslFailure {
  std::string reason;
  bool tell_client = false;
};

// One step of an exchange: the bytes to send back, or why it failed.
struct SaslStep {
  Bytes response;
  std::optional<SaslFailure> failure;

  static SaslStep fail(std::string reason, bool tell_client = false) {
    return SaslStep{{}, SaslFailure{std::move(reason), tell_client}};
  }
  bool ok() const { return !failure; }
};

}  // namespace kib::security
