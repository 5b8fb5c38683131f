// DescribeUserScramCredentials (key 50), v0: the SCRAM mechanisms and iterations of the users
// asked for (or of every user), never a key (bridge/security/scram_credentials.h).
#include "bridge/security/scram_credentials.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/describe_user_scram_credentials.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::ScramCredentials& credentials, Request&& req) {
  auto body = req.decode<msg::DescribeUserScramCredentialsRequest>();
  // KafkaApis: DESCRIBE on the cluster, else getErrorResponse (every user named, with the error).
  if (!req.authorized_cluster(Op::kDescribe)) {
    msg::DescribeUserScramCredentialsResponse resp;
    resp.error_code = to_int16(ErrorCode::kClusterAuthorizationFailed);
    resp.error_message = error_message(ErrorCode::kClusterAuthorizationFailed);
    for (const auto& u : body.users ? *body.users : decltype(body.users)::value_type{}) {
      (void)u;
      msg::DescribeUserScramCredentialsResponse::DescribeUserScramCredentialsResult out;
      out.error_code = resp.error_code;
      out.error_message = resp.error_message;
      resp.results.push_back(std::move(out));
    }
    return req.respond.send(resp);
  }
  std::optional<std::vector<std::string>> users;
  if (body.users) {
    users.emplace();
    for (auto& u : *body.users) users->push_back(std::move(u.name));
  }
  credentials.describe(std::move(users), [respond = req.respond](Result<std::vector<bridge::ScramUserDescription>> r) {
    msg::DescribeUserScramCredentialsResponse resp;
    if (!r) {
      resp.error_code = to_int16(ErrorCode::kUnknownServerError);
      resp.error_message = r.error().message;
      return respond.send(resp);
    }
    for (auto& d : *r) {
      msg::DescribeUserScramCredentialsResponse::DescribeUserScramCredentialsResult out;
      out.user = std::move(d.user);
      out.error_code = to_int16(d.error);
      if (d.message) out.error_message = std::move(*d.message);
      for (auto [mechanism, iterations] : d.credentials) out.credential_infos.push_back({mechanism, iterations});
      resp.results.push_back(std::move(out));
    }
    respond.send(resp);
  });
}

}  // namespace

HandlerSpec describe_user_scram_credentials_handler() {
  return serve<msg::DescribeUserScramCredentialsRequest>(0, 0, [](const Services& s, Request&& req) {
    handle(s.scram_credentials, std::move(req));
  });
}

}  // namespace kib::kafka
