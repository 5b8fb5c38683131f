// SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer parses it, and how the bridge keeps PLAIN
// passwords: PBKDF2-HMAC-SHA-512 with a random salt (docs/security.md "Credentials"), checked
// in constant time. Verification costs `iterations` HMACs: run it off the event loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "security/sasl.h"

namespace kib::security {

// message = [authzid] NUL authcid NUL passwd
struct PlainMessage {
  std::string authzid;
  std::string username;
  std::string password;
};

// Kafka's checks and messages, all told to the client (SaslAuthenticationException): three
// NUL-separated tokens ("Invalid SASL/PLAIN response: expected 3 tokens, got N"), a username
// and a password. The authzid is checked by check_plain_authzid once the password verified,
// the order PlainSaslServer checks them in.
struct PlainParse {
  PlainMessage message;
  std::optional<SaslFailure> failure;
};
PlainParse parse_plain(ByteSpan token);
// "Authentication failed: Client requested an authorization id that is different from
// username" when an authzid is given and is not the user.
std::optional<SaslFailure> check_plain_authzid(const PlainMessage& m);

struct PlainCredential {
  Bytes salt;
  Bytes hash;  // PBKDF2-HMAC-SHA-512(password, salt, iterations), 64 bytes
  int32_t iterations = 0;
};

PlainCredential make_plain_credential(std::string_view password, int32_t iterations);
// Recomputes the hash and compares in constant time. A credential with no iterations or a
// hash of the wrong length never verifies.
bool verify_plain(const PlainCredential& c, std::string_view password);

}  // namespace kib::security
