// CreateAcls (key 30), v1-3 (Kafka 4.1 serves 1-3; v0 went with KIP-896): ALTER on the cluster,
// then the authorizer validates and stores each binding and answers once they are durable
// (AclApis.handleCreateAcls). Without [authorization] every creation gets SECURITY_DISABLED,
// as a broker without an authorizer answers.
#include <string>
#include <vector>

#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/create_acls.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void answer_all(const Request& req, size_t n, ErrorCode code, std::optional<std::string> message) {
  msg::CreateAclsResponse resp;
  for (size_t i = 0; i < n; ++i) resp.results.push_back({to_int16(code), message});
  req.respond.send(resp);
}

void handle(bridge::Authorizer& authorizer, Request&& req) {
  auto body = req.decode<msg::CreateAclsRequest>();
  // A creation with an UNKNOWN (0) code does not parse in Kafka (CreateAclsRequest.validate):
  // the broker closes the connection.
  for (const auto& c : body.creations)
    if (c.resource_type == 0 || c.resource_pattern_type == 0 || c.operation == 0 || c.permission_type == 0)
      return req.respond.close("CreateAcls: a creation has an UNKNOWN resource type, pattern type, operation or "
                               "permission type");
  if (!authorizer.enabled())
    return answer_all(req, body.creations.size(), ErrorCode::kSecurityDisabled, "No Authorizer is configured.");
  if (!req.authorized_cluster(Op::kAlter))
    return answer_all(req, body.creations.size(), ErrorCode::kClusterAuthorizationFailed, std::nullopt);
  std::vector<security::AclBinding> bindings;
  bindings.reserve(body.creations.size());
  for (auto& c : body.creations)
    bindings.push_back({{security::resource_type_from_code(c.resource_type), std::move(c.resource_name),
                         security::pattern_type_from_code(c.resource_pattern_type)},
                        {std::move(c.principal), std::move(c.host), security::operation_from_code(c.operation),
                         security::permission_from_code(c.permission_type)}});
  authorizer.create_acls(std::move(bindings), [respond = req.respond](std::vector<bridge::AclCreateResult> results) {
    msg::CreateAclsResponse resp;
    for (auto& r : results) {
      auto& out = resp.results.emplace_back();
      out.error_code = to_int16(r.error);
      if (r.error != ErrorCode::kNone) out.error_message = std::move(r.message);
    }
    respond.send(resp);
  });
}

}  // namespace

HandlerSpec create_acls_handler() {
  return serve<msg::CreateAclsRequest>(1, 3, [](const Services& s, Request&& req) {
    handle(s.authorizer, std::move(req));
  });
}

}  // namespace kib::kafka
