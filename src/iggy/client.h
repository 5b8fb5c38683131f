// IggyClient: the typed asynchronous Iggy API. Every call encodes one request, queues it on an
// IggyPool and reports through `Callback<T>` = std::function<void(Result<T>)>, always on the loop
// thread and never from inside the call itself. Errors: ErrorDomain::kIggy (code = Iggy code, see
// errors.h), kTransport (retriable, request may or may not have been applied), kProtocol
// (malformed reply), kInvalid (argument rejected before sending).
//
// "Not found" on get_stream / get_topic / get_user / get_consumer_group / get_consumer_offset is
// a successful empty optional, as Iggy reports it. Address streams and topics by name: Iggy reuses
// numeric ids after deletes.
//
// The client is a cheap handle (pool pointer + affinity); copy it freely. pinned(i) routes every
// request to connection i, which Iggy consumer groups need (membership belongs to a connection).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "iggy/pool.h"
#include "iggy/protocol.h"
#include "iggy/types.h"

namespace kib::iggy {

template <typename T>
using Callback = std::function<void(Result<T>)>;

class IggyClient {
 public:
  explicit IggyClient(IggyPool& pool, int affinity = -1) : pool_(&pool), affinity_(affinity) {}
  IggyClient pinned(size_t connection) const { return IggyClient(*pool_, static_cast<int>(connection)); }
  IggyPool& pool() const { return *pool_; }

  // ---- system
  void ping(Callback<Unit> cb);
  void get_stats(Callback<Stats> cb);
  void get_me(Callback<ClientInfo> cb);

  // ---- streams
  void get_stream(const Identifier& stream, Callback<std::optional<StreamInfo>> cb);
  void get_streams(Callback<std::vector<StreamInfo>> cb);
  void create_stream(std::string_view name, Callback<StreamInfo> cb);
  void update_stream(const Identifier& stream, std::string_view new_name, Callback<Unit> cb);
  void delete_stream(const Identifier& stream, Callback<Unit> cb);
  void purge_stream(const Identifier& stream, Callback<Unit> cb);

  // ---- topics
  void get_topic(const Identifier& stream, const Identifier& topic, Callback<std::optional<TopicInfo>> cb);
  void get_topics(const Identifier& stream, Callback<std::vector<TopicInfo>> cb);
  void create_topic(const Identifier& stream, const TopicConfig& config, Callback<TopicInfo> cb);
  void update_topic(const Identifier& stream, const Identifier& topic, const TopicUpdate& update, Callback<Unit> cb);
  void delete_topic(const Identifier& stream, const Identifier& topic, Callback<Unit> cb);
  void purge_topic(const Identifier& stream, const Identifier& topic, Callback<Unit> cb);

  // ---- partitions, segments
  void create_partitions(const Identifier& stream, const Identifier& topic, uint32_t count, Callback<Unit> cb);
  void delete_partitions(const Identifier& stream, const Identifier& topic, uint32_t count, Callback<Unit> cb);
  // Deletes the `segments` oldest sealed segments (asynchronous on the server, see docs/iggy-protocol.md §4.5).
  void delete_segments(const Identifier& stream, const Identifier& topic, uint32_t partition_id,
                       uint32_t segments, Callback<Unit> cb);

  // ---- messages
  // One batch; the messages' spans are copied into the frame before this returns.
  void send_messages(const Identifier& stream, const Identifier& topic, const Partitioning& partitioning,
                     std::span<const OutgoingMessage> messages, Callback<SendConfirmation> cb);
  // The reply buffer is kept alive by PolledMessages::buffer; message views point into it.
  void poll_messages(const PollRequest& request, Callback<PolledMessages> cb);

  // ---- consumer offsets (stored value = last consumed offset)
  void get_consumer_offset(const Consumer& consumer, const Identifier& stream, const Identifier& topic,
                           std::optional<uint32_t> partition_id, Callback<std::optional<ConsumerOffsetInfo>> cb);
  void store_consumer_offset(const Consumer& consumer, const Identifier& stream, const Identifier& topic,
                             std::optional<uint32_t> partition_id, uint64_t offset, Callback<Unit> cb);
  void delete_consumer_offset(const Consumer& consumer, const Identifier& stream, const Identifier& topic,
                              std::optional<uint32_t> partition_id, Callback<Unit> cb);

  // ---- consumer groups (Iggy semantics: server-assigned, membership per connection)
  void get_consumer_group(const Identifier& stream, const Identifier& topic, const Identifier& group,
                          Callback<std::optional<ConsumerGroupInfo>> cb);
  void get_consumer_groups(const Identifier& stream, const Identifier& topic,
                           Callback<std::vector<ConsumerGroupInfo>> cb);
  void create_consumer_group(const Identifier& stream, const Identifier& topic, std::string_view name,
                             Callback<ConsumerGroupInfo> cb);
  void delete_consumer_group(const Identifier& stream, const Identifier& topic, const Identifier& group,
                             Callback<Unit> cb);
  void join_consumer_group(const Identifier& stream, const Identifier& topic, const Identifier& group,
                           Callback<Unit> cb);
  void leave_consumer_group(const Identifier& stream, const Identifier& topic, const Identifier& group,
                            Callback<Unit> cb);
  // This connection's assignment; empty optional = not a member.
  void sync_consumer_group(const Identifier& stream, const Identifier& topic, const Identifier& group,
                           Callback<std::optional<ConsumerGroupAssignment>> cb);

  // ---- users and permissions
  void get_user(const Identifier& user, Callback<std::optional<UserInfo>> cb);
  void get_users(Callback<std::vector<UserInfo>> cb);
  void create_user(std::string_view username, std::string_view password, UserStatus status,
                   const std::optional<Permissions>& permissions, Callback<UserInfo> cb);
  void update_user(const Identifier& user, std::optional<std::string_view> new_username,
                   std::optional<UserStatus> status, Callback<Unit> cb);
  // nullopt clears every permission.
  void update_permissions(const Identifier& user, const std::optional<Permissions>& permissions, Callback<Unit> cb);
  void change_password(const Identifier& user, std::string_view current_password, std::string_view new_password,
                       Callback<Unit> cb);
  void delete_user(const Identifier& user, Callback<Unit> cb);

  // ---- personal access tokens (of the logged-in user)
  // expiry_us: lifetime in µs from now; 0 = never. Returns the raw token (shown once).
  void create_personal_access_token(std::string_view name, uint64_t expiry_us, Callback<std::string> cb);
  void get_personal_access_tokens(Callback<std::vector<PersonalAccessTokenInfo>> cb);
  void delete_personal_access_token(std::string_view name, Callback<Unit> cb);

 private:
  template <typename T, typename Decode>
  void call(Result<wire::RequestFrame> frame, Callback<T> cb, Decode decode);
  void call_unit(Result<wire::RequestFrame> frame, Callback<Unit> cb);

  IggyPool* pool_;
  int affinity_;
};

}  // namespace kib::iggy
