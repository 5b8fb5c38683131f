// DescribeTransactions (key 65, v0): a transactional id's state, producer, timeout and the
// partitions of its open transaction (kafka-transactions.sh describe). TRANSACTIONAL_ID_NOT_FOUND
// for an id the coordinator does not have, as Kafka answers. Each id needs DESCRIBE
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); only the topics the principal may DESCRIBE are listed.
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/describe_transactions.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(const bridge::TransactionCoordinator& txns, Request&& req) {
  auto body = req.decode<msg::DescribeTransactionsRequest>();
  msg::DescribeTransactionsResponse resp;
  for (const std::string& id : body.transactional_ids) {
    auto& st = resp.transaction_states.emplace_back();
    st.transactional_id = id;
    if (!req.authorized(Op::kDescribe, Res::kTransactionalId, id)) {
      st.error_code = to_int16(ErrorCode::kTransactionalIdAuthorizationFailed);
      req.respond.count_error(st.error_code);
      continue;
    }
    std::optional<bridge::TransactionDescription> d = txns.describe(id);
    if (!d) {
      st.error_code = to_int16(ErrorCode::kTransactionalIdNotFound);
      req.respond.count_error(st.error_code);
      st.transaction_state = "";
      st.transaction_start_time_ms = -1;
      st.producer_id = -1;
      st.producer_epoch = -1;
      continue;
    }
    st.transaction_state = std::string(bridge::txn_state_name(d->state));
    st.transaction_timeout_ms = d->timeout_ms;
    st.transaction_start_time_ms = d->start_ms();
    st.producer_id = d->producer_id();
    st.producer_epoch = d->producer_epoch();
    // Partitions come sorted by topic, then partition: one entry per topic.
    for (const bridge::TxnTopicPartition& tp : d->partitions) {
      if ((st.topics.empty() || st.topics.back().topic != tp.topic) &&
          !req.authorized(Op::kDescribe, Res::kTopic, tp.topic, bridge::Audit::kFilter))
        continue;
      if (st.topics.empty() || st.topics.back().topic != tp.topic) st.topics.emplace_back().topic = tp.topic;
      st.topics.back().partitions.push_back(tp.partition());
    }
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec describe_transactions_handler() {
  return serve<msg::DescribeTransactionsRequest>(
      0, 0, [](const Services& s, Request&& req) {
        handle(s.transactions, std::move(req));
      });
}

}  // namespace kib::kafka
