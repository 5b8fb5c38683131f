// ListTransactions and DescribeTransactions (keys 66, 65) through the real KafkaServer and the
// real transaction coordinator on a loopback port: filters as Kafka applies them, and a
// transactional id pattern that would make a backtracking matcher run for hours answers at once.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <string>

#include "handler_services_support.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/api_keys.h"
#include "kafka/protocol/generated/describe_transactions.h"
#include "kafka/protocol/generated/init_producer_id.h"
#include "kafka/protocol/generated/list_transactions.h"
#include "kafka/protocol/generated/request_header.h"
#include "kafka/protocol/generated/response_header.h"
#include "support/kafka_test_client.h"

using namespace kib;
using namespace kib::kafka;

namespace {

struct Server : test::IdleKafkaServer {
  Server() : IdleKafkaServer([](config::Config& c) { c.transactions.max_id_pattern_bytes = 64; }) {}
};

struct Client : test::KafkaTestClient {
  explicit Client(Server& s) : test::KafkaTestClient(s.loop, s.port, "transaction-views-test") {}
  void init(const std::string& id) {
    msg::InitProducerIdRequest r;
    r.transactional_id = id;
    r.transaction_timeout_ms = 60000;
    auto resp = call<msg::InitProducerIdResponse>(r, 4);
    BOOST_REQUIRE(resp.error_code == 0);
  }
  msg::ListTransactionsResponse list(std::optional<std::string> pattern, std::vector<std::string> states = {}) {
    msg::ListTransactionsRequest r;
    r.transactional_id_pattern = std::move(pattern);
    r.state_filters = std::move(states);
    return call<msg::ListTransactionsResponse>(r, 2);
  }
};

std::vector<std::string> ids(const msg::ListTransactionsResponse& r) {
  std::vector<std::string> out;
  for (const auto& t : r.transaction_states) out.push_back(t.transactional_id);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(transaction_views_handler)

BOOST_AUTO_TEST_CASE(list_filters_by_pattern_and_state_as_kafka_does) {
  Server s;
  Client c(s);
  const std::string long_a(40, 'a');
  c.init("orders-tx");
  c.init("payments-tx");
  c.init(long_a);
  BOOST_TEST(ids(c.list(std::nullopt)) == (std::vector<std::string>{long_a, "orders-tx", "payments-tx"}));
  BOOST_TEST(ids(c.list(".*-tx")) == (std::vector<std::string>{"orders-tx", "payments-tx"}));
  BOOST_TEST(ids(c.list("orders")).empty());  // the whole id must match, as Java's matches()
  // Empty after InitProducerId; an unknown state name is echoed back and matches nothing.
  auto by_state = c.list(std::nullopt, {"Empty"});
  BOOST_TEST(by_state.transaction_states.size() == 3u);
  auto unknown = c.list(std::nullopt, {"Sleeping"});
  BOOST_TEST(unknown.transaction_states.empty());
  BOOST_TEST(unknown.unknown_state_filters == std::vector<std::string>{"Sleeping"});
}

BOOST_AUTO_TEST_CASE(no_pattern_can_stall_the_loop_and_bad_ones_are_refused) {
  Server s;
  Client c(s);
  c.init(std::string(40, 'a'));
  // Exponential for a backtracking matcher on 40 a's without the b.
  const auto t0 = std::chrono::steady_clock::now();
  auto evil = c.list("(a*)*b");
  BOOST_TEST(evil.error_code == 0);
  BOOST_TEST(evil.transaction_states.empty());
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  BOOST_TEST(took.count() < 5000);
  BOOST_TEST(c.list("(").error_code == to_int16(ErrorCode::kInvalidRegularExpression));
  BOOST_TEST(c.list(std::string(65, 'a')).error_code == to_int16(ErrorCode::kInvalidRegularExpression));
}

BOOST_AUTO_TEST_CASE(describe_answers_an_unknown_id_with_transactional_id_not_found) {
  Server s;
  Client c(s);
  c.init("known-tx");
  msg::DescribeTransactionsRequest r;
  r.transactional_ids = {"known-tx", "nobody"};
  auto resp = c.call<msg::DescribeTransactionsResponse>(r, 0);
  BOOST_REQUIRE_EQUAL(resp.transaction_states.size(), 2u);
  BOOST_TEST(resp.transaction_states[0].error_code == 0);
  BOOST_TEST(resp.transaction_states[0].transaction_state == "Empty");
  BOOST_TEST(resp.transaction_states[0].producer_epoch == 0);
  BOOST_TEST(resp.transaction_states[0].transaction_timeout_ms == 60000);
  BOOST_TEST(resp.transaction_states[1].error_code == to_int16(ErrorCode::kTransactionalIdNotFound));
}

BOOST_AUTO_TEST_SUITE_END()
