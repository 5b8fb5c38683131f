// ListOffsets (key 2), v1-8: latest (-1), earliest (-2), max timestamp (-3, v7+), earliest
// local (-4, v8+; no tiered storage, so = earliest) and by timestamp, answered by the partition log.
// Each topic needs DESCRIBE, else its partitions get TOPIC_AUTHORIZATION_FAILED
// (KafkaApis.handleListOffsetRequest). A fan-out request (server/handlers/fanout.h): partitions
// are looked up a slice at a time, and one naming more than [limits] max_response_bytes can
// answer closes the connection.
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bridge/log/fetch_records.h"
#include "bridge/log/partition_log.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/fanout.h"
#include "server/handlers/fan_in_answer.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/list_offsets.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

using Response = msg::ListOffsetsResponse;

// One request's work, a slice at a time (server/handlers/fanout.h): first each partition is
// entered (its answer's slot, its topic's DESCRIBE check, the duplicate check), then each is
// looked up; the answer is encoded on the thread pool when it is large. Nothing of it runs in
// one go on the loop for more than a slice: a request naming 200,000 partitions held the loop
// 80-100 ms before (a std::map of names), then 11 ms (the answer's setup) and 11 ms (its encoding).
struct Call {
  explicit Call(Request&& r, msg::ListOffsetsRequest&& b) : req(std::move(r)), body(std::move(b)) {}
  Request req;
  msg::ListOffsetsRequest body;
  struct Entry {
    uint32_t t, p;
  };
  std::vector<Entry> todo;
  std::optional<RepeatedKeys> repeated;
  size_t next_t = 0, next_p = 0;  // the cursor of the entering pass
  uint64_t topic_hash = 0;        // of the name of the topic being entered
  std::vector<bool> may_describe;  // by topic
  std::shared_ptr<Response> resp = std::make_shared<Response>();
  size_t pending = 1;  // lookups in flight, plus one until every lookup has started
  size_t answer_bytes = 0;
  size_t entries = 0;

  bool alive() const { return req.conn && !req.conn->closed(); }

  // Topic t's slot in the answer (in request order, empty topics included) and its checks.
  void open_topic(size_t t) {
    const auto& topic = body.topics[t];
    resp->topics.emplace_back().name = topic.name;
    resp->topics.back().partitions.reserve(topic.partitions.size());
    topic_hash = std::hash<std::string_view>{}(topic.name);
    may_describe[t] = req.authorized(Op::kDescribe, Res::kTopic, topic.name);
  }

  // Entry i: the next partition of the request in order (a topic's partitions are entered one
  // after the other, so topic_hash is its topic's).
  void enter(size_t i) {
    if (i == 0) {  // the first slice, not the handler's turn (which decoded the request)
      todo.reserve(entries);
      repeated.emplace(entries);
      may_describe.resize(body.topics.size());
      resp->topics.reserve(body.topics.size());
    }
    for (;;) {
      if (resp->topics.size() == next_t) open_topic(next_t);
      if (next_p < body.topics[next_t].partitions.size()) break;
      ++next_t;
      next_p = 0;
    }
    const size_t t = next_t, p = next_p++;
    const auto& topic = body.topics[t];
    resp->topics[t].partitions.emplace_back().partition_index = topic.partitions[p].partition_index;
    todo.push_back({static_cast<uint32_t>(t), static_cast<uint32_t>(p)});
    const int32_t partition = topic.partitions[p].partition_index;
    // Kafka answers INVALID_REQUEST for every occurrence of a partition listed twice.
    repeated->add(i, topic_hash ^ (static_cast<uint64_t>(static_cast<uint32_t>(partition)) * 0x9E3779B97F4A7C15ULL),
                  [&](size_t j) {
                    const Entry& e = todo[j];
                    return body.topics[e.t].partitions[e.p].partition_index == partition &&
                           body.topics[e.t].name == topic.name;
                  });
  }

  void finish_one() {
    if (--pending > 0) return;
    // Large answers are encoded off the loop (26 bytes a partition at most).
    if (answer_bytes > kOffLoopAnswerBytes) req.respond.send_off_loop<Response>(req.conn ? req.conn->loop() : nullptr, resp, answer_bytes);
    else req.respond.send(*resp);
  }
  static constexpr size_t kOffLoopAnswerBytes = 256 * 1024;
};

void look_up(const std::shared_ptr<Call>& call, bridge::PartitionLog& log, bridge::IsolationLevel isolation, size_t i) {
  const Call::Entry& e = call->todo[i];
  const auto& topic = call->body.topics[e.t];
  const auto& rq = topic.partitions[e.p];
  auto& pr = call->resp->topics[e.t].partitions[e.p];
  if (!call->may_describe[e.t]) {
    pr.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
    pr.timestamp = -1;
    pr.offset = -1;
    return;
  }
  if (call->repeated->repeated(i)) {
    pr.error_code = to_int16(ErrorCode::kInvalidRequest);
    return;
  }
  ++call->pending;
  const uint32_t t = e.t, p = e.p;
  log.list_offsets(topic.name, PartitionId(rq.partition_index), TimestampMs(rq.timestamp),
                   [call, t, p](bridge::OffsetLookup r) {
                     auto& pr = call->resp->topics[t].partitions[p];
                     pr.error_code = to_int16(r.error);
                     pr.offset = r.error == ErrorCode::kNone ? r.offset() : -1;
                     pr.timestamp = r.error == ErrorCode::kNone ? r.timestamp() : -1;
                     // Kafka: the epoch of the offset found, -1 with the offset when none is (by timestamp).
                     pr.leader_epoch = r.error == ErrorCode::kNone && r.offset() >= 0 ? bridge::kPartitionLeaderEpoch : -1;
                     call->finish_one();
                   },
                   isolation);
}

void handle(bridge::PartitionLog& log, uint64_t max_response_bytes, Request&& req) {
  auto body = req.decode<msg::ListOffsetsRequest>();
  size_t entries = 0;
  for (const auto& t : body.topics) entries += t.partitions.size();
  // The answer's structs, known before any lookup starts (server/handlers/fanout.h).
  AnswerBudget budget(max_response_bytes);
  budget.add(entries * sizeof(Response::ListOffsetsPartitionResponse));
  for (const auto& t : body.topics) budget.add(sizeof(Response::ListOffsetsTopicResponse) + t.name.size());
  if (budget.over() || entries > UINT32_MAX / 2)  // Call::Entry and RepeatedKeys count in 32 bits
    return refuse_oversized_answer(req.respond, fmt::format("ListOffsets naming {} partitions", entries), budget);

  const auto isolation = body.isolation_level == 1 ? bridge::IsolationLevel::kReadCommitted
                                                    : bridge::IsolationLevel::kReadUncommitted;
  auto call = std::make_shared<Call>(std::move(req), std::move(body));
  call->entries = entries;
  call->answer_bytes = 64 + entries * 26;
  for (const auto& t : call->body.topics) call->answer_bytes += 8 + t.name.size();
  uv_loop_t* loop = call->req.conn ? call->req.conn->loop() : nullptr;
  auto alive = [call] { return call->alive(); };
  in_slices(
      loop, entries, [call](size_t i) { call->enter(i); },
      [call, loop, &log, isolation, entries, alive] {
        in_slices(
            loop, entries, [call, &log, isolation](size_t i) { look_up(call, log, isolation, i); },
            [call] {
              // Topics named with no partitions after the last entered one still get their
              // (empty) entry in the answer.
              for (size_t t = call->resp->topics.size(); t < call->body.topics.size(); ++t)
                call->resp->topics.emplace_back().name = call->body.topics[t].name;
              call->finish_one();
            },
            alive);
      },
      alive);
}

}  // namespace

HandlerSpec list_offsets_handler() {
  return serve<msg::ListOffsetsRequest>(1, 8, [](const Services& s, Request&& req) {
    handle(s.log, s.config.limits.max_response_bytes, std::move(req));
  });
}

}  // namespace kib::kafka
