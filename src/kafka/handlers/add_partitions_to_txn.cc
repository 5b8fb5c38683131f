// AddPartitionsToTxn (key 24): the partitions a transaction will write (docs/transactions.md).
// Served v0-3, the client versions; v4+ batch several transactions for brokers verifying
// produce requests (KIP-890) and are not served.
#include "bridge/transactions/transaction_coordinator.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/add_partitions_to_txn.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

constexpr int16_t kFirstProducerFencedVersion = 2;  // KIP-588

void handle(bridge::TransactionCoordinator& txns, Request&& req) {
  auto body = std::make_shared<msg::AddPartitionsToTxnRequest>(req.decode<msg::AddPartitionsToTxnRequest>());
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
                            ErrorCode e = i < errors.size() ? errors[i] : ErrorCode::kUnknownServerError;
                            ++i;
                            if (e == ErrorCode::kProducerFenced &&
                                respond.header().api_version < kFirstProducerFencedVersion)
                              e = ErrorCode::kInvalidProducerEpoch;
                            if (e != ErrorCode::kNone) respond.count_error(to_int16(e));
                            tr.results_by_partition.push_back({p, to_int16(e)});
                          }
                          resp.results_by_topic_v3_and_below.push_back(std::move(tr));
                        }
                        respond.send(resp);
                      });
}

}  // namespace

HandlerSpec add_partitions_to_txn_handler() {
  return serve<msg::AddPartitionsToTxnRequest>(
      0, 3, [](const Services& s, Request&& req) { handle(s.transactions, std::move(req)); });
}

}  // namespace kib::kafka
