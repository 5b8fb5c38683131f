#include "security/acl.h"

#include <arpa/inet.h>

#include <array>
#include <cstdio>

namespace kib::security {
namespace {

constexpr std::array<std::string_view, kResourceTypeCount> kResourceTypeNames{
    "UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"};
constexpr std::array<std::string_view, 5> kPatternTypeNames{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"};
constexpr std::array<std::string_view, kAclOperationCount> kOperationNames{
    "UNKNOWN", "ANY",   "ALL",      "READ",           "WRITE",          "CREATE",           "DELETE",        "ALTER",
    "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS",
    "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"};
constexpr std::array<std::string_view, 4> kPermissionNames{"UNKNOWN", "ANY", "DENY", "ALLOW"};

template <typename E, size_t N>
E from_code(int8_t c, const std::array<std::string_view, N>&) {
  return c >= 0 && static_cast<size_t>(c) < N ? static_cast<E>(c) : static_cast<E>(0);
}

template <typename E, size_t N>
std::string_view name_of(E e, const std::array<std::string_view, N>& names) {
  const auto c = static_cast<int8_t>(e);
  return c >= 0 && static_cast<size_t>(c) < N ? names[static_cast<size_t>(c)] : names[0];
}

template <typename E, size_t N>
std::optional<E> parse(std::string_view s, const std::array<std::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

using enum AclOperation;

constexpr AclOperation kTopicOps[] = {kRead, kWrite, kCreate, kDescribe, kDelete, kAlter, kDescribeConfigs, kAlterConfigs};
constexpr AclOperation kGroupOps[] = {kRead, kDescribe, kDelete, kDescribeConfigs, kAlterConfigs};
constexpr AclOperation kClusterOps[] = {kCreate, kClusterAction, kDescribeConfigs, kAlterConfigs,
                                        kIdempotentWrite, kAlter, kDescribe};
constexpr AclOperation kTransactionalIdOps[] = {kDescribe, kWrite, kTwoPhaseCommit};
constexpr AclOperation kDelegationTokenOps[] = {kDescribe};
constexpr AclOperation kUserOps[] = {kCreateTokens, kDescribeTokens};

}  // namespace

ResourceType resource_type_from_code(int8_t c) { return from_code<ResourceType>(c, kResourceTypeNames); }
PatternType pattern_type_from_code(int8_t c) { return from_code<PatternType>(c, kPatternTypeNames); }
AclOperation operation_from_code(int8_t c) { return from_code<AclOperation>(c, kOperationNames); }
AclPermissionType permission_from_code(int8_t c) { return from_code<AclPermissionType>(c, kPermissionNames); }

std::string_view name(ResourceType t) { return name_of(t, kResourceTypeNames); }
std::string_view name(PatternType t) { return name_of(t, kPatternTypeNames); }
std::string_view name(AclOperation op) { return name_of(op, kOperationNames); }
std::string_view name(AclPermissionType p) { return name_of(p, kPermissionNames); }
std::optional<ResourceType> parse_resource_type(std::string_view s) { return parse<ResourceType>(s, kResourceTypeNames); }
std::optional<PatternType> parse_pattern_type(std::string_view s) { return parse<PatternType>(s, kPatternTypeNames); }
std::optional<AclOperation> parse_operation(std::string_view s) { return parse<AclOperation>(s, kOperationNames); }
std::optional<AclPermissionType> parse_permission(std::string_view s) { return parse<AclPermissionType>(s, kPermissionNames); }

std::string_view log_name(ResourceType t) {
  switch (t) {
    case ResourceType::kTopic: return "Topic";
    case ResourceType::kGroup: return "Group";
    case ResourceType::kCluster: return "Cluster";
    case ResourceType::kTransactionalId: return "TransactionalId";
    case ResourceType::kDelegationToken: return "DelegationToken";
    case ResourceType::kUser: return "User";
    case ResourceType::kAny: return "Any";
    case ResourceType::kUnknown: break;
  }
  return "Unknown";
}

bool ResourcePatternFilter::matches(const ResourcePattern& p) const {
  if (type != ResourceType::kAny && type != p.type) return false;
  if (pattern != PatternType::kAny && pattern != PatternType::kMatch && pattern != p.pattern) return false;
  if (!name) return true;
  if (pattern == PatternType::kAny || pattern == p.pattern) return *name == p.name;
  // MATCH: the patterns that apply to a resource called `name`.
  switch (p.pattern) {
    case PatternType::kLiteral: return *name == p.name || p.name == kWildcard;
    case PatternType::kPrefixed: return std::string_view(*name).starts_with(p.name);
    default: return false;
  }
}

bool AccessControlEntryFilter::matches(const AccessControlEntry& e) const {
  if (principal && *principal != e.principal) return false;
  if (host && *host != e.host) return false;
  if (operation != AclOperation::kAny && operation != e.operation) return false;
  return permission == AclPermissionType::kAny || permission == e.permission;
}

bool allow_grants(AclOperation granted, AclOperation requested) {
  if (granted == kAll || granted == requested) return true;
  if (requested == kDescribe) return granted == kRead || granted == kWrite || granted == kDelete || granted == kAlter;
  if (requested == kDescribeConfigs) return granted == kAlterConfigs;
  return false;
}

bool deny_denies(AclOperation denied, AclOperation requested) { return denied == kAll || denied == requested; }

std::span<const AclOperation> supported_operations(ResourceType t) {
  switch (t) {
    case ResourceType::kTopic: return kTopicOps;
    case ResourceType::kGroup: return kGroupOps;
    case ResourceType::kCluster: return kClusterOps;
    case ResourceType::kTransactionalId: return kTransactionalIdOps;
    case ResourceType::kDelegationToken: return kDelegationTokenOps;
    case ResourceType::kUser: return kUserOps;
    default: return {};
  }
}

std::optional<std::pair<std::string_view, std::string_view>> split_principal(std::string_view principal) {
  const auto colon = principal.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return std::pair{principal.substr(0, colon), principal.substr(colon + 1)};
}

std::string java_host_address(std::string_view ip) {
  if (ip.find(':') == std::string_view::npos) return std::string(ip);
  std::string text(ip);
  std::string scope;
  if (const auto pct = text.find('%'); pct != std::string::npos) {
    scope = text.substr(pct);
    text.resize(pct);
  }
  in6_addr a{};
  if (inet_pton(AF_INET6, text.c_str(), &a) != 1) return std::string(ip);
  const uint8_t* b = a.s6_addr;
  // ::ffff:a.b.c.d: Java hands such a peer out as an Inet4Address.
  bool mapped = b[10] == 0xff && b[11] == 0xff;
  for (int i = 0; i < 10 && mapped; ++i) mapped = b[i] == 0;
  char out[64];
  if (mapped) {
    std::snprintf(out, sizeof(out), "%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
    return out;
  }
  std::snprintf(out, sizeof(out), "%x:%x:%x:%x:%x:%x:%x:%x", b[0] << 8 | b[1], b[2] << 8 | b[3], b[4] << 8 | b[5],
                b[6] << 8 | b[7], b[8] << 8 | b[9], b[10] << 8 | b[11], b[12] << 8 | b[13], b[14] << 8 | b[15]);
  return out + scope;
}

std::string to_string(const AccessControlEntry& e) {
  return "(principal=" + e.principal + ", host=" + e.host + ", operation=" + std::string(name(e.operation)) +
         ", permissionType=" + std::string(name(e.permission)) + ")";
}

std::string to_string(const ResourcePattern& p) {
  return "ResourcePattern(resourceType=" + std::string(name(p.type)) + ", name=" + p.name +
         ", patternType=" + std::string(name(p.pattern)) + ")";
}

}  // namespace kib::security
