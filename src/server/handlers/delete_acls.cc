// DeleteAcls (key 31), v1-3: ALTER on the cluster, then each filter removes the ACLs it matches;
// answered once the removal is durable (AclApis.handleDeleteAcls, AclControlManager.deleteAcls).
// Without [authorization] every filter gets SECURITY_DISABLED, as a broker without an
// authorizer answers.
#include <string>
#include <vector>

#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/delete_acls.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void answer_all(const Request& req, size_t n, ErrorCode code, std::optional<std::string> message) {
  msg::DeleteAclsResponse resp;
  for (size_t i = 0; i < n; ++i) {
    auto& r = resp.filter_results.emplace_back();
    r.error_code = to_int16(code);
    r.error_message = message;
  }
  req.respond.send(resp);
}

void handle(bridge::Authorizer& authorizer, Request&& req) {
  auto body = req.decode<msg::DeleteAclsRequest>();
  // UNKNOWN (0) does not parse in Kafka (DeleteAclsRequest.normalizeAndValidate): closed.
  for (const auto& f : body.filters)
    if (f.resource_type_filter == 0 || f.pattern_type_filter == 0 || f.operation == 0 || f.permission_type == 0)
      return req.respond.close("DeleteAcls: a filter has an UNKNOWN resource type, pattern type, operation or "
                               "permission type");
  if (!authorizer.enabled())
    return answer_all(req, body.filters.size(), ErrorCode::kSecurityDisabled, "No Authorizer is configured.");
  if (!req.authorized_cluster(Op::kAlter))
    return answer_all(req, body.filters.size(), ErrorCode::kClusterAuthorizationFailed, std::nullopt);
  std::vector<security::AclBindingFilter> filters;
  filters.reserve(body.filters.size());
  for (auto& f : body.filters)
    filters.push_back({{security::resource_type_from_code(f.resource_type_filter), std::move(f.resource_name_filter),
                        security::pattern_type_from_code(f.pattern_type_filter)},
                       {std::move(f.principal_filter), std::move(f.host_filter),
                        security::operation_from_code(f.operation), security::permission_from_code(f.permission_type)}});
  authorizer.delete_acls(std::move(filters), [respond = req.respond](std::vector<bridge::AclDeleteResult> results) {
    msg::DeleteAclsResponse resp;
    for (auto& r : results) {
      auto& out = resp.filter_results.emplace_back();
      out.error_code = to_int16(r.error);
      out.error_message = r.error == ErrorCode::kNone ? std::nullopt : std::move(r.message);
      for (auto& b : r.deleted) {
        auto& m = out.matching_acls.emplace_back();
        m.error_message = std::nullopt;
        m.resource_type = security::code(b.pattern.type);
        m.resource_name = std::move(b.pattern.name);
        m.pattern_type = security::code(b.pattern.pattern);
        m.principal = std::move(b.entry.principal);
        m.host = std::move(b.entry.host);
        m.operation = security::code(b.entry.operation);
        m.permission_type = security::code(b.entry.permission);
      }
    }
    respond.send(resp);
  });
}

}  // namespace

HandlerSpec delete_acls_handler() {
  return serve<msg::DeleteAclsRequest>(1, 3, [](const Services& s, Request&& req) {
    handle(s.authorizer, std::move(req));
  });
}

}  // namespace kib::kafka
