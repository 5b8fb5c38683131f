// SASL credentials in SQLite (state/credential_store.h, migrations/0007), and the state
// database's file mode: it holds credentials, so it is created 0600 and kept so.
#include <boost/test/unit_test.hpp>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "state/credential_store.h"
#include "state/state_store.h"

using namespace kib;
using namespace kib::state;

namespace {

mode_t mode_of(const std::string& path) {
  struct stat st {};
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/kib-credentials-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(state_credential_store)

BOOST_AUTO_TEST_CASE(scram_and_plain_rows_are_stored_replaced_listed_and_deleted) {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  BOOST_REQUIRE(migrate(db).ok());
  BOOST_TEST(!load_scram_credential(db, "alice", "SCRAM-SHA-256"));
  upsert_scram_credential(db, {"alice", "SCRAM-SHA-256", {1, 2}, {3, 4}, {5, 6}, 4096}, 1000);
  upsert_scram_credential(db, {"alice", "SCRAM-SHA-512", {7}, {8}, {9}, 8192}, 1000);
  upsert_scram_credential(db, {"bob", "SCRAM-SHA-512", {}, {8}, {9}, 5000}, 1000);  // an empty salt is a blob too
  upsert_plain_credential(db, {"alice", {10}, {11}, 4096}, 2000);
  auto a = load_scram_credential(db, "alice", "SCRAM-SHA-256");
  BOOST_REQUIRE(a);
  BOOST_TEST((a->salt == Bytes{1, 2}));
  BOOST_TEST((a->stored_key == Bytes{3, 4}));
  BOOST_TEST((a->server_key == Bytes{5, 6}));
  BOOST_TEST(a->iterations == 4096);
  BOOST_TEST(load_scram_credential(db, "bob", "SCRAM-SHA-512")->salt.empty());
  // Replacing keeps one row per user and mechanism.
  upsert_scram_credential(db, {"alice", "SCRAM-SHA-256", {42}, {43}, {44}, 16384}, 3000);
  BOOST_TEST(load_scram_credential(db, "alice", "SCRAM-SHA-256")->iterations == 16384);
  auto p = load_plain_credential(db, "alice");
  BOOST_REQUIRE(p);
  BOOST_TEST((p->hash == Bytes{11}));

  auto all = list_credentials(db);
  BOOST_REQUIRE(all.size() == 4u);
  BOOST_TEST(all[0].username == "alice");
  BOOST_TEST(all[0].mechanism == "SCRAM-SHA-256");
  BOOST_TEST(all[0].updated_at_ms == 3000);
  BOOST_TEST(all[1].mechanism == "SCRAM-SHA-512");
  BOOST_TEST(all[2].mechanism == "PLAIN");
  BOOST_TEST(all[3].username == "bob");
  BOOST_TEST(list_scram_credentials(db, std::nullopt).size() == 3u);
  BOOST_TEST(list_scram_credentials(db, std::string("alice")).size() == 2u);

  BOOST_TEST(delete_scram_credential(db, "alice", "SCRAM-SHA-256"));
  BOOST_TEST(!delete_scram_credential(db, "alice", "SCRAM-SHA-256"));
  BOOST_TEST(delete_plain_credential(db, "alice"));
  BOOST_TEST(!load_plain_credential(db, "alice"));
  BOOST_TEST(list_credentials(db).size() == 2u);
}

BOOST_AUTO_TEST_CASE(the_schema_refuses_an_unknown_scram_mechanism) {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  BOOST_REQUIRE(migrate(db).ok());
  BOOST_CHECK_THROW(upsert_scram_credential(db, {"x", "SCRAM-SHA-1", {1}, {2}, {3}, 4096}, 1), SQLite::Exception);
}

BOOST_AUTO_TEST_CASE(a_new_state_database_is_created_0600) {
  TempDir dir;
  const std::string path = (dir.path / "sub" / "state.db").string();
  const mode_t old = ::umask(0);  // even with a permissive umask
  auto db = open_database(path);
  ::umask(old);
  BOOST_REQUIRE(db.ok());
  BOOST_REQUIRE(migrate(**db).ok());
  BOOST_TEST(mode_of(path) == 0600u);
  // SQLite gives the WAL and shared-memory files the database's mode.
  if (std::filesystem::exists(path + "-wal")) BOOST_TEST(mode_of(path + "-wal") == 0600u);
}

BOOST_AUTO_TEST_CASE(a_state_database_readable_by_others_is_made_0600) {
  TempDir dir;
  const std::string path = (dir.path / "state.db").string();
  {
    auto db = open_database(path);
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(migrate(**db).ok());
  }
  BOOST_REQUIRE(::chmod(path.c_str(), 0644) == 0);
  auto db = open_database(path);
  BOOST_REQUIRE(db.ok());
  BOOST_TEST(mode_of(path) == 0600u);
}

BOOST_AUTO_TEST_SUITE_END()
