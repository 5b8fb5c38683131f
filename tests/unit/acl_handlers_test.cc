// CreateAcls, DescribeAcls and DeleteAcls through the real KafkaServer on a loopback port, at the
// lowest and highest served versions, with the principal of a plaintext connection
// (User:ANONYMOUS): SECURITY_DISABLED without [authorization], as a broker without an authorizer;
// with it, the cluster ALTER/DESCRIBE checks, Kafka's per-binding errors, grouping by resource,
// and UNKNOWN codes closing the connection as Kafka's request parser does.
#include <boost/test/unit_test.hpp>

#include <sys/socket.h>

#include <optional>
#include <string>
#include <vector>

#include "bridge/security/authorizer.h"
#include "handler_services_support.h"
#include "kafka/protocol/generated/api_keys.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/create_acls.h"
#include "kafka/protocol/generated/delete_acls.h"
#include "kafka/protocol/generated/describe_acls.h"
#include "support/kafka_test_client.h"

using namespace kib;
using namespace kib::kafka;
using security::AclOperation;
using security::AclPermissionType;
using security::PatternType;
using security::ResourceType;

namespace {

int16_t code(ErrorCode c) { return to_int16(c); }

struct Server : test::IdleKafkaServer {
  explicit Server(bool enabled = true)
      : IdleKafkaServer([enabled](config::Config& c) { c.authorization.enabled = enabled; }) {}
  // Grants User:ANONYMOUS (this test's connections) an operation, straight through the service.
  void grant(ResourceType type, const std::string& name, AclOperation op, PatternType pattern = PatternType::kLiteral,
             AclPermissionType perm = AclPermissionType::kAllow) {
    bool done = false;
    idle->authorizer.create_acls({{{type, name, pattern}, {"User:ANONYMOUS", "*", op, perm}}},
                                 [&](std::vector<bridge::AclCreateResult> r) {
                                   BOOST_TEST(to_int16(r.at(0).error) == 0);
                                   done = true;
                                 });
    while (!done) uv_run(&loop, UV_RUN_ONCE);
  }
  void grant_cluster(AclOperation op) { grant(ResourceType::kCluster, "kafka-cluster", op); }
};

struct Client : test::KafkaTestClient {
  explicit Client(Server& s) : test::KafkaTestClient(s.loop, s.port, "acl-test"), loop(s.loop) {}
  uv_loop_t& loop;
  // Whether the bridge closed the connection (instead of answering) within 2 s.
  bool closed_by_peer() {
    for (int waited = 0; waited < 2000; waited += 2) {
      uv_run(&loop, UV_RUN_NOWAIT);
      if (!readable(2)) continue;
      char b;
      return ::recv(fd, &b, 1, 0) == 0;
    }
    return false;
  }
};

msg::CreateAclsRequest::AclCreation creation(ResourceType type, std::string name, PatternType pattern,
                                             std::string principal, std::string host, AclOperation op,
                                             AclPermissionType perm) {
  msg::CreateAclsRequest::AclCreation c;
  c.resource_type = security::code(type);
  c.resource_name = std::move(name);
  c.resource_pattern_type = security::code(pattern);
  c.principal = std::move(principal);
  c.host = std::move(host);
  c.operation = security::code(op);
  c.permission_type = security::code(perm);
  return c;
}

msg::DescribeAclsRequest describe_all() {
  msg::DescribeAclsRequest r;
  r.resource_type_filter = security::code(ResourceType::kAny);
  r.resource_name_filter = std::nullopt;
  r.pattern_type_filter = security::code(PatternType::kAny);
  r.principal_filter = std::nullopt;
  r.host_filter = std::nullopt;
  r.operation = security::code(AclOperation::kAny);
  r.permission_type = security::code(AclPermissionType::kAny);
  return r;
}

msg::DeleteAclsRequest::DeleteAclsFilter delete_filter(ResourceType type, std::optional<std::string> name,
                                                       PatternType pattern, std::optional<std::string> principal) {
  msg::DeleteAclsRequest::DeleteAclsFilter f;
  f.resource_type_filter = security::code(type);
  f.resource_name_filter = std::move(name);
  f.pattern_type_filter = security::code(pattern);
  f.principal_filter = std::move(principal);
  f.host_filter = std::nullopt;
  f.operation = security::code(AclOperation::kAny);
  f.permission_type = security::code(AclPermissionType::kAny);
  return f;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(acl_handlers)

BOOST_AUTO_TEST_CASE(acl_apis_are_served_at_v1_to_v3_as_kafka_4_1) {
  for (int16_t key : {msg::DescribeAclsRequest::kApiKey, msg::CreateAclsRequest::kApiKey, msg::DeleteAclsRequest::kApiKey}) {
    const HandlerSpec* h = find_handler(key);
    BOOST_REQUIRE(h);
    BOOST_TEST(h->min_version == 1);
    BOOST_TEST(h->max_version == 3);
    BOOST_TEST(h->advertised_min == 1);
  }
}

BOOST_AUTO_TEST_CASE(without_authorization_the_acl_apis_answer_security_disabled) {
  Server s(false);
  Client c(s);
  for (int16_t v : {int16_t{1}, int16_t{3}}) {
    BOOST_TEST_CONTEXT("v" << v) {
      msg::CreateAclsRequest create;
      create.creations = {creation(ResourceType::kTopic, "t", PatternType::kLiteral, "User:alice", "*",
                                   AclOperation::kRead, AclPermissionType::kAllow),
                          creation(ResourceType::kGroup, "g", PatternType::kPrefixed, "User:bob", "*",
                                   AclOperation::kRead, AclPermissionType::kDeny)};
      auto cr = c.call<msg::CreateAclsResponse>(create, v);
      BOOST_REQUIRE(cr.results.size() == 2u);
      for (const auto& r : cr.results) {
        BOOST_TEST(r.error_code == code(ErrorCode::kSecurityDisabled));
        BOOST_TEST(r.error_message.value_or("") == "No Authorizer is configured.");
      }
      auto dr = c.call<msg::DescribeAclsResponse>(describe_all(), v);
      BOOST_TEST(dr.error_code == code(ErrorCode::kSecurityDisabled));
      BOOST_TEST(dr.error_message.value_or("") == "No Authorizer is configured on the broker");
      BOOST_TEST(dr.resources.empty());
      msg::DeleteAclsRequest del;
      del.filters = {delete_filter(ResourceType::kAny, std::nullopt, PatternType::kAny, std::nullopt)};
      auto xr = c.call<msg::DeleteAclsResponse>(del, v);
      BOOST_REQUIRE(xr.filter_results.size() == 1u);
      BOOST_TEST(xr.filter_results[0].error_code == code(ErrorCode::kSecurityDisabled));
      BOOST_TEST(xr.filter_results[0].error_message.value_or("") == "No Authorizer is configured.");
    }
  }
}

BOOST_AUTO_TEST_CASE(the_acl_apis_need_alter_or_describe_on_the_cluster) {
  Server s;
  Client c(s);
  msg::CreateAclsRequest create;
  create.creations = {creation(ResourceType::kTopic, "t", PatternType::kLiteral, "User:ANONYMOUS", "*",
                               AclOperation::kAll, AclPermissionType::kAllow)};
  auto cr = c.call<msg::CreateAclsResponse>(create, 3);
  BOOST_TEST(cr.results.at(0).error_code == code(ErrorCode::kClusterAuthorizationFailed));
  auto dr = c.call<msg::DescribeAclsResponse>(describe_all(), 3);
  BOOST_TEST(dr.error_code == code(ErrorCode::kClusterAuthorizationFailed));
  msg::DeleteAclsRequest del;
  del.filters = {delete_filter(ResourceType::kAny, std::nullopt, PatternType::kAny, std::nullopt),
                 delete_filter(ResourceType::kTopic, "t", PatternType::kLiteral, std::nullopt)};
  auto xr = c.call<msg::DeleteAclsResponse>(del, 1);
  BOOST_REQUIRE(xr.filter_results.size() == 2u);
  for (const auto& f : xr.filter_results) BOOST_TEST(f.error_code == code(ErrorCode::kClusterAuthorizationFailed));
  BOOST_TEST(s.idle->authorizer.acls().size() == 0u);
  // DESCRIBE alone lists but may not change.
  s.grant_cluster(AclOperation::kDescribe);
  dr = c.call<msg::DescribeAclsResponse>(describe_all(), 3);
  BOOST_TEST(dr.error_code == code(ErrorCode::kNone));
  BOOST_TEST(dr.resources.size() == 1u);  // the grant itself
  BOOST_TEST(c.call<msg::CreateAclsResponse>(create, 3).results.at(0).error_code ==
             code(ErrorCode::kClusterAuthorizationFailed));
  // Denials are counted for kib_authorization_denied_total{resource_type="CLUSTER",...}.
  BOOST_TEST(s.idle->authorizer.denied(ResourceType::kCluster, AclOperation::kAlter) == 3u);
  BOOST_TEST(s.idle->authorizer.denied(ResourceType::kCluster, AclOperation::kDescribe) == 1u);
}

BOOST_AUTO_TEST_CASE(create_describe_delete_round_trip_as_kafka_answers) {
  Server s;
  s.grant_cluster(AclOperation::kAlter);  // ALTER implies DESCRIBE
  Client c(s);
  msg::CreateAclsRequest create;
  create.creations = {
      creation(ResourceType::kTopic, "orders", PatternType::kLiteral, "User:alice", "*", AclOperation::kRead,
               AclPermissionType::kAllow),
      creation(ResourceType::kTopic, "orders", PatternType::kLiteral, "User:alice", "10.0.0.1", AclOperation::kWrite,
               AclPermissionType::kDeny),
      creation(ResourceType::kTopic, "app-", PatternType::kPrefixed, "User:*", "*", AclOperation::kDescribe,
               AclPermissionType::kAllow),
      creation(ResourceType::kGroup, "consumers", PatternType::kLiteral, "User:alice", "*", AclOperation::kRead,
               AclPermissionType::kAllow),
      creation(ResourceType::kTransactionalId, "tx-", PatternType::kPrefixed, "User:alice", "*", AclOperation::kWrite,
               AclPermissionType::kAllow),
      creation(ResourceType::kCluster, "my-cluster", PatternType::kLiteral, "User:alice", "*", AclOperation::kAlter,
               AclPermissionType::kAllow),
      creation(ResourceType::kTopic, "x", PatternType::kLiteral, "alice", "*", AclOperation::kRead,
               AclPermissionType::kAllow),
      creation(ResourceType::kTopic, "x", PatternType::kMatch, "User:alice", "*", AclOperation::kRead,
               AclPermissionType::kAllow),
  };
  // A MATCH pattern cannot be built into a binding: Kafka fails the whole request.
  auto cr = c.call<msg::CreateAclsResponse>(create, 1);
  BOOST_REQUIRE(cr.results.size() == 8u);
  for (const auto& r : cr.results) BOOST_TEST(r.error_code == code(ErrorCode::kUnknownServerError));
  create.creations.pop_back();
  cr = c.call<msg::CreateAclsResponse>(create, 3);
  BOOST_REQUIRE(cr.results.size() == 7u);
  for (size_t i = 0; i < 5; ++i) BOOST_TEST(cr.results[i].error_code == code(ErrorCode::kNone));
  BOOST_TEST(cr.results[5].error_code == code(ErrorCode::kInvalidRequest));
  BOOST_TEST(cr.results[5].error_message.value_or("") == "The only valid name for the CLUSTER resource is kafka-cluster");
  BOOST_TEST(cr.results[6].error_code == code(ErrorCode::kInvalidRequest));
  // In effect at once: alice's READ shows in the ACLs DescribeAcls lists, grouped by resource.
  auto dr = c.call<msg::DescribeAclsResponse>(describe_all(), 3);
  BOOST_TEST(dr.error_code == code(ErrorCode::kNone));
  BOOST_REQUIRE(dr.resources.size() == 5u);  // orders, app-, consumers, tx-, and the cluster grant
  const msg::DescribeAclsResponse::DescribeAclsResource* orders = nullptr;
  for (const auto& r : dr.resources)
    if (r.resource_name == "orders") orders = &r;
  BOOST_REQUIRE(orders);
  BOOST_TEST(orders->resource_type == security::code(ResourceType::kTopic));
  BOOST_TEST(orders->pattern_type == security::code(PatternType::kLiteral));
  BOOST_TEST(orders->acls.size() == 2u);
  // MATCH: what applies to topic app-orders: the prefixed app- only.
  auto match = describe_all();
  match.resource_type_filter = security::code(ResourceType::kTopic);
  match.resource_name_filter = "app-orders";
  match.pattern_type_filter = security::code(PatternType::kMatch);
  dr = c.call<msg::DescribeAclsResponse>(match, 1);
  BOOST_REQUIRE(dr.resources.size() == 1u);
  BOOST_TEST(dr.resources[0].resource_name == "app-");
  BOOST_TEST(dr.resources[0].pattern_type == security::code(PatternType::kPrefixed));
  BOOST_REQUIRE(dr.resources[0].acls.size() == 1u);
  BOOST_TEST(dr.resources[0].acls[0].principal == "User:*");
  BOOST_TEST(dr.resources[0].acls[0].host == "*");
  BOOST_TEST(dr.resources[0].acls[0].operation == security::code(AclOperation::kDescribe));
  BOOST_TEST(dr.resources[0].acls[0].permission_type == security::code(AclPermissionType::kAllow));
  // An UNKNOWN code past Kafka's (fromCode) matches nothing; a principal filter compares exactly.
  auto nothing = describe_all();
  nothing.operation = 99;
  BOOST_TEST(c.call<msg::DescribeAclsResponse>(nothing, 3).resources.empty());
  // Delete alice's topic ACLs, and a filter Kafka refuses.
  msg::DeleteAclsRequest del;
  del.filters = {delete_filter(ResourceType::kTopic, std::nullopt, PatternType::kAny, "User:alice"),
                 delete_filter(ResourceType::kTopic, std::nullopt, PatternType::kAny, "User:alice"),
                 delete_filter(ResourceType::kTopic, std::nullopt, static_cast<PatternType>(99), std::nullopt)};
  auto xr = c.call<msg::DeleteAclsResponse>(del, 3);
  BOOST_REQUIRE(xr.filter_results.size() == 3u);
  BOOST_TEST(xr.filter_results[0].error_code == code(ErrorCode::kNone));
  BOOST_TEST(!xr.filter_results[0].error_message.has_value());
  BOOST_REQUIRE(xr.filter_results[0].matching_acls.size() == 2u);
  for (const auto& m : xr.filter_results[0].matching_acls) {
    BOOST_TEST(m.resource_name == "orders");
    BOOST_TEST(m.principal == "User:alice");
    BOOST_TEST(m.error_code == 0);
  }
  BOOST_TEST(xr.filter_results[1].matching_acls.size() == 2u);
  BOOST_TEST(xr.filter_results[2].error_code == code(ErrorCode::kInvalidRequest));
  BOOST_TEST(xr.filter_results[2].error_message.value_or("") == "Unknown patternFilter.");
  dr = c.call<msg::DescribeAclsResponse>(describe_all(), 2);
  BOOST_TEST(dr.resources.size() == 4u);
}

BOOST_AUTO_TEST_CASE(unknown_codes_close_the_connection_as_kafkas_parser_does) {
  Server s;
  s.grant_cluster(AclOperation::kAll);
  {
    Client c(s);
    msg::CreateAclsRequest create;
    create.creations = {creation(ResourceType::kTopic, "t", PatternType::kLiteral, "User:a", "*",
                                 AclOperation::kUnknown, AclPermissionType::kAllow)};
    c.send(create, 3);
    BOOST_TEST(c.closed_by_peer());
  }
  {
    Client c(s);
    auto d = describe_all();
    d.resource_type_filter = 0;
    c.send(d, 1);
    BOOST_TEST(c.closed_by_peer());
  }
  {
    Client c(s);
    msg::DeleteAclsRequest del;
    del.filters = {delete_filter(ResourceType::kTopic, std::nullopt, PatternType::kUnknown, std::nullopt)};
    c.send(del, 2);
    BOOST_TEST(c.closed_by_peer());
  }
  BOOST_TEST(s.idle->authorizer.acls().size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
