// Which Iggy user a principal's data requests run as (bridge/security/iggy_identities.h): the
// [principals] modes against a real state database, the ACL -> Iggy permission projection (the
// "*"-host ACLs only) and its merge into the permissions a user already has, and the mapping
// states that keep the bridge from taking over an Iggy user it did not create. No Iggy server:
// pools are created (never started towards a server that answers) and compared.
#include <boost/test/unit_test.hpp>

#include <uv.h>

#include <filesystem>
#include <optional>

#include "bridge/errors.h"
#include "bridge/security/authorizer.h"
#include "bridge/security/iggy_identities.h"
#include "iggy/client.h"
#include "iggy/pool.h"
#include "state/migrations.h"
#include "state/principal_store.h"
#include "state/state_store.h"

using namespace kib;
using namespace kib::bridge;
using kafka::ErrorCode;

namespace {

struct Identities {
  std::filesystem::path dir;
  uv_loop_t loop{};
  std::unique_ptr<state::StateStore> store;
  config::Config cfg;
  std::unique_ptr<iggy::IggyPool> bridge_pool;
  std::unique_ptr<IggyIdentities> ids;

  explicit Identities(config::PrincipalsConfig principals) {
    char tmpl[] = "/tmp/kib-identities-XXXXXX";
    dir = mkdtemp(tmpl);
    uv_loop_init(&loop);
    auto s = state::StateStore::open((dir / "state.db").string(), &loop);
    BOOST_REQUIRE(s.ok());
    store = std::move(*s);
    cfg.principals = principals;
    iggy::PoolConfig pc;
    pc.connection.port = 1;  // nothing answers: these tests never reach Iggy
    bridge_pool = std::make_unique<iggy::IggyPool>(&loop, pc);
    ids = std::make_unique<IggyIdentities>(&loop, cfg, *store, iggy::IggyClient(*bridge_pool), pc);
  }
  ~Identities() {
    bool closed = false;
    ids->close([&] { closed = true; });
    while (!closed) uv_run(&loop, UV_RUN_ONCE);
    ids.reset();
    closed = false;
    bridge_pool->close([&] { closed = true; });
    while (!closed) uv_run(&loop, UV_RUN_ONCE);
    bridge_pool.reset();
    store->close();
    store.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    std::filesystem::remove_all(dir);
  }

  Result<IggyIdentityRef> resolve(const std::string& name) {
    std::optional<Result<IggyIdentityRef>> got;
    ids->resolve(security::KafkaPrincipal::user(name), [&](Result<IggyIdentityRef> r) { got.emplace(std::move(r)); });
    BOOST_TEST(!got.has_value());  // never inside the call
    while (!got) uv_run(&loop, UV_RUN_ONCE);
    return std::move(*got);
  }

  void map(const std::string& principal, const std::string& user, const std::string& password,
           state::IggyUserStatus status = state::IggyUserStatus::kMapped) {
    state::PrincipalIggyUser row;
    row.principal = principal;
    row.iggy_username = user;
    row.iggy_password = password;
    row.created_by_bridge = status != state::IggyUserStatus::kMapped;
    row.status = status;
    BOOST_REQUIRE(store->run_blocking([&](SQLite::Database& db) { state::upsert_principal_iggy_user(db, row, 1); }).ok());
  }
};

config::PrincipalsConfig per_principal(config::PrincipalsConfig::Unmapped unmapped) {
  config::PrincipalsConfig p;
  p.iggy_identity = config::PrincipalsConfig::Identity::kPerPrincipal;
  p.unmapped = unmapped;
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(iggy_identities)

BOOST_AUTO_TEST_CASE(shared_mode_runs_every_principal_as_the_bridge) {
  Identities t(config::PrincipalsConfig{});
  auto r = t.resolve("alice");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r.value()->pool == nullptr);
  BOOST_TEST(r.value() == t.ids->shared());
  BOOST_TEST(t.ids->stats().pools == 0u);
}

BOOST_AUTO_TEST_CASE(an_unmapped_principal_is_refused_with_topic_authorization_failed) {
  Identities t(per_principal(config::PrincipalsConfig::Unmapped::kRefuse));
  auto r = t.resolve("mallory");
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(to_int16(to_kafka_error(r.error())) == to_int16(ErrorCode::kTopicAuthorizationFailed));
  BOOST_TEST(t.ids->stats().refused == 1u);
}

BOOST_AUTO_TEST_CASE(an_unmapped_principal_may_run_as_the_bridge_when_configured) {
  Identities t(per_principal(config::PrincipalsConfig::Unmapped::kShared));
  auto r = t.resolve("carol");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r.value()->pool == nullptr);
}

BOOST_AUTO_TEST_CASE(mapped_principals_get_a_pool_of_their_own_shared_by_their_connections) {
  Identities t(per_principal(config::PrincipalsConfig::Unmapped::kRefuse));
  t.map("User:alice", "alice-iggy", "pw-a");
  t.map("User:bob", "bob-iggy", "pw-b");
  auto a1 = t.resolve("alice");
  auto a2 = t.resolve("alice");
  auto b = t.resolve("bob");
  BOOST_REQUIRE(a1.ok());
  BOOST_REQUIRE(a2.ok());
  BOOST_REQUIRE(b.ok());
  BOOST_TEST(a1.value()->pool != nullptr);
  BOOST_TEST(a1.value()->pool == a2.value()->pool);
  BOOST_TEST(a1.value()->pool != b.value()->pool);
  BOOST_TEST(a1.value()->iggy_user == "alice-iggy");
  BOOST_TEST(a1.value()->pool->config().connection.credentials.username == "alice-iggy");
  BOOST_TEST(a1.value()->pool->config().connections == t.cfg.principals.pool_size);
  BOOST_TEST(t.ids->stats().pools == 2u);
  // A mapping made while the bridge runs (the CLI writes the database) applies to the next lookup.
  auto before = t.resolve("dave");
  BOOST_TEST(!before.ok());
  t.map("User:dave", "dave-iggy", "pw-d");
  auto after = t.resolve("dave");
  BOOST_REQUIRE(after.ok());
  BOOST_TEST(after.value()->iggy_user == "dave-iggy");
}

BOOST_AUTO_TEST_CASE(acl_rights_become_topic_permissions_and_nothing_wider) {
  const auto alice = security::KafkaPrincipal::user("alice");
  const TopicRightsFn rights = [](const security::KafkaPrincipal& p, const std::string& topic) {
    TopicRights r;
    if (p.name != "alice") return r;
    if (topic == "orders") r.read = true;
    if (topic == "audit") r.write = true;
    if (topic == "owned") r = {true, true, true};
    return r;
  };
  const iggy::Permissions perms =
      iggy_permissions_for(alice, 7, {{"orders", 1}, {"audit", 2}, {"owned", 3}, {"secret", 4}}, rights);
  BOOST_TEST((perms.global == iggy::GlobalPermissions{}));
  BOOST_REQUIRE(perms.streams.size() == 1u);
  const iggy::StreamPermissions& s = perms.streams.at(7);
  BOOST_TEST(!s.manage_stream);
  BOOST_TEST(!s.read_stream);
  BOOST_TEST(!s.manage_topics);
  BOOST_TEST(!s.read_topics);
  BOOST_TEST(!s.poll_messages);
  BOOST_TEST(!s.send_messages);
  BOOST_REQUIRE(s.topics.size() == 3u);  // "secret": nothing, so no entry
  BOOST_TEST((s.topics.at(1) == iggy::TopicPermissions{false, true, true, false}));
  BOOST_TEST((s.topics.at(2) == iggy::TopicPermissions{false, false, false, true}));
  BOOST_TEST((s.topics.at(3) == iggy::TopicPermissions{true, true, true, true}));
  const iggy::Permissions none = iggy_permissions_for(security::KafkaPrincipal::user("bob"), 7, {{"orders", 1}}, rights);
  BOOST_TEST(none.streams.at(7).topics.empty());
}

BOOST_AUTO_TEST_CASE(the_sync_replaces_only_the_topic_entries_of_the_bridges_stream) {
  // What the user holds in Iggy: global rights, a grant on another stream, stream-wide flags and
  // topic entries (one the ACLs no longer give, one for a topic gone) on the bridge's stream 7.
  iggy::Permissions current;
  current.global.read_servers = true;
  current.global.manage_users = true;
  iggy::StreamPermissions other;
  other.read_stream = true;
  other.topics[3] = iggy::TopicPermissions{false, true, true, false};
  current.streams[9] = other;
  iggy::StreamPermissions ours;
  ours.read_topics = true;
  ours.topics[1] = iggy::TopicPermissions{true, true, true, true};
  ours.topics[42] = iggy::TopicPermissions{false, false, false, true};
  current.streams[7] = ours;

  iggy::Permissions owned;
  owned.streams[7].topics[1] = iggy::TopicPermissions{false, true, true, false};
  owned.streams[7].topics[2] = iggy::TopicPermissions{false, false, false, true};
  const iggy::Permissions merged = merge_iggy_permissions(current, 7, owned);

  BOOST_TEST((merged.global == current.global));
  BOOST_REQUIRE(merged.streams.count(9) == 1u);
  BOOST_TEST((merged.streams.at(9) == other));
  const iggy::StreamPermissions& s = merged.streams.at(7);
  BOOST_TEST(s.read_topics);  // the stream-wide flag is the operator's, kept
  BOOST_TEST(!s.manage_stream);
  BOOST_REQUIRE(s.topics.size() == 2u);  // 42 is gone: the topic entries are the ACLs' alone
  BOOST_TEST((s.topics.at(1) == iggy::TopicPermissions{false, true, true, false}));
  BOOST_TEST((s.topics.at(2) == iggy::TopicPermissions{false, false, false, true}));
  BOOST_TEST(reaches_stream_beyond_topics(merged, 7));  // read_topics on stream 7: beyond the ACLs

  // A user with nothing on the bridge's stream and no rights from the ACLs: nothing to write.
  iggy::Permissions plain;
  plain.streams[9] = other;
  iggy::Permissions nothing;
  nothing.streams[7];
  BOOST_TEST((merge_iggy_permissions(plain, 7, nothing) == plain));
  BOOST_TEST(!reaches_stream_beyond_topics(plain, 7));
  // Rights taken away: the topic entries go, the operator's entry for stream 9 stays.
  iggy::Permissions had = plain;
  had.streams[7].topics[1] = iggy::TopicPermissions{false, true, true, false};
  BOOST_TEST((merge_iggy_permissions(had, 7, nothing) == plain));
  iggy::Permissions global_poll;
  global_poll.global.poll_messages = true;
  BOOST_TEST(reaches_stream_beyond_topics(global_poll, 7));
}

BOOST_AUTO_TEST_CASE(only_acls_whose_host_is_a_wildcard_become_iggy_rights) {
  Identities t(per_principal(config::PrincipalsConfig::Unmapped::kRefuse));
  config::AuthorizationConfig ac;
  ac.enabled = true;
  ac.super_users = {"User:admin"};
  Authorizer authz(ac, *t.store, &t.loop);
  BOOST_REQUIRE(authz.load().ok());
  using security::AclOperation;
  auto topic_acl = [](std::string topic, std::string principal, std::string host, AclOperation op,
                      security::AclPermissionType perm = security::AclPermissionType::kAllow) {
    return security::AclBinding{{security::ResourceType::kTopic, std::move(topic), security::PatternType::kLiteral},
                                {std::move(principal), std::move(host), op, perm}};
  };
  std::optional<std::vector<AclCreateResult>> created;
  authz.create_acls({topic_acl("empty-host", "User:alice", "", AclOperation::kRead),
                     topic_acl("empty-host", "User:alice", "", AclOperation::kWrite),
                     topic_acl("one-host", "User:alice", "10.0.0.7", AclOperation::kAll),
                     topic_acl("every-host", "User:alice", "*", AclOperation::kAll),
                     // A DENY naming one host denies that host only: not every host.
                     topic_acl("every-host", "User:alice", "10.0.0.7", AclOperation::kWrite,
                               security::AclPermissionType::kDeny),
                     topic_acl("read-only", "User:alice", "*", AclOperation::kRead),
                     topic_acl("read-only", "User:alice", "*", AclOperation::kWrite,
                               security::AclPermissionType::kDeny)},
                    [&](std::vector<AclCreateResult> r) { created = std::move(r); });
  while (!created) uv_run(&t.loop, UV_RUN_ONCE);
  for (const auto& r : *created) BOOST_REQUIRE(r.error == ErrorCode::kNone);
  const auto alice = security::KafkaPrincipal::user("alice");

  // The bridge's own check, from a client whose address is "" (none) or 10.0.0.7, allows these.
  BOOST_TEST(authz.allowed(alice, "", AclOperation::kRead, security::ResourceType::kTopic, "empty-host"));
  BOOST_TEST(authz.allowed(alice, "10.0.0.7", AclOperation::kRead, security::ResourceType::kTopic, "one-host"));
  // Projected onto Iggy, where no host is known: nothing.
  BOOST_TEST((acl_topic_rights(authz, alice, "empty-host") == TopicRights{}));
  BOOST_TEST((acl_topic_rights(authz, alice, "one-host") == TopicRights{}));
  BOOST_TEST((acl_topic_rights(authz, alice, "every-host") == TopicRights{true, true, true}));
  BOOST_TEST((acl_topic_rights(authz, alice, "read-only") == TopicRights{true, false, false}));
  BOOST_TEST((acl_topic_rights(authz, security::KafkaPrincipal::user("bob"), "every-host") == TopicRights{}));
  // A super user may do anything from anywhere.
  BOOST_TEST((acl_topic_rights(authz, security::KafkaPrincipal::user("admin"), "one-host") ==
              TopicRights{true, true, true}));
}

BOOST_AUTO_TEST_CASE(a_mapping_refused_for_an_iggy_user_the_bridge_did_not_create_is_never_used) {
  Identities t(per_principal(config::PrincipalsConfig::Unmapped::kCreate));
  t.map("User:bob", "kafka.bob", "random", state::IggyUserStatus::kRefused);
  for (int i = 0; i < 2; ++i) {
    auto r = t.resolve("bob");
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(to_int16(to_kafka_error(r.error())) == to_int16(ErrorCode::kTopicAuthorizationFailed));
  }
  BOOST_TEST(t.ids->stats().refused_not_created == 2u);
  BOOST_TEST(t.ids->stats().pools == 0u);  // never logged in as it
  BOOST_TEST(t.ids->stats().created_users == 0u);
  // The operator maps the principal explicitly: an adoption the operator chose.
  t.map("User:bob", "kafka.bob", "bobs-own-password");
  auto r = t.resolve("bob");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r.value()->iggy_user == "kafka.bob");
}

BOOST_AUTO_TEST_CASE(the_mapping_status_follows_the_bridge_and_yields_to_the_operator) {
  char tmpl[] = "/tmp/kib-principal-status-XXXXXX";
  std::filesystem::path dir = mkdtemp(tmpl);
  {
    auto db = state::open_database((dir / "s.db").string());
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(state::migrate(**db).ok());
    state::PrincipalIggyUser mine;
    mine.principal = "User:carol";
    mine.iggy_username = "kafka.carol";
    mine.iggy_password = "random-1";
    mine.created_by_bridge = true;
    mine.status = state::IggyUserStatus::kPending;
    BOOST_TEST(state::insert_principal_iggy_user(**db, mine, 1));
    BOOST_TEST(!state::insert_principal_iggy_user(**db, mine, 2));  // once only
    BOOST_TEST(state::set_principal_iggy_user_status(**db, mine, state::IggyUserStatus::kCreated, 3));
    BOOST_TEST((state::load_principal_iggy_user(**db, "User:carol")->status == state::IggyUserStatus::kCreated));
    // An operator's mapping written meanwhile is not overwritten by the bridge's status.
    state::PrincipalIggyUser operators = mine;
    operators.iggy_password = "carols-password";
    operators.created_by_bridge = false;
    operators.status = state::IggyUserStatus::kMapped;
    state::upsert_principal_iggy_user(**db, operators, 4);
    BOOST_TEST(!state::set_principal_iggy_user_status(**db, mine, state::IggyUserStatus::kRefused, 5));
    BOOST_TEST((state::load_principal_iggy_user(**db, "User:carol")->status == state::IggyUserStatus::kMapped));
  }
  {
    // Before migration 0008 the bridge took over any existing kafka.<name>: its mappings must
    // prove themselves again ('pending'); an operator's stays 'mapped'.
    auto db = state::open_database((dir / "old.db").string());
    BOOST_REQUIRE(db.ok());
    for (const auto& m : state::migrations())
      if (m.version <= 7) (*db)->exec(m.sql);
    (*db)->exec("PRAGMA user_version = 7");
    (*db)->exec("INSERT INTO principal_iggy_users(principal, iggy_username, iggy_password, created_by_bridge, "
                "updated_at) VALUES ('User:bob', 'kafka.bob', 'r', 1, 0), ('User:op', 'op', 'p', 0, 0)");
    BOOST_REQUIRE(state::migrate(**db).ok());
    BOOST_TEST((state::load_principal_iggy_user(**db, "User:bob")->status == state::IggyUserStatus::kPending));
    BOOST_TEST((state::load_principal_iggy_user(**db, "User:op")->status == state::IggyUserStatus::kMapped));
  }
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(the_store_keeps_exactly_one_secret_per_mapping) {
  char tmpl[] = "/tmp/kib-principal-store-XXXXXX";
  std::filesystem::path dir = mkdtemp(tmpl);
  {
    auto db = state::open_database((dir / "s.db").string());
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(state::migrate(**db).ok());
    state::PrincipalIggyUser row;
    row.principal = "User:alice";
    row.iggy_username = "alice";
    row.personal_access_token = "tok";
    state::upsert_principal_iggy_user(**db, row, 5);
    auto back = state::load_principal_iggy_user(**db, "User:alice");
    BOOST_REQUIRE(back.has_value());
    BOOST_TEST(!back->iggy_password.has_value());
    BOOST_TEST(*back->personal_access_token == "tok");
    BOOST_TEST(back->updated_at_ms == 5);
    row.personal_access_token.reset();
    BOOST_CHECK_THROW(state::upsert_principal_iggy_user(**db, row, 6), SQLite::Exception);  // neither secret
    row.iggy_password = "pw";
    row.personal_access_token = "tok";
    BOOST_CHECK_THROW(state::upsert_principal_iggy_user(**db, row, 6), SQLite::Exception);  // both
    BOOST_TEST(state::delete_principal_iggy_user(**db, "User:alice"));
    BOOST_TEST(!state::delete_principal_iggy_user(**db, "User:alice"));
    BOOST_TEST(state::load_principal_iggy_users(**db).empty());
  }
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
