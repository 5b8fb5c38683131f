// DescribeLogDirs: the bridge has one "log dir", the Iggy stream its topics live in, named
// iggy://<iggy address>/<stream>. Partition sizes come from Iggy's GetTopic (one per topic, and
// for a compacted partition one more of its generation topic, whose bytes are added: the cleaned
// head is part of the partition's log on disk, docs/compaction.md),
// the totals from GetStats (total and free disk space; -1 when the Iggy user may not read server
// stats). As on Kafka (KafkaApis handleDescribeLogDirsRequest): no topic list means every
// partition, a listed partition the bridge does not have is left out, offset_lag is 0 (the
// leader), and there are no future logs. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge/log/log_backend.h"
#include "bridge/log/partition_offsets.h"
#include "kafka/protocol/error_code.h"

namespace kib::bridge {

struct LogDirPartition {
  int32_t partition = 0;
  int64_t size_bytes = 0;
};
struct LogDirTopic {
  std::string name;
  std::vector<LogDirPartition> partitions;
};
struct LogDirDescription {
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
  std::string log_dir;
  std::vector<LogDirTopic> topics;
  int64_t total_bytes = -1;   // unknown
  int64_t usable_bytes = -1;  // unknown
};

// The topics the bridge knows, with their partition counts.
using TopicLister = std::function<std::vector<std::pair<std::string, int32_t>>()>;
// Requested topics and partitions; nullopt = all.
using LogDirQuery = std::optional<std::vector<std::pair<std::string, std::vector<int32_t>>>>;

std::string log_dir_name(const std::string& iggy_address, const std::string& stream);

class LogDirs {
 public:
  LogDirs(LogBackend& backend, OffsetsTable& offsets, std::string log_dir, TopicLister topics)
      : backend_(backend), offsets_(offsets), log_dir_(std::move(log_dir)), topics_(std::move(topics)) {}

  // `cb` may run inside this call. `with_totals`: ask Iggy for the disk totals (DescribeLogDirs v4+).
  void describe(LogDirQuery query, bool with_totals, std::function<void(LogDirDescription)> cb);

 private:
  struct Describe;
  void add_generation_size(std::shared_ptr<Describe> d, size_t topic_index, size_t partition_index,
                           const std::string& topic, int32_t partition,
                           std::shared_ptr<const compaction::CleanedHead> head, bool retry);

  LogBackend& backend_;
  OffsetsTable& offsets_;
  std::string log_dir_;
  TopicLister topics_;
};

}  // namespace kib::bridge
