// `offsets export`: writes a Kafka group's committed offsets into Iggy as consumer offsets, so
// native Iggy consumers continue where the Kafka consumers stopped (docs/mapping.md). Kafka
// commits the next offset to read, Iggy stores the last one consumed: a commit c > 0 becomes
// stored offset c - 1, and c = 0 deletes the Iggy offset (Iggy has no "nothing consumed yet").
//
// Targets: an Iggy consumer group (created when missing; the export joins it as its only
// member, because Iggy lets a member store offsets only for partitions assigned to it, and
// leaves afterwards) or a plain named Iggy consumer. Runs its own libuv loop with one Iggy
// connection from [iggy]; never inside the daemon.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/config.h"

namespace kib::admin {

struct IggyOffsetTarget {
  enum class Kind { kConsumerGroup, kConsumer };
  Kind kind = Kind::kConsumerGroup;
  std::string name;
};

struct ExportItem {
  std::string topic;
  int32_t partition = 0;
  int64_t committed = 0;  // Kafka committed offset
};

struct ExportOutcome {
  ExportItem item;
  std::optional<int64_t> stored;  // the Iggy offset written; nullopt = deleted / none
  std::string action;             // "store 41", "delete", "deleted", "stored 41", ...
  std::string error;              // empty = fine
};

// Plans (execute = false: reads Iggy only, checks every offset) or performs the export. A
// failure to reach or log in to Iggy is an Error; per-partition problems are in the outcomes.
Result<std::vector<ExportOutcome>> export_offsets_to_iggy(const config::Config& cfg, const IggyOffsetTarget& target,
                                                          const std::vector<ExportItem>& items, bool execute);

}  // namespace kib::admin
