// ApiVersions (key 18): advertises exactly what the handler registry serves.
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/api_versions.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(Request&& req) {
  auto body = req.decode<msg::ApiVersionsRequest>();
  if (req.header.api_version >= 3) {
    req.session->client_software_name = body.client_software_name;
    req.session->client_software_version = body.client_software_version;
  }
  msg::ApiVersionsResponse resp;
  for (const HandlerSpec& h : handler_registry())
    resp.api_keys.push_back({h.api_key, h.advertised_min, h.max_version});
  req.respond.send(resp);
}

}  // namespace

HandlerSpec api_versions_handler() {
  return serve<msg::ApiVersionsRequest>(0, 4, [](const Services&, Request&& req) { handle(std::move(req)); });
}

}  // namespace kib::kafka
