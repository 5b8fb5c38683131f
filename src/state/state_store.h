// The SQLite state database. The only code that speaks SQL lives under src/state/.
//
// Threading: the event loop never touches SQLite while serving. Writes are queued to one
// writer thread that runs every job queued so far in a single transaction (one fsync per
// batch: thousands of offset commits cost a few fsyncs), each job in its own SAVEPOINT so one
// failing job does not undo the others. Completions are posted back to the loop thread
// through a uv_async_t. Services keep what they read in memory, loaded at startup.
#pragma once

#include <uv.h>

#include <SQLiteCpp/SQLiteCpp.h>

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
  void write(Job job, Done done);

  // Runs `job` on the writer thread and waits for it. Startup and CLI only, never on the loop.
  Status run_blocking(Job job);

  // Stops the writer after finishing every queued job, then closes the uv handle.
  void close();

  uint64_t batches_committed() const { return batches_; }

 private:
  StateStore(std::unique_ptr<SQLite::Database> db, uv_loop_t* loop);
  void writer_main();
  static void on_async(uv_async_t* h);

  struct Pending {
    Job job;
    Done done;
    std::promise<Status>* sync = nullptr;  // run_blocking: fulfilled on the writer after commit
  };
  struct Completed {
    Done done;
    Status status;
  };

  std::unique_ptr<SQLite::Database> db_;
  uv_loop_t* loop_;
  uv_async_t* async_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  std::deque<Completed> completed_;
  bool stopping_ = false;
  std::atomic<uint64_t> batches_{0};
  std::thread writer_;
};

}  // namespace kib::state
