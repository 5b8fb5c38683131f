// Kafka's ssl.principal.mapping.rules (SslPrincipalMapper): the name of an SSL client's
// principal from its certificate's subject, written as Java's X500Principal.getName() writes
// it ("CN=alice,OU=eng,O=Example,C=US"). Rules are tried in order; the first that matches names
// the principal:
//
//   RULE:pattern/replacement/[L|U]   pattern must match the whole DN; the result is the DN with
//                                    every match of pattern replaced by replacement ($1, ${name},
//                                    \x as in Java's String.replaceAll), then lower- or upper-cased
//   DEFAULT                          the DN itself
//
// The rules are split and parsed with Kafka's own two regular expressions, and patterns are
// PCRE2 (Perl-compatible, which Java's java.util.regex syntax is close to: lazy and possessive
// quantifiers, look-around, (?i) and named groups all work). Case mapping (L, U) is ASCII only.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kib::security {

class SslPrincipalMapper {
 public:
  // Kafka's default: the DN itself.
  static constexpr std::string_view kDefaultRules = "DEFAULT";

  // Parses `rules` (comma-separated; empty entries are ignored, as Kafka does). An error names
  // the rule that is not RULE:pattern/replacement/[LU] or DEFAULT, or whose pattern does not
  // compile.
  static Result<SslPrincipalMapper> parse(std::string_view rules);

  // The principal name for `distinguished_name`, or an error when no rule applies or a rule's
  // replacement refers to a group the pattern does not have (Kafka then refuses the connection).
  Result<std::string> name_of(std::string_view distinguished_name) const;

  // Kafka's toString(): "SslPrincipalMapper(rules = [RULE:^CN=(.*?)$/$1/L, DEFAULT])".
  std::string str() const;

  SslPrincipalMapper(SslPrincipalMapper&&) noexcept;
  SslPrincipalMapper& operator=(SslPrincipalMapper&&) noexcept;
  ~SslPrincipalMapper();

 private:
  struct Rule;
  SslPrincipalMapper();
  std::vector<std::unique_ptr<Rule>> rules_;
};

}  // namespace kib::security
