#include "bridge/transactions/transaction_coordinator.h"

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

}  // namespace kib::bridge
