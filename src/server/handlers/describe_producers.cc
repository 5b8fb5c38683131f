// DescribeProducers (key 61, v0): the idempotent and transactional producers with state on each
// requested partition (kafka-transactions.sh describe-producers): last sequence and timestamp
// from the producer registry, and the start offset of a transaction still open on it. Each topic
// needs READ (its partitions TOPIC_AUTHORIZATION_FAILED), as KafkaApis.handleDescribeProducersRequest.
// A fan-out request (server/handlers/fanout.h): a topic or partition named twice is answered once,
// partitions are read a slice at a time, and an answer past [limits] max_response_bytes closes the
// connection.
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <vector>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "common/fan_in.h"
#include "bridge/producers/producer_registry.h"
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/fanout.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/describe_producers.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

// Kafka's producer state keeps the coordinator epoch of the last transaction marker written to
// the partition: -1 for idempotent producers and while a producer's first transaction on it is
// open, the coordinator's epoch (always 0 here) once one ended. `transactional`: producer ids of
// transactional ids.
void fill(const bridge::ProducerRegistry& producers, const bridge::TransactionCoordinator& txns,
          const std::set<int64_t>& transactional, const std::string& topic,
          msg::DescribeProducersResponse::PartitionResponse& pr) {
  const PartitionId partition(pr.partition_index);
  std::map<int64_t, msg::DescribeProducersResponse::ProducerState> by_pid;
  for (const bridge::ProducerOnPartition& p : producers.producers_on(topic, partition)) {
    auto& st = by_pid[p.producer_id()];
    st.producer_id = p.producer_id();
    st.producer_epoch = p.producer_epoch();
    st.last_sequence = p.last_sequence;
    st.last_timestamp = p.last_timestamp();
    st.coordinator_epoch = transactional.count(p.producer_id()) ? 0 : -1;
    st.current_txn_start_offset = -1;
  }
  for (const bridge::OpenTransactionOnPartition& o : txns.open_on_partition(topic, partition)) {
    auto [it, added] = by_pid.try_emplace(o.producer_id());
    auto& st = it->second;
    if (added) {
      st.producer_id = o.producer_id();
      st.producer_epoch = o.producer_epoch();
    }
    // No marker yet for the open transaction (the bridge writes none; its first one on the
    // partition is what Kafka's -1 shows).
    st.coordinator_epoch = -1;
    st.current_txn_start_offset = o.start_offset();
  }
  for (auto& [pid, st] : by_pid) pr.active_producers.push_back(std::move(st));
}

// One request's topics, answered when the last is in. Held by shared_ptr and never moved: its
// FanIn points back at it.
struct Call {
  explicit Call(uint64_t max) : budget(max) {}
  msg::DescribeProducersResponse resp;
  Responder respond;
  AnswerBudget budget;
  FanIn<> parts{[this] { answer(); }};

  void answer() {
    // Each partition's producers are known only now: the answer's variable part.
    for (const auto& t : resp.topics)
      for (const auto& p : t.partitions)
        budget.add(p.active_producers.size() * sizeof(msg::DescribeProducersResponse::ProducerState) +
                   (p.error_message ? p.error_message->size() : 0));
    if (budget.over()) return refuse_oversized_answer(respond, "DescribeProducers", budget);
    respond.send(resp);
  }
};

void handle(const Services& s, Request&& req) {
  auto body = req.decode<msg::DescribeProducersRequest>();
  auto call = std::make_shared<Call>(s.config.limits.max_response_bytes);
  call->respond = req.respond;
  // A topic named twice is answered once, with each partition of every mention once
  // (server/handlers/fanout.h): the work and the answer follow the distinct partitions.
  std::map<std::string_view, std::set<int32_t>> wanted;
  std::vector<std::string_view> order;
  for (const auto& t : body.topics) {
    auto [it, fresh] = wanted.try_emplace(t.name);
    if (fresh) order.push_back(t.name);
    it->second.insert(t.partition_indexes.begin(), t.partition_indexes.end());
  }
  size_t partitions = 0;
  for (const auto& [name, ids] : wanted) partitions += ids.size();
  call->budget.add(partitions * sizeof(msg::DescribeProducersResponse::PartitionResponse) +
                   order.size() * sizeof(msg::DescribeProducersResponse::TopicResponse));
  if (call->budget.over())
    return refuse_oversized_answer(req.respond, fmt::format("DescribeProducers naming {} partitions", partitions),
                                   call->budget);
  call->resp.topics.resize(order.size());
  auto transactional = std::make_shared<std::set<int64_t>>();
  for (const bridge::TransactionListing& l : s.transactions.list()) transactional->insert(l.producer_id());
  uv_loop_t* loop = req.conn ? req.conn->loop() : nullptr;
  std::weak_ptr<net::Connection> conn = req.conn;
  for (size_t t = 0; t < order.size(); ++t) {
    auto& tr = call->resp.topics[t];
    tr.name = std::string(order[t]);
    for (int32_t id : wanted[order[t]]) tr.partitions.emplace_back().partition_index = id;
    // Each partition's producers, a slice of partitions at a time.
    auto answer = [&producers = s.producers, &txns = s.transactions, call, t, transactional, loop,
                   conn](Result<const bridge::TopicMetadata*> m) {
      auto meta = std::make_shared<Result<const bridge::TopicMetadata*>>(std::move(m));
      in_slices(
          loop, call->resp.topics[t].partitions.size(),
          [&producers, &txns, call, t, transactional, meta](size_t i) {
            auto& tr = call->resp.topics[t];
            auto& pr = tr.partitions[i];
            auto& m = *meta;
            if (!m || pr.partition_index < 0 || pr.partition_index >= (*m)->partitions) {
              pr.error_code = to_int16(ErrorCode::kUnknownTopicOrPartition);
              pr.error_message = m ? "topic " + tr.name + " has no partition " + std::to_string(pr.partition_index)
                                   : m.error().message;
              call->respond.count_error(pr.error_code);
              return;
            }
            fill(producers, txns, *transactional, tr.name, pr);
          },
          [call] { call->parts.done(); },
          [conn] {
            auto c = conn.lock();
            return c && !c->closed();
          });
    };
    if (!bridge::TopicCatalog::invalid_topic_name(tr.name) &&
        !req.authorized(Op::kRead, Res::kTopic, tr.name)) {
      for (auto& pr : tr.partitions) {
        pr.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
        pr.error_message = error_message(ErrorCode::kTopicAuthorizationFailed);
        call->respond.count_error(pr.error_code);
      }
      continue;
    }
    call->parts.add();
    // __consumer_offsets, listed by Metadata once a group coordinator was asked for: no producer
    // writes to it (kafka-transactions find-hanging asks for every partition Metadata lists).
    if (const bridge::TopicMetadata* o = s.catalog.offsets_topic(); o && o->name == tr.name) {
      answer(o);
      continue;
    }
    s.catalog.ensure(tr.name, /*auto_create=*/false, std::move(answer));
  }
  call->parts.done();
}

}  // namespace

HandlerSpec describe_producers_handler() {
  return serve<msg::DescribeProducersRequest>(0, 0, [](const Services& s, Request&& req) { handle(s, std::move(req)); });
}

}  // namespace kib::kafka
