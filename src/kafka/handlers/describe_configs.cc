// DescribeConfigs (key 32): topic and broker configs with Kafka's sources, synonyms and docs
// (bridge/catalog/config_service.h). Each resource needs DESCRIBE_CONFIGS on itself (topics,
// groups) or on the cluster (broker configs); refused ones get the matching *_AUTHORIZATION_FAILED
// with Kafka's message and no configs.
#include <algorithm>
#include <memory>

#include "bridge/catalog/config_service.h"
#include "bridge/errors.h"
#include "common/text.h"
#include "bridge/security/authorizer.h"
#include "kafka/handlers/authorization.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/describe_configs.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

using Response = msg::DescribeConfigsResponse;

Response::DescribeConfigsResourceResult encode_entry(const bridge::topic_configs::Entry& e, bool synonyms, bool docs) {
  Response::DescribeConfigsResourceResult r;
  r.name = e.name;
  r.value = e.value;
  r.read_only = e.read_only;
  r.config_source = static_cast<int8_t>(e.source);
  r.is_sensitive = e.sensitive;
  r.config_type = static_cast<int8_t>(e.type);
  r.documentation = docs && !e.doc.empty() ? std::optional<std::string>(std::string(e.doc)) : std::nullopt;
  if (synonyms)
    for (const auto& s : e.synonyms) {
      Response::DescribeConfigsSynonym y;
      y.name = s.name;
      y.value = s.value;
      y.source = static_cast<int8_t>(s.source);
      r.synonyms.push_back(std::move(y));
    }
  return r;
}

void handle(bridge::ConfigService& configs, bridge::Authorizer& authorizer, Request&& req) {
  auto body = req.decode<msg::DescribeConfigsRequest>();
  struct Call {
    Request req;
    Response resp;
    size_t pending = 0;
  };
  auto call = std::make_shared<Call>();
  call->resp.results.resize(body.resources.size());
  call->pending = body.resources.size();
  call->req = std::move(req);
  if (call->pending == 0) return call->req.respond.send(call->resp);
  for (size_t i = 0; i < body.resources.size(); ++i) {
    const auto& res = body.resources[i];
    auto& out = call->resp.results[i];
    out.resource_type = res.resource_type;
    out.resource_name = res.resource_name;
    if (const ErrorCode e =
            config_resource_denial(authorizer, call->req, res.resource_type, res.resource_name, Op::kDescribeConfigs);
        e != ErrorCode::kNone) {
      out.error_code = to_int16(e);
      out.error_message = error_message(e);
      if (--call->pending == 0) call->req.respond.send(call->resp);
      continue;
    }
    configs.describe(res.resource_type, res.resource_name,
                     [call, i, keys = res.configuration_keys, synonyms = body.include_synonyms,
                      docs = body.include_documentation](Result<std::vector<bridge::topic_configs::Entry>> r) {
                       auto& o = call->resp.results[i];
                       if (!r) {
                         o.error_code = to_int16(bridge::to_kafka_error(r.error()));
                         o.error_message = truncate_message(r.error().message);
                       } else {
                         o.error_code = to_int16(ErrorCode::kNone);
                         // Null or empty keys: every config; otherwise those asked for, in config order.
                         for (const auto& e : *r) {
                           if (keys && !keys->empty() && std::find(keys->begin(), keys->end(), e.name) == keys->end())
                             continue;
                           o.configs.push_back(encode_entry(e, synonyms, docs));
                         }
                       }
                       if (--call->pending == 0) call->req.respond.send(call->resp);
                     });
  }
}

}  // namespace

HandlerSpec describe_configs_handler() {
  return serve<msg::DescribeConfigsRequest>(1, 4, [](const Services& s, Request&& req) {
    handle(s.configs, s.authorizer, std::move(req));
  });
}

}  // namespace kib::kafka
