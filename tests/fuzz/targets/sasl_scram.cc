// SCRAM messages as a client sends them on a SASL listener: a client-first message, then
// (after the first NUL byte, which no SCRAM message holds) a client-final message. Both go
// through the parsers and through a ScramServer holding RFC 7677's credential for every user
// (password "pencil"), answering with RFC 7677's server nonce, so the seed of RFC 7677's
// exchange completes. Checks: what parses re-assembles into the input (the gs2 header and the
// bare message; the final message from its parts, base64 being canonical), and the server
// completes only when the proof is the one the password gives (computed here, apart from the
// server's code) and then signs with the server key.
#include <string>
#include <string_view>

#include "fuzz/targets/fuzz_targets.h"
#include "security/crypto.h"
#include "security/scram.h"

namespace kib::fuzz {
namespace {

using namespace kib::security;

constexpr std::string_view kServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";

struct Keys {
  Bytes salt, salted, client_key, stored_key, server_key;
};

const Keys& keys(ScramMechanism m) {
  static const auto make = [](ScramMechanism mech) {
    Keys k;
    k.salt = *base64_decode("W22ZaJ0SNY7soEsUEjb6gQ==");
    const Digest d = scram_digest(mech);
    k.salted = pbkdf2(d, as_bytes("pencil"), k.salt, 4096);
    k.client_key = hmac(d, k.salted, as_bytes("Client Key"));
    k.stored_key = hash(d, k.client_key);
    k.server_key = hmac(d, k.salted, as_bytes("Server Key"));
    return k;
  };
  static const Keys sha256 = make(ScramMechanism::kSha256), sha512 = make(ScramMechanism::kSha512);
  return m == ScramMechanism::kSha256 ? sha256 : sha512;
}

void check_first(std::string_view msg) {
  auto m = parse_client_first(msg);
  if (!m) return;
  FUZZ_CHECK(m->gs2_header + m->bare == msg, "client-first does not re-assemble from its gs2 header and bare part");
  FUZZ_CHECK(!m->nonce.empty() && m->nonce.find(',') == std::string::npos, "a bad nonce parsed");
  FUZZ_CHECK(m->bare.find("n=" + scram_saslname(m->username) + ",r=" + m->nonce) != std::string::npos,
             "the username or nonce is not what the bare message carries");
}

void check_final(std::string_view msg) {
  auto m = parse_client_final(msg);
  if (!m) return;
  FUZZ_CHECK(m->without_proof + ",p=" + base64_encode(m->proof) == msg, "client-final does not re-assemble");
  FUZZ_CHECK(m->without_proof.rfind("c=" + base64_encode(m->channel_binding) + ",r=" + m->nonce, 0) == 0,
             "channel binding or nonce is not what the message carries");
}

void exchange(ScramMechanism mech, std::string_view first, std::string_view final_msg) {
  ScramServer s(mech);
  if (!s.receive_client_first(as_bytes(first)).ok()) {
    FUZZ_CHECK(s.failed() && !s.complete(), "a refused client-first did not fail the exchange");
    return;
  }
  const Keys& k = keys(mech);
  auto server_first = s.server_first(ScramCredential{k.salt, k.stored_key, k.server_key, 4096}, std::string(kServerNonce));
  FUZZ_CHECK(server_first.ok(), "a good credential was refused");
  auto answer = s.receive_client_final(as_bytes(final_msg));
  FUZZ_CHECK(answer.ok() == s.complete(), "the exchange's state disagrees with its last answer");
  if (!s.complete()) return;
  // Completed: the proof must be the password's, and the answer the server's signature.
  auto parsed_first = parse_client_first(first);
  auto parsed_final = parse_client_final(final_msg);
  FUZZ_CHECK(parsed_first.ok() && parsed_final.ok(), "completed on a message that does not parse");
  const Digest d = scram_digest(mech);
  const std::string sf(as_text(server_first.response));
  const std::string am = parsed_first->bare + "," + sf + "," + parsed_final->without_proof;
  Bytes expected = hmac(d, k.stored_key, as_bytes(am));
  for (size_t i = 0; i < expected.size(); ++i) expected[i] ^= k.client_key[i];
  FUZZ_CHECK(parsed_final->proof == expected, "the exchange completed without the password's proof");
  FUZZ_CHECK(as_text(answer.response) == "v=" + base64_encode(hmac(d, k.server_key, as_bytes(am))),
             "the server final message is not the server's signature");
}

}  // namespace

int fuzz_sasl_scram(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  const std::string_view first = in.substr(0, nul);
  const std::string_view final_msg = nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1);
  check_first(first);
  check_final(final_msg);
  // base64: what decodes re-encodes to the same text, and anything encodes and decodes back.
  if (auto decoded = base64_decode(final_msg)) FUZZ_CHECK(base64_encode(*decoded) == final_msg, "base64 is not canonical");
  FUZZ_CHECK(base64_decode(base64_encode(as_bytes(first))) == Bytes(first.begin(), first.end()),
             "base64 does not round-trip");
  exchange(ScramMechanism::kSha256, first, final_msg);
  exchange(ScramMechanism::kSha512, first, final_msg);
  return 0;
}

}  // namespace kib::fuzz
