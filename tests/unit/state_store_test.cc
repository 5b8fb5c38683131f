#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <mutex>
#include <vector>
#include <unistd.h>

#include "state/migrations.h"
#include "state/state_store.h"
#include "state/topic_store.h"

using namespace kib;
using namespace kib::state;

namespace {
struct TempDb {
  std::filesystem::path dir;
  TempDb() {
    char tmpl[] = "/tmp/kib-state-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~TempDb() { std::filesystem::remove_all(dir); }
  std::string path() const { return (dir / "state.db").string(); }
};
}  // namespace

BOOST_AUTO_TEST_SUITE(sqlite_state)

BOOST_AUTO_TEST_CASE(migrations_are_numbered_from_one_without_gaps) {
  int expect = 1;
  for (const auto& m : migrations()) BOOST_TEST(m.version == expect++);
  BOOST_TEST(latest_schema_version() >= 1);
}

BOOST_AUTO_TEST_CASE(random_ids_never_start_with_a_dash_and_are_version_4) {
  // one draw in 64 would start with '-' without the redraw; 20,000 draws make a miss vanishingly unlikely
  int dashes = 0;
  for (int i = 0; i < 20000; ++i) {
    const auto id = random_uuid();
    const std::string b64 = uuid_to_kafka_base64(id);
    BOOST_TEST_REQUIRE(b64.size() == 22u);
    if (b64.front() == '-') ++dashes;
    BOOST_TEST((id[6] >> 4) == 4);
    BOOST_TEST((id[8] >> 6) == 2);
  }
  BOOST_TEST(dashes == 0);
}

BOOST_AUTO_TEST_CASE(migrate_is_idempotent_and_sets_user_version) {
  TempDb t;
  auto db = open_database(t.path());
  BOOST_REQUIRE(db.ok());
  auto v1 = migrate(**db);
  BOOST_REQUIRE(v1.ok());
  BOOST_TEST(*v1 == latest_schema_version());
  auto v2 = migrate(**db);
  BOOST_REQUIRE(v2.ok());
  BOOST_TEST(*v2 == *v1);
  BOOST_TEST((*db)->execAndGet("PRAGMA journal_mode").getString() == "wal");
  BOOST_TEST((*db)->tableExists("committed_offsets"));
}

BOOST_AUTO_TEST_CASE(migration_4_backfills_topic_overrides_from_the_0002_columns) {
  TempDb t;
  auto db = open_database(t.path());
  BOOST_REQUIRE(db.ok());
  for (const auto& m : migrations())
    if (m.version <= 3) (*db)->exec(m.sql);
  (*db)->exec("PRAGMA user_version = 3");
  (*db)->exec("INSERT INTO topics(name, topic_id, created_at, retention_ms, max_message_bytes) "
              "VALUES ('old', '00000000-0000-4000-8000-000000000000', 0, 60000, 2048)");
  (*db)->exec("INSERT INTO topics(name, topic_id, created_at) VALUES ('plain', '00000000-0000-4000-8000-000000000001', 0)");
  BOOST_REQUIRE(migrate(**db).ok());
  auto configs = load_topic_configs(**db);
  BOOST_TEST(configs["old"].size() == 2u);
  BOOST_TEST(configs["old"]["retention.ms"] == "60000");
  BOOST_TEST(configs["old"]["max.message.bytes"] == "2048");
  BOOST_TEST(configs.count("plain") == 0u);
  // Kafka 4 formats its storage with this cluster default; so does the bridge.
  BOOST_TEST(load_broker_configs(**db)[""]["min.insync.replicas"] == "1");
  replace_topic_configs(**db, "old", {{"segment.ms", "5"}});
  BOOST_TEST(load_topic_configs(**db)["old"].size() == 1u);
  delete_topic(**db, "old");
  BOOST_TEST(load_topic_configs(**db).count("old") == 0u);
}

BOOST_AUTO_TEST_CASE(database_newer_than_binary_is_refused) {
  TempDb t;
  auto db = open_database(t.path());
  BOOST_REQUIRE(db.ok());
  (*db)->exec("PRAGMA user_version = " + std::to_string(latest_schema_version() + 1));
  auto v = migrate(**db);
  BOOST_REQUIRE(!v.ok());
  BOOST_TEST(v.error().message.find("newer than this binary") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(queued_writes_commit_in_batches_and_complete_on_the_loop) {
  TempDb t;
  uv_loop_t loop;
  uv_loop_init(&loop);
  auto store = StateStore::open(t.path(), &loop);
  BOOST_REQUIRE(store.ok());
  int completed = 0, failed = 0;
  for (int i = 0; i < 500; ++i) {
    (*store)->write(
        [i](SQLite::Database& db) {
          SQLite::Statement st(db, "INSERT INTO bridge_meta(key, value) VALUES (?, 'v')");
          st.bind(1, "k" + std::to_string(i % 499));  // the 500th collides with the first
          st.exec();
        },
        [&](Status s) { s.ok() ? ++completed : ++failed; });
  }
  while (completed + failed < 500) uv_run(&loop, UV_RUN_ONCE);
  BOOST_TEST(completed == 499);
  BOOST_TEST(failed == 1);  // only the colliding job failed; its batch-mates committed
  BOOST_TEST((*store)->batches_committed() < 500u);
  int rows = 0;
  BOOST_REQUIRE((*store)->run_blocking([&](SQLite::Database& db) {
    rows = db.execAndGet("SELECT count(*) FROM bridge_meta").getInt();
  }).ok());
  BOOST_TEST(rows == 499);
  (*store)->close();
  store->reset();
  uv_run(&loop, UV_RUN_DEFAULT);
  BOOST_TEST(uv_loop_close(&loop) == 0);
}

BOOST_AUTO_TEST_CASE(run_blocking_reports_the_job_error_and_commits_only_on_success) {
  TempDb t;
  uv_loop_t loop;
  uv_loop_init(&loop);
  auto store = StateStore::open(t.path(), &loop);
  BOOST_REQUIRE(store.ok());
  auto bad = (*store)->run_blocking([](SQLite::Database& db) { db.exec("INSERT INTO no_such_table VALUES (1)"); });
  BOOST_TEST(!bad.ok());
  BOOST_TEST(bad.error().message.find("no_such_table") != std::string::npos);
  BOOST_REQUIRE((*store)->run_blocking([](SQLite::Database& db) {
    db.exec("INSERT INTO bridge_meta VALUES ('k', 'v')");
  }).ok());
  // Visible from a second connection at once: the batch committed before run_blocking returned.
  SQLite::Database other(t.path(), SQLite::OPEN_READONLY);
  BOOST_TEST(other.execAndGet("SELECT count(*) FROM bridge_meta WHERE key='k'").getInt() == 1);
  (*store)->close();
  store->reset();
  uv_run(&loop, UV_RUN_DEFAULT);
  BOOST_TEST(uv_loop_close(&loop) == 0);
}

BOOST_AUTO_TEST_CASE(writer_reuses_cached_statements_and_elsewhere_prepares_fresh_ones) {
  TempDb t;
  uv_loop_t loop;
  uv_loop_init(&loop);
  auto store = StateStore::open(t.path(), &loop);
  BOOST_REQUIRE(store.ok());
  constexpr const char* kInsert = "INSERT INTO bridge_meta(key, value) VALUES (?, ?)";
  std::vector<const SQLite::Statement*> seen;
  std::vector<bool> reused;
  for (int i = 0; i < 3; ++i)
    BOOST_REQUIRE((*store)->run_blocking([&, i](SQLite::Database& db) {
      CachedStatement st(db, kInsert);
      st->bind(1, "k" + std::to_string(i));
      st->bind(2, "v");
      st->exec();
      seen.push_back(&*st);
      reused.push_back(st.reused());
      // The same text while the first is in use: its own statement, not the busy one.
      CachedStatement nested(db, kInsert);
      BOOST_TEST(!nested.reused());
    }).ok());
  BOOST_TEST(reused == std::vector<bool>({true, true, true}));
  BOOST_TEST(seen[0] == seen[1]);  // prepared once, bound and stepped three times
  BOOST_TEST(seen[1] == seen[2]);
  // A job that fails mid-statement leaves the cached statement reset for the next job.
  auto dup = (*store)->run_blocking([&](SQLite::Database& db) {
    CachedStatement st(db, kInsert);
    st->bind(1, "k0");
    st->bind(2, "again");
    st->exec();
  });
  BOOST_TEST(!dup.ok());
  BOOST_REQUIRE((*store)->run_blocking([&](SQLite::Database& db) {
    CachedStatement st(db, kInsert);
    st->bind(1, "k9");
    st->bind(2, "v");
    st->exec();
  }).ok());
  // Off the writer thread: a statement of its own.
  SQLite::Database other(t.path(), SQLite::OPEN_READONLY);
  CachedStatement count(other, "SELECT count(*) FROM bridge_meta WHERE key LIKE 'k%'");
  BOOST_TEST(!count.reused());
  BOOST_REQUIRE(count->executeStep());
  BOOST_TEST(count->getColumn(0).getInt() == 4);
  (*store)->close();
  store->reset();
  uv_run(&loop, UV_RUN_DEFAULT);
  BOOST_TEST(uv_loop_close(&loop) == 0);
}

BOOST_AUTO_TEST_CASE(recoverable_batches_commit_without_fsync_and_durable_ones_with_it) {
  TempDb t;
  uv_loop_t loop;
  uv_loop_init(&loop);
  auto store = StateStore::open(t.path(), &loop);
  BOOST_REQUIRE(store.ok());
  auto synchronous = [&] {
    int v = -1;
    BOOST_REQUIRE((*store)->run_blocking([&](SQLite::Database& db) {
      v = db.execAndGet("PRAGMA synchronous").getInt();
    }).ok());
    return v;
  };
  int done = 0;
  (*store)->write([](SQLite::Database& db) { db.exec("INSERT INTO bridge_meta VALUES ('r', '1')"); },
                  [&](Status s) { BOOST_TEST(s.ok()); ++done; }, Durability::kRecoverable);
  while (done < 1) uv_run(&loop, UV_RUN_ONCE);
  BOOST_TEST((*store)->batches_relaxed() >= 1u);
  // run_blocking is durable: FULL (2) again, which also syncs the relaxed commit's WAL frames.
  BOOST_TEST(synchronous() == 2);
  const uint64_t relaxed = (*store)->batches_relaxed();
  // A batch mixing both kinds is durable.
  std::mutex mu;
  std::unique_lock hold(mu);  // keeps the writer busy so the next two writes share a batch
  (*store)->write([&](SQLite::Database&) { std::lock_guard l(mu); }, [&](Status) { ++done; });
  (*store)->write([](SQLite::Database& db) { db.exec("INSERT INTO bridge_meta VALUES ('d', '1')"); },
                  [&](Status) { ++done; });
  (*store)->write([](SQLite::Database& db) { db.exec("INSERT INTO bridge_meta VALUES ('r2', '1')"); },
                  [&](Status) { ++done; }, Durability::kRecoverable);
  hold.unlock();
  while (done < 4) uv_run(&loop, UV_RUN_ONCE);
  BOOST_TEST((*store)->batches_relaxed() == relaxed);
  BOOST_TEST(synchronous() == 2);
  (*store)->close();
  store->reset();
  uv_run(&loop, UV_RUN_DEFAULT);
  BOOST_TEST(uv_loop_close(&loop) == 0);
}

BOOST_AUTO_TEST_CASE(reopening_after_unclean_stop_keeps_committed_rows) {
  TempDb t;
  {
    auto db = open_database(t.path());
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(migrate(**db).ok());
    (*db)->exec("INSERT INTO bridge_meta VALUES ('cluster_id', 'abc')");
    // No checkpoint, WAL left behind: like a process killed with -9.
    BOOST_TEST(std::filesystem::exists(t.path() + "-wal"));
  }
  auto db = open_database(t.path());
  BOOST_REQUIRE(db.ok());
  BOOST_REQUIRE(migrate(**db).ok());
  BOOST_TEST((*db)->execAndGet("SELECT value FROM bridge_meta WHERE key='cluster_id'").getString() == "abc");
}

BOOST_AUTO_TEST_SUITE_END()
