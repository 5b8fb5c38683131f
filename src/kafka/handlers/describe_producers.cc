// DescribeProducers (key 61, v0): the idempotent and transactional producers with state on each
// requested partition (kafka-transactions.sh describe-producers): last sequence and timestamp
// from the producer registry, and the start offset of a transaction still open on it. Each topic
// needs READ (its partitions TOPIC_AUTHORIZATION_FAILED), as KafkaApis.handleDescribeProducersRequest.
#include <map>
#include <memory>
#include <set>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "bridge/producers/producer_registry.h"
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "kafka/handlers/authorization.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/describe_producers.h"
#include "kafka/services.h"

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

struct Call {
  msg::DescribeProducersResponse resp;
  Responder respond;
  size_t pending = 1;
  void done() {
    if (--pending == 0) respond.send(resp);
  }
};

void handle(const Services& s, Request&& req) {
  auto body = req.decode<msg::DescribeProducersRequest>();
  auto call = std::make_shared<Call>();
  call->respond = req.respond;
  call->resp.topics.resize(body.topics.size());
  auto transactional = std::make_shared<std::set<int64_t>>();
  for (const bridge::TransactionListing& l : s.transactions.list()) transactional->insert(l.producer_id());
  for (size_t t = 0; t < body.topics.size(); ++t) {
    auto& tr = call->resp.topics[t];
    tr.name = body.topics[t].name;
    for (int32_t id : body.topics[t].partition_indexes) tr.partitions.emplace_back().partition_index = id;
    auto answer = [&producers = s.producers, &txns = s.transactions, call, t,
                   transactional](Result<const bridge::TopicMetadata*> m) {
      auto& tr = call->resp.topics[t];
      for (auto& pr : tr.partitions) {
        if (!m || pr.partition_index < 0 || pr.partition_index >= (*m)->partitions) {
          pr.error_code = to_int16(ErrorCode::kUnknownTopicOrPartition);
          pr.error_message = m ? "topic " + tr.name + " has no partition " + std::to_string(pr.partition_index)
                               : m.error().message;
          call->respond.count_error(pr.error_code);
          continue;
        }
        fill(producers, txns, *transactional, tr.name, pr);
      }
      call->done();
    };
    if (!bridge::TopicCatalog::invalid_topic_name(tr.name) &&
        !s.authorizer.authorize(auth(req), Op::kRead, Res::kTopic, tr.name)) {
      for (auto& pr : tr.partitions) {
        pr.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
        pr.error_message = error_message(ErrorCode::kTopicAuthorizationFailed);
        call->respond.count_error(pr.error_code);
      }
      continue;
    }
    // __consumer_offsets, listed by Metadata once a group coordinator was asked for: no producer
    // writes to it (kafka-transactions find-hanging asks for every partition Metadata lists).
    if (const bridge::TopicMetadata* o = s.catalog.offsets_topic(); o && o->name == tr.name) {
      answer(o);
      continue;
    }
    ++call->pending;
    s.catalog.ensure(tr.name, /*auto_create=*/false, std::move(answer));
  }
  call->done();
}

}  // namespace

HandlerSpec describe_producers_handler() {
  return serve<msg::DescribeProducersRequest>(0, 0, [](const Services& s, Request&& req) { handle(s, std::move(req)); });
}

}  // namespace kib::kafka
