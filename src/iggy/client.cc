#include "iggy/client.h"

#include <chrono>

#include "iggy/errors.h"

namespace kib::iggy {
namespace {

uint64_t now_us() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

template <typename T>
Result<T> required(Result<std::optional<T>> r, const char* what) {
  if (!r) return r.error();
  if (!r.value()) return protocol_error(std::string(what) + ": empty reply");
  return std::move(*r.value());
}

}  // namespace

template <typename T, typename Decode>
void IggyClient::call(Result<wire::RequestFrame> frame, Callback<T> cb, Decode decode) {
  if (!frame) {
    pool_->post([cb = std::move(cb), e = frame.error()] { cb(e); });
    return;
  }
  pool_->submit(
      std::move(frame.value()),
      [cb = std::move(cb), decode = std::move(decode)](Result<Reply> r) {
        if (!r) {
          cb(r.error());
          return;
        }
        cb(decode(r.value()));
      },
      affinity_);
}

void IggyClient::call_unit(Result<wire::RequestFrame> frame, Callback<Unit> cb) {
  call<Unit>(std::move(frame), std::move(cb), [](const Reply&) -> Result<Unit> { return Unit{}; });
}

// ---- system

void IggyClient::ping(Callback<Unit> cb) { call_unit(wire::encode_ping(), std::move(cb)); }

void IggyClient::get_stats(Callback<Stats> cb) {
  call<Stats>(wire::encode_get_stats(), std::move(cb), [](const Reply& r) { return wire::decode_stats(r.payload); });
}

void IggyClient::get_me(Callback<ClientInfo> cb) {
  call<ClientInfo>(wire::encode_get_me(), std::move(cb),
                   [](const Reply& r) { return wire::decode_client_info(r.payload); });
}

// ---- streams

void IggyClient::get_stream(const Identifier& stream, Callback<std::optional<StreamInfo>> cb) {
  call<std::optional<StreamInfo>>(wire::encode_get_stream(stream), std::move(cb),
                                  [](const Reply& r) { return wire::decode_stream_details(r.payload); });
}

void IggyClient::get_streams(Callback<std::vector<StreamInfo>> cb) {
  call<std::vector<StreamInfo>>(wire::encode_get_streams(), std::move(cb),
                                [](const Reply& r) { return wire::decode_streams(r.payload); });
}

void IggyClient::create_stream(std::string_view name, Callback<StreamInfo> cb) {
  call<StreamInfo>(wire::encode_create_stream(name), std::move(cb),
                   [](const Reply& r) { return wire::decode_stream(r.payload); });
}

void IggyClient::update_stream(const Identifier& stream, std::string_view new_name, Callback<Unit> cb) {
  call_unit(wire::encode_update_stream(stream, new_name), std::move(cb));
}

void IggyClient::delete_stream(const Identifier& stream, Callback<Unit> cb) {
  call_unit(wire::encode_delete_stream(stream), std::move(cb));
}

void IggyClient::purge_stream(const Identifier& stream, Callback<Unit> cb) {
  call_unit(wire::encode_purge_stream(stream), std::move(cb));
}

// ---- topics

void IggyClient::get_topic(const Identifier& stream, const Identifier& topic, Callback<std::optional<TopicInfo>> cb) {
  call<std::optional<TopicInfo>>(wire::encode_get_topic(stream, topic), std::move(cb),
                                 [](const Reply& r) { return wire::decode_topic_details(r.payload); });
}

void IggyClient::get_topics(const Identifier& stream, Callback<std::vector<TopicInfo>> cb) {
  call<std::vector<TopicInfo>>(wire::encode_get_topics(stream), std::move(cb),
                               [](const Reply& r) { return wire::decode_topics(r.payload); });
}

void IggyClient::create_topic(const Identifier& stream, const TopicConfig& config, Callback<TopicInfo> cb) {
  // Topic options depend on the server (server_profile.h): encoded by the connection that sends it.
  pool_->submit_encoded(
      [stream, config](const ServerProfile& server) { return wire::encode_create_topic(stream, config, server); },
      [cb = std::move(cb)](Result<Reply> r) {
        if (!r) {
          cb(r.error());
          return;
        }
        cb(required<TopicInfo>(wire::decode_topic_details(r.value().payload), "CreateTopic"));
      },
      affinity_);
}

void IggyClient::update_topic(const Identifier& stream, const Identifier& topic, const TopicUpdate& update,
                              Callback<Unit> cb) {
  call_unit(wire::encode_update_topic(stream, topic, update), std::move(cb));
}

void IggyClient::delete_topic(const Identifier& stream, const Identifier& topic, Callback<Unit> cb) {
  call_unit(wire::encode_delete_topic(stream, topic), std::move(cb));
}

void IggyClient::purge_topic(const Identifier& stream, const Identifier& topic, Callback<Unit> cb) {
  call_unit(wire::encode_purge_topic(stream, topic), std::move(cb));
}

// ---- partitions, segments

void IggyClient::create_partitions(const Identifier& stream, const Identifier& topic, uint32_t count,
                                   Callback<Unit> cb) {
  call_unit(wire::encode_create_partitions(stream, topic, count), std::move(cb));
}

void IggyClient::delete_partitions(const Identifier& stream, const Identifier& topic, uint32_t count,
                                   Callback<Unit> cb) {
  call_unit(wire::encode_delete_partitions(stream, topic, count), std::move(cb));
}

void IggyClient::delete_segments(const Identifier& stream, const Identifier& topic, uint32_t partition_id,
                                 uint32_t segments, Callback<Unit> cb) {
  call_unit(wire::encode_delete_segments(stream, topic, partition_id, segments), std::move(cb));
}

// ---- messages

void IggyClient::send_messages(const Identifier& stream, const Identifier& topic, const Partitioning& partitioning,
                               std::span<const OutgoingMessage> messages, Callback<SendConfirmation> cb) {
  const auto count = static_cast<uint32_t>(messages.size());
  call<SendConfirmation>(wire::encode_send_messages(stream, topic, partitioning, messages, now_us()), std::move(cb),
                         [count, pool = pool_](const Reply& r) {
                           auto c = wire::decode_send_confirmation(r.payload, count, r.generation);
                           if (!c) pool->note_unconfirmed_send();
                           return c;
                         });
}

void IggyClient::poll_messages(const PollRequest& request, Callback<PolledMessages> cb) {
  call<PolledMessages>(wire::encode_poll_messages(request), std::move(cb),
                       [](const Reply& r) { return wire::decode_polled_messages(r.body, r.payload); });
}

// ---- consumer offsets

void IggyClient::get_consumer_offset(const Consumer& consumer, const Identifier& stream, const Identifier& topic,
                                     std::optional<uint32_t> partition_id,
                                     Callback<std::optional<ConsumerOffsetInfo>> cb) {
  call<std::optional<ConsumerOffsetInfo>>(wire::encode_get_consumer_offset(consumer, stream, topic, partition_id),
                                          std::move(cb),
                                          [](const Reply& r) { return wire::decode_consumer_offset(r.payload); });
}

void IggyClient::store_consumer_offset(const Consumer& consumer, const Identifier& stream, const Identifier& topic,
                                       std::optional<uint32_t> partition_id, uint64_t offset, Callback<Unit> cb) {
  call_unit(wire::encode_store_consumer_offset(consumer, stream, topic, partition_id, offset), std::move(cb));
}

void IggyClient::delete_consumer_offset(const Consumer& consumer, const Identifier& stream, const Identifier& topic,
                                        std::optional<uint32_t> partition_id, Callback<Unit> cb) {
  call_unit(wire::encode_delete_consumer_offset(consumer, stream, topic, partition_id), std::move(cb));
}

// ---- consumer groups

void IggyClient::get_consumer_group(const Identifier& stream, const Identifier& topic, const Identifier& group,
                                    Callback<std::optional<ConsumerGroupInfo>> cb) {
  call<std::optional<ConsumerGroupInfo>>(wire::encode_get_consumer_group(stream, topic, group), std::move(cb),
                                         [](const Reply& r) { return wire::decode_consumer_group_details(r.payload); });
}

void IggyClient::get_consumer_groups(const Identifier& stream, const Identifier& topic,
                                     Callback<std::vector<ConsumerGroupInfo>> cb) {
  call<std::vector<ConsumerGroupInfo>>(wire::encode_get_consumer_groups(stream, topic), std::move(cb),
                                       [](const Reply& r) { return wire::decode_consumer_groups(r.payload); });
}

void IggyClient::create_consumer_group(const Identifier& stream, const Identifier& topic, std::string_view name,
                                       Callback<ConsumerGroupInfo> cb) {
  call<ConsumerGroupInfo>(wire::encode_create_consumer_group(stream, topic, name), std::move(cb), [](const Reply& r) {
    return required<ConsumerGroupInfo>(wire::decode_consumer_group_details(r.payload), "CreateConsumerGroup");
  });
}

void IggyClient::delete_consumer_group(const Identifier& stream, const Identifier& topic, const Identifier& group,
                                       Callback<Unit> cb) {
  call_unit(wire::encode_delete_consumer_group(stream, topic, group), std::move(cb));
}

void IggyClient::join_consumer_group(const Identifier& stream, const Identifier& topic, const Identifier& group,
                                     Callback<Unit> cb) {
  call_unit(wire::encode_join_consumer_group(stream, topic, group), std::move(cb));
}

void IggyClient::leave_consumer_group(const Identifier& stream, const Identifier& topic, const Identifier& group,
                                      Callback<Unit> cb) {
  call_unit(wire::encode_leave_consumer_group(stream, topic, group), std::move(cb));
}

void IggyClient::sync_consumer_group(const Identifier& stream, const Identifier& topic, const Identifier& group,
                                     Callback<std::optional<ConsumerGroupAssignment>> cb) {
  call<std::optional<ConsumerGroupAssignment>>(
      wire::encode_sync_consumer_group(stream, topic, group), std::move(cb),
      [](const Reply& r) { return wire::decode_consumer_group_assignment(r.payload); });
}

// ---- users

void IggyClient::get_user(const Identifier& user, Callback<std::optional<UserInfo>> cb) {
  call<std::optional<UserInfo>>(wire::encode_get_user(user), std::move(cb),
                                [](const Reply& r) { return wire::decode_user_details(r.payload); });
}

void IggyClient::get_users(Callback<std::vector<UserInfo>> cb) {
  call<std::vector<UserInfo>>(wire::encode_get_users(), std::move(cb),
                              [](const Reply& r) { return wire::decode_users(r.payload); });
}

void IggyClient::create_user(std::string_view username, std::string_view password, UserStatus status,
                             const std::optional<Permissions>& permissions, Callback<UserInfo> cb) {
  call<UserInfo>(wire::encode_create_user(username, password, status, permissions), std::move(cb), [](const Reply& r) {
    return required<UserInfo>(wire::decode_user_details(r.payload), "CreateUser");
  });
}

void IggyClient::update_user(const Identifier& user, std::optional<std::string_view> new_username,
                             std::optional<UserStatus> status, Callback<Unit> cb) {
  call_unit(wire::encode_update_user(user, new_username, status), std::move(cb));
}

void IggyClient::update_permissions(const Identifier& user, const std::optional<Permissions>& permissions,
                                    Callback<Unit> cb) {
  call_unit(wire::encode_update_permissions(user, permissions), std::move(cb));
}

void IggyClient::change_password(const Identifier& user, std::string_view current_password,
                                 std::string_view new_password, Callback<Unit> cb) {
  call_unit(wire::encode_change_password(user, current_password, new_password), std::move(cb));
}

void IggyClient::delete_user(const Identifier& user, Callback<Unit> cb) {
  call_unit(wire::encode_delete_user(user), std::move(cb));
}

// ---- personal access tokens

void IggyClient::create_personal_access_token(std::string_view name, uint64_t expiry_us, Callback<std::string> cb) {
  call<std::string>(wire::encode_create_personal_access_token(name, expiry_us), std::move(cb),
                    [](const Reply& r) { return wire::decode_raw_personal_access_token(r.payload); });
}

void IggyClient::get_personal_access_tokens(Callback<std::vector<PersonalAccessTokenInfo>> cb) {
  call<std::vector<PersonalAccessTokenInfo>>(wire::encode_get_personal_access_tokens(), std::move(cb),
                                             [](const Reply& r) { return wire::decode_personal_access_tokens(r.payload); });
}

void IggyClient::delete_personal_access_token(std::string_view name, Callback<Unit> cb) {
  call_unit(wire::encode_delete_personal_access_token(name), std::move(cb));
}

}  // namespace kib::iggy
