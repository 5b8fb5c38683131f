// Kafka's ACL model and StandardAuthorizer decision (security/acl.h, security/acl_index.h), with
// the cases of Kafka 4.1's ResourcePatternFilterTest, StandardAuthorizerTest and the
// authorizeByResourceType cases of BaseAuthorizerTest ported, and a randomized comparison of the
// index against a plain scan of every ACL.
#include <boost/test/unit_test.hpp>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "security/acl.h"
#include "security/acl_index.h"

using namespace kib::security;

namespace {

using enum AclOperation;
constexpr auto kAllow = AclPermissionType::kAllow;
constexpr auto kDeny = AclPermissionType::kDeny;
constexpr auto TOPIC = ResourceType::kTopic;
constexpr auto GROUP = ResourceType::kGroup;
constexpr auto CLUSTER = ResourceType::kCluster;
constexpr auto TXN = ResourceType::kTransactionalId;
constexpr auto LITERAL = PatternType::kLiteral;
constexpr auto PREFIXED = PatternType::kPrefixed;

AclBinding acl(ResourceType t, std::string name, PatternType p, std::string principal, std::string host,
               AclOperation op, AclPermissionType perm) {
  return AclBinding{{t, std::move(name), p}, {std::move(principal), std::move(host), op, perm}};
}

bool filter_matches(ResourceType ft, std::optional<std::string> fname, PatternType fp, ResourceType t,
                    std::string name, PatternType p) {
  return ResourcePatternFilter{ft, std::move(fname), fp}.matches(ResourcePattern{t, std::move(name), p});
}

// StandardAuthorizer with super user User:superman and the given default, over `index`.
struct Authorizer {
  AclIndex index;
  bool allow_if_no_acl = false;
  bool allowed(const std::string& user, AclOperation op, ResourceType t, const std::string& name,
               const std::string& host = "127.0.0.1") const {
    if (user == "superman") return true;
    return index.authorize("User:" + user, host, op, t, name, allow_if_no_acl).allowed;
  }
  void add(const AclBinding& b) { BOOST_REQUIRE(index.add(b)); }
};

// The decision of StandardAuthorizerData.findAclRule by scanning every ACL, for comparison.
bool reference(const std::vector<AclBinding>& acls, const std::string& principal, const std::string& host,
               AclOperation op, ResourceType t, const std::string& name, bool allow_if_no_acl) {
  bool any = false, allow = false;
  for (const auto& b : acls) {
    if (b.pattern.type != t) continue;
    const bool applies = b.pattern.pattern == LITERAL
                             ? (b.pattern.name == name || b.pattern.name == "*")
                             : std::string_view(name).starts_with(b.pattern.name);
    if (!applies) continue;
    any = true;
    if (b.entry.principal != principal && b.entry.principal != "User:*") continue;
    if (b.entry.host != "*" && b.entry.host != host) continue;
    if (b.entry.permission == kDeny) {
      if (b.entry.operation == kAll || b.entry.operation == op) return false;
    } else if (allow_grants(b.entry.operation, op)) {
      allow = true;
    }
  }
  return allow || (!any && allow_if_no_acl);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(security_acl)

BOOST_AUTO_TEST_CASE(codes_and_names_are_kafkas) {
  BOOST_TEST(code(ResourceType::kTransactionalId) == 5);
  BOOST_TEST(code(PatternType::kPrefixed) == 4);
  BOOST_TEST(code(kIdempotentWrite) == 12);
  BOOST_TEST(code(kTwoPhaseCommit) == 15);
  BOOST_TEST(code(kAllow) == 3);
  BOOST_TEST(name(kDescribeConfigs) == "DESCRIBE_CONFIGS");
  BOOST_TEST(name(ResourceType::kTransactionalId) == "TRANSACTIONAL_ID");
  BOOST_TEST(log_name(ResourceType::kTransactionalId) == "TransactionalId");
  // A code Kafka does not define reads as UNKNOWN (fromCode).
  BOOST_TEST(code(resource_type_from_code(99)) == 0);
  BOOST_TEST(code(operation_from_code(-3)) == 0);
  BOOST_TEST(code(permission_from_code(4)) == 0);
  for (int c = 0; c < kAclOperationCount; ++c) {
    const auto op = operation_from_code(static_cast<int8_t>(c));
    BOOST_TEST(code(*parse_operation(name(op))) == c);
  }
  BOOST_TEST(!parse_operation("read").has_value());
  BOOST_TEST(!parse_resource_type("TOPICS").has_value());
}

BOOST_AUTO_TEST_CASE(supported_operations_are_kafka_4_1s) {
  auto bits = [](ResourceType t) {
    int32_t b = 0;
    for (auto op : supported_operations(t)) b |= operation_bit(op);
    return b;
  };
  BOOST_TEST(bits(CLUSTER) == 8096);  // what Kafka 4.1 without an authorizer reports
  BOOST_TEST(bits(TOPIC) == ((1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11)));
  BOOST_TEST(bits(GROUP) == ((1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)));
  BOOST_TEST(bits(TXN) == ((1 << 4) | (1 << 8) | (1 << 15)));
}

// ResourcePatternFilterTest.
BOOST_AUTO_TEST_CASE(resource_pattern_filter_matches_as_kafka) {
  BOOST_TEST((ResourcePatternFilter{ResourceType::kUnknown, std::nullopt, LITERAL}.is_unknown()));
  BOOST_TEST((ResourcePatternFilter{GROUP, std::nullopt, PatternType::kUnknown}.is_unknown()));
  BOOST_TEST(!filter_matches(TOPIC, "Name", LITERAL, GROUP, "Name", LITERAL));
  BOOST_TEST(!filter_matches(TOPIC, "Different", PREFIXED, TOPIC, "Name", PREFIXED));
  BOOST_TEST(!filter_matches(TOPIC, "NAME", LITERAL, TOPIC, "Name", LITERAL));
  BOOST_TEST(!filter_matches(TOPIC, "Name", LITERAL, TOPIC, "Name", PREFIXED));
  BOOST_TEST(filter_matches(ResourceType::kAny, "Name", PREFIXED, TOPIC, "Name", PREFIXED));
  BOOST_TEST(filter_matches(TOPIC, std::nullopt, PREFIXED, TOPIC, "Name", PREFIXED));
  BOOST_TEST(filter_matches(TOPIC, std::nullopt, PatternType::kAny, TOPIC, "Name", PREFIXED));
  BOOST_TEST(filter_matches(TOPIC, std::nullopt, PatternType::kMatch, TOPIC, "Name", PREFIXED));
  BOOST_TEST(filter_matches(TOPIC, "Name", LITERAL, TOPIC, "Name", LITERAL));
  BOOST_TEST(filter_matches(TOPIC, "Name", PatternType::kAny, TOPIC, "Name", LITERAL));
  BOOST_TEST(filter_matches(TOPIC, "Name", PatternType::kMatch, TOPIC, "Name", LITERAL));
  BOOST_TEST(!filter_matches(TOPIC, "Name-something", PatternType::kMatch, TOPIC, "Name", LITERAL));
  BOOST_TEST(filter_matches(TOPIC, "*", LITERAL, TOPIC, "*", LITERAL));
  BOOST_TEST(!filter_matches(TOPIC, "Name", LITERAL, TOPIC, "*", LITERAL));
  BOOST_TEST(!filter_matches(TOPIC, "*", LITERAL, TOPIC, "Name", LITERAL));
  BOOST_TEST(!filter_matches(TOPIC, "Name", PatternType::kAny, TOPIC, "*", LITERAL));
  BOOST_TEST(filter_matches(TOPIC, "Name", PatternType::kMatch, TOPIC, "*", LITERAL));
  BOOST_TEST(filter_matches(TOPIC, "Name", PREFIXED, TOPIC, "Name", PREFIXED));
  BOOST_TEST(!filter_matches(TOPIC, "Name", PREFIXED, TOPIC, "Name-something", PREFIXED));
  BOOST_TEST(!filter_matches(TOPIC, "Name-something", PREFIXED, TOPIC, "Name", PREFIXED));
  BOOST_TEST(!filter_matches(TOPIC, "Name-something", PatternType::kAny, TOPIC, "Name", PREFIXED));
  BOOST_TEST(filter_matches(TOPIC, "Name-something", PatternType::kMatch, TOPIC, "Name", PREFIXED));
}

BOOST_AUTO_TEST_CASE(entry_filter_compares_strings_exactly) {
  AccessControlEntry e{"User:alice", "10.0.0.1", kRead, kAllow};
  BOOST_TEST((AccessControlEntryFilter{}.matches(e)));
  constexpr auto kAnyPerm = AclPermissionType::kAny;
  BOOST_TEST((AccessControlEntryFilter{"User:alice", std::nullopt, kAny, kAnyPerm}.matches(e)));
  BOOST_TEST(!(AccessControlEntryFilter{"User:*", std::nullopt, kAny, kAnyPerm}.matches(e)));  // no wildcard logic
  BOOST_TEST(!(AccessControlEntryFilter{std::nullopt, "*", kAny, kAnyPerm}.matches(e)));
  BOOST_TEST(!(AccessControlEntryFilter{std::nullopt, std::nullopt, kAll, kAnyPerm}.matches(e)));
  BOOST_TEST(!(AccessControlEntryFilter{std::nullopt, std::nullopt, kAny, kDeny}.matches(e)));
  BOOST_TEST((AccessControlEntryFilter{std::nullopt, std::nullopt, kAny, AclPermissionType::kUnknown}.is_unknown()));
}

// StandardAuthorizerTest.testFindResultImplication: ALLOW implies, DENY does not.
BOOST_AUTO_TEST_CASE(allow_implies_describe_and_describe_configs_deny_does_not) {
  for (auto op : {kDescribe, kRead, kWrite, kDelete, kAlter}) BOOST_TEST(allow_grants(op, kDescribe));
  BOOST_TEST(!allow_grants(kCreate, kDescribe));
  for (auto op : {kDescribeConfigs, kAlterConfigs}) BOOST_TEST(allow_grants(op, kDescribeConfigs));
  BOOST_TEST(!allow_grants(kAlter, kDescribeConfigs));
  BOOST_TEST(allow_grants(kAll, kIdempotentWrite));
  for (auto op : {kRead, kWrite, kDelete, kAlter}) BOOST_TEST(!deny_denies(op, kDescribe));
  BOOST_TEST(deny_denies(kDescribe, kDescribe));
  BOOST_TEST(deny_denies(kAll, kDescribe));
  BOOST_TEST(!deny_denies(kAlterConfigs, kDescribeConfigs));

  Authorizer a;
  a.add(acl(TOPIC, "foo_", PREFIXED, "User:bob", "*", kRead, kDeny));
  BOOST_TEST(!a.allowed("bob", kRead, TOPIC, "foo_bar"));
  // A DENY on READ leaves DESCRIBE to the ALLOWs (none here: the ACL still makes the resource
  // one with ACLs, so no default).
  a.allow_if_no_acl = true;
  BOOST_TEST(!a.allowed("bob", kDescribe, TOPIC, "foo_bar"));
  a.add(acl(TOPIC, "foo_", PREFIXED, "User:bob", "*", kWrite, kAllow));
  BOOST_TEST(a.allowed("bob", kDescribe, TOPIC, "foo_bar"));
}

// testAllowEveryoneIfNoAclFoundConfigEnabled / Disabled: the default applies only to a resource
// without any ACL, whoever the ACLs are for.
BOOST_AUTO_TEST_CASE(allow_everyone_only_where_no_acl_names_the_resource) {
  Authorizer a;
  a.add(acl(TOPIC, "topic1", LITERAL, "User:Alice", "*", kRead, kAllow));
  a.allow_if_no_acl = true;
  BOOST_TEST(!a.allowed("Bob", kRead, TOPIC, "topic1"));
  BOOST_TEST(a.allowed("Bob", kRead, TOPIC, "topic2"));
  a.allow_if_no_acl = false;
  BOOST_TEST(!a.allowed("Bob", kRead, TOPIC, "topic1"));
  BOOST_TEST(!a.allowed("Bob", kRead, TOPIC, "topic2"));
  // The rule that decided, as the audit log names it.
  BOOST_TEST(describe_rule(a.index.authorize("User:Bob", "h", kRead, TOPIC, "topic2", false)) == "DefaultDeny");
  BOOST_TEST(describe_rule(a.index.authorize("User:Bob", "h", kRead, TOPIC, "topic2", true)) == "DefaultAllow");
  BOOST_TEST(describe_rule(a.index.authorize("User:Alice", "h", kRead, TOPIC, "topic1", false)) ==
             "MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName=topic1, patternType=LITERAL, "
             "principal=User:Alice, host=*, operation=READ, permissionType=ALLOW))");
}

// testFindResultPrincipalMatching and testSimpleAuthorizations.
BOOST_AUTO_TEST_CASE(principal_and_wildcard_principal) {
  Authorizer a;
  a.add(acl(TOPIC, "foo_", PREFIXED, "User:bob", "*", kRead, kAllow));
  a.add(acl(TOPIC, "foo_", PREFIXED, "User:bob", "*", kWrite, kAllow));
  a.add(acl(GROUP, "bar", LITERAL, "User:*", "*", kDescribeConfigs, kAllow));
  a.add(acl(GROUP, "bar", LITERAL, "User:*", "*", kAlterConfigs, kAllow));
  BOOST_TEST(a.allowed("bob", kRead, TOPIC, "foo_"));
  BOOST_TEST(a.allowed("bob", kRead, TOPIC, "foo_bar"));
  BOOST_TEST(!a.allowed("alice", kRead, TOPIC, "foo_bar"));
  BOOST_TEST(a.allowed("fred", kAlterConfigs, GROUP, "bar"));
  a.add(acl(GROUP, "bar", LITERAL, "User:*", "*", kRead, kDeny));
  BOOST_TEST(!a.allowed("alice", kRead, GROUP, "bar"));
  // Principal types differ: Group:* is not the wildcard principal.
  a.add(acl(TOPIC, "t", LITERAL, "Group:*", "*", kRead, kAllow));
  BOOST_TEST(!a.allowed("bob", kRead, TOPIC, "t"));
  BOOST_TEST(a.allowed("superman", kRead, TOPIC, "t"));
}

// testDenyPrecedenceWithOperationAll.
BOOST_AUTO_TEST_CASE(deny_wins_over_allow_with_operation_all) {
  Authorizer a;
  a.add(acl(TOPIC, "foo", LITERAL, "User:alice", "*", kAll, kDeny));
  a.add(acl(TOPIC, "foo", PREFIXED, "User:alice", "*", kRead, kAllow));
  a.add(acl(TOPIC, "foo", LITERAL, "User:*", "*", kAll, kDeny));
  a.add(acl(TOPIC, "foo", PREFIXED, "User:*", "*", kDescribe, kAllow));
  BOOST_TEST(!a.allowed("alice", kWrite, TOPIC, "foo"));
  BOOST_TEST(!a.allowed("alice", kRead, TOPIC, "foo"));
  BOOST_TEST(!a.allowed("alice", kDescribe, TOPIC, "foo"));
  BOOST_TEST(a.allowed("alice", kRead, TOPIC, "foobar"));
  BOOST_TEST(!a.allowed("bob", kDescribe, TOPIC, "foo"));
  BOOST_TEST(!a.allowed("bob", kRead, TOPIC, "foo"));
  BOOST_TEST(!a.allowed("bob", kWrite, TOPIC, "foo"));
  BOOST_TEST(a.allowed("bob", kDescribe, TOPIC, "foobaz"));
  BOOST_TEST(!a.allowed("bob", kRead, TOPIC, "foobaz"));
}

// testTopicAclWithOperationAll.
BOOST_AUTO_TEST_CASE(operation_all_allows_every_operation) {
  Authorizer a;
  a.add(acl(TOPIC, "foo", LITERAL, "User:*", "*", kAll, kAllow));
  a.add(acl(TOPIC, "bar", PREFIXED, "User:alice", "*", kAll, kAllow));
  a.add(acl(TOPIC, "baz", LITERAL, "User:bob", "*", kAll, kAllow));
  BOOST_TEST(a.allowed("alice", kWrite, TOPIC, "foo"));
  BOOST_TEST(a.allowed("alice", kDescribeConfigs, TOPIC, "bar"));
  BOOST_TEST(!a.allowed("alice", kDescribe, TOPIC, "baz"));
  BOOST_TEST(a.allowed("bob", kWrite, TOPIC, "foo"));
  BOOST_TEST(!a.allowed("bob", kRead, TOPIC, "bar"));
  BOOST_TEST(a.allowed("bob", kDescribe, TOPIC, "baz"));
  BOOST_TEST(a.allowed("malory", kDescribe, TOPIC, "foo"));
  BOOST_TEST(!a.allowed("malory", kWrite, TOPIC, "bar"));
  BOOST_TEST(!a.allowed("malory", kRead, TOPIC, "baz"));
}

// testHostAddressAclValidation (local host 127.0.0.1).
BOOST_AUTO_TEST_CASE(host_specific_acls) {
  const std::string local = "127.0.0.1", host1 = "192.168.1.1", host2 = "192.168.1.2";
  Authorizer a;
  a.add(acl(TOPIC, "foo", LITERAL, "User:alice", host1, kRead, kDeny));
  a.add(acl(TOPIC, "foo", LITERAL, "User:alice", "*", kRead, kAllow));
  a.add(acl(TOPIC, "bar", LITERAL, "User:bob", host2, kRead, kAllow));
  a.add(acl(TOPIC, "bar", LITERAL, "User:*", local, kDescribe, kAllow));
  auto check = [&](const std::string& user, const std::string& host, std::vector<bool> expected) {
    BOOST_TEST_CONTEXT(user << "@" << host) {
      BOOST_TEST(a.allowed(user, kRead, TOPIC, "foo", host) == expected[0]);
      BOOST_TEST(a.allowed(user, kRead, TOPIC, "bar", host) == expected[1]);
      BOOST_TEST(a.allowed(user, kDescribe, TOPIC, "bar", host) == expected[2]);
    }
  };
  check("alice", local, {true, false, true});
  check("alice", host1, {false, false, false});
  check("alice", host2, {true, false, false});
  check("bob", local, {false, false, true});
  check("bob", host1, {false, false, false});
  check("bob", host2, {false, true, true});
}

BOOST_AUTO_TEST_CASE(ipv6_clients_match_hosts_in_javas_form) {
  BOOST_TEST(java_host_address("127.0.0.1") == "127.0.0.1");
  BOOST_TEST(java_host_address("::1") == "0:0:0:0:0:0:0:1");
  BOOST_TEST(java_host_address("fe80::a:B0") == "fe80:0:0:0:0:0:a:b0");
  BOOST_TEST(java_host_address("::ffff:10.1.2.3") == "10.1.2.3");
  BOOST_TEST(java_host_address("fe80::1%eth0") == "fe80:0:0:0:0:0:0:1%eth0");
  Authorizer a;
  a.add(acl(TOPIC, "t", LITERAL, "User:alice", "0:0:0:0:0:0:0:1", kRead, kAllow));
  a.add(acl(TOPIC, "t", LITERAL, "User:alice", "10.1.2.3", kWrite, kAllow));
  BOOST_TEST(a.allowed("alice", kRead, TOPIC, "t", "::1"));
  BOOST_TEST(!a.allowed("alice", kRead, TOPIC, "t", "::2"));
  BOOST_TEST(a.allowed("alice", kWrite, TOPIC, "t", "::ffff:10.1.2.3"));
}

// testAuthorizationWithManyAcls.
BOOST_AUTO_TEST_CASE(many_acls_literal_prefixed_and_wildcard) {
  Authorizer a;
  a.add(acl(TOPIC, "green2", LITERAL, "User:*", "*", kRead, kAllow));
  a.add(acl(TOPIC, "green", PREFIXED, "User:bob", "*", kRead, kAllow));
  a.add(acl(TOPIC, "betamax4", LITERAL, "User:bob", "*", kRead, kAllow));
  a.add(acl(TOPIC, "betamax", LITERAL, "User:bob", "*", kRead, kAllow));
  a.add(acl(TOPIC, "beta", PREFIXED, "User:*", "*", kRead, kAllow));
  a.add(acl(TOPIC, "alpha", PREFIXED, "User:*", "*", kRead, kAllow));
  a.add(acl(TOPIC, "alp", PREFIXED, "User:bob", "*", kRead, kDeny));
  a.add(acl(GROUP, "*", LITERAL, "User:bob", "*", kWrite, kAllow));
  a.add(acl(GROUP, "wheel", LITERAL, "User:*", "*", kWrite, kDeny));
  BOOST_TEST(a.allowed("bob", kRead, TOPIC, "green1"));
  BOOST_TEST(!a.allowed("bob", kWrite, GROUP, "wheel"));
  BOOST_TEST(!a.allowed("bob", kRead, TOPIC, "alpha"));
  BOOST_TEST(a.allowed("bob", kWrite, GROUP, "arbitrary"));
  BOOST_TEST(!a.allowed("bob", kRead, TOPIC, "ala"));
}

// testPrefixAcls.
BOOST_AUTO_TEST_CASE(prefixed_acls) {
  Authorizer a;
  a.add(acl(TOPIC, "fooa", PREFIXED, "User:alice", "*", kAll, kAllow));
  a.add(acl(TOPIC, "foobar", LITERAL, "User:bob", "*", kAll, kAllow));
  a.add(acl(TOPIC, "f", PREFIXED, "User:bob", "*", kAll, kAllow));
  BOOST_TEST(a.allowed("bob", kWrite, TOPIC, "foobarr"));
  BOOST_TEST(!a.allowed("bob", kRead, TOPIC, "goobar"));
  BOOST_TEST(a.allowed("bob", kRead, TOPIC, "fooa"));
  BOOST_TEST(a.allowed("alice", kDescribe, TOPIC, "fooa"));
  BOOST_TEST(!a.allowed("alice", kWrite, TOPIC, "bar"));
  BOOST_TEST(!a.allowed("alice", kRead, TOPIC, "baz"));
}

BOOST_AUTO_TEST_CASE(acls_are_a_set_and_removal_forgets_them) {
  AclIndex index;
  auto b = acl(TOPIC, "foo_", PREFIXED, "User:bob", "*", kRead, kAllow);
  BOOST_TEST(index.add(b));
  BOOST_TEST(!index.add(b));
  BOOST_TEST(index.size() == 1u);
  BOOST_TEST(index.authorize("User:bob", "h", kRead, TOPIC, "foo_x", false).allowed);
  BOOST_TEST(index.remove(b));
  BOOST_TEST(!index.remove(b));
  BOOST_TEST(index.size() == 0u);
  // Gone entirely: the resource has no ACL any more, so the default applies again.
  BOOST_TEST(index.authorize("User:bob", "h", kRead, TOPIC, "foo_x", true).allowed);
  BOOST_TEST(!index.authorize("User:bob", "h", kRead, TOPIC, "foo_x", false).allowed);
  // Only literal and prefixed patterns are ACLs.
  BOOST_TEST(!index.add(acl(TOPIC, "x", PatternType::kMatch, "User:bob", "*", kRead, kAllow)));
}

// testListAcls, and the filters DescribeAcls and DeleteAcls use.
BOOST_AUTO_TEST_CASE(find_returns_what_the_filter_matches_sorted) {
  AclIndex index;
  const auto foo_read = acl(TOPIC, "foo_", PREFIXED, "User:bob", "*", kRead, kAllow);
  const auto foo_write = acl(TOPIC, "foo_", PREFIXED, "User:bob", "*", kWrite, kAllow);
  const auto bar_dc = acl(GROUP, "bar", LITERAL, "User:*", "*", kDescribeConfigs, kDeny);
  const auto bar_ac = acl(GROUP, "bar", LITERAL, "User:*", "*", kAlterConfigs, kDeny);
  const auto star = acl(TOPIC, "*", LITERAL, "User:carol", "*", kRead, kAllow);
  const auto foo_x = acl(TOPIC, "foo_x", LITERAL, "User:carol", "10.0.0.1", kWrite, kDeny);
  for (const auto& b : {foo_read, foo_write, bar_dc, bar_ac, star, foo_x}) BOOST_REQUIRE(index.add(b));
  auto names = [&](const AclBindingFilter& f) {
    std::vector<AclBinding> all;
    index.for_each([&](const AclBinding& b) {
      if (f.matches(b)) all.push_back(b);
    });
    std::sort(all.begin(), all.end());
    auto found = index.find(f);
    BOOST_TEST((found == all));  // the index answers exactly what a scan does
    return found.size();
  };
  BOOST_TEST(names(AclBindingFilter::any()) == 6u);
  BOOST_TEST(names({{TOPIC, std::nullopt, PatternType::kAny}, {}}) == 4u);
  BOOST_TEST(names({{TOPIC, "foo_x", PatternType::kMatch}, {}}) == 4u);  // literal, "*", prefix foo_
  BOOST_TEST(names({{TOPIC, "foo_x", PatternType::kAny}, {}}) == 1u);
  BOOST_TEST(names({{TOPIC, "foo_", PREFIXED}, {}}) == 2u);
  BOOST_TEST(names({{TOPIC, "foo_", LITERAL}, {}}) == 0u);
  BOOST_TEST(names({{ResourceType::kAny, std::nullopt, PatternType::kAny}, {"User:*", std::nullopt, kAny, AclPermissionType::kAny}}) == 2u);
  BOOST_TEST(names({{ResourceType::kAny, std::nullopt, PatternType::kAny}, {std::nullopt, "10.0.0.1", kAny, AclPermissionType::kAny}}) == 1u);
  BOOST_TEST(names({{ResourceType::kAny, std::nullopt, PatternType::kAny}, {std::nullopt, std::nullopt, kWrite, AclPermissionType::kAny}}) == 2u);
  BOOST_TEST(names({{ResourceType::kUnknown, std::nullopt, PatternType::kAny}, {}}) == 0u);
  BOOST_TEST(names({{TOPIC, std::nullopt, PatternType::kUnknown}, {}}) == 0u);
  const auto listed = index.find(AclBindingFilter::any());
  BOOST_TEST((listed.front() == star));  // by type, pattern type, then name: TOPIC LITERAL "*" first
  bool truncated = false;
  BOOST_TEST(index.find(AclBindingFilter::any(), 3, &truncated).size() == 3u);
  BOOST_TEST(truncated);
  index.find(AclBindingFilter::any(), 6, &truncated);
  BOOST_TEST(!truncated);
}

// BaseAuthorizerTest's authorizeByResourceType cases (the ACL scan; the super user and
// hard-coded-name steps are the bridge Authorizer's).
BOOST_AUTO_TEST_CASE(any_allowed_by_resource_type) {
  const std::string u1 = "User:user1", u2 = "User:user2", h1 = "192.168.1.1", h2 = "192.168.1.2";
  {  // MultipleAddAndRemove / DenyTakesPrecedence
    AclIndex i;
    BOOST_TEST(!i.any_allowed(u1, h1, kRead, TOPIC));
    i.add(acl(TOPIC, "sb1", LITERAL, u1, h1, kRead, kAllow));
    BOOST_TEST(i.any_allowed(u1, h1, kRead, TOPIC));
    i.add(acl(TOPIC, "sb1", LITERAL, u1, h1, kRead, kDeny));
    BOOST_TEST(!i.any_allowed(u1, h1, kRead, TOPIC));
    i.remove(acl(TOPIC, "sb1", LITERAL, u1, h1, kRead, kDeny));
    BOOST_TEST(i.any_allowed(u1, h1, kRead, TOPIC));
    BOOST_TEST(!i.any_allowed(u1, h1, kWrite, TOPIC));  // no implication
  }
  {  // IsolationUnrelatedDenyWontDominateAllow
    AclIndex i;
    i.add(acl(TOPIC, "sb1", LITERAL, u1, h1, kRead, kDeny));
    i.add(acl(TOPIC, "sb1", LITERAL, u2, h1, kRead, kDeny));
    i.add(acl(TOPIC, "sb1", LITERAL, u1, h2, kWrite, kDeny));
    i.add(acl(TOPIC, "sb1", LITERAL, u2, h2, kRead, kDeny));
    i.add(acl(TOPIC, "sb1", LITERAL, u1, h2, kRead, kAllow));
    i.add(acl(TOPIC, "sb2", LITERAL, u1, h2, kRead, kDeny));
    i.add(acl(GROUP, "s", PREFIXED, u1, h2, kRead, kDeny));
    BOOST_TEST(!i.any_allowed(u1, h1, kRead, TOPIC));
    BOOST_TEST(!i.any_allowed(u1, h1, kRead, GROUP));
    BOOST_TEST(!i.any_allowed(u1, h1, kRead, TXN));
    BOOST_TEST(!i.any_allowed(u1, h1, kRead, CLUSTER));
    BOOST_TEST(i.any_allowed(u1, h2, kRead, TOPIC));
  }
  {  // PrefixedResourceDenyDominate
    AclIndex i;
    i.add(acl(GROUP, "abcde", PREFIXED, u1, h1, kRead, kAllow));
    BOOST_TEST(i.any_allowed(u1, h1, kRead, GROUP));
    i.add(acl(GROUP, "abcd", PREFIXED, u1, h1, kRead, kDeny));
    BOOST_TEST(!i.any_allowed(u1, h1, kRead, GROUP));
    i.add(acl(GROUP, "abc", PREFIXED, u1, h1, kRead, kAllow));
    BOOST_TEST(i.any_allowed(u1, h1, kRead, GROUP));
    i.add(acl(GROUP, "a", PREFIXED, u1, h1, kRead, kDeny));
    BOOST_TEST(!i.any_allowed(u1, h1, kRead, GROUP));
    i.add(acl(GROUP, "ab", PREFIXED, u1, h1, kRead, kAllow));
    BOOST_TEST(!i.any_allowed(u1, h1, kRead, GROUP));
  }
  {  // WildcardResourceDenyDominate
    AclIndex i;
    i.add(acl(GROUP, "hello", PREFIXED, u1, h1, kWrite, kAllow));
    BOOST_TEST(i.any_allowed(u1, h1, kWrite, GROUP));
    i.add(acl(GROUP, "*", LITERAL, u1, h1, kWrite, kDeny));
    BOOST_TEST(!i.any_allowed(u1, h1, kWrite, GROUP));
    i.add(acl(GROUP, "*", LITERAL, u1, h1, kWrite, kAllow));
    i.add(acl(GROUP, "aloha", LITERAL, u1, h1, kWrite, kAllow));
    BOOST_TEST(!i.any_allowed(u1, h1, kWrite, GROUP));
  }
  {  // WithAllOperationAce / WithAllHostAce / WithAllPrincipalAce
    AclIndex i;
    i.add(acl(TOPIC, "sb1", LITERAL, u1, h1, kWrite, kDeny));
    i.add(acl(TOPIC, "sb1", LITERAL, u1, h1, kAll, kAllow));
    BOOST_TEST(i.any_allowed(u1, h1, kRead, TOPIC));
    i.add(acl(TOPIC, "sb1", LITERAL, u1, h1, kAll, kDeny));
    BOOST_TEST(!i.any_allowed(u1, h1, kRead, TOPIC));
    AclIndex j;
    j.add(acl(TOPIC, "sb1", LITERAL, u1, h1, kRead, kAllow));
    j.add(acl(TOPIC, "sb1", LITERAL, u1, "*", kRead, kDeny));
    BOOST_TEST(!j.any_allowed(u1, h1, kRead, TOPIC));
    j.add(acl(TOPIC, "sb2", LITERAL, u1, "*", kRead, kAllow));
    BOOST_TEST(j.any_allowed(u1, h2, kRead, TOPIC));
    AclIndex k;
    k.add(acl(TOPIC, "sb1", LITERAL, u1, h1, kRead, kAllow));
    k.add(acl(TOPIC, "sb1", LITERAL, "User:*", h1, kRead, kDeny));
    BOOST_TEST(!k.any_allowed(u1, h1, kRead, TOPIC));
    k.add(acl(TOPIC, "sb2", LITERAL, "User:*", h1, kRead, kAllow));
    BOOST_TEST(k.any_allowed(u2, h1, kRead, TOPIC));
  }
}

// StandardAuthorizerPropertyTest in spirit: random ACL sets (literal, prefixed, wildcard;
// principals, User:*, hosts; ALLOW and DENY) decide as a scan of every ACL does, and keep
// deciding so as ACLs are removed.
BOOST_AUTO_TEST_CASE(index_decides_as_a_scan_of_every_acl) {
  std::mt19937 rng(20261204);
  const std::vector<std::string> names{"a", "ab", "abc", "abcd", "b", "ba", "bab", "x", "*", "xyz", "abx"};
  const std::vector<std::string> principals{"User:alice", "User:bob", "User:*"};
  const std::vector<std::string> hosts{"*", "10.0.0.1", "10.0.0.2"};
  const std::vector<AclOperation> ops{kAll, kRead, kWrite, kDescribe, kDelete, kAlter, kCreate, kDescribeConfigs,
                                      kAlterConfigs};
  auto pick = [&](const auto& v) { return v[rng() % v.size()]; };
  for (int round = 0; round < 60; ++round) {
    AclIndex index;
    std::vector<AclBinding> acls;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      auto b = acl(rng() % 4 ? TOPIC : GROUP, pick(names), rng() % 2 ? LITERAL : PREFIXED, pick(principals),
                   pick(hosts), pick(ops), rng() % 3 ? kAllow : kDeny);
      if (index.add(b)) acls.push_back(b);
    }
    for (int step = 0; step < 3; ++step) {
      BOOST_REQUIRE(index.size() == acls.size());
      for (const auto& name : names)
        for (const std::string user : {"User:alice", "User:bob", "User:carol"})
          for (const std::string host : {"10.0.0.1", "10.0.0.3"})
            for (auto op : {kRead, kWrite, kDescribe, kDescribeConfigs, kAlter})
              for (bool dflt : {false, true})
                for (auto type : {TOPIC, GROUP})
                  BOOST_TEST_CONTEXT("round " << round << " step " << step << " " << user << "@" << host << " "
                                              << name << " " << int(code(op)) << " default " << dflt) {
                    BOOST_TEST(index.authorize(user, host, op, type, name, dflt).allowed ==
                               reference(acls, user, host, op, type, name, dflt));
                  }
      // Remove a third of them, then decide again.
      for (size_t i = 0; i < acls.size();) {
        if (rng() % 3 == 0) {
          BOOST_REQUIRE(index.remove(acls[i]));
          acls.erase(acls.begin() + static_cast<long>(i));
        } else {
          ++i;
        }
      }
    }
  }
}

// A check looks a resource up; it does not visit every ACL. 50,000 ACLs over 10,000 topics
// (literal and prefixed, two principals each plus User:*), then 200,000 checks: a scan of every
// ACL per check would be 10^10 visits; the index looks at the few entries of the matching
// resources (counted, not timed).
BOOST_AUTO_TEST_CASE(a_check_stays_cheap_with_many_thousand_acls) {
  AclIndex index;
  for (int t = 0; t < 10000; ++t) {
    const std::string topic = "topic-" + std::to_string(t);
    index.add(acl(TOPIC, topic, LITERAL, "User:u" + std::to_string(t % 100), "*", kRead, kAllow));
    index.add(acl(TOPIC, topic, LITERAL, "User:u" + std::to_string((t + 1) % 100), "*", kWrite, kAllow));
    index.add(acl(TOPIC, topic, LITERAL, "User:*", "*", kDescribe, kAllow));
    index.add(acl(TOPIC, topic + "-", PREFIXED, "User:u" + std::to_string(t % 100), "*", kRead, kAllow));
    index.add(acl(GROUP, "group-" + std::to_string(t), LITERAL, "User:u" + std::to_string(t % 100), "*", kRead, kAllow));
  }
  BOOST_REQUIRE(index.size() == 50000u);
  const uint64_t visited_before = index.entries_visited();
  size_t allowed = 0;
  for (int i = 0; i < 200000; ++i) {
    const int t = i % 10000;
    allowed += index.authorize("User:u" + std::to_string(i % 100), "127.0.0.1", kRead, TOPIC,
                               "topic-" + std::to_string(t) + "-x", false).allowed;
  }
  BOOST_TEST(allowed == 200000u);  // user i%100 reads topic-(i%10000)-x through the prefix ACL
  // Each check matches topic-t (literal) and topic-t- (prefixed): at most 4 entries for the
  // principal and User:* of each, so <= 8 per check, against 50,000 for a scan.
  const uint64_t visited = index.entries_visited() - visited_before;
  BOOST_TEST(visited >= 200000u);
  BOOST_TEST(visited <= 8u * 200000u);
}

BOOST_AUTO_TEST_SUITE_END()
