// SASL/PLAIN (src/security/plain.h): the cases of Kafka's PlainSaslServerTest, and the stored
// PBKDF2-HMAC-SHA-512 hash.
#include <boost/test/unit_test.hpp>

#include "security/crypto.h"
#include "security/plain.h"

using namespace kib;
using namespace kib::security;

namespace {

Bytes message(std::string_view authzid, std::string_view user, std::string_view password) {
  std::string s = std::string(authzid) + '\0' + std::string(user) + '\0' + std::string(password);
  return Bytes(s.begin(), s.end());
}

std::string failure(const Bytes& token) {
  auto p = parse_plain(token);
  BOOST_REQUIRE(p.failure);
  BOOST_TEST(p.failure->tell_client);
  return p.failure->reason;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(security_plain)

BOOST_AUTO_TEST_CASE(kafka_no_authorization_id_specified) {
  auto p = parse_plain(message("", "userA", "passwordA"));
  BOOST_REQUIRE(!p.failure);
  BOOST_TEST(p.message.username == "userA");
  BOOST_TEST(p.message.password == "passwordA");
  BOOST_TEST(!check_plain_authzid(p.message));
}

BOOST_AUTO_TEST_CASE(kafka_authorization_id_equals_authentication_id) {
  auto p = parse_plain(message("userA", "userA", "passwordA"));
  BOOST_REQUIRE(!p.failure);
  BOOST_TEST(!check_plain_authzid(p.message));
}

BOOST_AUTO_TEST_CASE(kafka_authorization_id_not_equal_to_authentication_id) {
  auto p = parse_plain(message("userB", "userA", "passwordA"));
  BOOST_REQUIRE(!p.failure);
  auto f = check_plain_authzid(p.message);
  BOOST_REQUIRE(f);
  BOOST_TEST(f->reason == "Authentication failed: Client requested an authorization id that is different from username");
}

BOOST_AUTO_TEST_CASE(kafka_empty_tokens) {
  BOOST_TEST(failure(message("", "", "")) == "Authentication failed: username not specified");
  BOOST_TEST(failure(message("", "", "p")) == "Authentication failed: username not specified");
  BOOST_TEST(failure(message("", "u", "")) == "Authentication failed: password not specified");
  BOOST_TEST(failure(message("a", "", "")) == "Authentication failed: username not specified");
  BOOST_TEST(failure(message("a", "", "p")) == "Authentication failed: username not specified");
  BOOST_TEST(failure(message("a", "u", "")) == "Authentication failed: password not specified");
  std::string four("a\0u\0p\0", 6);
  BOOST_TEST(failure(Bytes(four.begin(), four.end())) == "Invalid SASL/PLAIN response: expected 3 tokens, got 4");
  std::string two("\0u", 2);
  BOOST_TEST(failure(Bytes(two.begin(), two.end())) == "Invalid SASL/PLAIN response: expected 3 tokens, got 2");
  BOOST_TEST(failure(Bytes{}) == "Invalid SASL/PLAIN response: expected 3 tokens, got 1");
}

BOOST_AUTO_TEST_CASE(a_stored_password_verifies_and_no_other_does) {
  PlainCredential c = make_plain_credential("s3cret", 4096);
  BOOST_TEST(c.hash.size() == 64u);
  BOOST_TEST(c.salt.size() == 32u);
  BOOST_TEST(verify_plain(c, "s3cret"));
  BOOST_TEST(!verify_plain(c, "s3creT"));
  BOOST_TEST(!verify_plain(c, "s3cret "));
  BOOST_TEST(!verify_plain(c, ""));
  // The hash is PBKDF2-HMAC-SHA-512 of the password with the stored salt.
  BOOST_TEST(c.hash == pbkdf2(Digest::kSha512, as_bytes("s3cret"), c.salt, 4096));
  // Two credentials of one password differ (random salts).
  BOOST_TEST(make_plain_credential("s3cret", 4096).hash != c.hash);
}

BOOST_AUTO_TEST_CASE(a_damaged_credential_never_verifies) {
  PlainCredential c = make_plain_credential("pw", 4096);
  PlainCredential short_hash = c;
  short_hash.hash.pop_back();
  BOOST_TEST(!verify_plain(short_hash, "pw"));
  PlainCredential no_iterations = c;
  no_iterations.iterations = 0;
  BOOST_TEST(!verify_plain(no_iterations, "pw"));
}

BOOST_AUTO_TEST_CASE(pbkdf2_sha512_matches_the_published_vector) {
  // PBKDF2-HMAC-SHA512("password", "salt", 1) = 867f70cf...60a57fce, the published vector.
  Bytes out = pbkdf2(Digest::kSha512, as_bytes("password"), as_bytes("salt"), 1);
  BOOST_TEST(base64_encode(out) ==
             "hn9wzxreAs/zdSWZo6U9xK80x6ZpgVrl1RNVThyM8lLALUcKKFoFAbrZmb/pQ8CPBQI119aLHaVeY/c7YKV/zg==");
}

BOOST_AUTO_TEST_SUITE_END()
