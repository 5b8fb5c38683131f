// The transaction coordinator kept in SQLite (transaction_coordinator.h has the contract,
// docs/transactions.md the design).
#pragma once

#include <uv.h>

#include <memory>

#include "bridge/transactions/transaction_coordinator.h"
#include "config/config.h"

namespace kib::state {
class StateStore;
}

namespace kib::bridge {

class ProducerRegistry;
class PartitionLog;
class CommittedOffsets;

struct TransactionServices {
  state::StateStore& store;
  uv_loop_t* loop;
  ProducerRegistry& producers;
  PartitionLog& log;
  CommittedOffsets& offsets;
  const config::TransactionsConfig& config;
  // Wall clock, ms since the epoch; the system clock if empty.
  std::function<int64_t()> now_ms = {};
};

class PersistentTransactionCoordinator : public TransactionCoordinator {
 public:
  // Loads the transactional ids and their state (blocking: startup only). A commit decided
  // before a crash holds its partitions' last stable offsets from here on, and it and every
  // transaction open at the crash wait for recover() (their requests meet
  // CONCURRENT_TRANSACTIONS, which clients retry).
  virtual Status load() = 0;
  // Once Iggy is reachable: completes what a crash interrupted. Commits decided before it are
  // appended (without duplicates), transactions open at the crash are aborted. `done` runs once
  // every one is.
  virtual void recover(std::function<void()> done) = 0;
  // Stops the timers; later requests get COORDINATOR_NOT_AVAILABLE (shutdown).
  virtual void stop() = 0;
};

std::unique_ptr<PersistentTransactionCoordinator> make_transaction_coordinator(TransactionServices services);

}  // namespace kib::bridge
