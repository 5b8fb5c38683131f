// AddPartitionsToTxn (key 24): the partitions a transaction will write (docs/transactions.md).
// Served v0-5. v0-3 are the client versions. v4+ batch several transactions and are what a
// partition leader sends its transaction coordinator (KIP-890): they need CLUSTER_ACTION on the
// cluster (a whole-request CLUSTER_AUTHORIZATION_FAILED otherwise, no per-topic WRITE check), and
// a transaction marked verify_only is only checked: each partition NONE when the transaction has
// it, TRANSACTION_ABORTABLE when not; the whole transaction INVALID_PRODUCER_ID_MAPPING,
// PRODUCER_FENCED or CONCURRENT_TRANSACTIONS as Kafka's handleVerifyPartitionsInTransaction.
// Needs WRITE on the transactional id (every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
// and on each topic: a partition of a topic without it (or of an internal topic) gets
// TOPIC_AUTHORIZATION_FAILED, and then nothing is added: the partitions of unknown topics get
// UNKNOWN_TOPIC_OR_PARTITION, the rest OPERATION_NOT_ATTEMPTED (KafkaApis).
#include "bridge/catalog/topic_catalog.h"
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/producer_fenced.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/add_partitions_to_txn.h"
#include "server/context/services.h"
#include "common/fan_in.h"

namespace kib::kafka {
namespace {

// The answer when authorization refused part or all of the request: nothing is added.
void refuse(const Request& req, const msg::AddPartitionsToTxnRequest& body, const bridge::TopicCatalog& catalog,
            const std::vector<bool>& topic_denied, bool all_denied) {
  msg::AddPartitionsToTxnResponse resp;
  for (size_t t = 0; t < body.v3_and_below_topics.size(); ++t) {
    const auto& topic = body.v3_and_below_topics[t];
    msg::AddPartitionsToTxnResponse::AddPartitionsToTxnTopicResult tr;
    tr.name = topic.name;
    const bridge::TopicMetadata* known = catalog.find(topic.name);
    for (int32_t p : topic.partitions) {
      ErrorCode e = all_denied         ? ErrorCode::kTransactionalIdAuthorizationFailed
                    : topic_denied[t] ? ErrorCode::kTopicAuthorizationFailed
                    : !known || p < 0 || p >= known->partitions ? ErrorCode::kUnknownTopicOrPartition
                                                                 : ErrorCode::kOperationNotAttempted;
      req.respond.count_error(to_int16(e));
      tr.results_by_partition.push_back({p, to_int16(e)});
    }
    resp.results_by_topic_v3_and_below.push_back(std::move(tr));
  }
  req.respond.send(resp);
}

void handle(bridge::TransactionCoordinator& txns, bridge::Authorizer& authorizer, const bridge::TopicCatalog& catalog,
            Request&& req) {
  auto body = std::make_shared<msg::AddPartitionsToTxnRequest>(req.decode<msg::AddPartitionsToTxnRequest>());
  if (authorizer.enabled()) {
    if (!req.authorized(Op::kWrite, Res::kTransactionalId, body->v3_and_below_transactional_id))
      return refuse(req, *body, catalog, {}, true);
    std::vector<bool> topic_denied;
    bool any = false;
    for (const auto& t : body->v3_and_below_topics) {
      // Kafka's internal topics are never authorized here.
      topic_denied.push_back(bridge::TopicCatalog::kafka_internal(t.name) ||
                             !req.authorized(Op::kWrite, Res::kTopic, t.name));
      any = any || topic_denied.back();
    }
    if (any) return refuse(req, *body, catalog, topic_denied, false);
  }
  std::vector<bridge::TxnTopicPartition> partitions;
  for (const auto& t : body->v3_and_below_topics)
    for (int32_t p : t.partitions) partitions.push_back({t.name, PartitionId(p)});
  txns.add_partitions(body->v3_and_below_transactional_id, ProducerId(body->v3_and_below_producer_id),
                      ProducerEpoch(body->v3_and_below_producer_epoch), partitions,
                      [respond = req.respond, body](std::vector<ErrorCode> errors) {
                        msg::AddPartitionsToTxnResponse resp;
                        size_t i = 0;
                        for (const auto& t : body->v3_and_below_topics) {
                          msg::AddPartitionsToTxnResponse::AddPartitionsToTxnTopicResult tr;
                          tr.name = t.name;
                          for (int32_t p : t.partitions) {
                            const ErrorCode e = fenced_as_known(
                                i < errors.size() ? errors[i] : ErrorCode::kUnknownServerError, respond,
                                kProducerFencedSinceV2);
                            ++i;
                            if (e != ErrorCode::kNone) respond.count_error(to_int16(e));
                            tr.results_by_partition.push_back({p, to_int16(e)});
                          }
                          resp.results_by_topic_v3_and_below.push_back(std::move(tr));
                        }
                        respond.send(resp);
                      });
}

// v4+: one result per transaction, sent when the last is in.
using V4Result = msg::AddPartitionsToTxnResponse::AddPartitionsToTxnResult;
using TopicResult = msg::AddPartitionsToTxnResponse::AddPartitionsToTxnTopicResult;

V4Result per_partition(const msg::AddPartitionsToTxnRequest::AddPartitionsToTxnTransaction& txn,
                       const std::vector<ErrorCode>& errors) {
  V4Result r;
  r.transactional_id = txn.transactional_id;
  size_t i = 0;
  for (const auto& t : txn.topics) {
    TopicResult tr;
    tr.name = t.name;
    for (int32_t p : t.partitions) {
      tr.results_by_partition.push_back({p, to_int16(i < errors.size() ? errors[i] : ErrorCode::kUnknownServerError)});
      ++i;
    }
    r.topic_results.push_back(std::move(tr));
  }
  return r;
}

void handle_batched(bridge::TransactionCoordinator& txns, bridge::Authorizer& authorizer,
                    const bridge::TopicCatalog& catalog, Request&& req) {
  auto body = std::make_shared<msg::AddPartitionsToTxnRequest>(req.decode<msg::AddPartitionsToTxnRequest>());
  if (authorizer.enabled() && !req.authorized_cluster(Op::kClusterAction)) {
    msg::AddPartitionsToTxnResponse resp;
    resp.error_code = to_int16(ErrorCode::kClusterAuthorizationFailed);
    return req.respond.send(resp);
  }
  struct Call {
    msg::AddPartitionsToTxnResponse resp;
    FanIn<> parts;
  };
  auto call = std::make_shared<Call>(Call{{}, FanIn<>([] {})});
  call->resp.results_by_transaction.resize(body->transactions.size());
  call->parts = FanIn<>([call_weak = std::weak_ptr<Call>(call), respond = req.respond] {
    if (auto c = call_weak.lock()) {
      for (const auto& r : c->resp.results_by_transaction)
        for (const auto& t : r.topic_results)
          for (const auto& p : t.results_by_partition)
            if (p.partition_error_code != 0) respond.count_error(p.partition_error_code);
      respond.send(c->resp);
    }
  });
  for (size_t i = 0; i < body->transactions.size(); ++i) {
    const auto& txn = body->transactions[i];
    auto& slot = call->resp.results_by_transaction[i];
    // Unknown topics or partitions: the transaction fails, the rest OPERATION_NOT_ATTEMPTED.
    std::vector<bridge::TxnTopicPartition> partitions;
    std::vector<ErrorCode> unknown;
    bool any_unknown = false;
    for (const auto& t : txn.topics) {
      const bridge::TopicMetadata* known = catalog.find(t.name);
      for (int32_t p : t.partitions) {
        const bool bad = !known || p < 0 || p >= known->partitions;
        any_unknown = any_unknown || bad;
        unknown.push_back(bad ? ErrorCode::kUnknownTopicOrPartition : ErrorCode::kOperationNotAttempted);
        partitions.push_back({t.name, PartitionId(p)});
      }
    }
    if (any_unknown) {
      slot = per_partition(txn, unknown);
    } else if (txn.verify_only) {
      slot = per_partition(txn, bridge::verify_partitions(txns, txn.transactional_id, ProducerId(txn.producer_id),
                                                          ProducerEpoch(txn.producer_epoch), partitions));
    } else {
      call->parts.add();
      txns.add_partitions(txn.transactional_id, ProducerId(txn.producer_id), ProducerEpoch(txn.producer_epoch),
                          std::move(partitions), [call, body, i](std::vector<ErrorCode> errors) {
                            call->resp.results_by_transaction[i] = per_partition(body->transactions[i], errors);
                            call->parts.done();
                          });
    }
  }
  call->parts.done();
}

}  // namespace

HandlerSpec add_partitions_to_txn_handler() {
  return serve<msg::AddPartitionsToTxnRequest>(
      0, 5, [](const Services& s, Request&& req) {
        if (req.header.api_version >= 4) return handle_batched(s.transactions, s.authorizer, s.catalog, std::move(req));
        handle(s.transactions, s.authorizer, s.catalog, std::move(req));
      });
}

}  // namespace kib::kafka
