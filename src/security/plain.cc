#include "security/plain.h"

#include <vector>

#include "security/crypto.h"

namespace kib::security {

PlainParse parse_plain(ByteSpan token) {
  // PlainSaslServer.extractTokens: splits on NUL at most four times, so "a\0u\0p\0" is four
  // tokens (the last one empty) and is refused as such.
  const std::string_view s = as_text(token);
  std::vector<std::string_view> tokens;
  size_t start = 0;
  for (int i = 0; i < 4; ++i) {
    size_t nul = s.find('\0', start);
    if (nul == std::string_view::npos) {
      tokens.push_back(s.substr(start));
      break;
    }
    tokens.push_back(s.substr(start, nul - start));
    start = nul + 1;
  }
  PlainParse out;
  if (tokens.size() != 3) {
    out.failure = SaslFailure{"Invalid SASL/PLAIN response: expected 3 tokens, got " + std::to_string(tokens.size()), true};
    return out;
  }
  if (tokens[1].empty()) {
    out.failure = SaslFailure{"Authentication failed: username not specified", true};
    return out;
  }
  if (tokens[2].empty()) {
    out.failure = SaslFailure{"Authentication failed: password not specified", true};
    return out;
  }
  out.message = PlainMessage{std::string(tokens[0]), std::string(tokens[1]), std::string(tokens[2])};
  return out;
}

std::optional<SaslFailure> check_plain_authzid(const PlainMessage& m) {
  if (!m.authzid.empty() && m.authzid != m.username)
    return SaslFailure{"Authentication failed: Client requested an authorization id that is different from username",
                       true};
  return std::nullopt;
}

PlainCredential make_plain_credential(std::string_view password, int32_t iterations) {
  PlainCredential c;
  c.salt = random_bytes(32);
  c.hash = pbkdf2(Digest::kSha512, as_bytes(password), c.salt, iterations);
  c.iterations = iterations;
  return c;
}

bool verify_plain(const PlainCredential& c, std::string_view password) {
  if (c.iterations < 1 || c.hash.size() != digest_size(Digest::kSha512)) return false;
  Bytes computed = pbkdf2(Digest::kSha512, as_bytes(password), c.salt, c.iterations);
  const bool same = constant_time_equal(computed, c.hash);
  wipe(computed);
  return same;
}

}  // namespace kib::security
