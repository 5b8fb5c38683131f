// DescribeAcls (key 29), v1-3: DESCRIBE on the cluster, then the ACLs the filter matches
// (AclBindingFilter.matches), grouped by resource pattern (AclApis.handleDescribeAcls). Without
// [authorization]: SECURITY_DISABLED, as a broker without an authorizer answers.
#include <string>
#include <vector>

#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/describe_acls.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::Authorizer& authorizer, Request&& req) {
  auto body = req.decode<msg::DescribeAclsRequest>();
  // UNKNOWN (0) does not parse in Kafka (DescribeAclsRequest.normalizeAndValidate): closed.
  if (body.resource_type_filter == 0 || body.pattern_type_filter == 0 || body.operation == 0 ||
      body.permission_type == 0)
    return req.respond.close("DescribeAcls: the filter has an UNKNOWN resource type, pattern type, operation or "
                             "permission type");
  msg::DescribeAclsResponse resp;
  if (!authorizer.enabled()) {
    resp.error_code = to_int16(ErrorCode::kSecurityDisabled);
    resp.error_message = "No Authorizer is configured on the broker";
    return req.respond.send(resp);
  }
  if (!req.authorized_cluster(Op::kDescribe)) {
    resp.error_code = to_int16(ErrorCode::kClusterAuthorizationFailed);
    resp.error_message = std::nullopt;
    return req.respond.send(resp);
  }
  security::AclBindingFilter filter{
      {security::resource_type_from_code(body.resource_type_filter), std::move(body.resource_name_filter),
       security::pattern_type_from_code(body.pattern_type_filter)},
      {std::move(body.principal_filter), std::move(body.host_filter), security::operation_from_code(body.operation),
       security::permission_from_code(body.permission_type)}};
  // Sorted by resource pattern: each pattern's ACLs are one run.
  for (auto& b : authorizer.describe_acls(filter)) {
    if (resp.resources.empty() || resp.resources.back().resource_type != security::code(b.pattern.type) ||
        resp.resources.back().pattern_type != security::code(b.pattern.pattern) ||
        resp.resources.back().resource_name != b.pattern.name) {
      auto& r = resp.resources.emplace_back();
      r.resource_type = security::code(b.pattern.type);
      r.resource_name = b.pattern.name;
      r.pattern_type = security::code(b.pattern.pattern);
    }
    resp.resources.back().acls.push_back({std::move(b.entry.principal), std::move(b.entry.host),
                                          security::code(b.entry.operation), security::code(b.entry.permission)});
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec describe_acls_handler() {
  return serve<msg::DescribeAclsRequest>(1, 3, [](const Services& s, Request&& req) {
    handle(s.authorizer, std::move(req));
  });
}

}  // namespace kib::kafka
