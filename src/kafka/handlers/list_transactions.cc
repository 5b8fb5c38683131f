// ListTransactions (key 66, v0-2): the transactional ids the coordinator has, filtered by state,
// producer id, v1's minimum running time and v2's id pattern (kafka-transactions.sh list), with
// Kafka's rules: state names it does not know come back in unknown_state_filters, a pattern
// that is not a regular expression is INVALID_REGULAR_EXPRESSION.
#include <chrono>
#include <regex>
#include <set>

#include "bridge/transactions/transaction_coordinator.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/list_transactions.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void handle(const bridge::TransactionCoordinator& txns, Request&& req) {
  auto body = req.decode<msg::ListTransactionsRequest>();
  msg::ListTransactionsResponse resp;
  std::set<bridge::TxnState> states;
  for (const std::string& name : body.state_filters) {
    if (auto s = bridge::txn_state_from_name(name))
      states.insert(*s);
    else
      resp.unknown_state_filters.push_back(name);
  }
  // Kafka: when every state filter is unknown, nothing can match.
  const bool none_can_match = !body.state_filters.empty() && states.empty();
  const std::set<int64_t> pids(body.producer_id_filters.begin(), body.producer_id_filters.end());
  std::optional<std::regex> pattern;
  if (body.transactional_id_pattern && !body.transactional_id_pattern->empty()) {
    try {
      pattern.emplace(*body.transactional_id_pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      resp.error_code = to_int16(ErrorCode::kInvalidRegularExpression);
      return req.respond.send(resp);
    }
  }
  const int64_t now = wall_ms();
  if (!none_can_match) {
    for (const bridge::TransactionListing& t : txns.list()) {
      if (t.state == bridge::TxnState::kDead) continue;
      if (!pids.empty() && !pids.count(t.producer_id())) continue;
      if (!states.empty() && !states.count(t.state)) continue;
      // Kafka compares against the start of the last transaction, whatever the state.
      if (body.duration_filter >= 0 && now - t.start_ms() <= body.duration_filter) continue;
      if (pattern && !std::regex_match(t.transactional_id, *pattern)) continue;
      auto& st = resp.transaction_states.emplace_back();
      st.transactional_id = t.transactional_id;
      st.producer_id = t.producer_id();
      st.transaction_state = std::string(bridge::txn_state_name(t.state));
    }
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec list_transactions_handler() {
  return serve<msg::ListTransactionsRequest>(
      0, 2, [](const Services& s, Request&& req) { handle(s.transactions, std::move(req)); });
}

}  // namespace kib::kafka
