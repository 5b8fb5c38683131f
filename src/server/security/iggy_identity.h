// The Iggy identity a connection's data requests (Produce, Fetch) run as: resolved once per
// connection from its principal (bridge/security/iggy_identities.h) and kept in its session.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "bridge/security/iggy_identities.h"
#include "common/text.h"
#include "server/context/request.h"
#include "uvx/work_owner.h"

namespace kib::kafka {

// Runs `then(Request&&, const Result<bridge::IggyIdentityRef>&)`: at once when the session knows
// its identity or the identity is shared, else once the lookup answered (an identity is kept in
// the session; a refusal is not, so a mapping made meanwhile applies to the next request). An
// error is the Kafka error the request's partitions are answered with.
template <typename Then>
void with_iggy_identity(bridge::IggyIdentities& identities, Request&& req, Then then) {
  Session& session = *req.session;
  if (!session.iggy_identity && !identities.per_principal()) session.iggy_identity = identities.shared();
  if (session.iggy_identity) {
    const Result<bridge::IggyIdentityRef> known(session.iggy_identity);
    return then(std::move(req), known);
  }
  auto held = std::make_shared<Request>(std::move(req));
  identities.resolve(session.principal, [held, then = std::move(then)](Result<bridge::IggyIdentityRef> r) mutable {
    Request req = std::move(*held);
    if (r) req.session->iggy_identity = *r;
    uv::OwnerScope owner(req.conn ? req.conn->id() : 0);  // Iggy work it starts is the connection's
    const Responder respond = req.respond;
    try {
      then(std::move(req), r);
    } catch (const DecodeError& e) {
      respond.close(std::string("malformed request: ") + escape(e.what(), 1024));
    }
  });
}

}  // namespace kib::kafka
