// In-process doubles for unit tests of the log's services (src/bridge/log, bridge/producers):
// an Iggy that keeps partitions in memory and answers only when the test calls serve() (so no
// reply runs inside the call that asked), a producer registry that records what it is told,
// and Kafka batches mapped to Iggy messages as Produce would send them.
#pragma once

#include <boost/test/unit_test.hpp>
#include <uv.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge/errors.h"
#include "bridge/log/appender.h"
#include "bridge/log/log_backend.h"
#include "bridge/producers/producer_registry.h"
#include "common/bytes.h"
#include "kafka/records/record_batch.h"
#include "uvx/work_owner.h"

namespace kib::bridge::testing {

// A libuv loop for timers and posted tasks; spin() runs what is ready.
struct TestLoop {
  uv_loop_t loop;
  TestLoop() { uv_loop_init(&loop); }
  ~TestLoop() {
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  void spin(int rounds = 3) {
    for (int i = 0; i < rounds; ++i) uv_run(&loop, UV_RUN_NOWAIT);
  }
  // Runs the loop until `done` or about `ms` of loop time passed.
  template <typename F>
  void run_until(F done, uint64_t ms = 2000) {
    const uint64_t until = uv_now(&loop) + ms;
    while (!done() && uv_now(&loop) < until) {
      uv_run(&loop, UV_RUN_NOWAIT);
      uv_sleep(1);
      uv_update_time(&loop);
    }
  }
};

class FakeIggy final : public LogBackend {
 public:
  struct Stored {
    iggy::MessageId id;
    uint64_t origin_us = 0;
    Bytes payload, headers;
  };
  struct Partition {
    uint64_t log_start = 0;  // offsets below it were removed (retention)
    std::vector<Stored> messages;  // offset = index
  };

  std::map<std::string, std::map<int32_t, Partition>> topics;
  int polls = 0, get_topics = 0, sends = 0;
  bool fail_polls = false, fail_sends = false, fail_get_topic = false;
  std::vector<uint64_t> poll_owners;   // uv::OwnerScope of each poll
  std::vector<int64_t> poll_offsets;   // of each poll, -1 for Poll First
  std::vector<size_t> send_sizes;     // messages per send
  std::vector<uint64_t> cancelled;
  std::vector<iggy::IggyPool*> poll_identities, send_identities;  // `as` of each poll and send

  void add_topic(const std::string& name, int32_t partitions) {
    for (int32_t i = 0; i < partitions; ++i) topics[name][i];
  }
  Partition& partition(const std::string& t, int32_t p) { return topics.at(t).at(p); }

  // Answers the requests made so far (and those the answers make), in order, at most `max`.
  size_t serve(size_t max = SIZE_MAX) {
    size_t n = 0;
    while (!pending_.empty() && n < max) {
      auto f = std::move(pending_.front());
      pending_.pop_front();
      f();
      ++n;
    }
    return n;
  }
  size_t pending() const { return pending_.size(); }

  void poll(const std::string& topic, int32_t partition, iggy::PollingStrategy strategy, uint32_t count,
            iggy::Callback<iggy::PolledMessages> cb, iggy::IggyPool* as = nullptr) override {
    ++polls;
    poll_identities.push_back(as);
    poll_owners.push_back(uv::current_owner().id);
    poll_offsets.push_back(strategy.kind == iggy::PollingKind::kOffset ? static_cast<int64_t>(strategy.value) : -1);
    pending_.push_back([this, topic, partition, strategy, count, cb = std::move(cb)] {
      if (fail_polls) return cb(Error{ErrorDomain::kIggy, 1, "poll failed (test)"});
      cb(reply(topic, partition, strategy, count));
    });
  }
  // Generation topics (docs/compaction.md) live in `topics` as "<stream>/<topic>", partition 0.
  int generation_polls = 0;
  std::vector<int64_t> generation_poll_offsets;
  void poll_generation(const std::string& stream, const std::string& topic, iggy::PollingStrategy strategy,
                       uint32_t count, iggy::Callback<iggy::PolledMessages> cb, iggy::IggyPool* = nullptr) override {
    ++generation_polls;
    generation_poll_offsets.push_back(strategy.kind == iggy::PollingKind::kOffset ? static_cast<int64_t>(strategy.value) : -1);
    pending_.push_back([this, name = stream + "/" + topic, strategy, count, cb = std::move(cb)] {
      if (fail_polls) return cb(Error{ErrorDomain::kIggy, 1, "poll failed (test)"});
      if (!topics.count(name)) return cb(Error{ErrorDomain::kIggy, 2010, "topic not found (test)"});
      cb(reply(name, 0, strategy, count));
    });
  }
  void get_topic(const std::string& topic, iggy::Callback<std::optional<iggy::TopicInfo>> cb) override {
    ++get_topics;
    pending_.push_back([this, topic, cb = std::move(cb)] {
      if (fail_get_topic) return cb(Error{ErrorDomain::kIggy, 1, "get topic failed (test)"});
      auto t = topics.find(topic);
      if (t == topics.end()) return cb(std::optional<iggy::TopicInfo>());
      iggy::TopicInfo info;
      info.name = topic;
      for (const auto& [id, p] : t->second) {
        iggy::PartitionInfo pi;
        pi.id = static_cast<uint32_t>(id);
        pi.messages_count = p.messages.size() - p.log_start;
        pi.current_offset = p.messages.empty() ? 0 : p.messages.size() - 1;
        pi.size_bytes = pi.messages_count * 100;
        auto seg = segments.find({topic, id});
        pi.segments_count = seg == segments.end() ? 1 : seg->second;
        info.partitions.push_back(pi);
      }
      cb(std::optional<iggy::TopicInfo>(std::move(info)));
    });
  }
  // Generation topics as in poll_generation; GetTopic of one that is not there: not found.
  int generation_get_topics = 0;
  void get_generation_topic(const std::string& stream, const std::string& topic,
                            iggy::Callback<std::optional<iggy::TopicInfo>> cb) override {
    ++generation_get_topics;
    get_topic(stream + "/" + topic, std::move(cb));
    --get_topics;
  }
  void send(const std::string& topic, int32_t partition, std::span<const iggy::OutgoingMessage> messages,
            iggy::Callback<iggy::SendConfirmation> cb, iggy::IggyPool* as = nullptr) override {
    ++sends;
    send_identities.push_back(as);
    send_sizes.push_back(messages.size());
    std::vector<Stored> copy;
    for (const auto& m : messages)
      copy.push_back({m.id, m.origin_timestamp_us, Bytes(m.payload.begin(), m.payload.end()),
                      Bytes(m.user_headers.begin(), m.user_headers.end())});
    pending_.push_back([this, topic, partition, copy = std::move(copy), cb = std::move(cb)] {
      if (fail_sends) return cb(Error{ErrorDomain::kTransport, 1, "connection lost (test)"});
      Partition& p = topics.at(topic).at(partition);
      iggy::SendConfirmation c;
      c.reported = true;
      c.base_offset = p.messages.size();
      c.message_count = static_cast<uint32_t>(copy.size());
      p.messages.insert(p.messages.end(), copy.begin(), copy.end());
      cb(c);
    });
  }
  void cancel_owner(uint64_t owner) override { cancelled.push_back(owner); }
  struct SegmentDeletion {
    std::string topic;
    int32_t partition;
    uint32_t segments;
  };
  std::vector<SegmentDeletion> segment_deletions;
  std::map<std::pair<std::string, int32_t>, uint32_t> segments;  // GetTopic's segments_count (default 1)
  std::optional<iggy::Stats> stats;                               // GetStats; nullopt = refused
  void delete_segments(const std::string& topic, int32_t partition, uint32_t count,
                       iggy::Callback<Unit> cb) override {
    segment_deletions.push_back({topic, partition, count});
    pending_.push_back([cb = std::move(cb)] { cb(Unit{}); });
  }
  void get_stats(iggy::Callback<iggy::Stats> cb) override {
    pending_.push_back([this, cb = std::move(cb)] {
      if (!stats) return cb(Error{ErrorDomain::kIggy, 12, "unauthorized (test)"});
      cb(*stats);
    });
  }

  iggy::PolledMessages reply(const std::string& topic, int32_t partition, iggy::PollingStrategy strategy,
                             uint32_t count) {
    const Partition& p = topics.at(topic).at(partition);
    uint64_t from = strategy.kind == iggy::PollingKind::kOffset ? strategy.value : p.log_start;
    from = std::max(from, p.log_start);
    iggy::PolledMessages out;
    out.partition_id = static_cast<uint32_t>(partition);
    out.current_offset = p.messages.empty() ? 0 : p.messages.size() - 1;
    auto buffer = std::make_shared<Bytes>();
    std::vector<std::pair<size_t, size_t>> at;  // payload, headers positions
    const uint64_t end = std::min<uint64_t>(p.messages.size(), from + count);
    for (uint64_t o = from; o < end; ++o) {
      at.emplace_back(buffer->size(), buffer->size() + p.messages[o].payload.size());
      buffer->insert(buffer->end(), p.messages[o].payload.begin(), p.messages[o].payload.end());
      buffer->insert(buffer->end(), p.messages[o].headers.begin(), p.messages[o].headers.end());
    }
    for (uint64_t o = from; o < end; ++o) {
      const Stored& s = p.messages[o];
      iggy::MessageView v;
      v.offset = o;
      v.origin_timestamp_us = s.origin_us;
      v.timestamp_us = s.origin_us;
      v.id = s.id;
      const auto [pay, hdr] = at[o - from];
      v.payload = ByteSpan(buffer->data() + pay, s.payload.size());
      v.user_headers = ByteSpan(buffer->data() + hdr, s.headers.size());
      out.messages.push_back(v);
    }
    out.buffer = std::move(buffer);
    return out;
  }

 private:
  std::deque<std::function<void()>> pending_;
};

// A registry that answers check() from a script (kAppend by default) and records the rest.
class FakeRegistry final : public ProducerRegistry {
 public:
  std::vector<ProducerOnPartition> producers_on(const std::string&, PartitionId) const override { return {}; }
  struct Recorded {
    int64_t producer_id;
    int16_t epoch;
    int32_t first_sequence, count;
    int64_t base_offset;
  };
  std::map<int32_t, SequenceCheck> verdicts;  // by first sequence
  std::vector<Recorded> recorded;
  std::vector<int32_t> aborted;
  int checks = 0;

  Status load() override { return ok_status(); }
  void init_producer(std::optional<ProducerIdAndEpoch>, std::function<void(Result<ProducerIdAndEpoch>)>) override {}
  SequenceCheck check(ProducerId, ProducerEpoch, const std::string&, PartitionId, int32_t first_sequence,
                      int32_t) override {
    ++checks;
    auto it = verdicts.find(first_sequence);
    return it == verdicts.end() ? SequenceCheck{} : it->second;
  }
  bool is_reserved(ProducerId, const std::string&, PartitionId, int32_t) const override { return true; }
  void record_append(ProducerId producer_id, ProducerEpoch epoch, const std::string&, PartitionId,
                     int32_t first_sequence, int32_t count, KafkaOffset base_offset,
                     std::function<void(Status)> durable) override {
    recorded.push_back({producer_id(), epoch(), first_sequence, count, base_offset()});
    // A recorded range is known from now on: its retry is a duplicate.
    verdicts[first_sequence] = SequenceCheck{SequenceVerdict::kDuplicate, base_offset};
    if (durable) durable(ok_status());
  }
  void abort_append(ProducerId, const std::string&, PartitionId, int32_t first_sequence) override {
    aborted.push_back(first_sequence);
  }
};

// A Kafka batch of `values` (timestamps ts_ms, ts_ms + 1, ... unless `timestamps` is given),
// prepared as Produce hands it to the appender. Owns the bytes its views point into.
struct BatchSpec {
  std::vector<std::string> values;
  int64_t ts_ms = 1'700'000'000'000;
  std::vector<int64_t> timestamps;
  int64_t producer_id = -1;
  int16_t epoch = 0;
  int32_t base_sequence = -1;

  BatchSpec(std::vector<std::string> v) : values(std::move(v)) {}  // NOLINT: implicit on purpose
  BatchSpec(std::vector<std::string> v, int64_t ts, std::vector<int64_t> times = {}, int64_t pid = -1,
            int16_t ep = 0, int32_t seq = -1)
      : values(std::move(v)), ts_ms(ts), timestamps(std::move(times)), producer_id(pid), epoch(ep),
        base_sequence(seq) {}
};

inline std::shared_ptr<AppendJob> make_job(const BatchSpec& spec, std::vector<ProduceResult>* results = nullptr) {
  auto values = std::make_shared<std::vector<std::string>>(spec.values);
  std::vector<kafka::RecordToEncode> encode(values->size());
  for (size_t i = 0; i < values->size(); ++i) {
    encode[i].timestamp = spec.timestamps.empty() ? spec.ts_ms + static_cast<int64_t>(i) : spec.timestamps[i];
    encode[i].value = ByteSpan(reinterpret_cast<const uint8_t*>((*values)[i].data()), (*values)[i].size());
  }
  kafka::BatchSettings settings;
  settings.producer_id = spec.producer_id;
  settings.producer_epoch = spec.producer_id >= 0 ? spec.epoch : -1;
  settings.base_sequence = spec.producer_id >= 0 ? spec.base_sequence : -1;
  ByteWriter w;
  kafka::encode_record_batch(w, settings, encode);
  auto wire = std::make_shared<Bytes>(w.take());
  kafka::DecompressionBudget budget{64u << 20};
  auto decoded = kafka::decode_record_batches(*wire, budget);
  BOOST_REQUIRE(decoded.ok());
  auto job = std::make_shared<AppendJob>();
  job->batches = std::move(decoded.value());
  job->input = SharedSpan{wire, *wire};
  auto refused = prepare_append(*job, "t", PartitionId(0), 1 << 20);
  BOOST_REQUIRE(!refused.has_value());
  if (results) job->cb = [results](ProduceResult r) { results->push_back(std::move(r)); };
  else job->cb = [](ProduceResult) {};
  return job;
}

// Stores a batch at the end of the partition as Produce would have, without telling the bridge
// (a native append, or one made before the test looks).
inline void store(FakeIggy& iggy, const std::string& topic, int32_t partition, const BatchSpec& spec) {
  auto job = make_job(spec);
  for (const auto& m : job->mapped.messages)
    iggy.partition(topic, partition)
        .messages.push_back({m.id, m.origin_timestamp_us, Bytes(m.payload.begin(), m.payload.end()),
                             Bytes(m.user_headers.begin(), m.user_headers.end())});
}

}  // namespace kib::bridge::testing
