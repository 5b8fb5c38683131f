// The SQLite state database. The only code that speaks SQL lives under src/state/.
//
// Threading: the event loop never touches SQLite while serving. Writes are queued to one
// writer thread that runs every job queued so far in a single transaction (one fsync per
// batch: thousands of offset commits cost a few fsyncs), each job in its own SAVEPOINT so one
// failing job does not undo the others. Completions are posted back to the loop thread
// through a uv_async_t. Services keep what they read in memory, loaded at startup. Writes queued
// on the loop thread wake the writer once per loop iteration (a uv_prepare_t, before the loop
// waits for I/O), not once each: under load, the writes of one iteration share a wake-up and a
// transaction.
//
// A job that runs once per hot request (a producer batch, an offset commit) prepares its
// statements through CachedStatement: the writer thread keeps each statement prepared for the
// life of the store, so a job costs a bind and a step instead of a parse.
//
// Durability per job: kDurable jobs (the default) are answered after their batch is fsynced
// (`synchronous = FULL`). kRecoverable jobs hold state the bridge can rebuild from Iggy after a
// power loss (producer batch rows: Iggy's messages carry the producer, epoch and sequence, and
// the partition tail is re-read at start); a batch holding only such jobs commits with
// `synchronous = NORMAL`: in the WAL, so a crash of the bridge keeps it, without the fsync. The
// next durable commit fsyncs it along.
#pragma once

#include <uv.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/result.h"

namespace kib::state {

// A prepared statement for `sql`, reset when this goes out of scope. On the state store's writer
// thread, for that store's database, it is prepared once and reused; anywhere else (startup,
// CLI, tests) it is prepared for this use only. `sql` is the cache key (its text).
class CachedStatement {
 public:
  CachedStatement(SQLite::Database& db, const char* sql);
  ~CachedStatement();
  CachedStatement(const CachedStatement&) = delete;
  CachedStatement& operator=(const CachedStatement&) = delete;
  SQLite::Statement& operator*() { return *st_; }
  SQLite::Statement* operator->() { return st_; }
  // Whether the statement came from the writer's cache (unit tests).
  bool reused() const { return !own_; }

 private:
  std::unique_ptr<SQLite::Statement> own_;
  SQLite::Statement* st_ = nullptr;
  bool* in_use_ = nullptr;
};

enum class Durability { kDurable, kRecoverable };

// Latest schema version this binary knows.
int latest_schema_version();

// Opens (creating if needed) and migrates a database. Refuses a database whose
// user_version is newer than this binary. Safe to run repeatedly (idempotent).
Result<int> migrate(SQLite::Database& db);

// Opens the database with the bridge's pragmas (WAL, synchronous=FULL, foreign keys).
Result<std::unique_ptr<SQLite::Database>> open_database(const std::string& path);

class StateStore {
 public:
  using Job = std::function<void(SQLite::Database&)>;
  using Done = std::function<void(Status)>;

  // Opens and migrates; `loop` receives completions. The writer thread starts at once.
  static Result<std::unique_ptr<StateStore>> open(const std::string& path, uv_loop_t* loop);
  ~StateStore();

  // Runs `job` on the writer thread inside the current batch transaction; `done` runs on the
  // loop thread after the batch committed (durable) or with the error that failed the job.
  void write(Job job, Done done, Durability durability = Durability::kDurable);

  // Runs `job` on the writer thread and waits for it. Startup and CLI only, never on the loop.
  Status run_blocking(Job job);

  // Stops the writer after finishing every queued job, then closes the uv handle.
  void close();

  uint64_t batches_committed() const { return batches_; }
  // Batches committed without an fsync (every job kRecoverable).
  uint64_t batches_relaxed() const { return relaxed_batches_; }

 private:
  StateStore(std::unique_ptr<SQLite::Database> db, uv_loop_t* loop);
  void writer_main();
  static void on_async(uv_async_t* h);
  static void on_prepare(uv_prepare_t* h);

  struct Pending {
    Job job;
    Done done;
    std::promise<Status>* sync = nullptr;  // run_blocking: fulfilled on the writer after commit
    Durability durability = Durability::kDurable;
  };
  struct Completed {
    Done done;
    Status status;
  };

  std::unique_ptr<SQLite::Database> db_;
  uv_loop_t* loop_;
  uv_async_t* async_ = nullptr;
  uv_prepare_t* prepare_ = nullptr;  // wakes the writer for the writes queued since the loop last waited
  std::thread::id loop_thread_;
  std::atomic<bool> wake_pending_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  std::deque<Completed> completed_;
  bool stopping_ = false;
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> relaxed_batches_{0};
  std::thread writer_;
};

}  // namespace kib::state
