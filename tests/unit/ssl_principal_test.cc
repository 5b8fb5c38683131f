// Kafka's ssl.principal.mapping.rules (the cases of Kafka's SslPrincipalMapperTest, ported
// one for one) and the certificate subject in the form Java's X500Principal.getName() gives
// them.
#include <boost/test/unit_test.hpp>

#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <openssl/x509.h>

#include <memory>

#include "security/ssl_principal_mapper.h"
#include "security/x500_name.h"

using kib::security::rfc2253_name;
using kib::security::SslPrincipalMapper;

namespace {

std::string name_of(const SslPrincipalMapper& m, const std::string& dn) {
  auto r = m.name_of(dn);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  return *r;
}

SslPrincipalMapper mapper(const std::string& rules) {
  auto m = SslPrincipalMapper::parse(rules);
  BOOST_REQUIRE_MESSAGE(m.ok(), rules + ": " + (m.ok() ? std::string() : m.error().message));
  return std::move(*m);
}

std::string split(const std::string& rules) { return mapper(rules).str(); }

using NamePtr = std::unique_ptr<X509_NAME, decltype(&X509_NAME_free)>;

NamePtr name() { return NamePtr(X509_NAME_new(), X509_NAME_free); }

void add(X509_NAME* n, const char* field, const std::string& value, int type = MBSTRING_UTF8, int set = 0) {
  BOOST_REQUIRE(X509_NAME_add_entry_by_txt(n, field, type, reinterpret_cast<const unsigned char*>(value.data()),
                                           static_cast<int>(value.size()), -1, set) == 1);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ssl_principal_mapper)

BOOST_AUTO_TEST_CASE(valid_rules_parse) {
  for (const char* rules : {"DEFAULT", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
                            "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
                            "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L", "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
                            "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/", "RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/"})
    BOOST_TEST(SslPrincipalMapper::parse(rules).ok(), rules);
}

BOOST_AUTO_TEST_CASE(invalid_rules_are_refused) {
  for (const char* rules : {"default", "DEFAUL", "DEFAULT/L", "DEFAULT/U", "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
                            "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
                            "RULE:^CN=(.*?),OU=ServiceUsers.*$/L", "RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
                            "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU"})
    BOOST_TEST(!SslPrincipalMapper::parse(rules).ok(), rules);
}

BOOST_AUTO_TEST_CASE(a_pattern_that_does_not_compile_is_refused_with_the_rule_named) {
  auto m = SslPrincipalMapper::parse("RULE:^CN=(.*$/$1/");
  BOOST_TEST_REQUIRE(!m.ok());
  BOOST_TEST(m.error().message.find("RULE:^CN=(.*$/$1/") != std::string::npos, m.error().message);
}

BOOST_AUTO_TEST_CASE(rules_map_names_as_kafka_does) {
  auto m = mapper(
      "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, "
      "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U, RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, DEFAULT");
  BOOST_TEST(name_of(m, "CN=Duke,OU=ServiceUsers,O=Org,C=US") == "duke");
  BOOST_TEST(name_of(m, "CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US") == "duke@sme");
  BOOST_TEST(name_of(m, "cn=duke,ou=sme,dc=mycp,dc=com") == "DUKE@SME");
  BOOST_TEST(name_of(m, "cN=duke,OU=JavaSoft,O=Sun Microsystems") == "DUKE");
  BOOST_TEST(name_of(m, "OU=JavaSoft,O=Sun Microsystems,C=US") == "OU=JavaSoft,O=Sun Microsystems,C=US");
}

BOOST_AUTO_TEST_CASE(rules_split_as_kafka_splits_them) {
  BOOST_TEST(split("") == "SslPrincipalMapper(rules = [])");
  BOOST_TEST(split("DEFAULT") == "SslPrincipalMapper(rules = [DEFAULT])");
  BOOST_TEST(split("RULE://") == "SslPrincipalMapper(rules = [RULE:/])");
  BOOST_TEST(split("RULE:/.*/") == "SslPrincipalMapper(rules = [RULE:/.*])");
  BOOST_TEST(split("RULE:/.*/L") == "SslPrincipalMapper(rules = [RULE:/.*/L])");
  BOOST_TEST(split("RULE://,DEFAULT") == "SslPrincipalMapper(rules = [RULE:/, DEFAULT])");
  BOOST_TEST(split("  RULE:// ,  DEFAULT  ") == "SslPrincipalMapper(rules = [RULE:/, DEFAULT])");
  BOOST_TEST(split("  RULE:   /     / ,  DEFAULT  ") == "SslPrincipalMapper(rules = [RULE:   /     , DEFAULT])");
  BOOST_TEST(split("  RULE:  /     /U   ,DEFAULT  ") == "SslPrincipalMapper(rules = [RULE:  /     /U, DEFAULT])");
  BOOST_TEST(split("  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  ") ==
             "SslPrincipalMapper(rules = [RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT])");
  // empty rules are ignored
  BOOST_TEST(split(",   , , ,      , , ,   ") == "SslPrincipalMapper(rules = [])");
  BOOST_TEST(split(",,RULE://,,,DEFAULT,,") == "SslPrincipalMapper(rules = [RULE:/, DEFAULT])");
  BOOST_TEST(split(",  , RULE: /   /    ,,,   DEFAULT, ,   ") == "SslPrincipalMapper(rules = [RULE: /   , DEFAULT])");
  BOOST_TEST(split("     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,") ==
             "SslPrincipalMapper(rules = [RULE:   /  /U, DEFAULT])");
  // escape sequences
  BOOST_TEST(split(R"(RULE:\/\\\(\)\n\t/\/\//)") == R"(SslPrincipalMapper(rules = [RULE:\/\\\(\)\n\t/\/\/]))");
  BOOST_TEST(split(R"(RULE:\**\/+/*/L,RULE:\/*\**/**/)") ==
             R"(SslPrincipalMapper(rules = [RULE:\**\/+/*/L, RULE:\/*\**/**]))");
  // rules rule
  BOOST_TEST(split(R"(RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT)") ==
             R"(SslPrincipalMapper(rules = [RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]))");
}

BOOST_AUTO_TEST_CASE(an_escaped_comma_in_a_name_is_matched_as_kafka_matches_it) {
  auto m = mapper(R"(RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT)");
  BOOST_TEST(name_of(m, R"(CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz)") == R"(Tkac\, Adam)");
}

BOOST_AUTO_TEST_CASE(no_matching_rule_is_an_error) {
  auto m = mapper("RULE:^CN=(.*?),OU=Ops$/$1/");
  auto r = m.name_of("CN=alice,OU=Eng");
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().message.find("no rules apply to CN=alice,OU=Eng") == 0u, r.error().message);
}

BOOST_AUTO_TEST_CASE(replacement_follows_java_replace_all) {
  // Every match is replaced, as String.replaceAll does: ".*" also matches the empty end.
  BOOST_TEST(name_of(mapper("RULE:.*/x/"), "abc") == "xx");
  // A reference to a group the pattern lacks is kept literally (Kafka's escape of it).
  BOOST_TEST(name_of(mapper("RULE:^CN=(\\w+).*$/$1-$2/"), "CN=bob,O=x") == "bob-$2");
  // Named groups and escapes in the replacement.
  BOOST_TEST(name_of(mapper("RULE:^CN=(?<user>\\w+),.*$/${user}\\$/U"), "CN=bob,O=x") == "BOB$");
  // (?i): a flag Java's syntax has and ECMAScript's does not.
  BOOST_TEST(name_of(mapper("RULE:(?i)^cn=(\\w+).*$/$1/"), "CN=bob,O=x") == "bob");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(x500_name)

BOOST_AUTO_TEST_CASE(rdns_are_written_last_first_with_rfc_2253_keywords) {
  NamePtr n = name();
  add(n.get(), "C", "US", MBSTRING_ASC);
  add(n.get(), "ST", "MD");
  add(n.get(), "L", "Fulton");
  add(n.get(), "O", "Example");
  add(n.get(), "OU", "Eng");
  add(n.get(), "CN", "Duke");
  BOOST_TEST(rfc2253_name(n.get()) == "CN=Duke,OU=Eng,O=Example,L=Fulton,ST=MD,C=US");
}

BOOST_AUTO_TEST_CASE(special_characters_are_escaped_as_java_escapes_them) {
  NamePtr n = name();
  add(n.get(), "O", "a,b+c=d<e>f#g;h\"i\\j");
  add(n.get(), "CN", " lead and trail ");
  BOOST_TEST(rfc2253_name(n.get()) == "CN=\\ lead and trail\\ ,O=a\\,b\\+c\\=d\\<e\\>f\\#g\\;h\\\"i\\\\j");
}

BOOST_AUTO_TEST_CASE(attributes_without_an_rfc_2253_keyword_are_dotted_oids_with_hex_der) {
  NamePtr n = name();
  add(n.get(), "emailAddress", "a@b.c", MBSTRING_ASC);  // IA5String "a@b.c": 16 05 61 40 62 2e 63
  add(n.get(), "DC", "example", MBSTRING_ASC);
  add(n.get(), "UID", "u1", MBSTRING_ASC);
  add(n.get(), "serialNumber", "42", MBSTRING_ASC);  // PrintableString: 13 02 34 32
  BOOST_TEST(rfc2253_name(n.get()) == "2.5.4.5=#13023432,UID=u1,DC=example,1.2.840.113549.1.9.1=#16056140622e63");
}

BOOST_AUTO_TEST_CASE(a_multi_valued_rdn_joins_its_values_with_plus) {
  NamePtr n = name();
  add(n.get(), "O", "Example");
  add(n.get(), "CN", "alice");
  add(n.get(), "UID", "a1", MBSTRING_ASC, -1);  // same RDN as the CN before it
  BOOST_TEST(rfc2253_name(n.get()) == "CN=alice+UID=a1,O=Example");
}

BOOST_AUTO_TEST_CASE(utf8_values_are_kept_as_utf8) {
  NamePtr n = name();
  add(n.get(), "CN", "J\xC3\xBCrgen");
  BOOST_TEST(rfc2253_name(n.get()) == "CN=J\xC3\xBCrgen");
}

BOOST_AUTO_TEST_SUITE_END()
