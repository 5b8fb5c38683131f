// ListTransactions (key 66, v0-2): the transactional ids the coordinator has, filtered by state,
// producer id, v1's minimum running time and v2's id pattern (kafka-transactions.sh list), with
// Kafka's rules: state names it does not know come back in unknown_state_filters, a pattern
// that is not a regular expression is INVALID_REGULAR_EXPRESSION. Only the ids the principal may
// DESCRIBE are listed (KafkaApis.handleListTransactionsRequest).
// libstdc++ 12's <regex> trips -Wmaybe-uninitialized inside std::function moves when built with
// the sanitizers (a known false positive in its NFA code); this file is where it is instantiated.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <chrono>
#include <regex>
#include <set>

#include <spdlog/spdlog.h>

#include "bridge/transactions/transaction_coordinator.h"
#include "common/text.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/fanout.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/list_transactions.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void handle(const bridge::TransactionCoordinator& txns, uint32_t max_pattern_bytes,
            uint64_t max_response_bytes, Request&& req) {
  auto body = req.decode<msg::ListTransactionsRequest>();
  msg::ListTransactionsResponse resp;
  AnswerBudget budget(max_response_bytes);  // server/handlers/fanout.h
  std::set<bridge::TxnState> states;
  // An unknown state named twice is answered once: the answer would echo the request otherwise.
  std::set<std::string_view> unknown;
  for (const std::string& name : body.state_filters) {
    if (auto s = bridge::txn_state_from_name(name))
      states.insert(*s);
    else if (unknown.insert(name).second && budget.add(sizeof name + name.size()))
      resp.unknown_state_filters.push_back(name);
  }
  // Kafka: when every state filter is unknown, nothing can match.
  const bool none_can_match = !body.state_filters.empty() && states.empty();
  const std::set<int64_t> pids(body.producer_id_filters.begin(), body.producer_id_filters.end());
  std::optional<std::regex> pattern;
  if (body.transactional_id_pattern && !body.transactional_id_pattern->empty()) {
    const std::string& text = *body.transactional_id_pattern;
    // Matched with libstdc++'s Thompson NFA executor (__polynomial: no backreferences, time
    // polynomial in pattern and input), so no pattern can stall the loop with backtracking; the
    // length bound keeps the recursive pattern compiler's stack small.
    std::string why;
    if (text.size() > max_pattern_bytes) {
      why = "pattern of " + std::to_string(text.size()) + " bytes, above [transactions] max_id_pattern_bytes (" +
            std::to_string(max_pattern_bytes) + ")";
    } else {
      try {
        pattern.emplace(text, std::regex::ECMAScript | std::regex_constants::__polynomial);
      } catch (const std::regex_error& e) {
        why = e.what();
      }
    }
    if (!why.empty()) {
      spdlog::info("client={} api=ListTransactions: transactional id pattern refused: {}",
                   esc(req.respond.header().client_id), esc(why, 512));
      resp.error_code = to_int16(ErrorCode::kInvalidRegularExpression);  // counted by send()
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
      if (!req.authorized(Op::kDescribe, Res::kTransactionalId, t.transactional_id,
                                bridge::Audit::kFilter))
        continue;
      if (!budget.add(sizeof(msg::ListTransactionsResponse::TransactionState) + t.transactional_id.size())) break;
      auto& st = resp.transaction_states.emplace_back();
      st.transactional_id = t.transactional_id;
      st.producer_id = t.producer_id();
      st.transaction_state = std::string(bridge::txn_state_name(t.state));
    }
  }
  if (budget.over()) return refuse_oversized_answer(req.respond, "ListTransactions", budget);
  req.respond.send(resp);
}

}  // namespace

HandlerSpec list_transactions_handler() {
  return serve<msg::ListTransactionsRequest>(
      0, 2, [](const Services& s, Request&& req) {
        handle(s.transactions, s.config.transactions.max_id_pattern_bytes,
               s.config.limits.max_response_bytes, std::move(req));
      });
}

}  // namespace kib::kafka
