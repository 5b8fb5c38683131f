// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka serves them
// (ScramSaslServer, ScramMessages, ScramFormatter): salted credentials, the message parsers, and
// the server side of one exchange.
//
// The parsers are strict and bounded (they only read the message they are given, which the
// frame limits bound): gs2 header "n" only (Kafka supports no channel binding), an optional
// authzid that must name the user, usernames of ASCII 0x01-0x7F with "=2C"/"=3D" escapes (what
// Kafka's grammar accepts), printable nonces, Kafka's extensions syntax (NAME=VALUE, NAME of
// letters), base64 as RFC 4648. Kafka's delegation-token extension (tokenauth=true) is refused:
// the bridge has no delegation tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "security/crypto.h"
#include "security/sasl.h"

namespace kib::security {

// Kafka's ScramMechanism type bytes (AlterUserScramCredentials, DescribeUserScramCredentials).
enum class ScramMechanism : int8_t { kSha256 = 1, kSha512 = 2 };

std::string_view scram_mechanism_name(ScramMechanism m);  // "SCRAM-SHA-256"
std::optional<ScramMechanism> parse_scram_mechanism(std::string_view name);
std::optional<ScramMechanism> scram_mechanism_from_type(int8_t type);
std::optional<ScramMechanism> scram_mechanism(SaslMechanism m);
SaslMechanism sasl_mechanism(ScramMechanism m);
Digest scram_digest(ScramMechanism m);

// Kafka's bounds for both mechanisms (ScramMechanism.minIterations, ScramControlManager's
// MAX_ITERATIONS): AlterUserScramCredentials refuses credentials outside them with
// UNACCEPTABLE_CREDENTIAL, and a stored credential below the minimum does not authenticate.
inline constexpr int32_t kScramMinIterations = 4096;
inline constexpr int32_t kScramMaxIterations = 16384;

// What the server keeps (RFC 5802 §3): never the password.
struct ScramCredential {
  Bytes salt;
  Bytes stored_key;  // H(HMAC(SaltedPassword, "Client Key"))
  Bytes server_key;  // HMAC(SaltedPassword, "Server Key")
  int32_t iterations = 0;
};

// SaltedPassword := Hi(Normalize(password), salt, i); Normalize is the identity, as in Kafka.
Bytes scram_salted_password(ScramMechanism m, std::string_view password, ByteSpan salt, int32_t iterations);
// StoredKey and ServerKey from a SaltedPassword (what AlterUserScramCredentials carries).
ScramCredential scram_credential(ScramMechanism m, ByteSpan salt, ByteSpan salted_password, int32_t iterations);
// A new credential with a random 32-byte salt.
ScramCredential make_scram_credential(ScramMechanism m, std::string_view password, int32_t iterations);

// "=2C" -> ",", "=3D" -> "="; nullopt for any other '=' (Kafka's ScramFormatter.username).
std::optional<std::string> scram_username(std::string_view saslname);
// The reverse: "," -> "=2C", "=" -> "=3D".
std::string scram_saslname(std::string_view username);

// client-first-message = gs2-header [reserved-mext ","] username "," nonce ["," extensions]
struct ClientFirstMessage {
  std::string authzid;   // decoded; empty when absent
  std::string username;  // decoded
  std::string nonce;
  std::string gs2_header;  // "n,," or "n,a=...,": what c= must carry back
  std::string bare;        // client-first-message-bare as sent (part of AuthMessage)
  std::vector<std::pair<std::string, std::string>> extensions;
};
Result<ClientFirstMessage> parse_client_first(std::string_view msg);

// client-final-message = channel-binding "," nonce ["," extensions] "," proof
struct ClientFinalMessage {
  Bytes channel_binding;
  std::string nonce;
  Bytes proof;
  std::string without_proof;  // client-final-message-without-proof as sent (part of AuthMessage)
};
Result<ClientFinalMessage> parse_client_final(std::string_view msg);

// A fresh server nonce from the CSPRNG: 26 letters and digits (about 154 bits), the alphabet of
// Kafka's own nonces.
std::string scram_server_nonce();

// The server side of one exchange. It reaches complete() only through receive_client_final
// with a proof that verifies against the stored key; every failure is final (failed()).
//
//   receive_client_first(msg)          -> the caller looks up username()'s credential
//   server_first(credential, nonce)    -> server-first-message
//   receive_client_final(msg)          -> server-final-message ("v=" ServerSignature)
class ScramServer {
 public:
  explicit ScramServer(ScramMechanism m) : mechanism_(m) {}

  // Parses the client-first message. On success the exchange waits for the credential of
  // username(); the response is empty.
  SaslStep receive_client_first(ByteSpan msg);
  // The credential of username() (nullopt: no such user, which fails as in Kafka) and the
  // server's nonce (scram_server_nonce(); a fixed one for test vectors).
  SaslStep server_first(const std::optional<ScramCredential>& credential, std::string server_nonce);
  // Parses the client-final message and verifies the proof: ClientKey = ClientProof XOR
  // HMAC(StoredKey, AuthMessage), and H(ClientKey) must equal StoredKey (CRYPTO_memcmp).
  SaslStep receive_client_final(ByteSpan msg);

  ScramMechanism mechanism() const { return mechanism_; }
  bool awaiting_client_first() const { return state_ == State::kClientFirst; }
  bool awaiting_credential() const { return state_ == State::kCredential; }
  bool complete() const { return state_ == State::kComplete; }
  bool failed() const { return state_ == State::kFailed; }
  // The authenticated user once complete(); who to look up while awaiting_credential().
  const std::string& username() const { return username_; }

 private:
  enum class State { kClientFirst, kCredential, kClientFinal, kComplete, kFailed };
  SaslStep fail(std::string reason, bool tell_client = false);

  ScramMechanism mechanism_;
  State state_ = State::kClientFirst;
  std::string username_;
  std::string gs2_header_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string nonce_;  // client nonce + server nonce
  ScramCredential credential_;
};

}  // namespace kib::security
