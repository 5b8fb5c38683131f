#include "security/scram.h"

#include <algorithm>
#include <cctype>

namespace kib::security {
namespace {

Error invalid(std::string what) { return Error{ErrorDomain::kProtocol, 0, std::move(what)}; }

// Kafka's character classes (ScramMessages.AbstractScramMessage).
bool value_char(unsigned char c) { return c >= 0x01 && c <= 0x7F && c != ','; }          // VALUE
bool printable_char(unsigned char c) { return c >= 0x21 && c <= 0x7E && c != ','; }      // PRINTABLE
bool alpha(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }  // ALPHA

bool all_of(std::string_view s, bool (*pred)(unsigned char)) {
  return std::all_of(s.begin(), s.end(), [pred](char c) { return pred(static_cast<unsigned char>(c)); });
}

// SASLNAME: 1*([\x01-\x7F] except '=' and ',' | "=2C" | "=3D").
bool valid_saslname(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '=') {
      if (s.substr(i, 3) != "=2C" && s.substr(i, 3) != "=3D") return false;
      i += 2;
    } else if (c < 0x01 || c > 0x7F || c == ',') {
      return false;
    }
  }
  return true;
}

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// extension = ALPHA+ "=" VALUE (Kafka's EXTENSIONS).
std::optional<std::pair<std::string, std::string>> parse_extension(std::string_view t) {
  size_t eq = t.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == t.size()) return std::nullopt;
  std::string_view name = t.substr(0, eq), value = t.substr(eq + 1);
  if (!all_of(name, alpha) || !all_of(value, value_char)) return std::nullopt;
  return std::pair{std::string(name), std::string(value)};
}

bool equals_ignore_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string_view scram_mechanism_name(ScramMechanism m) {
  return m == ScramMechanism::kSha256 ? "SCRAM-SHA-256" : "SCRAM-SHA-512";
}

std::optional<ScramMechanism> parse_scram_mechanism(std::string_view name) {
  if (name == "SCRAM-SHA-256") return ScramMechanism::kSha256;
  if (name == "SCRAM-SHA-512") return ScramMechanism::kSha512;
  return std::nullopt;
}

std::optional<ScramMechanism> scram_mechanism_from_type(int8_t type) {
  if (type == 1) return ScramMechanism::kSha256;
  if (type == 2) return ScramMechanism::kSha512;
  return std::nullopt;
}

std::optional<ScramMechanism> scram_mechanism(SaslMechanism m) {
  if (m == SaslMechanism::kScramSha256) return ScramMechanism::kSha256;
  if (m == SaslMechanism::kScramSha512) return ScramMechanism::kSha512;
  return std::nullopt;
}

SaslMechanism sasl_mechanism(ScramMechanism m) {
  return m == ScramMechanism::kSha256 ? SaslMechanism::kScramSha256 : SaslMechanism::kScramSha512;
}

Digest scram_digest(ScramMechanism m) { return m == ScramMechanism::kSha256 ? Digest::kSha256 : Digest::kSha512; }

Bytes scram_salted_password(ScramMechanism m, std::string_view password, ByteSpan salt, int32_t iterations) {
  return pbkdf2(scram_digest(m), as_bytes(password), salt, iterations);
}

ScramCredential scram_credential(ScramMechanism m, ByteSpan salt, ByteSpan salted_password, int32_t iterations) {
  const Digest d = scram_digest(m);
  ScramCredential c;
  c.salt.assign(salt.begin(), salt.end());
  Bytes client_key = hmac(d, salted_password, as_bytes("Client Key"));
  c.stored_key = hash(d, client_key);
  wipe(client_key);
  c.server_key = hmac(d, salted_password, as_bytes("Server Key"));
  c.iterations = iterations;
  return c;
}

ScramCredential make_scram_credential(ScramMechanism m, std::string_view password, int32_t iterations) {
  Bytes salt = random_bytes(32);
  Bytes salted = scram_salted_password(m, password, salt, iterations);
  ScramCredential c = scram_credential(m, salt, salted, iterations);
  wipe(salted);
  return c;
}

std::optional<std::string> scram_username(std::string_view saslname) {
  std::string out;
  out.reserve(saslname.size());
  for (size_t i = 0; i < saslname.size(); ++i) {
    if (saslname[i] != '=') {
      out += saslname[i];
    } else if (saslname.substr(i, 3) == "=2C") {
      out += ',';
      i += 2;
    } else if (saslname.substr(i, 3) == "=3D") {
      out += '=';
      i += 2;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::string scram_saslname(std::string_view username) {
  std::string out;
  for (char c : username) {
    if (c == '=') out += "=3D";
    else if (c == ',') out += "=2C";
    else out += c;
  }
  return out;
}

Result<ClientFirstMessage> parse_client_first(std::string_view msg) {
  // gs2-header: "n," [ "a=" saslname ] ","
  if (!starts_with(msg, "n,")) return invalid("Invalid SCRAM client first message format: gs2 header must be \"n\"");
  size_t authz_end = msg.find(',', 2);
  if (authz_end == std::string_view::npos) return invalid("Invalid SCRAM client first message format: no gs2 header");
  ClientFirstMessage m;
  std::string_view authz = msg.substr(2, authz_end - 2);
  if (!authz.empty()) {
    if (!starts_with(authz, "a=") || !valid_saslname(authz.substr(2)))
      return invalid("Invalid SCRAM client first message format: bad authorization id");
    m.authzid = *scram_username(authz.substr(2));
  }
  m.gs2_header = std::string(msg.substr(0, authz_end + 1));
  m.bare = std::string(msg.substr(authz_end + 1));

  std::vector<std::string_view> t = split_commas(m.bare);
  size_t i = 0;
  // reserved-mext: Kafka's grammar accepts and ignores it.
  if (i < t.size() && starts_with(t[i], "m=")) {
    if (t[i].size() == 2 || !all_of(t[i].substr(2), value_char))
      return invalid("Invalid SCRAM client first message format: bad reserved attribute");
    ++i;
  }
  if (i >= t.size() || !starts_with(t[i], "n=") || !valid_saslname(t[i].substr(2)))
    return invalid("Invalid SCRAM client first message format: bad username");
  m.username = *scram_username(t[i].substr(2));
  ++i;
  if (i >= t.size() || !starts_with(t[i], "r=") || t[i].size() == 2 || !all_of(t[i].substr(2), printable_char))
    return invalid("Invalid SCRAM client first message format: bad nonce");
  m.nonce = std::string(t[i].substr(2));
  for (++i; i < t.size(); ++i) {
    auto ext = parse_extension(t[i]);
    if (!ext) return invalid("Invalid SCRAM client first message format: bad extension");
    m.extensions.push_back(std::move(*ext));
  }
  return m;
}

Result<ClientFinalMessage> parse_client_final(std::string_view msg) {
  std::vector<std::string_view> t = split_commas(msg);
  if (t.size() < 3) return invalid("Invalid SCRAM client final message format");
  ClientFinalMessage m;
  if (!starts_with(t.front(), "c=")) return invalid("Invalid SCRAM client final message format: no channel binding");
  auto cb = base64_decode(t.front().substr(2));
  if (!cb) return invalid("Invalid SCRAM client final message format: channel binding is not base64");
  m.channel_binding = std::move(*cb);
  if (!starts_with(t[1], "r=") || t[1].size() == 2 || !all_of(t[1].substr(2), printable_char))
    return invalid("Invalid SCRAM client final message format: bad nonce");
  m.nonce = std::string(t[1].substr(2));
  for (size_t i = 2; i + 1 < t.size(); ++i)
    if (!parse_extension(t[i])) return invalid("Invalid SCRAM client final message format: bad extension");
  if (!starts_with(t.back(), "p=")) return invalid("Invalid SCRAM client final message format: no proof");
  auto proof = base64_decode(t.back().substr(2));
  if (!proof) return invalid("Invalid SCRAM client final message format: proof is not base64");
  m.proof = std::move(*proof);
  m.without_proof = std::string(msg.substr(0, msg.size() - t.back().size() - 1));
  return m;
}

std::string scram_server_nonce() {
  // Letters and digits, as Kafka's nonces (a base-36 number). 26 characters of 62: 154 bits.
  static constexpr char kAlphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string out;
  while (out.size() < 26) {
    for (uint8_t b : random_bytes(32)) {
      if (b >= 248) continue;  // 248 = 4 * 62: keeps the choice uniform
      out += kAlphabet[b % 62];
      if (out.size() == 26) break;
    }
  }
  return out;
}

SaslStep ScramServer::fail(std::string reason, bool tell_client) {
  state_ = State::kFailed;
  wipe(credential_.stored_key);
  wipe(credential_.server_key);
  return SaslStep::fail(std::move(reason), tell_client);
}

SaslStep ScramServer::receive_client_first(ByteSpan msg) {
  if (state_ != State::kClientFirst) return fail("unexpected SCRAM client first message in state " + std::to_string(int(state_)));
  auto m = parse_client_first(as_text(msg));
  if (!m) return fail(m.error().message);
  for (const auto& [name, value] : m->extensions)
    if (name == "tokenauth" && equals_ignore_case(value, "true"))
      return fail("Token Authentication failed: the bridge has no delegation tokens");
  username_ = std::move(m->username);
  if (!m->authzid.empty() && m->authzid != username_)
    return fail("Authentication failed: Client requested an authorization id that is different from username", true);
  gs2_header_ = std::move(m->gs2_header);
  client_first_bare_ = std::move(m->bare);
  nonce_ = std::move(m->nonce);
  state_ = State::kCredential;
  return SaslStep{};
}

SaslStep ScramServer::server_first(const std::optional<ScramCredential>& credential, std::string server_nonce) {
  if (state_ != State::kCredential) return fail("SCRAM credential given in state " + std::to_string(int(state_)));
  if (!credential) return fail("Authentication failed: Invalid user credentials (no " +
                               std::string(scram_mechanism_name(mechanism_)) + " credential for this user)");
  if (credential->iterations < kScramMinIterations)
    return fail("Iterations " + std::to_string(credential->iterations) + " is less than the minimum " +
                std::to_string(kScramMinIterations) + " for " + std::string(scram_mechanism_name(mechanism_)));
  const size_t n = digest_size(scram_digest(mechanism_));
  if (credential->stored_key.size() != n || credential->server_key.size() != n)
    return fail("stored credential has keys of the wrong length for " + std::string(scram_mechanism_name(mechanism_)));
  credential_ = *credential;
  nonce_ += server_nonce;
  server_first_ = "r=" + nonce_ + ",s=" + base64_encode(credential_.salt) + ",i=" + std::to_string(credential_.iterations);
  state_ = State::kClientFinal;
  return SaslStep{Bytes(server_first_.begin(), server_first_.end()), std::nullopt};
}

SaslStep ScramServer::receive_client_final(ByteSpan msg) {
  if (state_ != State::kClientFinal) return fail("unexpected SCRAM client final message in state " + std::to_string(int(state_)));
  auto m = parse_client_final(as_text(msg));
  if (!m) return fail(m.error().message);
  // RFC 5802 and Kafka 4.1 (ScramSaslServer: nonce().equals(serverFirstMessage.nonce())): the
  // combined nonce exactly. Kafka before 4.1 only checked that it ended with it, which let
  // librdkafka < 2.6.1 (kcat 1.7.1's 2.0.2) log in with its own nonce repeated in front.
  if (m->nonce != nonce_) return fail("Invalid client nonce in the final client message.");
  if (!constant_time_equal(m->channel_binding, as_bytes(gs2_header_)))
    return fail("channel binding does not repeat the gs2 header (channel binding is not supported)");
  const Digest d = scram_digest(mechanism_);
  if (m->proof.size() != digest_size(d)) return fail("Invalid client credentials (proof of the wrong length)");
  const std::string auth_message = client_first_bare_ + "," + server_first_ + "," + m->without_proof;
  Bytes client_key = hmac(d, credential_.stored_key, as_bytes(auth_message));  // ClientSignature
  for (size_t i = 0; i < client_key.size(); ++i) client_key[i] ^= m->proof[i];  // ClientKey
  Bytes computed_stored_key = hash(d, client_key);
  wipe(client_key);
  const bool verified = constant_time_equal(computed_stored_key, credential_.stored_key);
  if (!verified) return fail("Invalid client credentials");
  Bytes signature = hmac(d, credential_.server_key, as_bytes(auth_message));
  const std::string server_final = "v=" + base64_encode(signature);
  wipe(credential_.stored_key);
  wipe(credential_.server_key);
  state_ = State::kComplete;
  return SaslStep{Bytes(server_final.begin(), server_final.end()), std::nullopt};
}

}  // namespace kib::security
