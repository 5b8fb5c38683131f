// What the admin subcommands ask a running bridge, in domain terms, over the Kafka protocol
// (KafkaAdminClient): topics and their offset ranges, groups, committed offsets, and commits
// made as kafka-consumer-groups makes them (generation -1, no member id: accepted for groups
// without active members only).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin/kafka_admin_client.h"
#include "common/result.h"
#include "kafka/protocol/error_code.h"

namespace kib::admin {

using TopicPartition = std::pair<std::string, int32_t>;

struct TopicSummary {
  std::string name;
  std::string topic_id;  // Kafka's base64 form
  int32_t partitions = 0;
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
};

// A partition's offsets: log start and log end (the high watermark); -1 when unknown.
struct OffsetRange {
  int64_t start = -1;
  int64_t end = -1;
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
};

struct MemberSummary {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  std::vector<TopicPartition> assignment;  // decoded from the consumer protocol; empty otherwise
};

struct GroupSummary {
  std::string group_id;
  std::string state;          // Kafka's names; "Dead" for a group that does not exist
  std::string protocol_type;  // "consumer" for consumer groups
  std::string protocol;       // the assignor, Stable groups only
  std::vector<MemberSummary> members;
  kafka::ErrorCode error = kafka::ErrorCode::kNone;
};

struct CommittedOffset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = -1;
  std::string metadata;
};

struct OffsetToCommit {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> metadata;
};

class BridgeAdmin {
 public:
  explicit BridgeAdmin(KafkaAdminClient client) : client_(std::move(client)) {}
  // The error says the bridge is not answering at `bootstrap`, and why.
  static Result<BridgeAdmin> connect(const config::HostPort& bootstrap);

  // Every topic (names empty) or the named ones, never auto-created, ordered by name.
  Result<std::vector<TopicSummary>> topics(const std::vector<std::string>& names = {});
  // Earliest and latest offsets of each partition.
  Result<std::map<TopicPartition, OffsetRange>> offset_ranges(const std::vector<TopicPartition>& partitions);
  // Group ids with their state, ordered by id.
  Result<std::vector<std::pair<std::string, std::string>>> list_groups();
  Result<std::vector<GroupSummary>> describe_groups(const std::vector<std::string>& group_ids);
  // Every committed offset of the group, ordered by topic and partition.
  Result<std::vector<CommittedOffset>> committed_offsets(const std::string& group_id);
  // One error per entry, in order.
  Result<std::vector<kafka::ErrorCode>> commit_offsets(const std::string& group_id,
                                                       const std::vector<OffsetToCommit>& offsets);

  const std::string& where() const { return client_.where(); }

 private:
  KafkaAdminClient client_;
};

// Kafka error as "NAME (code)" for messages.
std::string describe_error(kafka::ErrorCode e);

}  // namespace kib::admin
