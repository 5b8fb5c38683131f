// Binds the partition log's DeleteRecords floors to SQLite (state partition_log_start): loads
// the stored ones (blocking: startup only) and makes new ones durable through the state store's
// writer thread before DeleteRecords answers.
#pragma once

#include "common/result.h"

namespace kib::bridge {
class PartitionLog;
}
namespace kib::state {
class StateStore;
}

namespace kib::app {

Status attach_log_start_store(bridge::PartitionLog& log, state::StateStore& store);

}  // namespace kib::app
