#include "bridge/log/log_backend.h"

#include "bridge/catalog/topic_catalog.h"

namespace kib::bridge {

namespace {
// Reads are plain polls without auto-commit: nothing is stored for this consumer id.
iggy::Consumer reader() { return iggy::Consumer::consumer(iggy::Identifier::numeric(0)); }
}  // namespace

void IggyLogBackend::poll(const std::string& topic, int32_t partition, iggy::PollingStrategy strategy, uint32_t count,
                          iggy::Callback<iggy::PolledMessages> cb, iggy::IggyPool* as) {
  iggy::PollRequest q;
  q.consumer = reader();
  q.stream = catalog_.stream();
  q.topic = iggy::Identifier::named(topic);
  q.partition_id = static_cast<uint32_t>(partition);
  q.strategy = strategy;
  q.count = count;
  q.auto_commit = false;
  client(as).poll_messages(q, guarded<iggy::PolledMessages>(std::move(cb)));
}

void IggyLogBackend::poll_generation(const std::string& stream, const std::string& topic,
                                     iggy::PollingStrategy strategy, uint32_t count,
                                     iggy::Callback<iggy::PolledMessages> cb, iggy::IggyPool* as) {
  iggy::PollRequest q;
  q.consumer = reader();
  q.stream = iggy::Identifier::named(stream);
  q.topic = iggy::Identifier::named(topic);
  q.partition_id = 0;
  q.strategy = strategy;
  q.count = count;
  q.auto_commit = false;
  client(as).poll_messages(q, guarded<iggy::PolledMessages>(std::move(cb)));
}

void IggyLogBackend::get_topic(const std::string& topic, iggy::Callback<std::optional<iggy::TopicInfo>> cb) {
  iggy_.get_topic(catalog_.stream(), iggy::Identifier::named(topic),
                  guarded<std::optional<iggy::TopicInfo>>(std::move(cb)));
}

void IggyLogBackend::get_generation_topic(const std::string& stream, const std::string& topic,
                                          iggy::Callback<std::optional<iggy::TopicInfo>> cb) {
  iggy_.get_topic(iggy::Identifier::named(stream), iggy::Identifier::named(topic),
                  guarded<std::optional<iggy::TopicInfo>>(std::move(cb)));
}

void IggyLogBackend::send(const std::string& topic, int32_t partition, std::span<const iggy::OutgoingMessage> messages,
                          iggy::Callback<iggy::SendConfirmation> cb, iggy::IggyPool* as) {
  client(as).send_messages(catalog_.stream(), iggy::Identifier::named(topic),
                      iggy::Partitioning::partition(static_cast<uint32_t>(partition)), messages,
                      guarded<iggy::SendConfirmation>(std::move(cb)));
}

void IggyLogBackend::cancel_owner(uint64_t owner) { iggy_.pool().cancel_owner(owner); }

void IggyLogBackend::delete_segments(const std::string& topic, int32_t partition, uint32_t segments,
                                     iggy::Callback<Unit> cb) {
  iggy_.delete_segments(catalog_.stream(), iggy::Identifier::named(topic), static_cast<uint32_t>(partition), segments,
                        guarded<Unit>(std::move(cb)));
}

void IggyLogBackend::get_stats(iggy::Callback<iggy::Stats> cb) { iggy_.get_stats(guarded<iggy::Stats>(std::move(cb))); }

}  // namespace kib::bridge
