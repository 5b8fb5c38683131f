// The bridge's Kafka authorizer (docs/security.md "Authorization"): Kafka 4.1's StandardAuthorizer
// over the ACLs of the acls table, held in memory (security::AclIndex) and loaded at startup.
// Handlers ask it before they act (authorize), fill the authorized-operations fields from it,
// and serve CreateAcls, DescribeAcls and DeleteAcls through it: a change is written through the
// state store and takes effect, and is answered, only once it is durable. Changes run one after
// another, in arrival order. Loop thread only; it never touches SQLite on the loop.
//
// With [authorization] enabled = false (Kafka without authorizer.class.name) every check allows
// at the cost of one branch, and the ACL APIs answer SECURITY_DISABLED.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/liveness.h"
#include "common/result.h"
#include "config/config.h"
#include "kafka/protocol/error_code.h"
#include "security/acl.h"
#include "security/acl_index.h"
#include "security/principal.h"
#include "uvx/tasks.h"

namespace kib::state {
class StateStore;
}

namespace kib::bridge {

// Who asks, and in which request (the audit log line names the API).
struct AuthContext {
  const security::KafkaPrincipal& principal;
  std::string_view host;  // the client's address, as net::Connection::ip() writes it
  int16_t api_key = -1;   // the request's API (Produce is 0), named in the audit line
};

// Whether a denial is the answer to what the client asked for (logged at info, rate-limited,
// and counted in kib_authorization_denied_total), or a filter over what it may see (Metadata of
// all topics, ListGroups, authorized operations: logged at trace only, as Kafka's
// logIfDenied = false).
enum class Audit { kExplicit, kFilter };

// Hears of every change to what the authorizer decides: ACLs added or removed (after they are
// durable and in effect) or its configuration reloaded. The Iggy permission mapping re-syncs
// from it.
class AclListener {
 public:
  virtual ~AclListener() = default;
  virtual void on_acls_changed(const std::vector<security::AclBinding>& added,
                               const std::vector<security::AclBinding>& removed) = 0;
  virtual void on_authorizer_reconfigured() {}
};

struct AclCreateResult {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  std::optional<std::string> message;
};

struct AclDeleteResult {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  std::optional<std::string> message;
  std::vector<security::AclBinding> deleted;
};

class Authorizer {
 public:
  // Kafka's MAX_RECORDS_PER_USER_OP: more new ACLs in one CreateAcls, or more matches in one
  // DeleteAcls, and it is refused whole (POLICY_VIOLATION), as Kafka's controller does.
  static constexpr size_t kMaxAclsPerRequest = 10000;

  // How long DeleteAcls matches filters before it lets the loop serve others (it goes on in a
  // later loop iteration).
  static constexpr std::chrono::milliseconds kMatchSlice{5};

  Authorizer(const config::AuthorizationConfig& config, state::StateStore& store, uv_loop_t* loop);
  Authorizer(const Authorizer&) = delete;
  Authorizer& operator=(const Authorizer&) = delete;

  // Startup (not on the loop): reads every ACL. A row this binary cannot read (a name it does
  // not know) is skipped with a warning.
  Status load();
  // SIGHUP: enabled, super_users, allow_everyone_if_no_acl_found and the limits apply at once.
  void configure(const config::AuthorizationConfig& config);

  bool enabled() const { return enabled_; }

  // Kafka's AuthHelper.authorize of a literal resource: always true when disabled.
  bool authorize(const AuthContext& ctx, security::AclOperation op, security::ResourceType type,
                 std::string_view name, Audit audit = Audit::kExplicit) {
    return !enabled_ || check(ctx, op, type, name, audit);
  }
  bool authorize_cluster(const AuthContext& ctx, security::AclOperation op, Audit audit = Audit::kExplicit) {
    return authorize(ctx, op, security::ResourceType::kCluster, security::kClusterName, audit);
  }
  // AuthHelper.authorizedOperations: the bit field (bit = operation code) of the operations
  // supported on `type` that the principal may perform on `name`; all of them when disabled.
  int32_t authorized_operations(const AuthContext& ctx, security::ResourceType type, std::string_view name);
  // Authorizer.authorizeByResourceType: whether the principal may `op` some resource of `type`
  // (a super user, an ALLOW on the hard-coded name, or an undominated ALLOW somewhere).
  bool authorize_by_resource_type(const AuthContext& ctx, security::AclOperation op, security::ResourceType type);

  // Kafka's decision for `principal` from `host` (Connection::ip() form; "*" for any host is not
  // a host), with super users and the no-ACL rule, without logging or counting: for code that
  // evaluates ACLs on its own (the Iggy permission mapping). True when disabled.
  bool allowed(const security::KafkaPrincipal& principal, std::string_view host, security::AclOperation op,
               security::ResourceType type, std::string_view name) const;
  // The same for no particular host: only the ACLs whose host is "*" apply (AclIndex::
  // authorize_wildcard_host); an ACL naming an address, or the empty host, grants and denies
  // nothing here. What the Iggy permission mapping projects, as Iggy permissions name no host.
  bool allowed_from_any_host(const security::KafkaPrincipal& principal, security::AclOperation op,
                             security::ResourceType type, std::string_view name) const;
  const security::AclIndex& acls() const { return index_; }
  bool is_super_user(const security::KafkaPrincipal& principal) const;
  void add_listener(AclListener& l) { listeners_.push_back(&l); }
  void remove_listener(AclListener& l);

  // CreateAcls (after the handler's CLUSTER ALTER check): one result per binding, Kafka's
  // errors (AclApis and AclControlManager of Kafka 4.1). Answered after the write is durable.
  void create_acls(std::vector<security::AclBinding> bindings, std::function<void(std::vector<AclCreateResult>)> done);
  // CreateAcls whose creations name a type Kafka cannot build a binding from (resource type
  // ANY, pattern type MATCH or ANY, operation or permission ANY): Kafka fails the whole request
  // with UNKNOWN_SERVER_ERROR. What this returns for such a binding.
  static bool buildable(const security::AclBinding& b);
  // DescribeAcls: the bindings `filter` matches, grouped by resource pattern.
  std::vector<security::AclBinding> describe_acls(const security::AclBindingFilter& filter) const {
    return index_.find(filter);
  }
  // DeleteAcls: one result per filter with the bindings it removed.
  void delete_acls(std::vector<security::AclBindingFilter> filters,
                   std::function<void(std::vector<AclDeleteResult>)> done);

  // Denials answered to clients, for kib_authorization_denied_total{resource_type,operation}.
  uint64_t denied(security::ResourceType type, security::AclOperation op) const {
    return denied_[static_cast<size_t>(type) & 7][static_cast<size_t>(op) & 15];
  }
  uint64_t audit_lines_suppressed() const { return suppressed_total_; }

 private:
  bool check(const AuthContext& ctx, security::AclOperation op, security::ResourceType type, std::string_view name,
             Audit audit);
  security::Decision decide(const security::KafkaPrincipal& principal, std::string_view host,
                            security::AclOperation op, security::ResourceType type, std::string_view name) const;
  void log_denial(const AuthContext& ctx, security::AclOperation op, security::ResourceType type,
                  std::string_view name, const security::Decision& d);
  // Changes run one at a time: `start` begins one, which calls finish_change() when answered.
  void enqueue_change(std::function<void()> start);
  void finish_change();
  void run_changes();
  struct DeleteJob;
  void match_filters(const std::shared_ptr<DeleteJob>& job);
  void notify(const std::vector<security::AclBinding>& added, const std::vector<security::AclBinding>& removed);

  state::StateStore& store_;
  uv::Tasks tasks_;  // DeleteAcls' matching, a slice per loop iteration
  security::AclIndex index_;
  bool enabled_ = false;
  std::set<std::string, std::less<>> super_users_;
  bool allow_if_no_acl_ = false;
  uint32_t max_acls_ = 0;
  uint32_t max_filters_ = 0;
  std::vector<AclListener*> listeners_;
  std::deque<std::function<void()>> changes_;
  bool change_running_ = false;
  bool pumping_ = false;
  uint64_t denied_[security::kResourceTypeCount][security::kAclOperationCount] = {};
  // The audit log's info lines: at most kAuditLinesPerSecond a second, the rest at debug.
  static constexpr int kAuditLinesPerSecond = 10;
  std::chrono::steady_clock::time_point audit_window_{};
  int audit_lines_ = 0;
  uint64_t suppressed_ = 0;
  uint64_t suppressed_total_ = 0;
  Liveness alive_;  // state store completions may outlive the authorizer at shutdown
};

}  // namespace kib::bridge
