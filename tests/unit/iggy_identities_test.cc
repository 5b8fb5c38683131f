// Which Iggy user a principal's data requests run as (bridge/security/iggy_identities.h): the
// [principals] modes against a real state database, and the ACL -> Iggy permission projection.
// No Iggy server: pools are created (never started towards a server that answers) and compared.
#include <boost/test/unit_test.hpp>

#include <uv.h>

#include <filesystem>
#include <optional>

#include "bridge/errors.h"
#include "bridge/security/iggy_identities.h"
#include "iggy/client.h"
#include "iggy/pool.h"
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

  void map(const std::string& principal, const std::string& user, const std::string& password) {
    state::PrincipalIggyUser row;
    row.principal = principal;
    row.iggy_username = user;
    row.iggy_password = password;
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
