// A SASL/PLAIN token as a client sends it in SaslAuthenticate (or bare, after SaslHandshake v0).
// Checks: a token that parses is exactly authzid NUL username NUL password with a username and
// a password; one that does not is refused with a message for the client; the authzid check
// refuses exactly an authzid that names someone else.
#include <string>
#include <string_view>

#include "fuzz/targets/fuzz_targets.h"
#include "security/plain.h"

namespace kib::fuzz {

int fuzz_sasl_plain(const uint8_t* data, size_t size) {
  const ByteSpan token(data, size);
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  security::PlainParse p = security::parse_plain(token);
  if (p.failure) {
    FUZZ_CHECK(p.failure->tell_client && !p.failure->reason.empty(), "a refusal without a message for the client");
    return 0;
  }
  const security::PlainMessage& m = p.message;
  FUZZ_CHECK(m.authzid + '\0' + m.username + '\0' + m.password == in, "the parts do not re-assemble into the token");
  FUZZ_CHECK(!m.username.empty() && !m.password.empty(), "an empty username or password parsed");
  FUZZ_CHECK(m.password.find('\0') == std::string::npos, "a password with a NUL parsed");
  const bool other = !m.authzid.empty() && m.authzid != m.username;
  FUZZ_CHECK(security::check_plain_authzid(m).has_value() == other, "the authzid check is wrong");
  return 0;
}

}  // namespace kib::fuzz
