// What the log's services ask of Iggy, in one partition's terms. IggyLogBackend is the real one
// (the bridge's stream, plain polls without auto-commit); unit tests give the services doubles.
//
// The real backend drops the replies of requests still in Iggy once it is destroyed: the log's
// services are destroyed with it and their callbacks are never called then.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/liveness.h"
#include "iggy/client.h"

namespace kib::bridge {

class TopicCatalog;

class LogBackend {
 public:
  virtual ~LogBackend() = default;
  // A poll of `count` messages of one partition (as the current uv::OwnerScope's work). `as`: the
  // Iggy identity it runs as (a principal's own pool, bridge/security/iggy_identities.h);
  // nullptr: the bridge's.
  virtual void poll(const std::string& topic, int32_t partition, iggy::PollingStrategy strategy, uint32_t count,
                    iggy::Callback<iggy::PolledMessages> cb, iggy::IggyPool* as = nullptr) = 0;
  // A poll of a compacted partition's generation topic (docs/compaction.md): partition 0 of
  // `topic` in `stream`, the cleaner's stream, not the bridge's.
  virtual void poll_generation(const std::string& stream, const std::string& topic, iggy::PollingStrategy strategy,
                               uint32_t count, iggy::Callback<iggy::PolledMessages> cb,
                               iggy::IggyPool* as = nullptr) = 0;
  virtual void get_topic(const std::string& topic, iggy::Callback<std::optional<iggy::TopicInfo>> cb) = 0;
  // GetTopic of a generation topic in `stream` (the cleaner's): its size for DescribeLogDirs.
  virtual void get_generation_topic(const std::string& stream, const std::string& topic,
                                    iggy::Callback<std::optional<iggy::TopicInfo>> cb) = 0;
  virtual void send(const std::string& topic, int32_t partition, std::span<const iggy::OutgoingMessage> messages,
                    iggy::Callback<iggy::SendConfirmation> cb, iggy::IggyPool* as = nullptr) = 0;
  // Drops the requests of `owner` (uvx/work_owner.h) still queued for Iggy.
  virtual void cancel_owner(uint64_t owner) = 0;
  // DeleteSegments: the `segments` oldest sealed segments of one partition (DeleteRecords).
  virtual void delete_segments(const std::string& topic, int32_t partition, uint32_t segments,
                               iggy::Callback<Unit> cb) = 0;
  // GetStats: disk totals for DescribeLogDirs (needs the read_servers permission).
  virtual void get_stats(iggy::Callback<iggy::Stats> cb) = 0;
};

class IggyLogBackend final : public LogBackend {
 public:
  IggyLogBackend(iggy::IggyClient& iggy, TopicCatalog& catalog) : iggy_(iggy), catalog_(catalog) {}
  ~IggyLogBackend() override { alive_.end(); }

  void poll(const std::string& topic, int32_t partition, iggy::PollingStrategy strategy, uint32_t count,
            iggy::Callback<iggy::PolledMessages> cb, iggy::IggyPool* as = nullptr) override;
  void poll_generation(const std::string& stream, const std::string& topic, iggy::PollingStrategy strategy,
                       uint32_t count, iggy::Callback<iggy::PolledMessages> cb, iggy::IggyPool* as = nullptr) override;
  void get_topic(const std::string& topic, iggy::Callback<std::optional<iggy::TopicInfo>> cb) override;
  void get_generation_topic(const std::string& stream, const std::string& topic,
                            iggy::Callback<std::optional<iggy::TopicInfo>> cb) override;
  void send(const std::string& topic, int32_t partition, std::span<const iggy::OutgoingMessage> messages,
            iggy::Callback<iggy::SendConfirmation> cb, iggy::IggyPool* as = nullptr) override;
  void cancel_owner(uint64_t owner) override;
  void delete_segments(const std::string& topic, int32_t partition, uint32_t segments,
                       iggy::Callback<Unit> cb) override;
  void get_stats(iggy::Callback<iggy::Stats> cb) override;

 private:
  template <typename T>
  iggy::Callback<T> guarded(iggy::Callback<T> cb) {
    return [alive = alive_.token(), cb = std::move(cb)](Result<T> r) mutable {
      if (!alive) return;
      cb(std::move(r));
    };
  }

  iggy::IggyClient client(iggy::IggyPool* as) const { return as ? iggy::IggyClient(*as) : iggy_; }

  iggy::IggyClient iggy_;
  TopicCatalog& catalog_;
  Liveness alive_;
};

}  // namespace kib::bridge
