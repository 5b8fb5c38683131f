// Pure encoders/decoders of the Iggy TCP binary protocol 0.11 (VSR framing): 256-byte request
// header + body; reply / eviction headers; the result section; every command body and reply
// payload the client uses. No sockets here. Reference: the server's own source (apache/iggy
// cc269ef70ef2, server 0.9.0-edge.5, core/binary_protocol) and the published iggy_binary_protocol
// 0.11.0 crate (server 0.9.0); what differs between them is decided in server_profile.h.
// All integers little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "iggy/server_profile.h"
#include "iggy/types.h"

namespace kib::iggy::wire {

// The one place the wire protocol version lives: 0.11.0 packed major<<20 | minor<<10 | patch.
inline constexpr uint32_t kProtocolVersion = (0u << 20) | (11u << 10) | 0u;
static_assert(kProtocolVersion == 11264);

inline constexpr size_t kHeaderSize = 256;
inline constexpr size_t kMaxFrameSize = 64u * 1024 * 1024;  // message_bus.max_message_size default
inline constexpr size_t kBatchHeaderSize = 256;
inline constexpr size_t kMessageHeaderSize = 48;
inline constexpr size_t kMaxNameLength = 255;
inline constexpr uint32_t kMaxPartitionsPerRequest = 1000;

// Header byte offsets (docs/iggy-protocol.md §1.1-1.4).
namespace off {
inline constexpr size_t kSize = 48;
inline constexpr size_t kCommand = 60;
// request
inline constexpr size_t kReqClient = 128;
inline constexpr size_t kReqChecksum = 144;
inline constexpr size_t kReqTimestamp = 160;
inline constexpr size_t kReqRequest = 168;
inline constexpr size_t kReqOperation = 176;
inline constexpr size_t kReqSession = 184;
inline constexpr size_t kReqUserId = 192;
inline constexpr size_t kReqCode = 196;
// reply
inline constexpr size_t kRepRequestChecksum = 128;
inline constexpr size_t kRepClient = 160;
inline constexpr size_t kRepRequest = 200;
inline constexpr size_t kRepOperation = 208;
inline constexpr size_t kRepStatus = 216;
// eviction
inline constexpr size_t kEvClient = 128;
inline constexpr size_t kEvServerVersion = 144;
inline constexpr size_t kEvServerVersionMin = 148;
inline constexpr size_t kEvReason = 255;
}  // namespace off

enum class Command : uint8_t { kRequest = 5, kReply = 8, kEviction = 13 };

enum class Operation : uint8_t {
  kReserved = 0,
  kRegister = 1,
  kNonReplicated = 2,
  kLogout = 3,
  kCreateTopicWithAssignments = 64,
  kCreatePartitionsWithAssignments = 65,
  kTruncatePartition = 68,
  kCreateStream = 128,
  kUpdateStream = 129,
  kDeleteStream = 130,
  kPurgeStream = 131,
  kCreateTopic = 132,
  kUpdateTopic = 133,
  kDeleteTopic = 134,
  kPurgeTopic = 135,
  kCreatePartitions = 136,
  kDeletePartitions = 137,
  kDeleteSegments = 138,
  kCreateConsumerGroup = 139,
  kDeleteConsumerGroup = 140,
  kCreateUser = 141,
  kUpdateUser = 142,
  kDeleteUser = 143,
  kChangePassword = 144,
  kUpdatePermissions = 145,
  kCreatePersonalAccessToken = 146,
  kDeletePersonalAccessToken = 147,
  kJoinConsumerGroup = 148,
  kLeaveConsumerGroup = 149,
  kSendMessages = 160,
  kStoreConsumerOffset = 161,
  kDeleteConsumerOffset = 162,
};

// Command codes (docs/iggy-protocol.md §4.0).
namespace cmd {
inline constexpr uint32_t kPing = 1;
inline constexpr uint32_t kGetStats = 10;
inline constexpr uint32_t kGetMe = 20;
inline constexpr uint32_t kGetClient = 21;
inline constexpr uint32_t kGetClients = 22;
inline constexpr uint32_t kGetUser = 31;
inline constexpr uint32_t kGetUsers = 32;
inline constexpr uint32_t kCreateUser = 33;
inline constexpr uint32_t kDeleteUser = 34;
inline constexpr uint32_t kUpdateUser = 35;
inline constexpr uint32_t kUpdatePermissions = 36;
inline constexpr uint32_t kChangePassword = 37;
inline constexpr uint32_t kLogoutUser = 39;
inline constexpr uint32_t kLoginRegister = 40;
inline constexpr uint32_t kGetPersonalAccessTokens = 41;
inline constexpr uint32_t kCreatePersonalAccessToken = 42;
inline constexpr uint32_t kDeletePersonalAccessToken = 43;
inline constexpr uint32_t kLoginRegisterWithPat = 45;
inline constexpr uint32_t kPollMessages = 100;
inline constexpr uint32_t kSendMessages = 101;
inline constexpr uint32_t kGetConsumerOffset = 120;
inline constexpr uint32_t kStoreConsumerOffset = 121;
inline constexpr uint32_t kDeleteConsumerOffset = 122;
inline constexpr uint32_t kGetStream = 200;
inline constexpr uint32_t kGetStreams = 201;
inline constexpr uint32_t kCreateStream = 202;
inline constexpr uint32_t kDeleteStream = 203;
inline constexpr uint32_t kUpdateStream = 204;
inline constexpr uint32_t kPurgeStream = 205;
inline constexpr uint32_t kGetTopic = 300;
inline constexpr uint32_t kGetTopics = 301;
inline constexpr uint32_t kCreateTopic = 302;
inline constexpr uint32_t kDeleteTopic = 303;
inline constexpr uint32_t kUpdateTopic = 304;
inline constexpr uint32_t kPurgeTopic = 305;
inline constexpr uint32_t kCreatePartitions = 402;
inline constexpr uint32_t kDeletePartitions = 403;
inline constexpr uint32_t kDeleteSegments = 503;
inline constexpr uint32_t kGetConsumerGroup = 600;
inline constexpr uint32_t kGetConsumerGroups = 601;
inline constexpr uint32_t kCreateConsumerGroup = 602;
inline constexpr uint32_t kDeleteConsumerGroup = 603;
inline constexpr uint32_t kJoinConsumerGroup = 604;
inline constexpr uint32_t kLeaveConsumerGroup = 605;
inline constexpr uint32_t kSyncConsumerGroup = 606;
}  // namespace cmd

const char* command_name(uint32_t code);

// Operation byte for a command code; NonReplicated for reads and unknown codes.
Operation operation_for_code(uint32_t code);
inline bool is_partition_op(Operation op) { return static_cast<uint8_t>(op) >= 160; }
// Ops the server deduplicates on (client, request): they consume a request number and carry the
// request checksum (Register, Logout, metadata writes incl. DeleteSegments).
bool is_deduplicated_op(Operation op);
// Does a reply with this operation byte start with a result section (docs/iggy-protocol.md §1.6 step 4)?
bool reply_is_result_framed(uint8_t reply_op, size_t body_size);

uint64_t xxh3_64(ByteSpan data);

// ---- frames -----------------------------------------------------------------------------------

// One request: 256-byte header then body, in one buffer. The connection stamps client, session
// and request number right before writing (stamp_request).
struct RequestFrame {
  Bytes bytes;
  Operation operation = Operation::kNonReplicated;
  uint32_t code = 0;
  size_t body_size() const { return bytes.size() - kHeaderSize; }
};

// Builds a frame in place: reserves the header, the caller appends the body, finish() fills the
// header (size, command, operation, code for NonReplicated, request checksum for deduplicated
// ops).
class RequestBuilder {
 public:
  explicit RequestBuilder(uint32_t code, size_t body_reserve = 0);
  ByteWriter& body() { return w_; }
  RequestFrame finish();

 private:
  uint32_t code_;
  ByteWriter w_;
};

void stamp_request(Bytes& frame, const U128& client, uint64_t session, uint64_t request);

// Decoded reply or eviction header.
struct FrameHeader {
  Command command = Command::kReply;
  uint32_t size = 0;
  // reply
  uint64_t request = 0;
  uint8_t operation = 0;
  uint32_t status = 0;
  // eviction
  uint8_t eviction_reason = 0;
  uint32_t server_protocol_version = 0;
  uint32_t server_protocol_version_min = 0;
  size_t body_size() const { return size - kHeaderSize; }
};

// Validates a server frame header: size within [256, max_frame], command Reply or Eviction.
Result<FrameHeader> decode_frame_header(ByteSpan header, size_t max_frame = kMaxFrameSize);

// The error an eviction stands for (Iggy code per docs/iggy-protocol.md §1.4).
Error eviction_error(const FrameHeader& h);

// Typed payload of a reply: a non-zero status -> Iggy error; strips the result section where the
// reply operation has one (count 0 -> payload follows; count >= 1 -> the first entry's code).
Result<ByteSpan> reply_payload(const FrameHeader& h, ByteSpan body);

// ---- request encoders (Result carries ErrorDomain::kInvalid for arguments out of range) -------

struct ClientVersion {
  std::string sdk_name = "kafka-iggy-bridge";
  std::string sdk_version = "0.1";
};

RequestFrame encode_ping();
Result<RequestFrame> encode_login_password(std::string_view username, std::string_view password,
                                           const ClientVersion& v);
Result<RequestFrame> encode_login_token(std::string_view token, const ClientVersion& v);
RequestFrame encode_logout();
RequestFrame encode_get_stats();
RequestFrame encode_get_me();

Result<RequestFrame> encode_get_stream(const Identifier& stream);
RequestFrame encode_get_streams();
Result<RequestFrame> encode_create_stream(std::string_view name);
Result<RequestFrame> encode_update_stream(const Identifier& stream, std::string_view new_name);
Result<RequestFrame> encode_delete_stream(const Identifier& stream);
Result<RequestFrame> encode_purge_stream(const Identifier& stream);

Result<RequestFrame> encode_get_topic(const Identifier& stream, const Identifier& topic);
Result<RequestFrame> encode_get_topics(const Identifier& stream);
// Durability is `enforce_fsync` (bool) for an edge server, `durability` = "persisted" /
// "replicated" for the release (which refuses `enforce_fsync` with 4041).
Result<RequestFrame> encode_create_topic(const Identifier& stream, const TopicConfig& config,
                                         const ServerProfile& server);
Result<RequestFrame> encode_update_topic(const Identifier& stream, const Identifier& topic,
                                         const TopicUpdate& update);
Result<RequestFrame> encode_delete_topic(const Identifier& stream, const Identifier& topic);
Result<RequestFrame> encode_purge_topic(const Identifier& stream, const Identifier& topic);

Result<RequestFrame> encode_create_partitions(const Identifier& stream, const Identifier& topic,
                                              uint32_t count);
Result<RequestFrame> encode_delete_partitions(const Identifier& stream, const Identifier& topic,
                                              uint32_t count);
Result<RequestFrame> encode_delete_segments(const Identifier& stream, const Identifier& topic,
                                            uint32_t partition_id, uint32_t segments_count);

// SendMessages: metadata section + one batch built straight from the callers' spans into the
// frame. Messages with origin_timestamp_us == 0 get `now_us`.
Result<RequestFrame> encode_send_messages(const Identifier& stream, const Identifier& topic,
                                          const Partitioning& partitioning,
                                          std::span<const OutgoingMessage> messages,
                                          uint64_t now_us);
// Exact SendMessages frame size for these messages (header + metadata + batch).
size_t send_messages_frame_size(const Identifier& stream, const Identifier& topic,
                                const Partitioning& partitioning,
                                std::span<const OutgoingMessage> messages);

Result<RequestFrame> encode_poll_messages(const PollRequest& request);

Result<RequestFrame> encode_get_consumer_offset(const Consumer& consumer, const Identifier& stream,
                                                const Identifier& topic,
                                                std::optional<uint32_t> partition_id);
Result<RequestFrame> encode_store_consumer_offset(const Consumer& consumer, const Identifier& stream,
                                                  const Identifier& topic,
                                                  std::optional<uint32_t> partition_id,
                                                  uint64_t offset);
Result<RequestFrame> encode_delete_consumer_offset(const Consumer& consumer, const Identifier& stream,
                                                   const Identifier& topic,
                                                   std::optional<uint32_t> partition_id);

Result<RequestFrame> encode_get_consumer_group(const Identifier& stream, const Identifier& topic,
                                               const Identifier& group);
Result<RequestFrame> encode_get_consumer_groups(const Identifier& stream, const Identifier& topic);
Result<RequestFrame> encode_create_consumer_group(const Identifier& stream, const Identifier& topic,
                                                  std::string_view name);
Result<RequestFrame> encode_delete_consumer_group(const Identifier& stream, const Identifier& topic,
                                                  const Identifier& group);
Result<RequestFrame> encode_join_consumer_group(const Identifier& stream, const Identifier& topic,
                                                const Identifier& group);
Result<RequestFrame> encode_leave_consumer_group(const Identifier& stream, const Identifier& topic,
                                                 const Identifier& group);
Result<RequestFrame> encode_sync_consumer_group(const Identifier& stream, const Identifier& topic,
                                                const Identifier& group);

Result<RequestFrame> encode_get_user(const Identifier& user);
RequestFrame encode_get_users();
Result<RequestFrame> encode_create_user(std::string_view username, std::string_view password,
                                        UserStatus status, const std::optional<Permissions>& perms);
Result<RequestFrame> encode_update_user(const Identifier& user, std::optional<std::string_view> username,
                                        std::optional<UserStatus> status);
Result<RequestFrame> encode_update_permissions(const Identifier& user,
                                               const std::optional<Permissions>& perms);
Result<RequestFrame> encode_change_password(const Identifier& user, std::string_view current,
                                            std::string_view new_password);
Result<RequestFrame> encode_delete_user(const Identifier& user);

Result<RequestFrame> encode_create_personal_access_token(std::string_view name, uint64_t expiry_us);
RequestFrame encode_get_personal_access_tokens();
Result<RequestFrame> encode_delete_personal_access_token(std::string_view name);

// Building blocks, exposed for tests.
void write_identifier(ByteWriter& w, const Identifier& id);  // throws std::invalid_argument
void write_permissions(ByteWriter& w, const Permissions& p);
Result<Permissions> decode_permissions(ByteSpan bytes);

// ---- reply decoders (ErrorDomain::kProtocol on malformed payloads) -----------------------------

Result<LoginInfo> decode_login(ByteSpan payload);
Result<StreamInfo> decode_stream(ByteSpan payload);                     // CreateStream
Result<std::optional<StreamInfo>> decode_stream_details(ByteSpan payload);  // GetStream
Result<std::vector<StreamInfo>> decode_streams(ByteSpan payload);
Result<std::optional<TopicInfo>> decode_topic_details(ByteSpan payload);  // GetTopic/CreateTopic
Result<std::vector<TopicInfo>> decode_topics(ByteSpan payload);
// An empty body is a success without offsets from an edge server, and kTransport kUnconfirmed from
// any other (the release server's answer to a request it classified as a duplicate).
Result<SendConfirmation> decode_send_confirmation(ByteSpan payload, uint32_t message_count, ServerGeneration server);
// `buffer` owns `payload`; the returned views point into it.
Result<PolledMessages> decode_polled_messages(std::shared_ptr<const void> buffer, ByteSpan payload);
Result<std::optional<ConsumerOffsetInfo>> decode_consumer_offset(ByteSpan payload);
Result<std::optional<ConsumerGroupInfo>> decode_consumer_group_details(ByteSpan payload);
Result<std::vector<ConsumerGroupInfo>> decode_consumer_groups(ByteSpan payload);
Result<std::optional<ConsumerGroupAssignment>> decode_consumer_group_assignment(ByteSpan payload);
Result<std::optional<UserInfo>> decode_user_details(ByteSpan payload);
Result<std::vector<UserInfo>> decode_users(ByteSpan payload);
Result<std::string> decode_raw_personal_access_token(ByteSpan payload);
Result<std::vector<PersonalAccessTokenInfo>> decode_personal_access_tokens(ByteSpan payload);
Result<Stats> decode_stats(ByteSpan payload);
Result<ClientInfo> decode_client_info(ByteSpan payload);

}  // namespace kib::iggy::wire
