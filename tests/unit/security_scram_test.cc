// SCRAM-SHA-256/512 (src/security/scram.h): RFC 7677's test vector, a SHA-512 exchange whose
// values were computed independently (Python's hashlib and hmac), and the cases of Kafka's
// ScramMessagesTest and ScramSaslServerTest. The server never completes without a verified proof.
#include <boost/test/unit_test.hpp>

#include <cctype>

#include "security/crypto.h"
#include "security/scram.h"

using namespace kib;
using namespace kib::security;
using namespace std::string_literals;

namespace {

Bytes b(std::string_view s) { return Bytes(s.begin(), s.end()); }
std::string str(const Bytes& v) { return std::string(v.begin(), v.end()); }

// RFC 7677 §3: user "user", password "pencil".
constexpr const char* kSalt = "W22ZaJ0SNY7soEsUEjb6gQ==";
constexpr const char* kClientNonce = "rOprNGfwEbeRWgbNEkqO";
constexpr const char* kServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr const char* kNonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";

ScramCredential pencil(ScramMechanism m, int32_t iterations = 4096) {
  Bytes salt = *base64_decode(kSalt);
  Bytes salted = scram_salted_password(m, "pencil", salt, iterations);
  return scram_credential(m, salt, salted, iterations);
}

// The server of RFC 7677's exchange, up to its server-first message.
ScramServer server_after_first(ScramMechanism m, const std::string& client_first = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO") {
  ScramServer s(m);
  BOOST_REQUIRE(s.receive_client_first(b(client_first)).ok());
  BOOST_REQUIRE(s.awaiting_credential());
  auto first = s.server_first(pencil(m), kServerNonce);
  BOOST_REQUIRE(first.ok());
  return s;
}

std::string final_with_proof(const std::string& proof) { return std::string("c=biws,r=") + kNonce + ",p=" + proof; }

}  // namespace

BOOST_AUTO_TEST_SUITE(security_scram)

BOOST_AUTO_TEST_CASE(rfc7677_sha256_exchange_verifies_the_proof_and_signs_the_server_final) {
  ScramServer s(ScramMechanism::kSha256);
  BOOST_TEST(s.receive_client_first(b("n,,n=user,r=rOprNGfwEbeRWgbNEkqO")).ok());
  BOOST_TEST(s.username() == "user");
  auto first = s.server_first(pencil(ScramMechanism::kSha256), kServerNonce);
  BOOST_REQUIRE(first.ok());
  BOOST_TEST(str(first.response) == std::string("r=") + kNonce + ",s=" + kSalt + ",i=4096");
  BOOST_TEST(!s.complete());
  auto fin = s.receive_client_final(b(final_with_proof("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")));
  BOOST_REQUIRE(fin.ok());
  BOOST_TEST(str(fin.response) == "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
  BOOST_TEST(s.complete());
}

BOOST_AUTO_TEST_CASE(rfc7677_stored_and_server_keys) {
  ScramCredential c = pencil(ScramMechanism::kSha256);
  BOOST_TEST(base64_encode(c.stored_key) == "WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=");
  BOOST_TEST(base64_encode(c.server_key) == "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=");
}

BOOST_AUTO_TEST_CASE(sha512_exchange_matches_values_computed_independently) {
  ScramCredential c = pencil(ScramMechanism::kSha512);
  BOOST_TEST(base64_encode(c.stored_key) ==
             "6AAub3065EYRmyFpM2RNwqK+eGnrkYuEWbXn19LsEmBqzu8QaCXNc1FwpnX9NhH2hK/60dzj9DoO5DvVkOHbvg==");
  BOOST_TEST(base64_encode(c.server_key) ==
             "jZHbYjC1aHh0/hKbxyBuGFjDrgjgKTT1esA7awWiKcRZ0o/0b1yWEebBeSVkkCFewf91nLDfKF24mvD5nmE6rA==");
  ScramServer s = server_after_first(ScramMechanism::kSha512);
  auto fin = s.receive_client_final(b(final_with_proof(
      "gMGXRcevScNtxZ6/8lQYpGtnsNAc3mGcmNomv+xnoOMw+3R2xNJdMNnzMlTN8PPC6wdp6dybEmDYXYTxwnYPJQ==")));
  BOOST_REQUIRE(fin.ok());
  BOOST_TEST(str(fin.response) ==
             "v=ZQnYEgWQMFmmsM8aQMF0nDDCy/AgCzkwk8CmMZYcMg0vSVlKDanekLtifDSeVGT4+5ZxXnJq199RVG2rR7N7Zw==");
  BOOST_TEST(s.complete());
}

BOOST_AUTO_TEST_CASE(a_wrong_proof_fails_the_exchange_for_good) {
  ScramServer s = server_after_first(ScramMechanism::kSha256);
  // The RFC's proof with its last byte changed.
  auto fin = s.receive_client_final(b(final_with_proof("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVU=")));
  BOOST_TEST(!fin.ok());
  BOOST_TEST(fin.response.empty());
  BOOST_TEST(fin.failure->reason == "Invalid client credentials");
  BOOST_TEST(!fin.failure->tell_client);  // the client gets Kafka's generic message
  BOOST_TEST(!s.complete());
  BOOST_TEST(s.failed());
  // Sending the right proof afterwards does not revive it.
  auto again = s.receive_client_final(b(final_with_proof("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")));
  BOOST_TEST(!again.ok());
  BOOST_TEST(!s.complete());
}

BOOST_AUTO_TEST_CASE(the_password_of_another_user_does_not_verify) {
  ScramServer s(ScramMechanism::kSha256);
  BOOST_REQUIRE(s.receive_client_first(b("n,,n=user,r=rOprNGfwEbeRWgbNEkqO")).ok());
  Bytes salt = *base64_decode(kSalt);
  Bytes salted = scram_salted_password(ScramMechanism::kSha256, "not-pencil", salt, 4096);
  BOOST_REQUIRE(s.server_first(scram_credential(ScramMechanism::kSha256, salt, salted, 4096), kServerNonce).ok());
  BOOST_TEST(!s.receive_client_final(b(final_with_proof("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))).ok());
  BOOST_TEST(!s.complete());
}

BOOST_AUTO_TEST_CASE(a_proof_of_the_wrong_length_or_a_missing_proof_fails) {
  for (std::string proof : {"", "AAAA", "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=dHzb"}) {
    ScramServer s = server_after_first(ScramMechanism::kSha256);
    BOOST_TEST(!s.receive_client_final(b(final_with_proof(proof))).ok());
    BOOST_TEST(!s.complete());
  }
  ScramServer s = server_after_first(ScramMechanism::kSha256);
  BOOST_TEST(!s.receive_client_final(b(std::string("c=biws,r=") + kNonce)).ok());
  BOOST_TEST(!s.complete());
}

BOOST_AUTO_TEST_CASE(the_client_first_message_cannot_be_followed_by_a_final_message_without_a_credential) {
  ScramServer s(ScramMechanism::kSha256);
  BOOST_REQUIRE(s.receive_client_first(b("n,,n=user,r=rOprNGfwEbeRWgbNEkqO")).ok());
  BOOST_TEST(!s.receive_client_final(b(final_with_proof("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))).ok());
  BOOST_TEST(!s.complete());
  BOOST_TEST(s.failed());
}

BOOST_AUTO_TEST_CASE(an_unknown_user_fails_at_the_first_message_with_the_generic_answer) {
  ScramServer s(ScramMechanism::kSha256);
  BOOST_REQUIRE(s.receive_client_first(b("n,,n=nobody,r=abc")).ok());
  auto first = s.server_first(std::nullopt, kServerNonce);
  BOOST_TEST(!first.ok());
  BOOST_TEST(!first.failure->tell_client);
  BOOST_TEST(s.failed());
}

BOOST_AUTO_TEST_CASE(a_credential_below_4096_iterations_does_not_authenticate) {
  ScramServer s(ScramMechanism::kSha256);
  BOOST_REQUIRE(s.receive_client_first(b("n,,n=user,r=abc")).ok());
  auto first = s.server_first(pencil(ScramMechanism::kSha256, 4095), kServerNonce);
  BOOST_TEST(!first.ok());
  BOOST_TEST(first.failure->reason == "Iterations 4095 is less than the minimum 4096 for SCRAM-SHA-256");
}

BOOST_AUTO_TEST_CASE(a_credential_of_the_other_digest_is_refused) {
  ScramServer s(ScramMechanism::kSha512);
  BOOST_REQUIRE(s.receive_client_first(b("n,,n=user,r=abc")).ok());
  BOOST_TEST(!s.server_first(pencil(ScramMechanism::kSha256), kServerNonce).ok());
}

// ScramSaslServerTest.
BOOST_AUTO_TEST_CASE(kafka_no_authorization_id_specified) {
  ScramServer s(ScramMechanism::kSha256);
  BOOST_TEST(s.receive_client_first(b("n,,n=userA,r=nonce")).ok());
}

BOOST_AUTO_TEST_CASE(kafka_authorization_id_equals_authentication_id) {
  ScramServer s(ScramMechanism::kSha256);
  BOOST_TEST(s.receive_client_first(b("n,a=userA,n=userA,r=nonce")).ok());
}

BOOST_AUTO_TEST_CASE(kafka_authorization_id_not_equal_to_authentication_id_is_told_to_the_client) {
  ScramServer s(ScramMechanism::kSha256);
  auto r = s.receive_client_first(b("n,a=userB,n=userA,r=nonce"));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.failure->tell_client);
  BOOST_TEST(r.failure->reason ==
             "Authentication failed: Client requested an authorization id that is different from username");
}

BOOST_AUTO_TEST_CASE(kafka_validate_failed_nonce_exchange) {
  ScramServer s = server_after_first(ScramMechanism::kSha256);
  auto r = s.receive_client_final(b("c=biws,r=someothernonce,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.failure->reason == "Invalid client nonce in the final client message.");
}

BOOST_AUTO_TEST_CASE(the_final_nonce_must_be_the_combined_nonce) {
  // Only the server's part: refused.
  ScramServer s = server_after_first(ScramMechanism::kSha256);
  auto r = s.receive_client_final(b(std::string("c=biws,r=X") + kServerNonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="));
  BOOST_TEST(!r.ok());
  // The combined nonce cut short: refused.
  ScramServer t = server_after_first(ScramMechanism::kSha256);
  std::string cut(kNonce);
  cut.pop_back();
  BOOST_TEST(!t.receive_client_final(b("c=biws,r=" + cut + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")).ok());
}

BOOST_AUTO_TEST_CASE(a_final_nonce_with_the_client_nonce_repeated_in_front_is_refused_as_in_kafka_4_1) {
  // librdkafka < 2.6.1 (kcat 1.7.1) sends r=<client nonce><combined nonce>, with a proof that
  // covers the nonce as sent. Kafka 4.1, as RFC 5802, wants the combined nonce exactly.
  ScramServer s = server_after_first(ScramMechanism::kSha256);
  const std::string without_proof = std::string("c=biws,r=") + kClientNonce + kNonce;
  ScramCredential c = pencil(ScramMechanism::kSha256);
  Bytes salted = scram_salted_password(ScramMechanism::kSha256, "pencil", *base64_decode(kSalt), 4096);
  Bytes client_key = hmac(Digest::kSha256, salted, as_bytes("Client Key"));
  const std::string auth = std::string("n=user,r=") + kClientNonce + ",r=" + kNonce + ",s=" + kSalt + ",i=4096," + without_proof;
  Bytes proof = hmac(Digest::kSha256, c.stored_key, as_bytes(auth));
  for (size_t i = 0; i < proof.size(); ++i) proof[i] ^= client_key[i];
  auto fin = s.receive_client_final(b(without_proof + ",p=" + base64_encode(proof)));
  BOOST_TEST(!fin.ok());
  BOOST_TEST(!s.complete());
  BOOST_TEST(fin.response.empty());
}

BOOST_AUTO_TEST_CASE(channel_binding_must_repeat_the_gs2_header) {
  ScramServer s = server_after_first(ScramMechanism::kSha256);
  // base64("y,,") instead of base64("n,,")
  BOOST_TEST(!s.receive_client_final(b(std::string("c=eSws,r=") + kNonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")).ok());
  BOOST_TEST(!s.complete());
}

BOOST_AUTO_TEST_CASE(delegation_token_authentication_is_refused) {
  ScramServer s(ScramMechanism::kSha256);
  BOOST_TEST(!s.receive_client_first(b("n,,n=user,r=nonce,tokenauth=true")).ok());
  ScramServer t(ScramMechanism::kSha256);
  BOOST_TEST(!t.receive_client_first(b("n,,n=user,r=nonce,tokenauth=TRUE")).ok());
  ScramServer u(ScramMechanism::kSha256);
  BOOST_TEST(u.receive_client_first(b("n,,n=user,r=nonce,tokenauth=false")).ok());
}

// ScramMessagesTest.
BOOST_AUTO_TEST_CASE(kafka_valid_client_first_messages) {
  auto m = parse_client_first("n,,n=testuser,r=abc123");
  BOOST_REQUIRE(m.ok());
  BOOST_TEST(m->username == "testuser");
  BOOST_TEST(m->nonce == "abc123");
  BOOST_TEST(m->authzid == "");
  BOOST_TEST(m->bare == "n=testuser,r=abc123");
  BOOST_TEST(m->gs2_header == "n,,");
  BOOST_TEST(parse_client_first("n,,n=test=2Cuser,r=abc")->username == "test,user");
  BOOST_TEST(parse_client_first("n,,n=test=3Duser,r=abc")->username == "test=user");
  BOOST_TEST(parse_client_first("n,a=testauthzid,n=testuser,r=abc")->authzid == "testauthzid");
  for (std::string reserved : {"m=reserved-value", "m=name1=value1 name2=another test value \"'!$[]()"})
    BOOST_TEST(parse_client_first("n,,"s + reserved + ",n=testuser,r=abc").ok(), reserved);
  for (std::string ext : {"ext=val1", "anotherext=name1=value1 name2=another test value \"'!$[]()",
                          "first=val1,second=name1 = value ,third=123"})
    BOOST_TEST(parse_client_first("n,,n=testuser,r=abc,"s + ext).ok(), ext);
  auto t = parse_client_first("n,,n=testuser,r=abc,tokenauth=true");
  BOOST_REQUIRE(t.ok());
  BOOST_TEST(t->extensions.at(0).first == "tokenauth");
}

BOOST_AUTO_TEST_CASE(kafka_invalid_client_first_messages) {
  BOOST_TEST(!parse_client_first("n,x=something,n=testuser,r=abc").ok());
  for (std::string reserved : {"m", "m=name,value", "m=,"})
    BOOST_TEST(!parse_client_first("n,,"s + reserved + ",n=testuser,r=abc").ok(), reserved);
  for (std::string ext : {"ext1=value", "ext", "ext=value1,value2", "ext=,", "ext =value"})
    BOOST_TEST(!parse_client_first("n,,n=testuser,r=abc,"s + ext).ok(), ext);
}

BOOST_AUTO_TEST_CASE(client_first_messages_outside_the_grammar) {
  for (std::string m : std::initializer_list<std::string>{"", "n", "n,", "n,,", "y,,n=user,r=abc", "p=tls-unique,,n=user,r=abc", "n,,n=,r=abc",
                        "n,,n=user", "n,,n=user,r=", "n,,n=us=er,r=abc", "n,,n=us=2cer,r=abc", "n,,r=abc,n=user",
                        "n,,n=user,r=ab c", "n,,n=user,r=abc,", "n,a=,n=user,r=abc", "n,,n=user\x80,r=abc",
                        std::string("n,,n=us\0er,r=abc", 16)})
    BOOST_TEST(!parse_client_first(m).ok(), m);
}

BOOST_AUTO_TEST_CASE(kafka_valid_client_final_messages) {
  auto m = parse_client_final("c=biws,r=abc,p=AAAA");
  BOOST_REQUIRE(m.ok());
  BOOST_TEST(str(m->channel_binding) == "n,,");
  BOOST_TEST(m->nonce == "abc");
  BOOST_TEST(m->proof == Bytes({0, 0, 0}));
  BOOST_TEST(m->without_proof == "c=biws,r=abc");
  for (std::string ext : {"ext=val1", "anotherext=name1=value1 name2=another test value \"'!$[]()",
                          "first=val1,second=name1 = value ,third=123"}) {
    auto e = parse_client_final("c=biws,r=abc,"s + ext + ",p=AAAA");
    BOOST_REQUIRE_MESSAGE(e.ok(), ext);
    BOOST_TEST(e->without_proof == "c=biws,r=abc,"s + ext);
  }
}

BOOST_AUTO_TEST_CASE(kafka_invalid_client_final_messages) {
  BOOST_TEST(!parse_client_final("c=ab,r=abc,p=AAAA").ok());
  BOOST_TEST(!parse_client_final("c=biws,r=abc,p=123").ok());
  for (std::string ext : {"ext1=value", "ext", "ext=value1,value2", "ext=,", "ext =value"})
    BOOST_TEST(!parse_client_final("c=biws,r=abc,"s + ext + ",p=AAAA").ok(), ext);
  for (std::string m : {"", "c=biws", "c=biws,r=abc", "r=abc,c=biws,p=AAAA", "c=biws,p=AAAA,r=abc", "c=biws,r=,p=AAAA",
                        "c=biws,r=abc,p=AAAA,"})
    BOOST_TEST(!parse_client_final(m).ok(), m);
}

BOOST_AUTO_TEST_CASE(usernames_escape_comma_and_equals) {
  BOOST_TEST(*scram_username("a=2Cb=3Dc") == "a,b=c");
  BOOST_TEST(!scram_username("a=b"));
  BOOST_TEST(!scram_username("a="));
  BOOST_TEST(scram_saslname("a,b=c") == "a=2Cb=3Dc");
}

BOOST_AUTO_TEST_CASE(server_nonces_are_printable_and_fresh) {
  std::string a = scram_server_nonce(), c = scram_server_nonce();
  BOOST_TEST(a.size() == 26u);
  BOOST_TEST(a != c);
  for (char ch : a) BOOST_TEST(std::isalnum(static_cast<unsigned char>(ch)));
}

BOOST_AUTO_TEST_CASE(base64_is_strict) {
  BOOST_TEST(base64_encode(b("")) == "");
  BOOST_TEST(base64_encode(b("f")) == "Zg==");
  BOOST_TEST(base64_encode(b("fo")) == "Zm8=");
  BOOST_TEST(base64_encode(b("foo")) == "Zm9v");
  BOOST_TEST(str(*base64_decode("Zm9vYg==")) == "foob");
  BOOST_TEST(str(*base64_decode("Zm9vYmE=")) == "fooba");
  for (std::string bad : {"Zg=", "Zg", "Z===", "Zh==", "Zm9=", "Zm=v", "Zg==Zg==", "Zm9v\n", "Zm 9v", "Zm9-"})
    BOOST_TEST(!base64_decode(bad), bad);
}

BOOST_AUTO_TEST_CASE(mechanism_names_and_kafka_type_bytes) {
  BOOST_TEST((*parse_scram_mechanism("SCRAM-SHA-256") == ScramMechanism::kSha256));
  BOOST_TEST(!parse_scram_mechanism("SCRAM-SHA-1"));
  BOOST_TEST((*scram_mechanism_from_type(2) == ScramMechanism::kSha512));
  BOOST_TEST(!scram_mechanism_from_type(0));
  BOOST_TEST(!scram_mechanism_from_type(3));
}

BOOST_AUTO_TEST_SUITE_END()
