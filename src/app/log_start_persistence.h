// Binds the partition log's DeleteRecords floors to SQLite (state partition_log_start): loads
// the stored ones (blocking: startup only) and makes new ones durable through the state store's
// writer thread before DeleteRecords answers.
#pragma once

#include <string>

#include "common/result.h"

namespace kib::bridge {
class PartitionLog;
}
namespace kib::state {
class StateStore;
}

namespace kib::app {

Status attach_log_start_store(bridge::PartitionLog& log, state::StateStore& store);
// The cleaned heads of compacted partitions (compaction_state and the sparse index of each
// current generation), given to the log so reads below their cleaner points use them; the
// generations are in `compaction_stream` (docs/compaction.md).
Status restore_cleaned_heads(bridge::PartitionLog& log, state::StateStore& store, const std::string& compaction_stream);

}  // namespace kib::app
