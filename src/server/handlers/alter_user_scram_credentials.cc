// AlterUserScramCredentials (key 51), v0: adds, replaces and deletes SCRAM credentials from a
// salt and salted password the client computed (kafka-configs --alter --add-config
// 'SCRAM-SHA-512=[password=...]'), answered once durable; the next login uses them
// (bridge/security/scram_credentials.h).
#include <algorithm>
#include <set>

#include "bridge/security/scram_credentials.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/alter_user_scram_credentials.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::ScramCredentials& credentials, Request&& req) {
  auto body = req.decode<msg::AlterUserScramCredentialsRequest>();
  std::vector<bridge::ScramDeletion> deletions;
  std::vector<bridge::ScramUpsertion> upsertions;
  for (auto& d : body.deletions) deletions.push_back({std::move(d.name), d.mechanism});
  for (auto& u : body.upsertions)
    upsertions.push_back({std::move(u.name), u.mechanism, u.iterations, std::move(u.salt), std::move(u.salted_password)});
  std::vector<std::string> users;  // each once, for a failure of the whole request
  std::set<std::string> seen;
  for (const auto& d : deletions)
    if (seen.insert(d.user).second) users.push_back(d.user);
  for (const auto& u : upsertions)
    if (seen.insert(u.user).second) users.push_back(u.user);
  // ControllerApis: ALTER on the cluster, else getErrorResponse (each user once, sorted). Kafka's
  // message names its internal request object; none is sent, as the other cluster refusals.
  if (!req.authorized_cluster(Op::kAlter)) {
    std::sort(users.begin(), users.end());
    msg::AlterUserScramCredentialsResponse resp;
    for (auto& user : users) {
      msg::AlterUserScramCredentialsResponse::AlterUserScramCredentialsResult out;
      out.user = std::move(user);
      out.error_code = to_int16(ErrorCode::kClusterAuthorizationFailed);
      out.error_message = std::nullopt;
      resp.results.push_back(std::move(out));
    }
    req.respond.count_error(to_int16(ErrorCode::kClusterAuthorizationFailed));
    return req.respond.send(resp);
  }
  credentials.alter(std::move(deletions), std::move(upsertions),
                    [respond = req.respond, users = std::move(users)](Result<std::vector<bridge::ScramAlterResult>> r) {
                      msg::AlterUserScramCredentialsResponse resp;
                      if (!r) {
                        // Nothing was written: every user gets the state store's failure.
                        for (const auto& u : users)
                          resp.results.push_back({u, to_int16(ErrorCode::kUnknownServerError), r.error().message});
                        return respond.send(resp);
                      }
                      for (auto& a : *r) {
                        msg::AlterUserScramCredentialsResponse::AlterUserScramCredentialsResult out;
                        out.user = std::move(a.user);
                        out.error_code = to_int16(a.error);
                        out.error_message = std::move(a.message);
                        resp.results.push_back(std::move(out));
                      }
                      respond.send(resp);
                    });
}

}  // namespace

HandlerSpec alter_user_scram_credentials_handler() {
  return serve<msg::AlterUserScramCredentialsRequest>(0, 0, [](const Services& s, Request&& req) {
    handle(s.scram_credentials, std::move(req));
  });
}

}  // namespace kib::kafka
