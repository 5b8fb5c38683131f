#include "bridge/transactions/transaction_coordinator.h"

#include <algorithm>
#include <array>

namespace kib::bridge {
namespace {

constexpr std::array<std::string_view, 7> kStateNames{"Empty",          "Ongoing",       "PrepareCommit", "PrepareAbort",
                                                      "CompleteCommit", "CompleteAbort", "Dead"};

}  // namespace

std::string_view txn_state_name(TxnState s) { return kStateNames.at(static_cast<size_t>(s)); }

std::optional<TxnState> txn_state_from_name(std::string_view name) {
  for (size_t i = 0; i < kStateNames.size(); ++i)
    if (kStateNames[i] == name) return static_cast<TxnState>(i);
  return std::nullopt;
}

std::vector<kafka::ErrorCode> verify_partitions(const TransactionCoordinator& txns, const std::string& transactional_id,
                                                ProducerId producer_id, ProducerEpoch epoch,
                                                const std::vector<TxnTopicPartition>& partitions) {
  using kafka::ErrorCode;
  auto all = [&](ErrorCode e) { return std::vector<ErrorCode>(partitions.size(), e); };
  if (transactional_id.empty()) return all(ErrorCode::kInvalidRequest);
  const std::optional<TransactionDescription> t = txns.describe(transactional_id);
  if (!t || t->producer_id != producer_id) return all(ErrorCode::kInvalidProducerIdMapping);
  if (t->producer_epoch != epoch) return all(ErrorCode::kProducerFenced);
  if (t->state == TxnState::kPrepareCommit || t->state == TxnState::kPrepareAbort)
    return all(ErrorCode::kConcurrentTransactions);
  std::vector<ErrorCode> out;
  out.reserve(partitions.size());
  for (const auto& p : partitions)
    out.push_back(std::binary_search(t->partitions.begin(), t->partitions.end(), p) ? ErrorCode::kNone
                                                                                      : ErrorCode::kTransactionAbortable);
  return out;
}

}  // namespace kib::bridge
