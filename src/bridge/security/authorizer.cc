#include "bridge/security/authorizer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

#include "bridge/errors.h"
#include "common/text.h"
#include "kafka/protocol/generated/api_keys.h"
#include "state/acl_store.h"
#include "state/state_store.h"

namespace kib::bridge {
namespace {

using security::AclBinding;
using security::AclOperation;
using security::AclPermissionType;
using security::PatternType;
using security::ResourceType;
using kafka::ErrorCode;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

state::AclRow to_row(const AclBinding& b) {
  return state::AclRow{std::string(security::name(b.pattern.type)), b.pattern.name,
                       std::string(security::name(b.pattern.pattern)), b.entry.principal, b.entry.host,
                       std::string(security::name(b.entry.operation)), std::string(security::name(b.entry.permission))};
}

std::optional<AclBinding> from_row(const state::AclRow& r) {
  auto type = security::parse_resource_type(r.resource_type);
  auto pattern = security::parse_pattern_type(r.pattern_type);
  auto op = security::parse_operation(r.operation);
  auto perm = security::parse_permission(r.permission);
  if (!type || !pattern || !op || !perm) return std::nullopt;
  AclBinding b{{*type, r.resource_name, *pattern}, {r.principal, r.host, *op, *perm}};
  // Only what CreateAcls would accept is loaded: a row edited by hand into something else
  // would otherwise sit in memory without ever matching.
  if (*type == ResourceType::kUnknown || *type == ResourceType::kAny) return std::nullopt;
  if (*pattern != PatternType::kLiteral && *pattern != PatternType::kPrefixed) return std::nullopt;
  if (*op == AclOperation::kUnknown || *op == AclOperation::kAny) return std::nullopt;
  if (*perm != AclPermissionType::kAllow && *perm != AclPermissionType::kDeny) return std::nullopt;
  return b;
}

// AclApis.handleCreateAcls (broker side) then AclControlManager.validateNewAcl (controller side)
// of Kafka 4.1: the first reason a binding is refused, in Kafka's words.
std::optional<std::string> refusal(const AclBinding& b) {
  if (b.pattern.type == ResourceType::kCluster && b.pattern.name != security::kClusterName)
    return "The only valid name for the CLUSTER resource is " + std::string(security::kClusterName);
  if (b.pattern.name.empty()) return std::string("Invalid empty resource name");
  if (b.pattern.type == ResourceType::kUnknown || b.pattern.type == ResourceType::kAny)
    return "Invalid resourceType " + std::string(security::name(b.pattern.type));
  if (b.pattern.pattern != PatternType::kLiteral && b.pattern.pattern != PatternType::kPrefixed)
    return "Invalid patternType " + std::string(security::name(b.pattern.pattern));
  if (b.entry.operation == AclOperation::kUnknown || b.entry.operation == AclOperation::kAny)
    return "Invalid operation " + std::string(security::name(b.entry.operation));
  if (b.entry.permission != AclPermissionType::kAllow && b.entry.permission != AclPermissionType::kDeny)
    return "Invalid permissionType " + std::string(security::name(b.entry.permission));
  if (!security::split_principal(b.entry.principal))
    return "Could not parse principal from `" + b.entry.principal +
           "` (no colon is present separating the principal type from the principal name)";
  return std::nullopt;
}

}  // namespace

Authorizer::Authorizer(const config::AuthorizationConfig& config, state::StateStore& store, uv_loop_t* loop)
    : store_(store), tasks_(loop) {
  configure(config);
}

void Authorizer::configure(const config::AuthorizationConfig& config) {
  const bool changed = enabled_ != config.enabled || allow_if_no_acl_ != config.allow_everyone_if_no_acl_found ||
                       super_users_ != std::set<std::string, std::less<>>(config.super_users.begin(),
                                                                          config.super_users.end());
  enabled_ = config.enabled;
  super_users_ = std::set<std::string, std::less<>>(config.super_users.begin(), config.super_users.end());
  allow_if_no_acl_ = config.allow_everyone_if_no_acl_found;
  max_acls_ = config.max_acls;
  max_filters_ = config.max_acl_filters_per_request;
  if (changed)
    for (AclListener* l : listeners_) l->on_authorizer_reconfigured();
}

Status Authorizer::load() {
  std::vector<state::AclRow> rows;
  auto st = store_.run_blocking([&](SQLite::Database& db) { rows = state::load_acls(db); });
  if (!st) return st.error();
  index_.clear();
  size_t skipped = 0;
  for (const auto& r : rows) {
    if (auto b = from_row(r)) index_.add(*b);
    else if (skipped++ < 10)
      spdlog::warn("authorization: acls row ({}, {}, {}, {}, {}, {}, {}) is not an ACL this version reads; ignored",
                   esc(r.resource_type), esc(r.resource_name), esc(r.pattern_type), esc(r.principal), esc(r.host),
                   esc(r.operation), esc(r.permission));
  }
  if (skipped) spdlog::warn("authorization: {} acls rows ignored", skipped);
  spdlog::info("authorization: {}; {} ACLs loaded, {} super users, allow_everyone_if_no_acl_found = {}",
               enabled_ ? "enabled" : "disabled (every request allowed)", index_.size(), super_users_.size(),
               allow_if_no_acl_);
  return ok_status();
}

bool Authorizer::is_super_user(const security::KafkaPrincipal& principal) const {
  return !super_users_.empty() && super_users_.count(principal.str()) > 0;
}

security::Decision Authorizer::decide(const security::KafkaPrincipal& principal, std::string_view host,
                                      AclOperation op, ResourceType type, std::string_view name) const {
  const std::string who = principal.str();
  if (super_users_.count(who)) {
    security::Decision d;
    d.allowed = true;
    d.rule = security::Rule::kSuperUser;
    return d;
  }
  return index_.authorize(who, host, op, type, name, allow_if_no_acl_);
}

bool Authorizer::allowed(const security::KafkaPrincipal& principal, std::string_view host, AclOperation op,
                         ResourceType type, std::string_view name) const {
  return !enabled_ || decide(principal, host, op, type, name).allowed;
}

bool Authorizer::allowed_from_any_host(const security::KafkaPrincipal& principal, AclOperation op, ResourceType type,
                                       std::string_view name) const {
  if (!enabled_ || is_super_user(principal)) return true;
  return index_.authorize_wildcard_host(principal.str(), op, type, name, allow_if_no_acl_).allowed;
}

bool Authorizer::check(const AuthContext& ctx, AclOperation op, ResourceType type, std::string_view name, Audit audit) {
  const security::Decision d = decide(ctx.principal, ctx.host, op, type, name);
  if (d.allowed) {
    if (spdlog::should_log(spdlog::level::trace))
      spdlog::trace("authorization: Principal = {} is Allowed operation = {} from host = {} on resource = {}:LITERAL:{} "
                    "for request = {} based on rule {}",
                    esc(ctx.principal.str()), security::name(op), ctx.host, security::log_name(type), esc(name),
                    kafka::msg::api_name(ctx.api_key), esc(security::describe_rule(d)));
    return true;
  }
  if (audit == Audit::kExplicit) {
    ++denied_[static_cast<size_t>(type) & 7][static_cast<size_t>(op) & 15];
    log_denial(ctx, op, type, name, d);
  } else if (spdlog::should_log(spdlog::level::trace)) {
    spdlog::trace("authorization: Principal = {} is Denied operation = {} from host = {} on resource = {}:LITERAL:{} "
                  "for request = {} based on rule {}",
                  esc(ctx.principal.str()), security::name(op), ctx.host, security::log_name(type), esc(name), kafka::msg::api_name(ctx.api_key),
                  esc(security::describe_rule(d)));
  }
  return false;
}

void Authorizer::log_denial(const AuthContext& ctx, AclOperation op, ResourceType type, std::string_view name,
                            const security::Decision& d) {
  // Kafka's authorizer logs every denial of what a client asked for at INFO; a client retrying in
  // a loop would flood the log, so past kAuditLinesPerSecond a second they go to debug and the
  // next info line says how many.
  const auto now = std::chrono::steady_clock::now();
  if (now - audit_window_ >= std::chrono::seconds(1)) {
    audit_window_ = now;
    audit_lines_ = 0;
  }
  const bool info = audit_lines_ < kAuditLinesPerSecond;
  if (!info) {
    ++suppressed_;
    ++suppressed_total_;
    if (!spdlog::should_log(spdlog::level::debug)) return;
  }
  ++audit_lines_;
  std::string more;
  if (info && suppressed_) {
    more = fmt::format(" ({} earlier denials logged at debug only)", suppressed_);
    suppressed_ = 0;
  }
  spdlog::log(info ? spdlog::level::info : spdlog::level::debug,
              "authorization: Principal = {} is Denied operation = {} from host = {} on resource = {}:LITERAL:{} "
              "for request = {} based on rule {}{}",
              esc(ctx.principal.str()), security::name(op), ctx.host, security::log_name(type), esc(name), kafka::msg::api_name(ctx.api_key),
              esc(security::describe_rule(d)), more);
}

int32_t Authorizer::authorized_operations(const AuthContext& ctx, ResourceType type, std::string_view name) {
  int32_t bits = 0;
  for (AclOperation op : security::supported_operations(type))
    if (!enabled_ || check(ctx, op, type, name, Audit::kFilter)) bits |= security::operation_bit(op);
  return bits;
}

bool Authorizer::authorize_by_resource_type(const AuthContext& ctx, AclOperation op, ResourceType type) {
  if (!enabled_) return true;
  // Kafka checks a hard-coded name first, so super users (and allow.everyone.if.no.acl.found
  // with no ACL on that name) pass whatever the DENY ACLs say.
  if (check(ctx, op, type, "hardcode", Audit::kFilter)) return true;
  return index_.any_allowed(ctx.principal.str(), ctx.host, op, type);
}

void Authorizer::remove_listener(AclListener& l) {
  listeners_.erase(std::remove(listeners_.begin(), listeners_.end(), &l), listeners_.end());
}

void Authorizer::notify(const std::vector<AclBinding>& added, const std::vector<AclBinding>& removed) {
  if (added.empty() && removed.empty()) return;
  for (AclListener* l : std::vector<AclListener*>(listeners_)) l->on_acls_changed(added, removed);
}

void Authorizer::enqueue_change(std::function<void()> start) {
  changes_.push_back(std::move(start));
  run_changes();
}

void Authorizer::finish_change() {
  change_running_ = false;
  run_changes();
}

void Authorizer::run_changes() {
  if (pumping_) return;  // the loop below picks the next change up
  pumping_ = true;
  while (!change_running_ && !changes_.empty()) {
    auto next = std::move(changes_.front());
    changes_.pop_front();
    change_running_ = true;
    next();
  }
  pumping_ = false;
}

bool Authorizer::buildable(const AclBinding& b) {
  return b.pattern.type != ResourceType::kAny && b.pattern.pattern != PatternType::kMatch &&
         b.pattern.pattern != PatternType::kAny && b.entry.operation != AclOperation::kAny &&
         b.entry.permission != AclPermissionType::kAny;
}

void Authorizer::create_acls(std::vector<AclBinding> bindings, std::function<void(std::vector<AclCreateResult>)> done) {
  enqueue_change([this, bindings = std::move(bindings), done = std::move(done)]() mutable {
    std::vector<AclCreateResult> results(bindings.size());
    // Kafka builds every binding before it looks at any: one it cannot build (IllegalArgument in
    // ResourcePattern or AccessControlEntry) fails the request with UNKNOWN_SERVER_ERROR.
    if (!std::all_of(bindings.begin(), bindings.end(), buildable)) {
      for (auto& r : results) r = {ErrorCode::kUnknownServerError, std::nullopt};
      bindings.clear();
    }
    std::vector<AclBinding> fresh;  // valid and not yet held, each once
    std::vector<size_t> valid;      // indexes of the valid bindings
    {
      std::set<AclBinding> seen;
      for (size_t i = 0; i < bindings.size(); ++i) {
        if (auto why = refusal(bindings[i])) {
          results[i].error = ErrorCode::kInvalidRequest;
          results[i].message = std::move(*why);
          continue;
        }
        valid.push_back(i);
        if (!index_.contains(bindings[i]) && seen.insert(bindings[i]).second) fresh.push_back(bindings[i]);
      }
    }
    auto refuse_valid = [&](const std::string& message) {
      for (size_t i : valid) results[i] = {ErrorCode::kPolicyViolation, message};
      fresh.clear();
    };
    if (fresh.size() > kMaxAclsPerRequest) {
      refuse_valid("Unable to perform excessively large batch operation.");
    } else if (index_.size() + fresh.size() > max_acls_) {
      refuse_valid(fmt::format("{} ACLs exist and the request adds {}: more than [authorization] max_acls ({})",
                               index_.size(), fresh.size(), max_acls_));
      spdlog::warn("CreateAcls refused: {} ACLs exist and the request adds {}, more than [authorization] max_acls ({})",
                   index_.size(), fresh.size(), max_acls_);
    }
    std::vector<state::AclRow> rows;
    rows.reserve(fresh.size());
    for (const auto& b : fresh) rows.push_back(to_row(b));
    // Even a request that adds nothing is answered through the state store, after every change
    // queued before it is durable.
    store_.write(
        [rows = std::move(rows)](SQLite::Database& db) { state::insert_acls(db, rows, now_ms()); },
        [this, alive = alive_.token(), fresh = std::move(fresh), valid = std::move(valid),
         results = std::move(results), done = std::move(done)](Status st) mutable {
          if (!alive) return;
          if (!st) {
            spdlog::error("CreateAcls: the ACLs could not be stored: {}", st.error().message);
            for (size_t i : valid) results[i] = {to_kafka_error(st.error()), "the ACLs could not be stored"};
            fresh.clear();
          }
          for (const auto& b : fresh) index_.add(b);
          if (!fresh.empty())
            spdlog::info("authorization: {} ACLs added ({} held)", fresh.size(), index_.size());
          done(std::move(results));
          notify(fresh, {});
          finish_change();
        });
  });
}

// One DeleteAcls being matched: filters are matched a slice at a time (kMatchSlice of loop
// time, then the rest on a later loop iteration), so a request of many filters without a
// resource name (each a visit of every ACL of its types) never holds the loop for long.
struct Authorizer::DeleteJob {
  std::vector<security::AclBindingFilter> filters;
  std::function<void(std::vector<AclDeleteResult>)> done;
  std::vector<AclDeleteResult> results;
  std::set<AclBinding> removed;
  size_t next = 0;
  size_t matched = 0;
  bool refused = false;
};

void Authorizer::delete_acls(std::vector<security::AclBindingFilter> filters,
                             std::function<void(std::vector<AclDeleteResult>)> done) {
  auto job = std::make_shared<DeleteJob>();
  job->filters = std::move(filters);
  job->done = std::move(done);
  enqueue_change([this, job] {
    job->results.resize(job->filters.size());
    if (job->filters.size() > max_filters_) {
      for (auto& r : job->results)
        r = {ErrorCode::kPolicyViolation,
             fmt::format("DeleteAcls names {} filters, more than [authorization] max_acl_filters_per_request ({})",
                         job->filters.size(), max_filters_),
             {}};
      job->refused = true;
    }
    match_filters(job);
  });
}

void Authorizer::match_filters(const std::shared_ptr<DeleteJob>& job) {
  const auto until = std::chrono::steady_clock::now() + kMatchSlice;
  for (; job->next < job->filters.size() && !job->refused; ++job->next) {
    if (std::chrono::steady_clock::now() >= until) {
      tasks_.post([this, alive = alive_.token(), job] {
        if (alive) match_filters(job);
      });
      return;
    }
    const size_t i = job->next;
    const auto& f = job->filters[i];
    auto& result = job->results[i];
    // AclControlManager.validateFilter.
    if (f.pattern.is_unknown()) {
      result = {ErrorCode::kInvalidRequest, "Unknown patternFilter.", {}};
      continue;
    }
    if (f.entry.is_unknown()) {
      result = {ErrorCode::kInvalidRequest, "Unknown entryFilter.", {}};
      continue;
    }
    bool truncated = false;
    result.deleted = index_.find(f, kMaxAclsPerRequest - job->matched + 1, &truncated);
    job->matched += result.deleted.size();
    if (truncated || job->matched > kMaxAclsPerRequest) {
      for (auto& r : job->results)
        r = {ErrorCode::kPolicyViolation,
             "Cannot remove more than " + std::to_string(kMaxAclsPerRequest) + " acls in a single delete operation.",
             {}};
      job->refused = true;
      break;
    }
    job->removed.insert(result.deleted.begin(), result.deleted.end());
  }
  if (job->refused) job->removed.clear();
  std::vector<AclBinding> gone(job->removed.begin(), job->removed.end());
  std::vector<state::AclRow> rows;
  rows.reserve(gone.size());
  for (const auto& b : gone) rows.push_back(to_row(b));
  store_.write([rows = std::move(rows)](SQLite::Database& db) { state::delete_acls(db, rows); },
               [this, alive = alive_.token(), gone = std::move(gone), job](Status st) mutable {
                 if (!alive) return;
                 if (!st) {
                   spdlog::error("DeleteAcls: the ACLs could not be removed: {}", st.error().message);
                   for (auto& r : job->results)
                     if (r.error == ErrorCode::kNone) r = {to_kafka_error(st.error()), "the ACLs could not be removed", {}};
                   gone.clear();
                 }
                 for (const auto& b : gone) index_.remove(b);
                 if (!gone.empty()) spdlog::info("authorization: {} ACLs removed ({} held)", gone.size(), index_.size());
                 job->done(std::move(job->results));
                 notify({}, gone);
                 finish_change();
               });
}

}  // namespace kib::bridge
