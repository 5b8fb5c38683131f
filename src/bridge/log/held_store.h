// Where a holding partition's batches wait until they reach Iggy (docs/transactions.md, "Real
// offsets at produce time"): SQLite's held_batches, given to the partition log by the composition
// root, since bridge/log may not include state (docs/architecture.md). A transaction's batches
// are written by the transaction coordinator with its own state; the log writes plain ones and
// reads and deletes both. Callbacks run on the loop thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bridge/log/held_tail.h"
#include "common/bytes.h"
#include "common/ids.h"
#include "common/result.h"

namespace kib::bridge {

class HeldStore {
 public:
  virtual ~HeldStore() = default;
  // A plain batch taken into a holding partition's tail at `batch.base`, with its wire bytes;
  // `done` once durable (or with the error).
  virtual void insert_plain(const std::string& topic, PartitionId partition, const HeldBatch& batch,
                            std::shared_ptr<const Bytes> wire, std::function<void(Status)> done) = 0;
  // The wire bytes of the batch held at `base`.
  virtual void load(const std::string& topic, PartitionId partition, KafkaOffset base,
                    std::function<void(Result<std::shared_ptr<Bytes>>)> done) = 0;
  // The batch at `base` is in Iggy: its row goes. A failure is logged, and the row is recognised
  // as appended at the next startup (below Iggy's high watermark).
  virtual void erase(const std::string& topic, PartitionId partition, KafkaOffset base) = 0;
};

}  // namespace kib::bridge
