// What the parts of the transaction coordinator share (transaction_coordinator_impl.h routes
// the requests to them): its services, every transactional id in memory, the loop's task queue,
// the liveness every completion checks, and the two ways it touches the world, the clock and a
// write to SQLite. Loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>

#include "bridge/transactions/transaction_state.h"
#include "common/liveness.h"
#include "common/result.h"
#include "config/config.h"
#include "state/state_store.h"
#include "uvx/tasks.h"

namespace kib::bridge {

class ProducerRegistry;
class PartitionLog;
class CommittedOffsets;
class GroupCoordinator;

struct TransactionServices {
  state::StateStore& store;
  uv_loop_t* loop;
  ProducerRegistry& producers;
  PartitionLog& log;
  CommittedOffsets& offsets;
  const GroupCoordinator& groups;  // TxnOffsetCommit's fencing asks the group (KIP-447)
  const config::TransactionsConfig& config;
  // Wall clock, ms since the epoch; the system clock if empty.
  std::function<int64_t()> now_ms = {};
};

struct TxnContext {
  explicit TxnContext(TransactionServices services) : s(std::move(services)), tasks(s.loop) {}

  int64_t now() const {
    if (s.now_ms) return s.now_ms();
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  // `job` on the state store's thread; `done` on the loop, unless the coordinator is gone by then.
  void write(std::function<void(SQLite::Database&)> job, std::function<void(Status)> done) {
    s.store.write(std::move(job), [alive = alive.token(), done = std::move(done)](Status st) {
      if (alive) done(std::move(st));
    });
  }
  // Answers on a later loop iteration: callbacks never run inside the call that was given them.
  template <typename T>
  void later(std::function<void(T)> done, T value) {
    tasks.post([done = std::move(done), value = std::move(value)]() mutable { done(std::move(value)); });
  }

  TransactionServices s;
  TxnTable txns;
  HeldTxn next_held_txn = 1;  // the next transaction's number in the held tails (recovery: above every stored one)
  uv::Tasks tasks;
  bool stopped = false;  // stop(): requests get COORDINATOR_NOT_AVAILABLE, commit retries end
  Liveness alive;        // ended first when the coordinator goes
};

}  // namespace kib::bridge
