// The bridge's Authorizer service (bridge/security/authorizer.h) over a real state store: the
// decisions with super users and the no-ACL default, CreateAcls and DeleteAcls with Kafka 4.1's
// validation (AclApis, AclControlManager) and limits, answered only once durable, persisted
// across a restart, and the change listener the Iggy permission mapping re-syncs from.
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "bridge/security/authorizer.h"
#include "state/state_store.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::security;
using kafka::ErrorCode;
using kib::state::StateStore;

namespace kib::kafka {
// For BOOST_TEST's messages: Kafka's name of the code.
inline std::ostream& boost_test_print_type(std::ostream& os, ErrorCode c) { return os << error_name(c); }
}  // namespace kib::kafka

namespace {

using enum AclOperation;
constexpr auto kAllow = AclPermissionType::kAllow;
constexpr auto kDeny = AclPermissionType::kDeny;

AclBinding acl(ResourceType t, std::string name, PatternType p, std::string principal, std::string host,
               AclOperation op, AclPermissionType perm) {
  return AclBinding{{t, std::move(name), p}, {std::move(principal), std::move(host), op, perm}};
}
AclBinding topic_acl(std::string name, std::string principal, AclOperation op, AclPermissionType perm = kAllow) {
  return acl(ResourceType::kTopic, std::move(name), PatternType::kLiteral, std::move(principal), "*", op, perm);
}

struct Recorder final : AclListener {
  std::vector<AclBinding> added, removed;
  int reconfigured = 0;
  void on_acls_changed(const std::vector<AclBinding>& a, const std::vector<AclBinding>& r) override {
    added.insert(added.end(), a.begin(), a.end());
    removed.insert(removed.end(), r.begin(), r.end());
  }
  void on_authorizer_reconfigured() override { ++reconfigured; }
};

struct Harness {
  std::filesystem::path dir;
  uv_loop_t loop{};
  config::AuthorizationConfig config;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<Authorizer> authz;
  KafkaPrincipal alice = KafkaPrincipal::user("alice");
  KafkaPrincipal admin = KafkaPrincipal::user("admin");

  explicit Harness(config::AuthorizationConfig c = enabled()) : config(std::move(c)) {
    char tmpl[] = "/tmp/kib-authorizer-XXXXXX";
    dir = mkdtemp(tmpl);
    uv_loop_init(&loop);
    start();
  }
  ~Harness() {
    stop();
    uv_loop_close(&loop);
    std::filesystem::remove_all(dir);
  }
  static config::AuthorizationConfig enabled() {
    config::AuthorizationConfig c;
    c.enabled = true;
    c.super_users = {"User:admin"};
    return c;
  }
  void start() {
    auto s = StateStore::open((dir / "state.db").string(), &loop);
    BOOST_REQUIRE(s.ok());
    store = std::move(*s);
    authz = std::make_unique<Authorizer>(config, *store, &loop);
    BOOST_REQUIRE(authz->load().ok());
  }
  void stop() {
    authz.reset();
    if (store) store->close();
    store.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  AuthContext ctx(const KafkaPrincipal& p, std::string_view host = "127.0.0.1") { return {p, host, 0}; }

  template <typename R>
  R wait(std::optional<R>& out) {
    for (int i = 0; i < 100000 && !out; ++i) uv_run(&loop, UV_RUN_ONCE);
    BOOST_REQUIRE(out.has_value());
    return *out;
  }
  std::vector<AclCreateResult> create(std::vector<AclBinding> b) {
    std::optional<std::vector<AclCreateResult>> out;
    authz->create_acls(std::move(b), [&](std::vector<AclCreateResult> r) { out = std::move(r); });
    return wait(out);
  }
  std::vector<AclDeleteResult> remove(std::vector<AclBindingFilter> f) {
    std::optional<std::vector<AclDeleteResult>> out;
    authz->delete_acls(std::move(f), [&](std::vector<AclDeleteResult> r) { out = std::move(r); });
    return wait(out);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(security_authorizer)

BOOST_AUTO_TEST_CASE(disabled_allows_everything_and_reports_every_operation) {
  config::AuthorizationConfig off;
  Harness h(off);
  BOOST_TEST(!h.authz->enabled());
  BOOST_TEST(h.authz->authorize(h.ctx(h.alice), kWrite, ResourceType::kTopic, "t"));
  BOOST_TEST(h.authz->authorize_by_resource_type(h.ctx(h.alice), kWrite, ResourceType::kTopic));
  BOOST_TEST(h.authz->authorized_operations(h.ctx(h.alice), ResourceType::kCluster, kClusterName) == 8096);
  BOOST_TEST(h.authz->allowed(h.alice, "127.0.0.1", kRead, ResourceType::kTopic, "t"));
  BOOST_TEST(h.authz->denied(ResourceType::kTopic, kWrite) == 0u);
}

BOOST_AUTO_TEST_CASE(super_users_pass_deny_acls_and_others_are_denied_without_acls) {
  Harness h;
  BOOST_REQUIRE(h.create({topic_acl("t", "User:*", kAll, kDeny)})[0].error == ErrorCode::kNone);
  BOOST_TEST(h.authz->authorize(h.ctx(h.admin), kWrite, ResourceType::kTopic, "t"));
  BOOST_TEST(h.authz->is_super_user(h.admin));
  BOOST_TEST(!h.authz->authorize(h.ctx(h.alice), kWrite, ResourceType::kTopic, "t"));
  BOOST_TEST(!h.authz->authorize(h.ctx(h.alice), kRead, ResourceType::kTopic, "other"));
  // Explicit denials are counted for kib_authorization_denied_total; filtered ones are not.
  BOOST_TEST(h.authz->denied(ResourceType::kTopic, kWrite) == 1u);
  BOOST_TEST(h.authz->denied(ResourceType::kTopic, kRead) == 1u);
  BOOST_TEST(!h.authz->authorize(h.ctx(h.alice), kDescribe, ResourceType::kTopic, "t", Audit::kFilter));
  BOOST_TEST(h.authz->denied(ResourceType::kTopic, kDescribe) == 0u);
  // The super user holds every cluster operation; alice none.
  BOOST_TEST(h.authz->authorized_operations(h.ctx(h.admin), ResourceType::kCluster, kClusterName) == 8096);
  BOOST_TEST(h.authz->authorized_operations(h.ctx(h.alice), ResourceType::kCluster, kClusterName) == 0);
}

BOOST_AUTO_TEST_CASE(allow_everyone_if_no_acl_found_and_reconfiguration) {
  auto c = Harness::enabled();
  c.allow_everyone_if_no_acl_found = true;
  Harness h(c);
  Recorder rec;
  h.authz->add_listener(rec);
  BOOST_TEST(h.authz->authorize(h.ctx(h.alice), kWrite, ResourceType::kTopic, "free"));
  BOOST_REQUIRE(h.create({topic_acl("owned", "User:bob", kRead)})[0].error == ErrorCode::kNone);
  BOOST_TEST(!h.authz->authorize(h.ctx(h.alice), kRead, ResourceType::kTopic, "owned"));
  // SIGHUP: the default and the super users change at once, and listeners hear of it.
  c.allow_everyone_if_no_acl_found = false;
  h.authz->configure(c);
  BOOST_TEST(rec.reconfigured == 1);
  BOOST_TEST(!h.authz->authorize(h.ctx(h.alice), kWrite, ResourceType::kTopic, "free"));
  c.enabled = false;
  h.authz->configure(c);
  BOOST_TEST(h.authz->authorize(h.ctx(h.alice), kRead, ResourceType::kTopic, "owned"));
  h.authz->remove_listener(rec);
}

BOOST_AUTO_TEST_CASE(idempotent_write_by_resource_type) {
  Harness h;
  BOOST_TEST(!h.authz->authorize_by_resource_type(h.ctx(h.alice), kWrite, ResourceType::kTopic));
  BOOST_TEST(h.authz->authorize_by_resource_type(h.ctx(h.admin), kWrite, ResourceType::kTopic));
  BOOST_REQUIRE(h.create({topic_acl("t", "User:alice", kWrite)})[0].error == ErrorCode::kNone);
  BOOST_TEST(h.authz->authorize_by_resource_type(h.ctx(h.alice), kWrite, ResourceType::kTopic));
  BOOST_REQUIRE(h.create({acl(ResourceType::kTopic, "t", PatternType::kPrefixed, "User:alice", "*", kWrite, kDeny)})[0]
                    .error == ErrorCode::kNone);
  BOOST_TEST(!h.authz->authorize_by_resource_type(h.ctx(h.alice), kWrite, ResourceType::kTopic));
}

BOOST_AUTO_TEST_CASE(create_validates_each_binding_as_kafka_4_1) {
  Harness h;
  auto r = h.create({
      topic_acl("ok", "User:alice", kRead),
      acl(ResourceType::kCluster, "my-cluster", PatternType::kLiteral, "User:alice", "*", kAlter, kAllow),
      topic_acl("", "User:alice", kRead),
      acl(ResourceType::kUnknown, "x", PatternType::kLiteral, "User:alice", "*", kRead, kAllow),
      acl(ResourceType::kTopic, "x", PatternType::kUnknown, "User:alice", "*", kRead, kAllow),
      topic_acl("x", "User:alice", kUnknown),
      acl(ResourceType::kTopic, "x", PatternType::kLiteral, "User:alice", "*", kRead, AclPermissionType::kUnknown),
      topic_acl("x", "alice", kRead),
      topic_acl("ok", "User:alice", kRead),  // a duplicate in the request: fine, stored once
      acl(ResourceType::kCluster, "kafka-cluster", PatternType::kLiteral, "User:alice", "*", kAlter, kAllow),
  });
  BOOST_REQUIRE(r.size() == 10u);
  BOOST_TEST(r[0].error == ErrorCode::kNone);
  BOOST_TEST(r[1].error == ErrorCode::kInvalidRequest);
  BOOST_TEST(r[1].message.value_or("") == "The only valid name for the CLUSTER resource is kafka-cluster");
  BOOST_TEST(r[2].message.value_or("") == "Invalid empty resource name");
  BOOST_TEST(r[3].message.value_or("") == "Invalid resourceType UNKNOWN");
  BOOST_TEST(r[4].message.value_or("") == "Invalid patternType UNKNOWN");
  BOOST_TEST(r[5].message.value_or("") == "Invalid operation UNKNOWN");
  BOOST_TEST(r[6].message.value_or("") == "Invalid permissionType UNKNOWN");
  BOOST_TEST(r[7].message.value_or("") ==
             "Could not parse principal from `alice` (no colon is present separating the principal type from the "
             "principal name)");
  for (int i : {2, 3, 4, 5, 6, 7}) BOOST_TEST(r[static_cast<size_t>(i)].error == ErrorCode::kInvalidRequest);
  BOOST_TEST(r[8].error == ErrorCode::kNone);
  BOOST_TEST(r[9].error == ErrorCode::kNone);
  BOOST_TEST(h.authz->acls().size() == 2u);
  // Creating what exists succeeds and changes nothing.
  BOOST_TEST(h.create({topic_acl("ok", "User:alice", kRead)})[0].error == ErrorCode::kNone);
  BOOST_TEST(h.authz->acls().size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_binding_kafka_cannot_build_fails_the_whole_request) {
  Harness h;
  auto r = h.create({topic_acl("ok", "User:alice", kRead),
                     acl(ResourceType::kAny, "x", PatternType::kLiteral, "User:alice", "*", kRead, kAllow)});
  BOOST_REQUIRE(r.size() == 2u);
  for (const auto& x : r) {
    BOOST_TEST(x.error == ErrorCode::kUnknownServerError);
    BOOST_TEST(!x.message.has_value());
  }
  BOOST_TEST(h.authz->acls().size() == 0u);
  for (auto bad : {acl(ResourceType::kTopic, "x", PatternType::kMatch, "User:a", "*", kRead, kAllow),
                   acl(ResourceType::kTopic, "x", PatternType::kAny, "User:a", "*", kRead, kAllow),
                   acl(ResourceType::kTopic, "x", PatternType::kLiteral, "User:a", "*", kAny, kAllow),
                   acl(ResourceType::kTopic, "x", PatternType::kLiteral, "User:a", "*", kRead, AclPermissionType::kAny)})
    BOOST_TEST(h.create({bad})[0].error == ErrorCode::kUnknownServerError);
}

BOOST_AUTO_TEST_CASE(created_acls_apply_once_durable_and_survive_a_restart) {
  Harness h;
  Recorder rec;
  h.authz->add_listener(rec);
  std::optional<std::vector<AclCreateResult>> out;
  h.authz->create_acls({topic_acl("t", "User:alice", kRead)}, [&](std::vector<AclCreateResult> r) { out = r; });
  // Not answered, and not in effect, before the state store committed it.
  BOOST_TEST(!out.has_value());
  BOOST_TEST(!h.authz->authorize(h.ctx(h.alice), kRead, ResourceType::kTopic, "t"));
  BOOST_TEST(h.wait(out)[0].error == ErrorCode::kNone);
  BOOST_TEST(h.authz->authorize(h.ctx(h.alice), kRead, ResourceType::kTopic, "t"));
  BOOST_REQUIRE(rec.added.size() == 1u);
  BOOST_TEST((rec.added[0] == topic_acl("t", "User:alice", kRead)));
  h.authz->remove_listener(rec);
  h.stop();
  h.start();
  BOOST_TEST(h.authz->acls().size() == 1u);
  BOOST_TEST(h.authz->authorize(h.ctx(h.alice), kRead, ResourceType::kTopic, "t"));
}

BOOST_AUTO_TEST_CASE(max_acls_refuses_the_whole_request_with_policy_violation) {
  auto c = Harness::enabled();
  c.max_acls = 3;
  Harness h(c);
  BOOST_REQUIRE(h.create({topic_acl("a", "User:x", kRead), topic_acl("b", "User:x", kRead)})[0].error ==
                ErrorCode::kNone);
  auto r = h.create({topic_acl("c", "User:x", kRead), topic_acl("d", "User:x", kRead), topic_acl("", "User:x", kRead)});
  BOOST_TEST(r[0].error == ErrorCode::kPolicyViolation);
  BOOST_TEST(r[0].message.value_or("").find("[authorization] max_acls (3)") != std::string::npos);
  BOOST_TEST(r[1].error == ErrorCode::kPolicyViolation);
  BOOST_TEST(r[2].error == ErrorCode::kInvalidRequest);  // its own error stays
  BOOST_TEST(h.authz->acls().size() == 2u);
  // Existing ones do not count twice, and one more fits.
  r = h.create({topic_acl("a", "User:x", kRead), topic_acl("c", "User:x", kRead)});
  BOOST_TEST(r[0].error == ErrorCode::kNone);
  BOOST_TEST(r[1].error == ErrorCode::kNone);
  BOOST_TEST(h.authz->acls().size() == 3u);
}

BOOST_AUTO_TEST_CASE(more_than_ten_thousand_new_acls_in_one_request_is_kafkas_policy_violation) {
  Harness h;
  std::vector<AclBinding> many;
  for (int i = 0; i <= 10000; ++i) many.push_back(topic_acl("t" + std::to_string(i), "User:x", kRead));
  auto r = h.create(many);
  BOOST_REQUIRE(r.size() == 10001u);
  BOOST_TEST(r[0].error == ErrorCode::kPolicyViolation);
  BOOST_TEST(r[0].message.value_or("") == "Unable to perform excessively large batch operation.");
  BOOST_TEST(h.authz->acls().size() == 0u);
  many.pop_back();
  r = h.create(many);
  BOOST_TEST(r[10000 - 1].error == ErrorCode::kNone);
  BOOST_TEST(h.authz->acls().size() == 10000u);
}

BOOST_AUTO_TEST_CASE(delete_removes_what_each_filter_matches_once_durable) {
  Harness h;
  Recorder rec;
  h.authz->add_listener(rec);
  BOOST_REQUIRE(h.create({topic_acl("t", "User:alice", kRead), topic_acl("t", "User:alice", kWrite),
                          topic_acl("u", "User:bob", kRead)})[0]
                    .error == ErrorCode::kNone);
  AclBindingFilter alice{{ResourceType::kTopic, "t", PatternType::kLiteral}, {"User:alice", std::nullopt, kAny, AclPermissionType::kAny}};
  AclBindingFilter unknown_pattern{{ResourceType::kTopic, std::nullopt, PatternType::kUnknown}, {}};
  AclBindingFilter unknown_entry{{}, {std::nullopt, std::nullopt, kUnknown, AclPermissionType::kAny}};
  AclBindingFilter nothing{{ResourceType::kGroup, std::nullopt, PatternType::kAny}, {}};
  auto r = h.remove({alice, unknown_pattern, unknown_entry, nothing, alice});
  BOOST_REQUIRE(r.size() == 5u);
  BOOST_TEST(r[0].error == ErrorCode::kNone);
  BOOST_TEST(r[0].deleted.size() == 2u);
  BOOST_TEST(r[1].error == ErrorCode::kInvalidRequest);
  BOOST_TEST(r[1].message.value_or("") == "Unknown patternFilter.");
  BOOST_TEST(r[2].message.value_or("") == "Unknown entryFilter.");
  BOOST_TEST(r[3].deleted.empty());
  BOOST_TEST(r[4].deleted.size() == 2u);  // filters match against the ACLs the request started with
  BOOST_TEST(h.authz->acls().size() == 1u);
  BOOST_TEST(rec.removed.size() == 2u);
  BOOST_TEST(!h.authz->authorize(h.ctx(h.alice), kRead, ResourceType::kTopic, "t"));
  h.authz->remove_listener(rec);
  h.stop();
  h.start();
  BOOST_TEST(h.authz->acls().size() == 1u);
}

BOOST_AUTO_TEST_CASE(delete_limits_are_policy_violations) {
  auto c = Harness::enabled();
  c.max_acl_filters_per_request = 2;
  Harness h(c);
  BOOST_REQUIRE(h.create({topic_acl("t", "User:alice", kRead)})[0].error == ErrorCode::kNone);
  auto r = h.remove({AclBindingFilter::any(), AclBindingFilter::any(), AclBindingFilter::any()});
  BOOST_REQUIRE(r.size() == 3u);
  for (const auto& x : r) {
    BOOST_TEST(x.error == ErrorCode::kPolicyViolation);
    BOOST_TEST(x.message.value_or("").find("max_acl_filters_per_request (2)") != std::string::npos);
  }
  BOOST_TEST(h.authz->acls().size() == 1u);
}

// Filters without a resource name visit every ACL: DeleteAcls matches them a slice of loop time
// at a time, so the loop serves other work between slices instead of stalling for the whole
// request (here 100 such filters over 20,000 ACLs: about a second of matching in all).
BOOST_AUTO_TEST_CASE(delete_matching_yields_the_loop_between_slices) {
  Harness h;
  std::vector<AclBinding> many;
  for (int i = 0; i < 20000; ++i) many.push_back(topic_acl("t" + std::to_string(i), "User:x", kRead));
  for (size_t from = 0; from < many.size(); from += 10000)
    BOOST_REQUIRE(h.create({many.begin() + static_cast<long>(from), many.begin() + static_cast<long>(from + 10000)})[0]
                      .error == ErrorCode::kNone);
  std::vector<AclBindingFilter> unnamed(100, AclBindingFilter{{ResourceType::kAny, std::nullopt, PatternType::kAny},
                                                              {"User:nobody", std::nullopt, kAny, AclPermissionType::kAny}});
  unnamed.push_back({{ResourceType::kTopic, "t7", PatternType::kLiteral}, {}});
  std::optional<std::vector<AclDeleteResult>> out;
  h.authz->delete_acls(unnamed, [&](std::vector<AclDeleteResult> r) { out = std::move(r); });
  int iterations = 0;
  while (!out && iterations < 1000000) {
    uv_run(&h.loop, UV_RUN_ONCE);
    ++iterations;
  }
  BOOST_REQUIRE(out.has_value());
  BOOST_TEST(iterations > 5);  // all at once would be the state store's two turns
  BOOST_TEST(out->back().deleted.size() == 1u);
  BOOST_TEST(h.authz->acls().size() == 19999u);
}

BOOST_AUTO_TEST_CASE(changes_run_in_arrival_order) {
  Harness h;
  std::vector<std::string> order;
  h.authz->create_acls({topic_acl("t", "User:alice", kRead)}, [&](auto) { order.push_back("create"); });
  h.authz->delete_acls({AclBindingFilter::any()}, [&](std::vector<AclDeleteResult> r) {
    order.push_back("delete " + std::to_string(r[0].deleted.size()));
  });
  h.authz->create_acls({topic_acl("u", "User:alice", kRead)}, [&](auto) { order.push_back("create"); });
  for (int i = 0; i < 100000 && order.size() < 3; ++i) uv_run(&h.loop, UV_RUN_ONCE);
  BOOST_REQUIRE(order.size() == 3u);
  BOOST_TEST(order[1] == "delete 1");  // saw the first create, not the second
  BOOST_TEST(h.authz->acls().size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
