// The ACLs in memory, indexed for Kafka 4.1's StandardAuthorizer decision
// (StandardAuthorizerData.findAclRule): one check costs a few hash lookups (the literal name,
// the wildcard "*", one per distinct length of the prefixed patterns of that resource type, and
// in each pattern the principal's and User:*'s entries), never a scan of every ACL, so tens of
// thousands of ACLs keep a check cheap. Pure code, one thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "security/acl.h"

namespace kib::security {

// What decided an authorization, for the audit log (Kafka's MatchingRule).
enum class Rule { kSuperUser, kDefaultAllow, kDefaultDeny, kAllowAcl, kDenyAcl, kNoMatchingAllow };

struct Decision {
  bool allowed = false;
  Rule rule = Rule::kDefaultDeny;
  // The ACL that decided (kAllowAcl, kDenyAcl): its pattern and entry, valid until the index
  // changes.
  const ResourcePattern* pattern = nullptr;
  std::string_view principal;
  std::string_view host;
  AclOperation operation = AclOperation::kUnknown;
  AclPermissionType permission = AclPermissionType::kUnknown;
};
// "SuperUser", "DefaultDeny", "MatchingAcl(acl=StandardAcl(...))" as Kafka's audit log prints it.
std::string describe_rule(const Decision& d);

class AclIndex {
 public:
  // false when the binding was already there (ACLs are a set, as Kafka's).
  bool add(const AclBinding& b);
  // false when it was not there.
  bool remove(const AclBinding& b);
  bool contains(const AclBinding& b) const;
  size_t size() const { return size_; }
  void clear();
  // How many ACL entries authorize() has looked at since construction: what a check costs,
  // counted rather than timed (an index visits the resource's own entries, not every ACL).
  uint64_t entries_visited() const { return entries_visited_; }

  // StandardAuthorizerData.authorize for a literal resource, without the super-user check:
  // DENY wins over ALLOW; `principal` ("User:alice") and User:* match; an ACL host matches
  // "*" or the client's address `host` (as Connection::ip() writes it; compared in Java's form,
  // java_host_address); ALLOW implies as
  // allow_grants says. Without any ACL on the resource (for any principal), `allow_if_no_acl`
  // decides (allow.everyone.if.no.acl.found); with ACLs none of which allow, denied.
  Decision authorize(std::string_view principal, std::string_view host, AclOperation op, ResourceType type,
                     std::string_view name, bool allow_if_no_acl) const;
  // The same decision without a client host: only ACLs whose host is "*" apply, ALLOW and DENY
  // alike (one naming an address, or the empty host, applies to that host alone, so it says
  // nothing here). What a principal may do wherever it connects from, for rights that cannot
  // depend on the host (the bridge's Iggy permissions).
  Decision authorize_wildcard_host(std::string_view principal, AclOperation op, ResourceType type,
                                   std::string_view name, bool allow_if_no_acl) const;

  // The ACL scan of Authorizer.authorizeByResourceType: whether some resource of `type` has an
  // ALLOW for `op` (or ALL) that no DENY dominates (a literal deny of the same name, a prefixed
  // deny of a prefix of it, a wildcard deny). No implication, as in Kafka.
  bool any_allowed(std::string_view principal, std::string_view host, AclOperation op, ResourceType type) const;

  // The bindings `filter` matches (AclBindingFilter.matches), sorted by resource pattern then
  // entry. A filter naming a resource is answered from the index; one without a name visits
  // every pattern of its resource type(s). Stops after `limit` bindings; `*truncated` (if
  // given) says whether more matched.
  std::vector<AclBinding> find(const AclBindingFilter& filter, size_t limit = SIZE_MAX, bool* truncated = nullptr) const;

  // Every binding, in no particular order (the bridge's Iggy mapping re-evaluates from these).
  void for_each(const std::function<void(const AclBinding&)>& fn) const;

 private:
  struct Ace {
    std::string host;
    AclOperation operation;
    AclPermissionType permission;
    friend bool operator==(const Ace&, const Ace&) = default;
  };
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  template <typename V>
  using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;
  // The ACLs of one resource pattern, by principal string.
  struct PatternAcls {
    ResourcePattern pattern;
    StringMap<std::vector<Ace>> by_principal;
    size_t count = 0;
  };
  struct TypeAcls {
    StringMap<PatternAcls> literal;  // "*" included
    StringMap<PatternAcls> prefixed;
    std::map<size_t, size_t> prefix_lengths;  // name length -> prefixed patterns of that length
  };

  // authorize() and authorize_wildcard_host(): `host` null is no client host ("*" ACLs only).
  Decision decide(std::string_view principal, const std::string_view* host, AclOperation op, ResourceType type,
                  std::string_view name, bool allow_if_no_acl) const;
  TypeAcls& type_acls(ResourceType t) { return by_type_[static_cast<size_t>(t) & 7]; }
  const TypeAcls& type_acls(ResourceType t) const { return by_type_[static_cast<size_t>(t) & 7]; }
  void collect(const PatternAcls& p, const AccessControlEntryFilter& f, std::vector<AclBinding>& out, size_t limit,
               bool* truncated) const;

  std::array<TypeAcls, kResourceTypeCount> by_type_{};
  size_t size_ = 0;
  mutable uint64_t entries_visited_ = 0;
};

}  // namespace kib::security
