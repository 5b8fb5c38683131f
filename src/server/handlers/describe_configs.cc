// DescribeConfigs (key 32): topic and broker configs with Kafka's sources, synonyms and docs
// (bridge/catalog/config_service.h). Each resource needs DESCRIBE_CONFIGS on itself (topics,
// groups) or on the cluster (broker configs); refused ones get the matching *_AUTHORIZATION_FAILED
// with Kafka's message and no configs. A fan-out request (server/handlers/fanout.h): a resource
// named twice is answered once, resources are described a slice at a time, and an answer past
// [limits] max_response_bytes closes the connection.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string_view>

#include "bridge/catalog/config_service.h"
#include "bridge/errors.h"
#include "common/text.h"
#include "common/fan_in.h"
#include "server/security/authorization.h"
#include "server/handlers/fanout.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/describe_configs.h"
#include "server/context/services.h"

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

// What one described config holds in the answer: its struct, strings and synonyms.
uint64_t answer_bytes(const Response::DescribeConfigsResourceResult& r) {
  uint64_t n = sizeof r + r.name.size() + (r.value ? r.value->size() : 0) +
               (r.documentation ? r.documentation->size() : 0);
  for (const auto& y : r.synonyms) n += sizeof y + y.name.size() + (y.value ? y.value->size() : 0);
  return n;
}

// A resource named twice is described once, with the keys of every mention (null or empty in
// any of them: all keys); the answer lists it once (AdminClient keys its results by resource
// either way), so a request's work and answer follow its distinct resources
// (server/handlers/fanout.h).
struct Wanted {
  const msg::DescribeConfigsRequest::DescribeConfigsResource* resource;
  bool all_keys = false;
  std::set<std::string> keys;
};

std::vector<Wanted> distinct_resources(const msg::DescribeConfigsRequest& body) {
  std::vector<Wanted> wanted;
  std::map<std::pair<int8_t, std::string_view>, size_t> index;
  for (const auto& res : body.resources) {
    auto [it, fresh] = index.try_emplace({res.resource_type, res.resource_name}, wanted.size());
    if (fresh) wanted.push_back(Wanted{&res, false, {}});
    Wanted& w = wanted[it->second];
    if (!res.configuration_keys || res.configuration_keys->empty()) w.all_keys = true;
    else w.keys.insert(res.configuration_keys->begin(), res.configuration_keys->end());
  }
  return wanted;
}

// One request's describes, answered when the last is in unless the budget refused the answer.
// Held by shared_ptr and never moved: its FanIn points back at it.
struct Call {
  explicit Call(uint64_t max) : budget(max) {}
  Request req;
  msg::DescribeConfigsRequest body;  // what `wanted` points into
  std::vector<Wanted> wanted;
  Response resp;
  AnswerBudget budget;
  bool refused = false;
  FanIn<> parts{[this] {
    if (!refused) req.respond.send(resp);
  }};
};

// Resource i's configs from the config service: every config, or those asked for, in config
// order; false (the answer refused, the connection closing) once they pass the budget.
bool fill(Call& call, size_t i, const std::vector<bridge::topic_configs::Entry>& entries) {
  const Wanted& w = call.wanted[i];
  auto& o = call.resp.results[i];
  o.error_code = to_int16(ErrorCode::kNone);
  for (const auto& e : entries) {
    if (!w.all_keys && !w.keys.count(e.name)) continue;
    o.configs.push_back(encode_entry(e, call.body.include_synonyms, call.body.include_documentation));
    if (!call.budget.add(answer_bytes(o.configs.back()))) {
      call.refused = true;
      call.resp = Response{};  // what was built goes now
      refuse_oversized_answer(call.req.respond, fmt::format("DescribeConfigs naming {} resources", call.wanted.size()),
                              call.budget);
      return false;
    }
  }
  return true;
}

// Resource i: refused here, or described by the config service.
void describe_one(const std::shared_ptr<Call>& call, bridge::ConfigService& configs, size_t i) {
  const auto& res = *call->wanted[i].resource;
  auto& out = call->resp.results[i];
  out.resource_type = res.resource_type;
  out.resource_name = res.resource_name;
  if (const ErrorCode e = config_resource_denial(call->req, res.resource_type, res.resource_name, Op::kDescribeConfigs);
      e != ErrorCode::kNone) {
    out.error_code = to_int16(e);
    out.error_message = error_message(e);
    return;
  }
  call->parts.add();
  configs.describe(res.resource_type, res.resource_name, [call, i](Result<std::vector<bridge::topic_configs::Entry>> r) {
    if (call->refused) return;
    if (!r) {
      auto& o = call->resp.results[i];
      o.error_code = to_int16(bridge::to_kafka_error(r.error()));
      o.error_message = truncate_message(r.error().message);
    } else if (!fill(*call, i, *r)) {
      return;
    }
    call->parts.done();
  });
}

void handle(bridge::ConfigService& configs, uint64_t max_response_bytes, Request&& req) {
  auto body = req.decode<msg::DescribeConfigsRequest>();
  auto call = std::make_shared<Call>(max_response_bytes);
  call->wanted = distinct_resources(body);
  call->resp.results.resize(call->wanted.size());
  if (!call->budget.add(call->wanted.size() * sizeof(Response::DescribeConfigsResult) + body.resources.size() / 8)) {
    refuse_oversized_answer(req.respond, fmt::format("DescribeConfigs naming {} resources", call->wanted.size()),
                            call->budget);
    return;
  }
  call->req = std::move(req);
  call->body = std::move(body);  // a vector's move keeps its elements where they are
  const std::shared_ptr<net::Connection> conn = call->req.conn;
  in_slices(
      conn ? conn->loop() : nullptr, call->wanted.size(),
      [call, &configs](size_t i) { describe_one(call, configs, i); }, [call] { call->parts.done(); },
      [call] { return !call->refused && call->req.conn && !call->req.conn->closed(); });
}

}  // namespace

HandlerSpec describe_configs_handler() {
  return serve<msg::DescribeConfigsRequest>(1, 4, [](const Services& s, Request&& req) {
    handle(s.configs, s.config.limits.max_response_bytes, std::move(req));
  });
}

}  // namespace kib::kafka
