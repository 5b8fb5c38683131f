#include "security/sasl.h"

namespace kib::security {

std::string_view sasl_mechanism_name(SaslMechanism m) {
  switch (m) {
    case SaslMechanism::kScramSha256:
      return "SCRAM-SHA-256";
    case SaslMechanism::kScramSha512:
      return "SCRAM-SHA-512";
    case SaslMechanism::kPlain:
      return "PLAIN";
  }
  return "PLAIN";
}

std::optional<SaslMechanism> parse_sasl_mechanism(std::string_view name) {
  for (auto m : {SaslMechanism::kScramSha256, SaslMechanism::kScramSha512, SaslMechanism::kPlain})
    if (sasl_mechanism_name(m) == name) return m;
  return std::nullopt;
}

}  // namespace kib::security
