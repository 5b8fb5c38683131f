#include "state/state_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <future>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "common/guard.h"
#include "state/migrations.h"

namespace kib::state {
namespace {

Error state_error(const std::string& what, int code = 0) {
  return Error{ErrorDomain::kState, static_cast<uint32_t>(code), what};
}

// The writer thread's prepared statements, for the one database it serves. Lives in
// writer_main, so every statement is finalized on the writer before the database closes.
struct WriterStatements {
  const SQLite::Database* db = nullptr;
  struct Entry {
    std::unique_ptr<SQLite::Statement> st;
    bool in_use = false;
  };
  std::unordered_map<std::string, Entry> by_sql;
};
thread_local WriterStatements* tl_statements = nullptr;

}  // namespace

CachedStatement::CachedStatement(SQLite::Database& db, const char* sql) {
  if (tl_statements && tl_statements->db == &db) {
    auto& e = tl_statements->by_sql[sql];
    if (!e.in_use) {  // a nested use of the same text gets its own statement
      if (!e.st) e.st = std::make_unique<SQLite::Statement>(db, sql);
      e.in_use = true;
      in_use_ = &e.in_use;
      st_ = e.st.get();
      return;
    }
  }
  own_ = std::make_unique<SQLite::Statement>(db, sql);
  st_ = own_.get();
}

CachedStatement::~CachedStatement() {
  if (!in_use_) return;
  try {
    st_->reset();
    st_->clearBindings();
  } catch (...) {  // reset reports the last step's error again; the step already threw it
  }
  *in_use_ = false;
}

int latest_schema_version() { return migrations().empty() ? 0 : migrations().back().version; }

Result<int> migrate(SQLite::Database& db) {
  try {
    int current = db.execAndGet("PRAGMA user_version").getInt();
    int latest = latest_schema_version();
    if (current > latest)
      return state_error("database schema version " + std::to_string(current) +
                         " is newer than this binary supports (" + std::to_string(latest) +
                         "); run a newer kafka-iggy-bridge or restore a backup");
    for (const Migration& m : migrations()) {
      if (m.version <= current) continue;
      SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
      // Re-check under the write lock: another process may have migrated meanwhile.
      if (db.execAndGet("PRAGMA user_version").getInt() >= m.version) continue;
      db.exec(m.sql);
      db.exec("PRAGMA user_version = " + std::to_string(m.version));
      tx.commit();
      spdlog::info("state: applied migration {:04d}_{}", m.version, m.name);
      current = m.version;
    }
    return current;
  } catch (const SQLite::Exception& e) {
    return state_error(std::string("migration failed: ") + e.what(), e.getErrorCode());
  }
}

namespace {

// The database holds SASL credentials and Iggy passwords (docs/security.md): it is created
// 0600, and a database (or its WAL and shared-memory files, which SQLite creates with the
// database's mode) readable by group or others is made 0600, with a warning.
void keep_private(const std::string& path) {
  if (int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600); fd >= 0) {
    ::close(fd);
    return;
  }
  for (const std::string& f : {path, path + "-wal", path + "-shm"}) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0 || (st.st_mode & 077) == 0) continue;
    if (::chmod(f.c_str(), st.st_mode & 0700) == 0)
      spdlog::warn("state: {} was readable by group or others (mode {:o}); made it {:o}", f, st.st_mode & 0777,
                   st.st_mode & 0700);
    else
      spdlog::warn("state: {} is readable by group or others (mode {:o}) and cannot be made 0600: {}", f,
                   st.st_mode & 0777, std::strerror(errno));
  }
}

}  // namespace

Result<std::unique_ptr<SQLite::Database>> open_database(const std::string& path) {
  try {
    std::filesystem::path p(path);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    if (path != ":memory:") keep_private(path);
    auto db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db->setBusyTimeout(5000);
    db->exec("PRAGMA journal_mode = WAL");
    db->exec("PRAGMA synchronous = FULL");  // a committed offset survives power loss
    db->exec("PRAGMA foreign_keys = ON");
    return db;
  } catch (const std::exception& e) {
    return state_error(path + ": cannot open state database: " + e.what());
  }
}

Result<std::unique_ptr<StateStore>> StateStore::open(const std::string& path, uv_loop_t* loop) {
  auto db = open_database(path);
  if (!db) return db.error();
  auto v = migrate(**db);
  if (!v) return v.error();
  return std::unique_ptr<StateStore>(new StateStore(std::move(*db), loop));
}

StateStore::StateStore(std::unique_ptr<SQLite::Database> db, uv_loop_t* loop) : db_(std::move(db)), loop_(loop) {
  async_ = new uv_async_t;
  uv_async_init(loop_, async_, &StateStore::on_async);
  async_->data = this;
  prepare_ = new uv_prepare_t;
  uv_prepare_init(loop_, prepare_);
  prepare_->data = this;
  uv_prepare_start(prepare_, &StateStore::on_prepare);
  uv_unref(reinterpret_cast<uv_handle_t*>(prepare_));  // never keeps the loop alive by itself
  loop_thread_ = std::this_thread::get_id();
  writer_ = std::thread([this] { writer_main(); });
}

StateStore::~StateStore() { close(); }

void StateStore::write(Job job, Done done, Durability durability) {
  {
    std::lock_guard lk(mu_);
    queue_.push_back({std::move(job), std::move(done), nullptr, durability});
  }
  if (std::this_thread::get_id() == loop_thread_)
    wake_pending_.store(true, std::memory_order_relaxed);  // on_prepare, before the loop next waits
  else
    cv_.notify_one();
}

void StateStore::on_prepare(uv_prepare_t* h) {
  auto* self = static_cast<StateStore*>(h->data);
  if (self->wake_pending_.exchange(false, std::memory_order_relaxed)) self->cv_.notify_one();
}

Status StateStore::run_blocking(Job job) {
  std::promise<Status> p;
  auto fut = p.get_future();
  {
    std::lock_guard lk(mu_);
    queue_.push_back({std::move(job), nullptr, &p});
  }
  cv_.notify_one();
  return fut.get();  // after the batch holding the job committed (or failed)
}

void StateStore::writer_main() {
  WriterStatements statements;
  statements.db = db_.get();
  tl_statements = &statements;
  struct Unset {
    ~Unset() { tl_statements = nullptr; }
  } unset;
  bool synchronous_full = true;  // open_database's setting
  for (;;) {
    std::deque<Pending> batch;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty() && stopping_) return;
      batch.swap(queue_);
    }
    std::vector<Completed> results;
    std::vector<std::promise<Status>*> syncs;
    results.reserve(batch.size());
    syncs.reserve(batch.size());
    const bool relaxed = std::all_of(batch.begin(), batch.end(),
                                     [](const Pending& p) { return p.durability == Durability::kRecoverable; });
    try {
      if (relaxed == synchronous_full) {  // a pragma, outside any transaction
        db_->exec(relaxed ? "PRAGMA synchronous = NORMAL" : "PRAGMA synchronous = FULL");
        synchronous_full = !relaxed;
      }
      SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
      for (auto& p : batch) {
        try {
          CachedStatement(*db_, "SAVEPOINT job")->exec();
          p.job(*db_);
          CachedStatement(*db_, "RELEASE job")->exec();
          results.push_back({std::move(p.done), ok_status()});
          syncs.push_back(p.sync);
        } catch (const std::exception& e) {
          db_->exec("ROLLBACK TO job");
          db_->exec("RELEASE job");
          spdlog::warn("state: write failed: {}", e.what());
          results.push_back({std::move(p.done), state_error(e.what())});
          syncs.push_back(p.sync);
        } catch (...) {
          // Not an SQLite error: a bug in the job. It fails alone, like any failed job.
          guard::detail::report(guard::Boundary::kStateWriter, "state write job", "unknown exception");
          db_->exec("ROLLBACK TO job");
          db_->exec("RELEASE job");
          results.push_back({std::move(p.done), state_error("state write job failed: unknown exception")});
          syncs.push_back(p.sync);
        }
      }
      tx.commit();
      ++batches_;
      if (relaxed) ++relaxed_batches_;
    } catch (const std::exception& e) {
      // BEGIN, a savepoint or the commit failed (disk full, I/O error, database locked):
      // nothing of the batch is durable, and every job of it fails, including those not run.
      spdlog::error("state: batch of {} writes failed to commit: {}", batch.size(), e.what());
      for (auto& r : results) r.status = state_error(std::string("commit failed: ") + e.what());
      for (size_t i = results.size(); i < batch.size(); ++i) {
        results.push_back({std::move(batch[i].done), state_error(std::string("commit failed: ") + e.what())});
        syncs.push_back(batch[i].sync);
      }
    }
    for (size_t i = 0; i < syncs.size(); ++i)
      if (syncs[i]) syncs[i]->set_value(results[i].status);
    {
      std::lock_guard lk(mu_);
      for (auto& r : results)
        if (r.done) completed_.push_back(std::move(r));
    }
    uv_async_send(async_);
  }
}

void StateStore::on_async(uv_async_t* h) {
  auto* self = static_cast<StateStore*>(h->data);
  std::deque<Completed> done;
  {
    std::lock_guard lk(self->mu_);
    done.swap(self->completed_);
  }
  // Each completion alone: one that throws does not lose the others' answers.
  for (auto& c : done)
    guard::run(guard::Boundary::kStateCompletion, "state write completion", [&] { c.done(std::move(c.status)); });
}

void StateStore::close() {
  if (!writer_.joinable()) return;
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  writer_.join();
  on_async(async_);  // deliver the last completions
  uv_close(reinterpret_cast<uv_handle_t*>(async_), [](uv_handle_t* h) { delete reinterpret_cast<uv_async_t*>(h); });
  async_ = nullptr;
  uv_prepare_stop(prepare_);
  uv_close(reinterpret_cast<uv_handle_t*>(prepare_), [](uv_handle_t* h) { delete reinterpret_cast<uv_prepare_t*>(h); });
  prepare_ = nullptr;
}

}  // namespace kib::state
