// Kafka's ACL model (org.apache.kafka.common.acl and .resource): resource types, pattern types,
// operations and permission types with Kafka's numeric codes, ACL bindings, and the binding
// filters DescribeAcls and DeleteAcls match with (AclBindingFilter.matches). Pure code: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>

namespace kib::security {

// The enums carry Kafka's wire codes. A code Kafka does not define reads as kUnknown, as
// Kafka's fromCode does.
enum class ResourceType : int8_t {
  kUnknown = 0,
  kAny = 1,
  kTopic = 2,
  kGroup = 3,
  kCluster = 4,
  kTransactionalId = 5,
  kDelegationToken = 6,
  kUser = 7,
};

enum class PatternType : int8_t {
  kUnknown = 0,
  kAny = 1,    // filters only: any pattern type, names compared exactly
  kMatch = 2,  // filters only: every pattern that would apply to the named resource
  kLiteral = 3,
  kPrefixed = 4,
};

enum class AclOperation : int8_t {
  kUnknown = 0,
  kAny = 1,  // filters only
  kAll = 2,
  kRead = 3,
  kWrite = 4,
  kCreate = 5,
  kDelete = 6,
  kAlter = 7,
  kDescribe = 8,
  kClusterAction = 9,
  kDescribeConfigs = 10,
  kAlterConfigs = 11,
  kIdempotentWrite = 12,
  kCreateTokens = 13,
  kDescribeTokens = 14,
  kTwoPhaseCommit = 15,
};

enum class AclPermissionType : int8_t {
  kUnknown = 0,
  kAny = 1,  // filters only
  kDeny = 2,
  kAllow = 3,
};

inline constexpr int kResourceTypeCount = 8;
inline constexpr int kAclOperationCount = 16;

ResourceType resource_type_from_code(int8_t code);
PatternType pattern_type_from_code(int8_t code);
AclOperation operation_from_code(int8_t code);
AclPermissionType permission_from_code(int8_t code);
constexpr int8_t code(ResourceType t) { return static_cast<int8_t>(t); }
constexpr int8_t code(PatternType t) { return static_cast<int8_t>(t); }
constexpr int8_t code(AclOperation t) { return static_cast<int8_t>(t); }
constexpr int8_t code(AclPermissionType t) { return static_cast<int8_t>(t); }

// Kafka's enum names ("TOPIC", "PREFIXED", "DESCRIBE_CONFIGS", "ALLOW"): what the acls table
// stores and logs show. parse_* accept exactly these and refuse the rest.
std::string_view name(ResourceType t);
std::string_view name(PatternType t);
std::string_view name(AclOperation op);
std::string_view name(AclPermissionType p);
std::optional<ResourceType> parse_resource_type(std::string_view s);
std::optional<PatternType> parse_pattern_type(std::string_view s);
std::optional<AclOperation> parse_operation(std::string_view s);
std::optional<AclPermissionType> parse_permission(std::string_view s);
// SecurityUtils.resourceTypeName, as Kafka's authorizer log writes it: "Topic", "TransactionalId".
std::string_view log_name(ResourceType t);

// The resource name (or host) that matches every resource (or host), and the principal that
// matches every principal.
inline constexpr std::string_view kWildcard = "*";
inline constexpr std::string_view kWildcardPrincipal = "User:*";
// The one name of the CLUSTER resource (Kafka's CLUSTER_NAME).
inline constexpr std::string_view kClusterName = "kafka-cluster";

struct ResourcePattern {
  ResourceType type = ResourceType::kTopic;
  std::string name;
  PatternType pattern = PatternType::kLiteral;
  friend bool operator==(const ResourcePattern&, const ResourcePattern&) = default;
  friend bool operator<(const ResourcePattern& a, const ResourcePattern& b) {
    return std::tie(a.type, a.pattern, a.name) < std::tie(b.type, b.pattern, b.name);
  }
};

struct AccessControlEntry {
  std::string principal;  // "User:alice", "User:*"
  std::string host;       // an address or "*"
  AclOperation operation = AclOperation::kRead;
  AclPermissionType permission = AclPermissionType::kAllow;
  friend bool operator==(const AccessControlEntry&, const AccessControlEntry&) = default;
  friend bool operator<(const AccessControlEntry& a, const AccessControlEntry& b) {
    return std::tie(a.principal, a.host, a.operation, a.permission) <
           std::tie(b.principal, b.host, b.operation, b.permission);
  }
};

struct AclBinding {
  ResourcePattern pattern;
  AccessControlEntry entry;
  friend bool operator==(const AclBinding&, const AclBinding&) = default;
  friend bool operator<(const AclBinding& a, const AclBinding& b) {
    return std::tie(a.pattern, a.entry) < std::tie(b.pattern, b.entry);
  }
};

// ResourcePatternFilter: a null name matches any name.
struct ResourcePatternFilter {
  ResourceType type = ResourceType::kAny;
  std::optional<std::string> name;
  PatternType pattern = PatternType::kAny;
  bool matches(const ResourcePattern& p) const;
  bool is_unknown() const { return type == ResourceType::kUnknown || pattern == PatternType::kUnknown; }
};

// AccessControlEntryFilter: a null principal or host matches any; compared as strings.
struct AccessControlEntryFilter {
  std::optional<std::string> principal;
  std::optional<std::string> host;
  AclOperation operation = AclOperation::kAny;
  AclPermissionType permission = AclPermissionType::kAny;
  bool matches(const AccessControlEntry& e) const;
  bool is_unknown() const { return operation == AclOperation::kUnknown || permission == AclPermissionType::kUnknown; }
};

struct AclBindingFilter {
  ResourcePatternFilter pattern;
  AccessControlEntryFilter entry;
  bool matches(const AclBinding& b) const { return pattern.matches(b.pattern) && entry.matches(b.entry); }
  static AclBindingFilter any() { return {}; }
};

// Whether an ALLOW ACL for `granted` allows `requested`: the same operation, ALL, or one that
// implies it (DESCRIBE by READ, WRITE, DELETE, ALTER; DESCRIBE_CONFIGS by ALTER_CONFIGS).
// A DENY ACL denies only its own operation (or all, for ALL): no implication.
bool allow_grants(AclOperation granted, AclOperation requested);
bool deny_denies(AclOperation denied, AclOperation requested);

// AclEntry.supportedOperations of Kafka 4.1: the operations authorized-operations fields report.
std::span<const AclOperation> supported_operations(ResourceType t);
// Kafka's Utils.to32BitField of a set of operations: bit `code` set for each.
inline int32_t operation_bit(AclOperation op) { return int32_t{1} << static_cast<int>(op); }

// The principal's type and name as Kafka parses an ACL's principal string (at the first ':');
// nullopt without a colon.
std::optional<std::pair<std::string_view, std::string_view>> split_principal(std::string_view principal);

// Java's InetAddress.getHostAddress() of a client address as the bridge writes it (uv_ip*_name):
// IPv4 as is, IPv4-mapped IPv6 as its IPv4 address, other IPv6 addresses in Java's uncompressed
// lower-case form ("0:0:0:0:0:0:0:1"). ACLs' hosts are compared with this, as Kafka does.
std::string java_host_address(std::string_view ip);

// "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" and
// "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)", Kafka's toString forms.
std::string to_string(const AccessControlEntry& e);
std::string to_string(const ResourcePattern& p);

}  // namespace kib::security
