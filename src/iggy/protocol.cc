#include "iggy/protocol.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>
#if defined(__x86_64__) || defined(__i386__)
// XXH3 checksums every message sent to Iggy. libxxhash's XXH3_64bits is its SSE2 build; the
// *_dispatch entry points pick AVX2 or AVX-512 at run time where the CPU has them (2.8x faster
// on 1 KiB messages here), and this header maps XXH3_64bits and XXH3_64bits_update to them.
#include <xxh_x86dispatch.h>
#endif

#include "iggy/errors.h"
#include "iggy/user_headers.h"

namespace kib::iggy::wire {
namespace {

// Thrown by body writers for caller arguments out of range; turned into ErrorDomain::kInvalid.
using ArgumentError = std::invalid_argument;

void write_name(ByteWriter& w, std::string_view s, const char* what) {
  if (s.empty() || s.size() > kMaxNameLength)
    throw ArgumentError(fmt::format("{} must be 1..{} bytes, got {}", what, kMaxNameLength, s.size()));
  w.le<uint8_t>(static_cast<uint8_t>(s.size()));
  w.string(s);
}

void write_optional_partition(ByteWriter& w, std::optional<uint32_t> p) {
  w.le<uint8_t>(p ? 1 : 0);
  w.le<uint32_t>(p.value_or(0));
}

void write_consumer(ByteWriter& w, const Consumer& c) {
  w.le<uint8_t>(static_cast<uint8_t>(c.kind));
  write_identifier(w, c.id);
}

size_t identifier_size(const Identifier& id) { return 2 + (id.is_numeric() ? 4 : id.name().size()); }

size_t partitioning_size(const Partitioning& p) {
  switch (p.kind) {
    case PartitioningKind::kBalanced: return 2;
    case PartitioningKind::kPartitionId: return 6;
    case PartitioningKind::kMessagesKey: return 2 + p.key.size();
  }
  return 2;
}

void write_partitioning(ByteWriter& w, const Partitioning& p) {
  w.le<uint8_t>(static_cast<uint8_t>(p.kind));
  switch (p.kind) {
    case PartitioningKind::kBalanced: w.le<uint8_t>(0); break;
    case PartitioningKind::kPartitionId:
      w.le<uint8_t>(4);
      w.le<uint32_t>(p.partition_id);
      break;
    case PartitioningKind::kMessagesKey:
      if (p.key.empty() || p.key.size() > 255)
        throw ArgumentError(fmt::format("messages key must be 1..255 bytes, got {}", p.key.size()));
      w.le<uint8_t>(static_cast<uint8_t>(p.key.size()));
      w.bytes(p.key);
      break;
    default: throw ArgumentError("unknown partitioning kind");
  }
}

void write_option_u64(UserHeadersBuilder& b, std::string_view key, uint64_t v) {
  if (auto s = b.add_uint64(key, v); !s) throw ArgumentError(s.error().message);
}

// Runs a body writer and finishes the frame; ArgumentError becomes ErrorDomain::kInvalid.
template <typename F>
Result<RequestFrame> build(uint32_t code, F&& write_body, size_t reserve = 64) {
  try {
    RequestBuilder b(code, reserve);
    write_body(b.body());
    return b.finish();
  } catch (const ArgumentError& e) {
    return invalid_argument(fmt::format("{}: {}", command_name(code), e.what()));
  }
}

RequestFrame build_empty(uint32_t code) { return RequestBuilder(code).finish(); }

template <typename T, typename F>
Result<T> decode(ByteSpan payload, const char* what, F&& f) {
  try {
    ByteReader r(payload);
    T out = f(r);
    return out;
  } catch (const DecodeError& e) {
    return protocol_error(fmt::format("{}: {}", what, e.what()));
  }
}

std::string read_name(ByteReader& r, const char* what) {
  uint8_t len = r.le<uint8_t>(what);
  return std::string(r.take_string(len, what));
}

std::string read_string32(ByteReader& r, const char* what) {
  uint32_t len = r.le<uint32_t>(what);
  return std::string(r.take_string(len, what));
}

Bytes read_options(ByteReader& r, const char* what) {
  uint32_t len = r.le<uint32_t>(what);
  ByteSpan s = r.take(len, what);
  return Bytes(s.begin(), s.end());
}

StreamInfo read_stream(ByteReader& r) {
  StreamInfo s;
  s.id = r.le<uint32_t>("stream id");
  s.created_at_us = r.le<uint64_t>("stream created_at");
  s.topics_count = r.le<uint32_t>("stream topics_count");
  s.size_bytes = r.le<uint64_t>("stream size_bytes");
  s.messages_count = r.le<uint64_t>("stream messages_count");
  s.name = read_name(r, "stream name");
  s.options = read_options(r, "stream options");
  return s;
}

TopicInfo read_topic_header(ByteReader& r) {
  TopicInfo t;
  t.id = r.le<uint32_t>("topic id");
  t.created_at_us = r.le<uint64_t>("topic created_at");
  t.partitions_count = r.le<uint32_t>("topic partitions_count");
  t.message_expiry_us = r.le<uint64_t>("topic message_expiry");
  t.compression = static_cast<CompressionAlgorithm>(r.le<uint8_t>("topic compression"));
  t.max_topic_size = r.le<uint64_t>("topic max_topic_size");
  t.size_bytes = r.le<uint64_t>("topic size_bytes");
  t.messages_count = r.le<uint64_t>("topic messages_count");
  t.name = read_name(r, "topic name");
  t.explicit_options = read_options(r, "topic explicit options");
  t.derived_options = read_options(r, "topic derived options");
  return t;
}

PartitionInfo read_partition(ByteReader& r) {
  PartitionInfo p;
  p.id = r.le<uint32_t>("partition id");
  p.created_at_us = r.le<uint64_t>("partition created_at");
  p.segments_count = r.le<uint32_t>("partition segments_count");
  p.current_offset = r.le<uint64_t>("partition current_offset");
  p.size_bytes = r.le<uint64_t>("partition size_bytes");
  p.messages_count = r.le<uint64_t>("partition messages_count");
  return p;
}

ConsumerGroupInfo read_group(ByteReader& r) {
  ConsumerGroupInfo g;
  g.id = r.le<uint32_t>("group id");
  g.partitions_count = r.le<uint32_t>("group partitions_count");
  g.members_count = r.le<uint32_t>("group members_count");
  g.name = read_name(r, "group name");
  return g;
}

UserInfo read_user(ByteReader& r) {
  UserInfo u;
  u.id = r.le<uint32_t>("user id");
  u.created_at_us = r.le<uint64_t>("user created_at");
  u.status = static_cast<UserStatus>(r.le<uint8_t>("user status"));
  u.username = read_name(r, "username");
  u.options = read_options(r, "user options");
  return u;
}

bool read_bool(ByteReader& r, const char* what) { return r.le<uint8_t>(what) != 0; }

Permissions read_permissions(ByteReader& r) {
  Permissions p;
  auto& g = p.global;
  g.manage_servers = read_bool(r, "manage_servers");
  g.read_servers = read_bool(r, "read_servers");
  g.manage_users = read_bool(r, "manage_users");
  g.read_users = read_bool(r, "read_users");
  g.manage_streams = read_bool(r, "manage_streams");
  g.read_streams = read_bool(r, "read_streams");
  g.manage_topics = read_bool(r, "manage_topics");
  g.read_topics = read_bool(r, "read_topics");
  g.poll_messages = read_bool(r, "poll_messages");
  g.send_messages = read_bool(r, "send_messages");
  bool more_streams = read_bool(r, "has_streams");
  while (more_streams) {
    uint32_t sid = r.le<uint32_t>("stream permission id");
    StreamPermissions s;
    s.manage_stream = read_bool(r, "manage_stream");
    s.read_stream = read_bool(r, "read_stream");
    s.manage_topics = read_bool(r, "manage_topics");
    s.read_topics = read_bool(r, "read_topics");
    s.poll_messages = read_bool(r, "poll_messages");
    s.send_messages = read_bool(r, "send_messages");
    bool more_topics = read_bool(r, "has_topics");
    while (more_topics) {
      uint32_t tid = r.le<uint32_t>("topic permission id");
      TopicPermissions t;
      t.manage_topic = read_bool(r, "manage_topic");
      t.read_topic = read_bool(r, "read_topic");
      t.poll_messages = read_bool(r, "poll_messages");
      t.send_messages = read_bool(r, "send_messages");
      s.topics[tid] = t;
      more_topics = read_bool(r, "has_next_topic");
    }
    p.streams[sid] = std::move(s);
    more_streams = read_bool(r, "has_next_stream");
  }
  return p;
}

}  // namespace

// ---- operations -------------------------------------------------------------------------------

const char* command_name(uint32_t code) {
  switch (code) {
    case cmd::kPing: return "Ping";
    case cmd::kGetStats: return "GetStats";
    case cmd::kGetMe: return "GetMe";
    case cmd::kGetClient: return "GetClient";
    case cmd::kGetClients: return "GetClients";
    case cmd::kGetUser: return "GetUser";
    case cmd::kGetUsers: return "GetUsers";
    case cmd::kCreateUser: return "CreateUser";
    case cmd::kDeleteUser: return "DeleteUser";
    case cmd::kUpdateUser: return "UpdateUser";
    case cmd::kUpdatePermissions: return "UpdatePermissions";
    case cmd::kChangePassword: return "ChangePassword";
    case cmd::kLogoutUser: return "LogoutUser";
    case cmd::kLoginRegister: return "LoginRegister";
    case cmd::kGetPersonalAccessTokens: return "GetPersonalAccessTokens";
    case cmd::kCreatePersonalAccessToken: return "CreatePersonalAccessToken";
    case cmd::kDeletePersonalAccessToken: return "DeletePersonalAccessToken";
    case cmd::kLoginRegisterWithPat: return "LoginRegisterWithPat";
    case cmd::kPollMessages: return "PollMessages";
    case cmd::kSendMessages: return "SendMessages";
    case cmd::kGetConsumerOffset: return "GetConsumerOffset";
    case cmd::kStoreConsumerOffset: return "StoreConsumerOffset";
    case cmd::kDeleteConsumerOffset: return "DeleteConsumerOffset";
    case cmd::kGetStream: return "GetStream";
    case cmd::kGetStreams: return "GetStreams";
    case cmd::kCreateStream: return "CreateStream";
    case cmd::kDeleteStream: return "DeleteStream";
    case cmd::kUpdateStream: return "UpdateStream";
    case cmd::kPurgeStream: return "PurgeStream";
    case cmd::kGetTopic: return "GetTopic";
    case cmd::kGetTopics: return "GetTopics";
    case cmd::kCreateTopic: return "CreateTopic";
    case cmd::kDeleteTopic: return "DeleteTopic";
    case cmd::kUpdateTopic: return "UpdateTopic";
    case cmd::kPurgeTopic: return "PurgeTopic";
    case cmd::kCreatePartitions: return "CreatePartitions";
    case cmd::kDeletePartitions: return "DeletePartitions";
    case cmd::kDeleteSegments: return "DeleteSegments";
    case cmd::kGetConsumerGroup: return "GetConsumerGroup";
    case cmd::kGetConsumerGroups: return "GetConsumerGroups";
    case cmd::kCreateConsumerGroup: return "CreateConsumerGroup";
    case cmd::kDeleteConsumerGroup: return "DeleteConsumerGroup";
    case cmd::kJoinConsumerGroup: return "JoinConsumerGroup";
    case cmd::kLeaveConsumerGroup: return "LeaveConsumerGroup";
    case cmd::kSyncConsumerGroup: return "SyncConsumerGroup";
    default: return "Unknown";
  }
}

Operation operation_for_code(uint32_t code) {
  switch (code) {
    case cmd::kLoginRegister:
    case cmd::kLoginRegisterWithPat: return Operation::kRegister;
    case cmd::kLogoutUser: return Operation::kLogout;
    case cmd::kCreateStream: return Operation::kCreateStream;
    case cmd::kUpdateStream: return Operation::kUpdateStream;
    case cmd::kDeleteStream: return Operation::kDeleteStream;
    case cmd::kPurgeStream: return Operation::kPurgeStream;
    case cmd::kCreateTopic: return Operation::kCreateTopic;
    case cmd::kUpdateTopic: return Operation::kUpdateTopic;
    case cmd::kDeleteTopic: return Operation::kDeleteTopic;
    case cmd::kPurgeTopic: return Operation::kPurgeTopic;
    case cmd::kCreatePartitions: return Operation::kCreatePartitions;
    case cmd::kDeletePartitions: return Operation::kDeletePartitions;
    case cmd::kDeleteSegments: return Operation::kDeleteSegments;
    case cmd::kCreateConsumerGroup: return Operation::kCreateConsumerGroup;
    case cmd::kDeleteConsumerGroup: return Operation::kDeleteConsumerGroup;
    case cmd::kCreateUser: return Operation::kCreateUser;
    case cmd::kUpdateUser: return Operation::kUpdateUser;
    case cmd::kDeleteUser: return Operation::kDeleteUser;
    case cmd::kChangePassword: return Operation::kChangePassword;
    case cmd::kUpdatePermissions: return Operation::kUpdatePermissions;
    case cmd::kCreatePersonalAccessToken: return Operation::kCreatePersonalAccessToken;
    case cmd::kDeletePersonalAccessToken: return Operation::kDeletePersonalAccessToken;
    case cmd::kJoinConsumerGroup: return Operation::kJoinConsumerGroup;
    case cmd::kLeaveConsumerGroup: return Operation::kLeaveConsumerGroup;
    case cmd::kSendMessages: return Operation::kSendMessages;
    case cmd::kStoreConsumerOffset: return Operation::kStoreConsumerOffset;
    case cmd::kDeleteConsumerOffset: return Operation::kDeleteConsumerOffset;
    default: return Operation::kNonReplicated;
  }
}

bool is_deduplicated_op(Operation op) {
  auto v = static_cast<uint8_t>(op);
  return op == Operation::kRegister || op == Operation::kLogout || (v >= 128 && v <= 149);
}

bool reply_is_result_framed(uint8_t op, size_t body_size) {
  if (op == static_cast<uint8_t>(Operation::kRegister)) return body_size > 0;
  if (op >= 64 && op <= 127) return true;
  if (op >= 128 && op <= 137) return true;
  if (op >= 139 && op <= 149) return true;
  return op == 161 || op == 162;
}

uint64_t xxh3_64(ByteSpan data) { return XXH3_64bits(data.data(), data.size()); }

// ---- frames -----------------------------------------------------------------------------------

RequestBuilder::RequestBuilder(uint32_t code, size_t body_reserve) : code_(code), w_(kHeaderSize + body_reserve) {
  w_.zeros(kHeaderSize);
}

RequestFrame RequestBuilder::finish() {
  RequestFrame f;
  f.code = code_;
  f.operation = operation_for_code(code_);
  f.bytes = w_.take();
  uint8_t* h = f.bytes.data();
  store_le<uint32_t>(h + off::kSize, static_cast<uint32_t>(f.bytes.size()));
  h[off::kCommand] = static_cast<uint8_t>(Command::kRequest);
  h[off::kReqOperation] = static_cast<uint8_t>(f.operation);
  if (f.operation == Operation::kNonReplicated) store_le<uint32_t>(h + off::kReqCode, code_);
  if (is_deduplicated_op(f.operation)) {
    // u128 checksum field: low 8 bytes = XXH3-64(body), high 8 bytes = 0.
    store_le<uint64_t>(h + off::kReqChecksum, xxh3_64(ByteSpan(f.bytes).subspan(kHeaderSize)));
  }
  return f;
}

void stamp_request(Bytes& frame, const U128& client, uint64_t session, uint64_t request) {
  uint8_t* h = frame.data();
  store_le<uint64_t>(h + off::kReqClient, client.lo);
  store_le<uint64_t>(h + off::kReqClient + 8, client.hi);
  store_le<uint64_t>(h + off::kReqSession, session);
  store_le<uint64_t>(h + off::kReqRequest, request);
}

Result<FrameHeader> decode_frame_header(ByteSpan header, size_t max_frame) {
  if (header.size() < kHeaderSize) return protocol_error("frame header shorter than 256 bytes");
  const uint8_t* h = header.data();
  FrameHeader f;
  f.size = load_le<uint32_t>(h + off::kSize);
  if (f.size < kHeaderSize || f.size > max_frame)
    return protocol_error(fmt::format("frame size {} outside [256, {}]", f.size, max_frame));
  uint8_t command = h[off::kCommand];
  if (command == static_cast<uint8_t>(Command::kReply)) {
    f.command = Command::kReply;
    f.request = load_le<uint64_t>(h + off::kRepRequest);
    f.operation = h[off::kRepOperation];
    f.status = load_le<uint32_t>(h + off::kRepStatus);
  } else if (command == static_cast<uint8_t>(Command::kEviction)) {
    f.command = Command::kEviction;
    f.eviction_reason = h[off::kEvReason];
    f.server_protocol_version = load_le<uint32_t>(h + off::kEvServerVersion);
    f.server_protocol_version_min = load_le<uint32_t>(h + off::kEvServerVersionMin);
  } else {
    return protocol_error(fmt::format("unexpected frame command {}", command));
  }
  return f;
}

Error eviction_error(const FrameHeader& h) {
  uint32_t c = eviction_reason_to_code(h.eviction_reason);
  std::string ctx = fmt::format("evicted by server: {} ({})", eviction_reason_name(h.eviction_reason),
                                static_cast<int>(h.eviction_reason));
  if (h.eviction_reason == static_cast<uint8_t>(EvictionReason::kIncompatibleProtocol))
    ctx += fmt::format("; client protocol {}, server accepts [{}, {}]", format_protocol_version(kProtocolVersion),
                       format_protocol_version(h.server_protocol_version_min),
                       format_protocol_version(h.server_protocol_version));
  return iggy_error(c, ctx);
}

Result<ByteSpan> reply_payload(const FrameHeader& h, ByteSpan body) {
  if (h.command == Command::kEviction) return eviction_error(h);
  if (h.status != 0) return iggy_error(h.status);
  if (!reply_is_result_framed(h.operation, body.size())) return body;
  if (body.size() < 4) return protocol_error("result section shorter than its count");
  uint32_t count = load_le<uint32_t>(body.data());
  if (count == 0) return body.subspan(4);
  if (body.size() < 4 + static_cast<size_t>(count) * 8)
    return protocol_error(fmt::format("result section claims {} entries in {} bytes", count, body.size()));
  uint32_t c = load_le<uint32_t>(body.data() + 8);
  if (c == 0) return protocol_error("result section entry with code 0");
  return iggy_error(c);
}

// ---- encoders: shared pieces ------------------------------------------------------------------

void write_identifier(ByteWriter& w, const Identifier& id) {
  if (id.is_numeric()) {
    w.le<uint8_t>(1);
    w.le<uint8_t>(4);
    w.le<uint32_t>(id.id());
  } else {
    w.le<uint8_t>(2);
    write_name(w, id.name(), "identifier name");
  }
}

void write_permissions(ByteWriter& w, const Permissions& p) {
  const auto& g = p.global;
  for (bool b : {g.manage_servers, g.read_servers, g.manage_users, g.read_users, g.manage_streams,
                 g.read_streams, g.manage_topics, g.read_topics, g.poll_messages, g.send_messages})
    w.le<uint8_t>(b ? 1 : 0);
  w.le<uint8_t>(p.streams.empty() ? 0 : 1);
  size_t si = 0;
  for (const auto& [sid, s] : p.streams) {
    w.le<uint32_t>(sid);
    for (bool b : {s.manage_stream, s.read_stream, s.manage_topics, s.read_topics, s.poll_messages, s.send_messages})
      w.le<uint8_t>(b ? 1 : 0);
    w.le<uint8_t>(s.topics.empty() ? 0 : 1);
    size_t ti = 0;
    for (const auto& [tid, t] : s.topics) {
      w.le<uint32_t>(tid);
      for (bool b : {t.manage_topic, t.read_topic, t.poll_messages, t.send_messages}) w.le<uint8_t>(b ? 1 : 0);
      w.le<uint8_t>(++ti < s.topics.size() ? 1 : 0);
    }
    w.le<uint8_t>(++si < p.streams.size() ? 1 : 0);
  }
}

Result<Permissions> decode_permissions(ByteSpan bytes) {
  return decode<Permissions>(bytes, "permissions", [](ByteReader& r) { return read_permissions(r); });
}

// ---- encoders: system, login ------------------------------------------------------------------

RequestFrame encode_ping() { return build_empty(cmd::kPing); }
RequestFrame encode_logout() { return build_empty(cmd::kLogoutUser); }
RequestFrame encode_get_stats() { return build_empty(cmd::kGetStats); }
RequestFrame encode_get_me() { return build_empty(cmd::kGetMe); }

namespace {
void write_version_info(ByteWriter& w, const ClientVersion& v) {
  w.le<uint32_t>(kProtocolVersion);
  write_name(w, v.sdk_name, "sdk name");
  write_name(w, v.sdk_version, "sdk version");
}
}  // namespace

Result<RequestFrame> encode_login_password(std::string_view username, std::string_view password,
                                           const ClientVersion& v) {
  return build(cmd::kLoginRegister, [&](ByteWriter& w) {
    write_version_info(w, v);
    write_name(w, username, "username");
    if (password.empty() || password.size() > 255)
      throw ArgumentError(fmt::format("password must be 1..255 bytes, got {}", password.size()));
    w.le<uint8_t>(static_cast<uint8_t>(password.size()));
    w.string(password);
    w.le<uint32_t>(0);  // no client context
  });
}

Result<RequestFrame> encode_login_token(std::string_view token, const ClientVersion& v) {
  return build(cmd::kLoginRegisterWithPat, [&](ByteWriter& w) {
    write_version_info(w, v);
    write_name(w, token, "personal access token");
    w.le<uint32_t>(0);
  });
}

// ---- encoders: streams, topics, partitions ----------------------------------------------------

Result<RequestFrame> encode_get_stream(const Identifier& s) {
  return build(cmd::kGetStream, [&](ByteWriter& w) { write_identifier(w, s); });
}
RequestFrame encode_get_streams() { return build_empty(cmd::kGetStreams); }
Result<RequestFrame> encode_create_stream(std::string_view name) {
  return build(cmd::kCreateStream, [&](ByteWriter& w) { write_name(w, name, "stream name"); });
}
Result<RequestFrame> encode_update_stream(const Identifier& s, std::string_view new_name) {
  return build(cmd::kUpdateStream, [&](ByteWriter& w) {
    write_identifier(w, s);
    write_name(w, new_name, "stream name");
  });
}
Result<RequestFrame> encode_delete_stream(const Identifier& s) {
  return build(cmd::kDeleteStream, [&](ByteWriter& w) { write_identifier(w, s); });
}
Result<RequestFrame> encode_purge_stream(const Identifier& s) {
  return build(cmd::kPurgeStream, [&](ByteWriter& w) { write_identifier(w, s); });
}

Result<RequestFrame> encode_get_topic(const Identifier& s, const Identifier& t) {
  return build(cmd::kGetTopic, [&](ByteWriter& w) {
    write_identifier(w, s);
    write_identifier(w, t);
  });
}
Result<RequestFrame> encode_get_topics(const Identifier& s) {
  return build(cmd::kGetTopics, [&](ByteWriter& w) { write_identifier(w, s); });
}

namespace {
void write_compression(UserHeadersBuilder& b, CompressionAlgorithm c) {
  if (c != CompressionAlgorithm::kNone && c != CompressionAlgorithm::kGzip)
    throw ArgumentError("compression must be none (1) or gzip (2)");
  if (auto s = b.add_uint8("compression_algorithm", static_cast<uint8_t>(c)); !s)
    throw ArgumentError(s.error().message);
}
}  // namespace

Result<RequestFrame> encode_create_topic(const Identifier& s, const TopicConfig& c, const ServerProfile& server) {
  return build(cmd::kCreateTopic, [&](ByteWriter& w) {
    if (c.partitions_count > kMaxPartitionsPerRequest)
      throw ArgumentError(fmt::format("partitions_count {} exceeds {}", c.partitions_count, kMaxPartitionsPerRequest));
    if (c.replication_factor && *c.replication_factor != 1)
      throw ArgumentError(fmt::format("replication factor {} not supported: Iggy 0.9 replicates cluster-wide",
                                      *c.replication_factor));
    write_identifier(w, s);
    w.le<uint32_t>(c.partitions_count);
    write_name(w, c.name, "topic name");
    UserHeadersBuilder o;
    if (c.compression) write_compression(o, *c.compression);
    if (c.message_expiry_us) write_option_u64(o, "message_expiry", *c.message_expiry_us);
    if (c.max_topic_size) write_option_u64(o, "max_topic_size", *c.max_topic_size);
    if (c.segment_size) write_option_u64(o, "segment_size", *c.segment_size);
    if (c.enforce_fsync) {
      auto st = server.durability_option() ? o.add_string("durability", *c.enforce_fsync ? "persisted" : "replicated")
                                           : o.add_bool("enforce_fsync", *c.enforce_fsync);
      if (!st) throw ArgumentError(st.error().message);
    }
    if (c.messages_required_to_save) {
      if (auto st = o.add_uint32("messages_required_to_save", *c.messages_required_to_save); !st)
        throw ArgumentError(st.error().message);
    }
    if (c.size_of_messages_required_to_save)
      write_option_u64(o, "size_of_messages_required_to_save", *c.size_of_messages_required_to_save);
    if (c.preallocate_segments) {
      if (auto st = o.add_bool("preallocate_segments", *c.preallocate_segments); !st)
        throw ArgumentError(st.error().message);
    }
    w.bytes(o.bytes());  // options run to the end of the body
  });
}

Result<RequestFrame> encode_update_topic(const Identifier& s, const Identifier& t, const TopicUpdate& u) {
  return build(cmd::kUpdateTopic, [&](ByteWriter& w) {
    write_identifier(w, s);
    write_identifier(w, t);
    write_name(w, u.name, "topic name");
    UserHeadersBuilder o;
    if (u.compression) write_compression(o, *u.compression);
    if (u.message_expiry_us) write_option_u64(o, "message_expiry", *u.message_expiry_us);
    if (u.max_topic_size) write_option_u64(o, "max_topic_size", *u.max_topic_size);
    w.bytes(o.bytes());
  });
}

Result<RequestFrame> encode_delete_topic(const Identifier& s, const Identifier& t) {
  return build(cmd::kDeleteTopic, [&](ByteWriter& w) {
    write_identifier(w, s);
    write_identifier(w, t);
  });
}
Result<RequestFrame> encode_purge_topic(const Identifier& s, const Identifier& t) {
  return build(cmd::kPurgeTopic, [&](ByteWriter& w) {
    write_identifier(w, s);
    write_identifier(w, t);
  });
}

namespace {
Result<RequestFrame> partitions_request(uint32_t code, const Identifier& s, const Identifier& t, uint32_t count) {
  return build(code, [&](ByteWriter& w) {
    if (count == 0 || count > kMaxPartitionsPerRequest)
      throw ArgumentError(fmt::format("partitions count must be 1..{}, got {}", kMaxPartitionsPerRequest, count));
    write_identifier(w, s);
    write_identifier(w, t);
    w.le<uint32_t>(count);
  });
}
}  // namespace

Result<RequestFrame> encode_create_partitions(const Identifier& s, const Identifier& t, uint32_t count) {
  return partitions_request(cmd::kCreatePartitions, s, t, count);
}
Result<RequestFrame> encode_delete_partitions(const Identifier& s, const Identifier& t, uint32_t count) {
  return partitions_request(cmd::kDeletePartitions, s, t, count);
}
Result<RequestFrame> encode_delete_segments(const Identifier& s, const Identifier& t, uint32_t partition_id,
                                            uint32_t segments_count) {
  return build(cmd::kDeleteSegments, [&](ByteWriter& w) {
    write_identifier(w, s);
    write_identifier(w, t);
    w.le<uint32_t>(partition_id);
    w.le<uint32_t>(segments_count);
  });
}

// ---- encoders: messages -----------------------------------------------------------------------

size_t send_messages_frame_size(const Identifier& s, const Identifier& t, const Partitioning& p,
                                std::span<const OutgoingMessage> messages) {
  size_t size = kHeaderSize + 4 + identifier_size(s) + identifier_size(t) + partitioning_size(p) + 4 +
                kBatchHeaderSize;
  for (const auto& m : messages) size += kMessageHeaderSize + m.payload.size() + m.user_headers.size();
  return size;
}

Result<RequestFrame> encode_send_messages(const Identifier& s, const Identifier& t, const Partitioning& p,
                                          std::span<const OutgoingMessage> messages, uint64_t now_us) {
  if (messages.empty()) return invalid_argument("SendMessages: at least one message is required");
  if (messages.size() > UINT32_MAX) return invalid_argument("SendMessages: too many messages");
  const size_t total = send_messages_frame_size(s, t, p, messages);
  if (total > kMaxFrameSize)
    return invalid_argument(fmt::format("SendMessages: frame of {} bytes exceeds the {} byte limit", total, kMaxFrameSize));
  uint64_t min_ts = UINT64_MAX;
  uint64_t max_ts = 0;
  for (const auto& m : messages) {
    uint64_t ts = m.origin_timestamp_us ? m.origin_timestamp_us : now_us;
    min_ts = std::min(min_ts, ts);
    max_ts = std::max(max_ts, ts);
    if (m.user_headers.size() > UINT32_MAX || m.payload.size() > UINT32_MAX)
      return invalid_argument("SendMessages: message part exceeds 4 GiB");
  }
  if (max_ts - min_ts > UINT32_MAX)
    return invalid_argument(fmt::format("SendMessages: origin timestamps span {} µs, more than the u32 batch delta limit",
                                        max_ts - min_ts));

  return build(
      cmd::kSendMessages,
      [&](ByteWriter& w) {
        const size_t metadata_len = identifier_size(s) + identifier_size(t) + partitioning_size(p) + 4;
        w.le<uint32_t>(static_cast<uint32_t>(metadata_len));
        write_identifier(w, s);
        write_identifier(w, t);
        write_partitioning(w, p);
        w.le<uint32_t>(static_cast<uint32_t>(messages.size()));

        const size_t batch_start = w.size();
        const uint64_t batch_length = total - batch_start;
        w.le<uint64_t>(0);  // partition_id (stamped by server)
        w.le<uint64_t>(0);  // base_offset
        w.le<uint64_t>(0);  // base_timestamp
        w.le<uint64_t>(min_ts);
        w.le<uint64_t>(batch_length);
        w.le<uint64_t>(0);  // batch_checksum, patched below
        w.le<uint32_t>(static_cast<uint32_t>(messages.size()));
        w.zeros(kBatchHeaderSize - 52);

        XXH3_state_t state;
        XXH3_64bits_reset(&state);
        XXH3_64bits_update(&state, w.data() + batch_start, 40);
        XXH3_64bits_update(&state, w.data() + batch_start + 48, 4);

        uint32_t index = 0;
        for (const auto& m : messages) {
          const size_t frame_start = w.size();
          uint64_t ts = m.origin_timestamp_us ? m.origin_timestamp_us : now_us;
          // The message header in one piece (one append per message, not eight).
          static_assert(kMessageHeaderSize == 48);
          uint8_t header[kMessageHeaderSize] = {};  // checksum (patched below) and reserved stay 0
          store_le<uint64_t>(header + 8, m.id.lo);
          store_le<uint64_t>(header + 16, m.id.hi);
          store_le<uint32_t>(header + 24, index++);
          store_le<uint32_t>(header + 28, static_cast<uint32_t>(ts - min_ts));
          store_le<uint32_t>(header + 32, static_cast<uint32_t>(m.user_headers.size()));
          store_le<uint32_t>(header + 36, static_cast<uint32_t>(m.payload.size()));
          w.bytes(header, sizeof header);
          w.bytes(m.payload);
          w.bytes(m.user_headers);
          uint64_t checksum = XXH3_64bits(w.data() + frame_start + 8, w.size() - frame_start - 8);
          w.patch_le<uint64_t>(frame_start, checksum);
          XXH3_64bits_update(&state, w.data() + frame_start, 8);
        }
        w.patch_le<uint64_t>(batch_start + 40, XXH3_64bits_digest(&state));
      },
      total - kHeaderSize);
}

Result<RequestFrame> encode_poll_messages(const PollRequest& q) {
  return build(cmd::kPollMessages, [&](ByteWriter& w) {
    write_consumer(w, q.consumer);
    write_identifier(w, q.stream);
    write_identifier(w, q.topic);
    write_optional_partition(w, q.partition_id);
    w.le<uint8_t>(static_cast<uint8_t>(q.strategy.kind));
    w.le<uint64_t>(q.strategy.value);
    w.le<uint32_t>(q.count);
    w.le<uint8_t>(q.auto_commit ? 1 : 0);
  });
}

// ---- encoders: consumer offsets and groups ----------------------------------------------------

Result<RequestFrame> encode_get_consumer_offset(const Consumer& c, const Identifier& s, const Identifier& t,
                                                std::optional<uint32_t> p) {
  return build(cmd::kGetConsumerOffset, [&](ByteWriter& w) {
    write_consumer(w, c);
    write_identifier(w, s);
    write_identifier(w, t);
    write_optional_partition(w, p);
  });
}

Result<RequestFrame> encode_store_consumer_offset(const Consumer& c, const Identifier& s, const Identifier& t,
                                                  std::optional<uint32_t> p, uint64_t offset) {
  return build(cmd::kStoreConsumerOffset, [&](ByteWriter& w) {
    write_consumer(w, c);
    write_identifier(w, s);
    write_identifier(w, t);
    write_optional_partition(w, p);
    w.le<uint64_t>(offset);
    w.le<uint8_t>(1);  // AckLevel::Quorum, as the Rust SDK
  });
}

Result<RequestFrame> encode_delete_consumer_offset(const Consumer& c, const Identifier& s, const Identifier& t,
                                                   std::optional<uint32_t> p) {
  return build(cmd::kDeleteConsumerOffset, [&](ByteWriter& w) {
    write_consumer(w, c);
    write_identifier(w, s);
    write_identifier(w, t);
    write_optional_partition(w, p);
    w.le<uint8_t>(1);
  });
}

namespace {
Result<RequestFrame> group_request(uint32_t code, const Identifier& s, const Identifier& t, const Identifier& g) {
  return build(code, [&](ByteWriter& w) {
    write_identifier(w, s);
    write_identifier(w, t);
    write_identifier(w, g);
  });
}
}  // namespace

Result<RequestFrame> encode_get_consumer_group(const Identifier& s, const Identifier& t, const Identifier& g) {
  return group_request(cmd::kGetConsumerGroup, s, t, g);
}
Result<RequestFrame> encode_get_consumer_groups(const Identifier& s, const Identifier& t) {
  return build(cmd::kGetConsumerGroups, [&](ByteWriter& w) {
    write_identifier(w, s);
    write_identifier(w, t);
  });
}
Result<RequestFrame> encode_create_consumer_group(const Identifier& s, const Identifier& t, std::string_view name) {
  return build(cmd::kCreateConsumerGroup, [&](ByteWriter& w) {
    write_identifier(w, s);
    write_identifier(w, t);
    write_name(w, name, "consumer group name");
  });
}
Result<RequestFrame> encode_delete_consumer_group(const Identifier& s, const Identifier& t, const Identifier& g) {
  return group_request(cmd::kDeleteConsumerGroup, s, t, g);
}
Result<RequestFrame> encode_join_consumer_group(const Identifier& s, const Identifier& t, const Identifier& g) {
  return group_request(cmd::kJoinConsumerGroup, s, t, g);
}
Result<RequestFrame> encode_leave_consumer_group(const Identifier& s, const Identifier& t, const Identifier& g) {
  return group_request(cmd::kLeaveConsumerGroup, s, t, g);
}
Result<RequestFrame> encode_sync_consumer_group(const Identifier& s, const Identifier& t, const Identifier& g) {
  return group_request(cmd::kSyncConsumerGroup, s, t, g);
}

// ---- encoders: users and tokens ---------------------------------------------------------------

Result<RequestFrame> encode_get_user(const Identifier& u) {
  return build(cmd::kGetUser, [&](ByteWriter& w) { write_identifier(w, u); });
}
RequestFrame encode_get_users() { return build_empty(cmd::kGetUsers); }

namespace {
void write_password(ByteWriter& w, std::string_view pw, const char* what) {
  if (pw.empty() || pw.size() > 255)
    throw ArgumentError(fmt::format("{} must be 1..255 bytes, got {}", what, pw.size()));
  w.le<uint8_t>(static_cast<uint8_t>(pw.size()));
  w.string(pw);
}

void write_optional_permissions(ByteWriter& w, const std::optional<Permissions>& perms) {
  if (!perms) {
    w.le<uint8_t>(0);
    return;
  }
  w.le<uint8_t>(1);
  ByteWriter p;
  write_permissions(p, *perms);
  w.le<uint32_t>(static_cast<uint32_t>(p.size()));
  w.bytes(p.buffer());
}
}  // namespace

Result<RequestFrame> encode_create_user(std::string_view username, std::string_view password, UserStatus status,
                                        const std::optional<Permissions>& perms) {
  return build(cmd::kCreateUser, [&](ByteWriter& w) {
    write_name(w, username, "username");
    write_password(w, password, "password");
    w.le<uint8_t>(static_cast<uint8_t>(status));
    write_optional_permissions(w, perms);
  });
}

Result<RequestFrame> encode_update_user(const Identifier& u, std::optional<std::string_view> username,
                                        std::optional<UserStatus> status) {
  return build(cmd::kUpdateUser, [&](ByteWriter& w) {
    write_identifier(w, u);
    w.le<uint8_t>(username ? 1 : 0);
    if (username) write_name(w, *username, "username");
    w.le<uint8_t>(status ? 1 : 0);
    if (status) w.le<uint8_t>(static_cast<uint8_t>(*status));
  });
}

Result<RequestFrame> encode_update_permissions(const Identifier& u, const std::optional<Permissions>& perms) {
  return build(cmd::kUpdatePermissions, [&](ByteWriter& w) {
    write_identifier(w, u);
    write_optional_permissions(w, perms);
  });
}

Result<RequestFrame> encode_change_password(const Identifier& u, std::string_view current, std::string_view next) {
  return build(cmd::kChangePassword, [&](ByteWriter& w) {
    write_identifier(w, u);
    write_password(w, current, "current password");
    write_password(w, next, "new password");
  });
}

Result<RequestFrame> encode_delete_user(const Identifier& u) {
  return build(cmd::kDeleteUser, [&](ByteWriter& w) { write_identifier(w, u); });
}

Result<RequestFrame> encode_create_personal_access_token(std::string_view name, uint64_t expiry_us) {
  return build(cmd::kCreatePersonalAccessToken, [&](ByteWriter& w) {
    write_name(w, name, "token name");
    w.le<uint64_t>(expiry_us);
  });
}
RequestFrame encode_get_personal_access_tokens() { return build_empty(cmd::kGetPersonalAccessTokens); }
Result<RequestFrame> encode_delete_personal_access_token(std::string_view name) {
  return build(cmd::kDeletePersonalAccessToken, [&](ByteWriter& w) { write_name(w, name, "token name"); });
}

// ---- decoders ---------------------------------------------------------------------------------

Result<LoginInfo> decode_login(ByteSpan payload) {
  return decode<LoginInfo>(payload, "login reply", [](ByteReader& r) {
    LoginInfo l;
    l.user_id = r.le<uint32_t>("user_id");
    l.session = r.le<uint64_t>("session");
    l.server_protocol_version = r.le<uint32_t>("server_protocol_version");
    l.server_version = read_name(r, "server_version");
    if (l.session == 0) throw DecodeError("session 0");
    return l;
  });
}

Result<StreamInfo> decode_stream(ByteSpan payload) {
  return decode<StreamInfo>(payload, "stream", [](ByteReader& r) { return read_stream(r); });
}

Result<std::optional<StreamInfo>> decode_stream_details(ByteSpan payload) {
  return decode<std::optional<StreamInfo>>(payload, "stream details", [](ByteReader& r) -> std::optional<StreamInfo> {
    if (r.empty()) return std::nullopt;
    StreamInfo s = read_stream(r);
    r.check_count(s.topics_count, 50, "stream topics");
    s.topics.reserve(s.topics_count);
    for (uint32_t i = 0; i < s.topics_count; ++i) s.topics.push_back(read_topic_header(r));
    return s;
  });
}

Result<std::vector<StreamInfo>> decode_streams(ByteSpan payload) {
  return decode<std::vector<StreamInfo>>(payload, "streams", [](ByteReader& r) {
    std::vector<StreamInfo> out;
    while (!r.empty()) out.push_back(read_stream(r));
    return out;
  });
}

Result<std::optional<TopicInfo>> decode_topic_details(ByteSpan payload) {
  return decode<std::optional<TopicInfo>>(payload, "topic details", [](ByteReader& r) -> std::optional<TopicInfo> {
    if (r.empty()) return std::nullopt;
    TopicInfo t = read_topic_header(r);
    r.check_count(t.partitions_count, 40, "topic partitions");
    t.partitions.reserve(t.partitions_count);
    for (uint32_t i = 0; i < t.partitions_count; ++i) t.partitions.push_back(read_partition(r));
    return t;
  });
}

Result<std::vector<TopicInfo>> decode_topics(ByteSpan payload) {
  return decode<std::vector<TopicInfo>>(payload, "topics", [](ByteReader& r) {
    std::vector<TopicInfo> out;
    if (r.empty()) return out;
    uint32_t count = r.le<uint32_t>("topics count");
    r.check_count(count, 50, "topics");
    out.reserve(count);
    for (uint32_t i = 0; i < count; ++i) out.push_back(read_topic_header(r));
    return out;
  });
}

Result<SendConfirmation> decode_send_confirmation(ByteSpan payload, uint32_t message_count, ServerGeneration server) {
  if (payload.empty() && server != ServerGeneration::kEdge)
    return transport_error(TransportCode::kUnconfirmed,
                           "SendMessages answered with an empty reply (the server classified it as a duplicate); "
                           "whether the batch is stored is unknown");
  return decode<SendConfirmation>(payload, "send confirmation", [&](ByteReader& r) {
    SendConfirmation c;
    c.message_count = message_count;
    if (r.empty()) return c;
    uint32_t count = r.le<uint32_t>("confirmations count");
    r.check_count(count, 20, "confirmations");
    if (count == 0) return c;
    c.reported = true;
    c.stream_id = r.le<uint32_t>("stream_id");
    c.topic_id = r.le<uint32_t>("topic_id");
    c.partition_id = r.le<uint32_t>("partition_id");
    c.base_offset = r.le<uint64_t>("base_offset");
    return c;
  });
}

Result<PolledMessages> decode_polled_messages(std::shared_ptr<const void> buffer, ByteSpan payload) {
  return decode<PolledMessages>(payload, "polled messages", [&](ByteReader& r) {
    PolledMessages out;
    out.buffer = std::move(buffer);
    out.payload_bytes = payload.size();
    out.partition_id = r.le<uint32_t>("partition_id");
    out.current_offset = r.le<uint64_t>("current_offset");
    uint32_t count = r.le<uint32_t>("messages_count");
    r.check_count(count, kMessageHeaderSize, "polled messages");
    out.messages.reserve(count);
    while (!r.empty()) {
      ByteSpan batch_header = r.take(kBatchHeaderSize, "batch header");
      ByteReader h(batch_header);
      h.skip(8, "partition_id");
      uint64_t base_offset = h.le<uint64_t>("base_offset");
      uint64_t base_timestamp = h.le<uint64_t>("base_timestamp");
      uint64_t origin_timestamp = h.le<uint64_t>("origin_timestamp");
      uint64_t batch_length = h.le<uint64_t>("batch_length");
      h.skip(8, "batch_checksum");
      uint32_t batch_count = h.le<uint32_t>("batch message_count");
      if (batch_length < kBatchHeaderSize) throw DecodeError("batch_length below the batch header size");
      ByteReader frames(r.take(batch_length - kBatchHeaderSize, "batch frames"));
      uint32_t seen = 0;
      while (!frames.empty()) {
        MessageView m;
        m.checksum = frames.le<uint64_t>("message checksum");
        m.id.lo = frames.le<uint64_t>("message id");
        m.id.hi = frames.le<uint64_t>("message id");
        uint32_t offset_delta = frames.le<uint32_t>("offset_delta");
        uint32_t timestamp_delta = frames.le<uint32_t>("timestamp_delta");
        uint32_t headers_len = frames.le<uint32_t>("user_headers_length");
        uint32_t payload_len = frames.le<uint32_t>("payload_length");
        frames.skip(8, "message reserved");
        m.payload = frames.take(payload_len, "message payload");
        m.user_headers = frames.take(headers_len, "message user headers");
        m.offset = base_offset + offset_delta;
        m.timestamp_us = base_timestamp;
        m.origin_timestamp_us = origin_timestamp + timestamp_delta;
        out.messages.push_back(m);
        ++seen;
      }
      if (seen != batch_count)
        throw DecodeError(fmt::format("batch claims {} messages, holds {}", batch_count, seen));
    }
    if (out.messages.size() != count)
      throw DecodeError(fmt::format("reply claims {} messages, holds {}", count, out.messages.size()));
    return out;
  });
}

Result<std::optional<ConsumerOffsetInfo>> decode_consumer_offset(ByteSpan payload) {
  return decode<std::optional<ConsumerOffsetInfo>>(payload, "consumer offset",
                                                   [](ByteReader& r) -> std::optional<ConsumerOffsetInfo> {
                                                     if (r.empty()) return std::nullopt;
                                                     ConsumerOffsetInfo o;
                                                     o.partition_id = r.le<uint32_t>("partition_id");
                                                     o.current_offset = r.le<uint64_t>("current_offset");
                                                     o.stored_offset = r.le<uint64_t>("stored_offset");
                                                     return o;
                                                   });
}

Result<std::optional<ConsumerGroupInfo>> decode_consumer_group_details(ByteSpan payload) {
  return decode<std::optional<ConsumerGroupInfo>>(
      payload, "consumer group", [](ByteReader& r) -> std::optional<ConsumerGroupInfo> {
        if (r.empty()) return std::nullopt;
        ConsumerGroupInfo g = read_group(r);
        r.check_count(g.members_count, 8, "group members");
        for (uint32_t i = 0; i < g.members_count; ++i) {
          ConsumerGroupMember m;
          m.id = r.le<uint32_t>("member id");
          uint32_t n = r.le<uint32_t>("member partitions count");
          r.check_count(n, 4, "member partitions");
          for (uint32_t k = 0; k < n; ++k) m.partitions.push_back(r.le<uint32_t>("member partition"));
          g.members.push_back(std::move(m));
        }
        return g;
      });
}

Result<std::vector<ConsumerGroupInfo>> decode_consumer_groups(ByteSpan payload) {
  return decode<std::vector<ConsumerGroupInfo>>(payload, "consumer groups", [](ByteReader& r) {
    std::vector<ConsumerGroupInfo> out;
    while (!r.empty()) out.push_back(read_group(r));
    return out;
  });
}

Result<std::optional<ConsumerGroupAssignment>> decode_consumer_group_assignment(ByteSpan payload) {
  return decode<std::optional<ConsumerGroupAssignment>>(
      payload, "consumer group assignment", [](ByteReader& r) -> std::optional<ConsumerGroupAssignment> {
        if (r.empty()) return std::nullopt;
        ConsumerGroupAssignment a;
        a.generation = r.le<uint64_t>("generation");
        uint32_t n = r.le<uint32_t>("partitions count");
        r.check_count(n, 4, "assigned partitions");
        for (uint32_t i = 0; i < n; ++i) a.partitions.push_back(r.le<uint32_t>("partition"));
        return a;
      });
}

Result<std::optional<UserInfo>> decode_user_details(ByteSpan payload) {
  return decode<std::optional<UserInfo>>(payload, "user", [](ByteReader& r) -> std::optional<UserInfo> {
    if (r.empty()) return std::nullopt;
    UserInfo u = read_user(r);
    uint8_t flag = r.le<uint8_t>("has_permissions");
    if (flag == 0) {
      r.skip(3, "no-permissions padding");
    } else {
      uint32_t len = r.le<uint32_t>("permissions length");
      ByteReader p(r.take(len, "permissions"));
      u.permissions = read_permissions(p);
    }
    return u;
  });
}

Result<std::vector<UserInfo>> decode_users(ByteSpan payload) {
  return decode<std::vector<UserInfo>>(payload, "users", [](ByteReader& r) {
    std::vector<UserInfo> out;
    while (!r.empty()) out.push_back(read_user(r));
    return out;
  });
}

Result<std::string> decode_raw_personal_access_token(ByteSpan payload) {
  return decode<std::string>(payload, "personal access token", [](ByteReader& r) { return read_name(r, "token"); });
}

Result<std::vector<PersonalAccessTokenInfo>> decode_personal_access_tokens(ByteSpan payload) {
  return decode<std::vector<PersonalAccessTokenInfo>>(payload, "personal access tokens", [](ByteReader& r) {
    std::vector<PersonalAccessTokenInfo> out;
    while (!r.empty()) {
      PersonalAccessTokenInfo t;
      t.name = read_name(r, "token name");
      t.expiry_at_us = r.le<uint64_t>("token expiry_at");
      out.push_back(std::move(t));
    }
    return out;
  });
}

Result<Stats> decode_stats(ByteSpan payload) {
  return decode<Stats>(payload, "stats", [](ByteReader& r) {
    Stats s;
    s.process_id = r.le<uint32_t>("process_id");
    s.cpu_usage = r.le<float>("cpu_usage");
    s.total_cpu_usage = r.le<float>("total_cpu_usage");
    s.memory_usage = r.le<uint64_t>("memory_usage");
    s.total_memory = r.le<uint64_t>("total_memory");
    s.available_memory = r.le<uint64_t>("available_memory");
    s.run_time = r.le<uint64_t>("run_time");
    s.start_time = r.le<uint64_t>("start_time");
    s.read_bytes = r.le<uint64_t>("read_bytes");
    s.written_bytes = r.le<uint64_t>("written_bytes");
    s.messages_size_bytes = r.le<uint64_t>("messages_size_bytes");
    s.streams_count = r.le<uint32_t>("streams_count");
    s.topics_count = r.le<uint32_t>("topics_count");
    s.partitions_count = r.le<uint32_t>("partitions_count");
    s.segments_count = r.le<uint32_t>("segments_count");
    s.messages_count = r.le<uint64_t>("messages_count");
    s.clients_count = r.le<uint32_t>("clients_count");
    s.consumer_groups_count = r.le<uint32_t>("consumer_groups_count");
    s.hostname = read_string32(r, "hostname");
    s.os_name = read_string32(r, "os_name");
    s.os_version = read_string32(r, "os_version");
    s.kernel_version = read_string32(r, "kernel_version");
    s.server_version = read_string32(r, "server_version");
    s.server_semver = r.le<uint32_t>("server_semver");
    uint32_t n = r.le<uint32_t>("cache_metrics count");
    r.check_count(n, 32, "cache metrics");
    for (uint32_t i = 0; i < n; ++i) {
      CacheMetric c;
      c.stream_id = r.le<uint32_t>("cache stream");
      c.topic_id = r.le<uint32_t>("cache topic");
      c.partition_id = r.le<uint32_t>("cache partition");
      c.hits = r.le<uint64_t>("cache hits");
      c.misses = r.le<uint64_t>("cache misses");
      c.hit_ratio = r.le<float>("cache hit_ratio");
      s.cache_metrics.push_back(c);
    }
    s.threads_count = r.le<uint32_t>("threads_count");
    s.free_disk_space = r.le<uint64_t>("free_disk_space");
    s.total_disk_space = r.le<uint64_t>("total_disk_space");
    return s;
  });
}

Result<ClientInfo> decode_client_info(ByteSpan payload) {
  return decode<ClientInfo>(payload, "client info", [](ByteReader& r) {
    ClientInfo c;
    c.client_id = r.le<uint32_t>("client_id");
    c.user_id = r.le<uint32_t>("user_id");
    c.transport = r.le<uint8_t>("transport");
    c.address = read_string32(r, "address");
    uint32_t n = r.le<uint32_t>("consumer_groups_count");
    r.check_count(n, 12, "client consumer groups");
    for (uint32_t i = 0; i < n; ++i) {
      ClientGroupMembership g;
      g.stream_id = r.le<uint32_t>("stream_id");
      g.topic_id = r.le<uint32_t>("topic_id");
      g.group_id = r.le<uint32_t>("group_id");
      c.consumer_groups.push_back(g);
    }
    return c;
  });
}

}  // namespace kib::iggy::wire
