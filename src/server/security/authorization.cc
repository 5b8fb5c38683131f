// Request::authorized (server/context/request.h): the request's questions, answered by the one
// authorizer KafkaServer set on it. Here rather than in server/context because the answer needs
// bridge::Authorizer's definition, which only this layer and those above may include.
#include "server/security/authorization.h"

namespace kib::kafka {

bool Request::authorized(Op op, Res type, std::string_view name) const {
  return authorized(op, type, name, bridge::Audit::kExplicit);
}

bool Request::authorized(Op op, Res type, std::string_view name, bridge::Audit audit) const {
  return authorizer->authorize(auth(*this), op, type, name, audit);
}

bool Request::authorized_cluster(Op op) const { return authorized_cluster(op, bridge::Audit::kExplicit); }

bool Request::authorized_cluster(Op op, bridge::Audit audit) const {
  return authorizer->authorize_cluster(auth(*this), op, audit);
}

}  // namespace kib::kafka
