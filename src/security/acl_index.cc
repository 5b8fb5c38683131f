#include "security/acl_index.h"

#include <algorithm>
#include <set>

namespace kib::security {
namespace {

// An ACL's host is "*" or an address as Java writes it (InetAddress.getHostAddress); the client's
// is converted only when it could differ (IPv6) and an ACL names a host.
// No client host (`client_host` null: AclIndex::authorize_wildcard_host) is matched by "*" alone:
// an ACL naming an address, or the empty host, says nothing about other hosts.
bool host_matches(std::string_view acl_host, const std::string_view* client_host) {
  if (acl_host == kWildcard) return true;
  if (!client_host) return false;
  if (acl_host == *client_host) return true;
  return client_host->find(':') != std::string_view::npos && acl_host == java_host_address(*client_host);
}

}  // namespace

std::string describe_rule(const Decision& d) {
  switch (d.rule) {
    case Rule::kSuperUser: return "SuperUser";
    case Rule::kDefaultAllow: return "DefaultAllow";
    case Rule::kDefaultDeny: return "DefaultDeny";
    case Rule::kNoMatchingAllow: return "DefaultDeny";  // Kafka's MatchingRuleBuilder.DENY_RULE
    case Rule::kAllowAcl:
    case Rule::kDenyAcl: break;
  }
  std::string s = "MatchingAcl(acl=StandardAcl(resourceType=";
  if (d.pattern) {
    s += std::string(name(d.pattern->type)) + ", resourceName=" + d.pattern->name +
         ", patternType=" + std::string(name(d.pattern->pattern));
  }
  s += ", principal=" + std::string(d.principal) + ", host=" + std::string(d.host) +
       ", operation=" + std::string(name(d.operation)) + ", permissionType=" + std::string(name(d.permission)) + "))";
  return s;
}

bool AclIndex::add(const AclBinding& b) {
  const bool prefixed = b.pattern.pattern == PatternType::kPrefixed;
  if (!prefixed && b.pattern.pattern != PatternType::kLiteral) return false;
  TypeAcls& t = type_acls(b.pattern.type);
  auto& patterns = prefixed ? t.prefixed : t.literal;
  auto it = patterns.find(b.pattern.name);
  if (it == patterns.end()) {
    it = patterns.emplace(b.pattern.name, PatternAcls{b.pattern, {}, 0}).first;
    if (prefixed) ++t.prefix_lengths[b.pattern.name.size()];
  }
  PatternAcls& p = it->second;
  auto& aces = p.by_principal[b.entry.principal];
  const Ace ace{b.entry.host, b.entry.operation, b.entry.permission};
  if (std::find(aces.begin(), aces.end(), ace) != aces.end()) return false;
  aces.push_back(ace);
  ++p.count;
  ++size_;
  return true;
}

bool AclIndex::remove(const AclBinding& b) {
  const bool prefixed = b.pattern.pattern == PatternType::kPrefixed;
  if (!prefixed && b.pattern.pattern != PatternType::kLiteral) return false;
  TypeAcls& t = type_acls(b.pattern.type);
  auto& patterns = prefixed ? t.prefixed : t.literal;
  auto it = patterns.find(b.pattern.name);
  if (it == patterns.end()) return false;
  PatternAcls& p = it->second;
  auto pit = p.by_principal.find(b.entry.principal);
  if (pit == p.by_principal.end()) return false;
  auto& aces = pit->second;
  auto a = std::find(aces.begin(), aces.end(), Ace{b.entry.host, b.entry.operation, b.entry.permission});
  if (a == aces.end()) return false;
  aces.erase(a);
  --size_;
  if (aces.empty()) p.by_principal.erase(pit);
  if (--p.count == 0) {
    patterns.erase(it);
    if (prefixed) {
      auto len = t.prefix_lengths.find(b.pattern.name.size());
      if (--len->second == 0) t.prefix_lengths.erase(len);
    }
  }
  return true;
}

bool AclIndex::contains(const AclBinding& b) const {
  const TypeAcls& t = type_acls(b.pattern.type);
  const auto* patterns = b.pattern.pattern == PatternType::kPrefixed  ? &t.prefixed
                         : b.pattern.pattern == PatternType::kLiteral ? &t.literal
                                                                      : nullptr;
  if (!patterns) return false;
  auto it = patterns->find(b.pattern.name);
  if (it == patterns->end()) return false;
  auto pit = it->second.by_principal.find(b.entry.principal);
  if (pit == it->second.by_principal.end()) return false;
  const Ace ace{b.entry.host, b.entry.operation, b.entry.permission};
  return std::find(pit->second.begin(), pit->second.end(), ace) != pit->second.end();
}

void AclIndex::clear() {
  by_type_ = {};
  size_ = 0;
}

Decision AclIndex::authorize(std::string_view principal, std::string_view host, AclOperation op, ResourceType type,
                             std::string_view name, bool allow_if_no_acl) const {
  return decide(principal, &host, op, type, name, allow_if_no_acl);
}

Decision AclIndex::authorize_wildcard_host(std::string_view principal, AclOperation op, ResourceType type,
                                           std::string_view name, bool allow_if_no_acl) const {
  return decide(principal, nullptr, op, type, name, allow_if_no_acl);
}

Decision AclIndex::decide(std::string_view principal, const std::string_view* host, AclOperation op,
                          ResourceType type, std::string_view name, bool allow_if_no_acl) const {
  const TypeAcls& t = type_acls(type);
  bool has_resource_acls = false;
  Decision allow;
  Decision deny;
  // Evaluates one pattern's entries for the principal and User:*; true once a DENY matched.
  auto check = [&](const PatternAcls& p) {
    has_resource_acls = true;
    for (std::string_view who : {principal, kWildcardPrincipal}) {
      if (who == kWildcardPrincipal && principal == kWildcardPrincipal) break;
      auto it = p.by_principal.find(who);
      if (it == p.by_principal.end()) continue;
      for (const Ace& a : it->second) {
        ++entries_visited_;
        if (!host_matches(a.host, host)) continue;
        const bool is_allow = a.permission == AclPermissionType::kAllow;
        if (is_allow ? !allow_grants(a.operation, op) : !deny_denies(a.operation, op)) continue;
        Decision& d = is_allow ? allow : deny;
        d.allowed = is_allow;
        d.rule = is_allow ? Rule::kAllowAcl : Rule::kDenyAcl;
        d.pattern = &p.pattern;
        d.principal = it->first;
        d.host = a.host;
        d.operation = a.operation;
        d.permission = a.permission;
        if (!is_allow) return true;
      }
    }
    return false;
  };
  if (auto it = t.literal.find(name); it != t.literal.end() && check(it->second)) return deny;
  for (const auto& [len, count] : t.prefix_lengths) {
    if (len > name.size()) break;
    if (auto it = t.prefixed.find(name.substr(0, len)); it != t.prefixed.end() && check(it->second)) return deny;
  }
  if (name != kWildcard)
    if (auto it = t.literal.find(kWildcard); it != t.literal.end() && check(it->second)) return deny;
  if (allow.rule == Rule::kAllowAcl) return allow;
  Decision d;
  if (has_resource_acls) {
    d.rule = Rule::kNoMatchingAllow;
  } else {
    d.allowed = allow_if_no_acl;
    d.rule = allow_if_no_acl ? Rule::kDefaultAllow : Rule::kDefaultDeny;
  }
  return d;
}

bool AclIndex::any_allowed(std::string_view principal, std::string_view host, AclOperation op,
                           ResourceType type) const {
  const TypeAcls& t = type_acls(type);
  std::set<std::string_view> deny_literal, deny_prefixed, allow_literal, allow_prefixed;
  bool wildcard_allow = false;
  for (const auto* patterns : {&t.literal, &t.prefixed}) {
    for (const auto& [pattern_name, p] : *patterns) {
      for (std::string_view who : {principal, kWildcardPrincipal}) {
        if (who == kWildcardPrincipal && principal == kWildcardPrincipal) break;
        auto it = p.by_principal.find(who);
        if (it == p.by_principal.end()) continue;
        for (const Ace& a : it->second) {
          if (!host_matches(a.host, &host)) continue;
          if (a.operation != op && a.operation != AclOperation::kAll) continue;
          const bool literal = p.pattern.pattern == PatternType::kLiteral;
          if (a.permission == AclPermissionType::kDeny) {
            if (literal && pattern_name == kWildcard) return false;
            (literal ? deny_literal : deny_prefixed).insert(pattern_name);
          } else if (literal && pattern_name == kWildcard) {
            wildcard_allow = true;
          } else {
            (literal ? allow_literal : allow_prefixed).insert(pattern_name);
          }
        }
      }
    }
  }
  if (wildcard_allow) return true;
  auto dominated = [&](std::string_view allowed) {
    for (size_t len = 1; len <= allowed.size(); ++len)
      if (deny_prefixed.count(allowed.substr(0, len))) return true;
    return false;
  };
  for (std::string_view a : allow_literal)
    if (!deny_literal.count(a) && !dominated(a)) return true;
  for (std::string_view a : allow_prefixed)
    if (!dominated(a)) return true;
  return false;
}

void AclIndex::collect(const PatternAcls& p, const AccessControlEntryFilter& f, std::vector<AclBinding>& out,
                       size_t limit, bool* truncated) const {
  // Matched field by field: a binding is built only for what the filter keeps.
  auto add_principal = [&](const std::string& principal, const std::vector<Ace>& aces) {
    for (const Ace& a : aces) {
      if (f.host && *f.host != a.host) continue;
      if (f.operation != AclOperation::kAny && f.operation != a.operation) continue;
      if (f.permission != AclPermissionType::kAny && f.permission != a.permission) continue;
      if (out.size() >= limit) {
        if (truncated) *truncated = true;
        return false;
      }
      out.push_back(AclBinding{p.pattern, {principal, a.host, a.operation, a.permission}});
    }
    return true;
  };
  if (f.principal) {
    if (auto it = p.by_principal.find(*f.principal); it != p.by_principal.end()) add_principal(it->first, it->second);
    return;
  }
  for (const auto& [principal, aces] : p.by_principal)
    if (!add_principal(principal, aces)) return;
}

std::vector<AclBinding> AclIndex::find(const AclBindingFilter& filter, size_t limit, bool* truncated) const {
  std::vector<AclBinding> out;
  if (truncated) *truncated = false;
  const ResourcePatternFilter& rf = filter.pattern;
  auto visit_type = [&](const TypeAcls& t) {
    auto one = [&](const StringMap<PatternAcls>& patterns, std::string_view n) {
      if (auto it = patterns.find(n); it != patterns.end() && rf.matches(it->second.pattern))
        collect(it->second, filter.entry, out, limit, truncated);
    };
    if (!rf.name) {
      for (const auto* patterns : {&t.literal, &t.prefixed})
        for (const auto& [n, p] : *patterns)
          if (rf.matches(p.pattern)) collect(p, filter.entry, out, limit, truncated);
      return;
    }
    const std::string& n = *rf.name;
    switch (rf.pattern) {
      case PatternType::kAny:
        one(t.literal, n);
        one(t.prefixed, n);
        break;
      case PatternType::kLiteral: one(t.literal, n); break;
      case PatternType::kPrefixed: one(t.prefixed, n); break;
      case PatternType::kMatch:
        one(t.literal, n);
        if (n != kWildcard) one(t.literal, kWildcard);
        for (const auto& [len, count] : t.prefix_lengths) {
          if (len > n.size()) break;
          one(t.prefixed, std::string_view(n).substr(0, len));
        }
        break;
      case PatternType::kUnknown: break;
    }
  };
  if (rf.type == ResourceType::kAny) {
    for (const TypeAcls& t : by_type_) visit_type(t);
  } else if (rf.type != ResourceType::kUnknown) {
    visit_type(type_acls(rf.type));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void AclIndex::for_each(const std::function<void(const AclBinding&)>& fn) const {
  for (const TypeAcls& t : by_type_)
    for (const auto* patterns : {&t.literal, &t.prefixed})
      for (const auto& [n, p] : *patterns)
        for (const auto& [principal, aces] : p.by_principal)
          for (const Ace& a : aces) fn(AclBinding{p.pattern, {principal, a.host, a.operation, a.permission}});
}

}  // namespace kib::security
