// Domain types of the Iggy client: what callers pass in and get back. Wire layouts live in
// protocol.{h,cc}. Units: timestamps are microseconds since the Unix epoch (`_us`), durations are
// microseconds, sizes are bytes. Ids are 0-based and reused by Iggy after deletes: address
// streams and topics by name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"

namespace kib::iggy {

// Iggy's u128 (client ids, message ids), little-endian halves.
struct U128 {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool is_zero() const { return lo == 0 && hi == 0; }
  friend bool operator==(const U128&, const U128&) = default;
};
using MessageId = U128;

// Stream / topic / user / group reference: numeric id or name (docs/iggy-protocol.md §3 Identifier).
class Identifier {
 public:
  static Identifier numeric(uint32_t id) { return Identifier(id); }
  static Identifier named(std::string name) { return Identifier(std::move(name)); }

  bool is_numeric() const { return numeric_; }
  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }
  std::string to_string() const { return numeric_ ? std::to_string(id_) : name_; }

 private:
  explicit Identifier(uint32_t id) : numeric_(true), id_(id) {}
  explicit Identifier(std::string name) : numeric_(false), name_(std::move(name)) {}
  bool numeric_ = true;
  uint32_t id_ = 0;
  std::string name_;
};

enum class ConsumerKind : uint8_t { kConsumer = 1, kConsumerGroup = 2 };

struct Consumer {
  ConsumerKind kind = ConsumerKind::kConsumer;
  Identifier id = Identifier::numeric(0);
  static Consumer consumer(Identifier id) { return {ConsumerKind::kConsumer, std::move(id)}; }
  static Consumer group(Identifier id) { return {ConsumerKind::kConsumerGroup, std::move(id)}; }
};

enum class PartitioningKind : uint8_t { kBalanced = 1, kPartitionId = 2, kMessagesKey = 3 };

struct Partitioning {
  PartitioningKind kind = PartitioningKind::kBalanced;
  uint32_t partition_id = 0;  // kPartitionId
  Bytes key;                  // kMessagesKey, 1..255 bytes (not stored by Iggy)
  static Partitioning balanced() { return {}; }
  static Partitioning partition(uint32_t id) { return {PartitioningKind::kPartitionId, id, {}}; }
  static Partitioning messages_key(ByteSpan key) {
    return {PartitioningKind::kMessagesKey, 0, Bytes(key.begin(), key.end())};
  }
};

enum class PollingKind : uint8_t { kOffset = 1, kTimestamp = 2, kFirst = 3, kLast = 4, kNext = 5 };

struct PollingStrategy {
  PollingKind kind = PollingKind::kFirst;
  uint64_t value = 0;  // offset (kOffset) or µs timestamp (kTimestamp)
  static PollingStrategy offset(uint64_t o) { return {PollingKind::kOffset, o}; }
  static PollingStrategy timestamp(uint64_t us) { return {PollingKind::kTimestamp, us}; }
  static PollingStrategy first() { return {PollingKind::kFirst, 0}; }
  static PollingStrategy last() { return {PollingKind::kLast, 0}; }
  static PollingStrategy next() { return {PollingKind::kNext, 0}; }
};

enum class CompressionAlgorithm : uint8_t { kNone = 1, kGzip = 2 };

// u64::MAX on the wire for message_expiry / max_topic_size.
inline constexpr uint64_t kNeverExpire = UINT64_MAX;
inline constexpr uint64_t kUnlimitedSize = UINT64_MAX;

// ---- credentials ------------------------------------------------------------------------------

struct Credentials {
  enum class Kind : uint8_t { kPassword, kPersonalAccessToken };
  Kind kind = Kind::kPassword;
  std::string username;
  std::string password;
  std::string token;

  static Credentials password_login(std::string user, std::string pass) {
    return {Kind::kPassword, std::move(user), std::move(pass), {}};
  }
  static Credentials personal_access_token(std::string tok) {
    return {Kind::kPersonalAccessToken, {}, {}, std::move(tok)};
  }
  // Key for per-identity pools. Contains the secret: never log it.
  std::string identity_key() const {
    return kind == Kind::kPassword ? "u\x1f" + username + "\x1f" + password : "t\x1f" + token;
  }
  // Safe to log.
  std::string display_name() const { return kind == Kind::kPassword ? username : "<token>"; }
};

// ---- replies ----------------------------------------------------------------------------------

struct LoginInfo {
  uint32_t user_id = 0;
  uint64_t session = 0;
  uint32_t server_protocol_version = 0;
  std::string server_version;
};

struct PartitionInfo {
  uint32_t id = 0;
  uint64_t created_at_us = 0;
  uint32_t segments_count = 0;
  uint64_t current_offset = 0;  // offset of the last message; 0 also when empty (see messages_count)
  uint64_t size_bytes = 0;
  uint64_t messages_count = 0;
};

struct TopicInfo {
  uint32_t id = 0;
  uint64_t created_at_us = 0;
  uint32_t partitions_count = 0;
  uint64_t message_expiry_us = 0;  // kNeverExpire = never
  CompressionAlgorithm compression = CompressionAlgorithm::kNone;
  uint64_t max_topic_size = 0;     // kUnlimitedSize = unlimited
  uint64_t size_bytes = 0;
  uint64_t messages_count = 0;
  std::string name;
  Bytes explicit_options;  // TLV as sent by the creator
  Bytes derived_options;   // TLV of defaults filled in at creation
  std::vector<PartitionInfo> partitions;  // filled by get_topic / create_topic only
};

struct StreamInfo {
  uint32_t id = 0;
  uint64_t created_at_us = 0;
  uint32_t topics_count = 0;
  uint64_t size_bytes = 0;
  uint64_t messages_count = 0;
  std::string name;
  Bytes options;                 // TLV
  std::vector<TopicInfo> topics;  // filled by get_stream only (headers, no partitions)
};

// CreateTopic. Unset options take the server default. Only create-time options exist for
// segment_size, enforce_fsync, messages_required_to_save, size_of_messages_required_to_save and
// preallocate_segments (docs/iggy-protocol.md §4.4).
struct TopicConfig {
  std::string name;
  uint32_t partitions_count = 1;
  std::optional<CompressionAlgorithm> compression;
  std::optional<uint64_t> message_expiry_us;  // kNeverExpire = never
  std::optional<uint64_t> max_topic_size;     // kUnlimitedSize = unlimited
  std::optional<uint64_t> segment_size;       // 1 MiB..1 GiB, multiple of 512
  std::optional<bool> enforce_fsync;
  std::optional<uint32_t> messages_required_to_save;  // 1..16 Mi
  std::optional<uint64_t> size_of_messages_required_to_save;
  std::optional<bool> preallocate_segments;
  // Iggy 0.9 has no per-topic replication factor (replication is cluster-wide): only unset or 1
  // is accepted; anything else fails with ErrorDomain::kInvalid before reaching the server.
  std::optional<uint8_t> replication_factor;
};

// UpdateTopic: the new name is mandatory on the wire; unset options keep their value.
struct TopicUpdate {
  std::string name;
  std::optional<CompressionAlgorithm> compression;
  std::optional<uint64_t> message_expiry_us;
  std::optional<uint64_t> max_topic_size;
};

// One message to send. Spans are read during the send call only (copied once into the frame).
struct OutgoingMessage {
  MessageId id;                  // 0 allowed (Iggy does not replace it)
  uint64_t origin_timestamp_us = 0;  // 0 = now
  ByteSpan payload;
  ByteSpan user_headers;         // raw header TLV (see user_headers.h), may be empty
};

// SendMessages reply. `reported` is false when the server committed but reported no offset.
struct SendConfirmation {
  bool reported = false;
  uint32_t stream_id = 0;
  uint32_t topic_id = 0;
  uint32_t partition_id = 0;
  uint64_t base_offset = 0;    // offset of the first message of the batch
  uint32_t message_count = 0;  // messages in the batch that was sent
};

// A polled message: views into PolledMessages::buffer, valid while that buffer lives.
struct MessageView {
  uint64_t offset = 0;
  uint64_t timestamp_us = 0;         // server append time (batch base timestamp)
  uint64_t origin_timestamp_us = 0;  // producer time
  MessageId id;
  uint64_t checksum = 0;
  ByteSpan payload;
  ByteSpan user_headers;  // raw TLV
};

struct PolledMessages {
  static constexpr uint32_t kFencedPartition = 0xFFFFFFFFu;
  uint32_t partition_id = 0;
  uint64_t current_offset = 0;  // last committed offset of the partition (0 when empty)
  std::shared_ptr<const void> buffer;  // owns the bytes all views point into
  size_t payload_bytes = 0;            // size of the reply payload the messages came in
  std::vector<MessageView> messages;
  // Consumer-group poll on a partition no longer assigned to this member: re-sync and retry.
  bool fenced() const { return partition_id == kFencedPartition; }
};

struct PollRequest {
  Consumer consumer = Consumer::consumer(Identifier::numeric(0));
  Identifier stream = Identifier::numeric(0);
  Identifier topic = Identifier::numeric(0);
  std::optional<uint32_t> partition_id;  // plain consumer: absent = partition 0
  PollingStrategy strategy = PollingStrategy::first();
  uint32_t count = 100;
  bool auto_commit = false;
};

struct ConsumerOffsetInfo {
  uint32_t partition_id = 0;
  uint64_t current_offset = 0;
  uint64_t stored_offset = 0;  // last consumed offset
};

struct ConsumerGroupMember {
  uint32_t id = 0;
  std::vector<uint32_t> partitions;
};

struct ConsumerGroupInfo {
  uint32_t id = 0;
  uint32_t partitions_count = 0;
  uint32_t members_count = 0;
  std::string name;
  std::vector<ConsumerGroupMember> members;  // details (get/create) only
};

struct ConsumerGroupAssignment {
  uint64_t generation = 0;
  std::vector<uint32_t> partitions;
};

// ---- users ------------------------------------------------------------------------------------

enum class UserStatus : uint8_t { kActive = 1, kInactive = 2 };

struct GlobalPermissions {
  bool manage_servers = false;
  bool read_servers = false;
  bool manage_users = false;
  bool read_users = false;
  bool manage_streams = false;
  bool read_streams = false;
  bool manage_topics = false;
  bool read_topics = false;
  bool poll_messages = false;
  bool send_messages = false;
  friend bool operator==(const GlobalPermissions&, const GlobalPermissions&) = default;
};

struct TopicPermissions {
  bool manage_topic = false;
  bool read_topic = false;
  bool poll_messages = false;
  bool send_messages = false;
  friend bool operator==(const TopicPermissions&, const TopicPermissions&) = default;
};

struct StreamPermissions {
  bool manage_stream = false;
  bool read_stream = false;
  bool manage_topics = false;
  bool read_topics = false;
  bool poll_messages = false;
  bool send_messages = false;
  std::map<uint32_t, TopicPermissions> topics;  // by numeric topic id
  friend bool operator==(const StreamPermissions&, const StreamPermissions&) = default;
};

struct Permissions {
  GlobalPermissions global;
  std::map<uint32_t, StreamPermissions> streams;  // by numeric stream id
  friend bool operator==(const Permissions&, const Permissions&) = default;
};

struct UserInfo {
  uint32_t id = 0;
  uint64_t created_at_us = 0;
  UserStatus status = UserStatus::kActive;
  std::string username;
  Bytes options;  // TLV
  std::optional<Permissions> permissions;  // details (get_user / create_user) only
};

struct PersonalAccessTokenInfo {
  std::string name;
  uint64_t expiry_at_us = 0;  // 0 = never
};

// ---- system -----------------------------------------------------------------------------------

struct CacheMetric {
  uint32_t stream_id = 0;
  uint32_t topic_id = 0;
  uint32_t partition_id = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  float hit_ratio = 0;
};

struct Stats {
  uint32_t process_id = 0;
  float cpu_usage = 0;
  float total_cpu_usage = 0;
  uint64_t memory_usage = 0;
  uint64_t total_memory = 0;
  uint64_t available_memory = 0;
  uint64_t run_time = 0;
  uint64_t start_time = 0;
  uint64_t read_bytes = 0;
  uint64_t written_bytes = 0;
  uint64_t messages_size_bytes = 0;
  uint32_t streams_count = 0;
  uint32_t topics_count = 0;
  uint32_t partitions_count = 0;
  uint32_t segments_count = 0;
  uint64_t messages_count = 0;
  uint32_t clients_count = 0;
  uint32_t consumer_groups_count = 0;
  std::string hostname;
  std::string os_name;
  std::string os_version;
  std::string kernel_version;
  std::string server_version;
  uint32_t server_semver = 0;  // 0 = absent
  std::vector<CacheMetric> cache_metrics;
  uint32_t threads_count = 0;
  uint64_t free_disk_space = 0;
  uint64_t total_disk_space = 0;
};

struct ClientGroupMembership {
  uint32_t stream_id = 0;
  uint32_t topic_id = 0;
  uint32_t group_id = 0;
};

struct ClientInfo {
  uint32_t client_id = 0;
  uint32_t user_id = 0;
  uint8_t transport = 0;  // 1 TCP, 2 QUIC, 4 WebSocket
  std::string address;
  std::vector<ClientGroupMembership> consumer_groups;
};

}  // namespace kib::iggy
