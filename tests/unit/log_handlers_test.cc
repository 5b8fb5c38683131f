// The log admin APIs (DeleteRecords, OffsetForLeaderEpoch, DescribeLogDirs) through the real
// KafkaServer on a loopback port, at their lowest and highest served versions: frames in, frames
// out. Iggy is never reached (the pool is not started), so these check decoding, the per-partition
// answers the bridge gives without Iggy, and encoding; tests/system has them against iggy-server.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "bridge/groups/group_coordinator.h"
#include "handler_services_support.h"
#include "server/handlers/registry.h"
#include "server/kafka_server.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/api_keys.h"
#include "kafka/protocol/generated/delete_records.h"
#include "kafka/protocol/generated/describe_log_dirs.h"
#include "kafka/protocol/generated/offset_for_leader_epoch.h"
#include "kafka/protocol/generated/request_header.h"
#include "kafka/protocol/generated/response_header.h"
#include "state/state_store.h"
#include "support/kafka_test_client.h"

using namespace kib;
using namespace kib::kafka;

namespace {

int16_t code(ErrorCode c) { return to_int16(c); }


// An idle bridge (tests/unit/handler_services_support.h); groups rebalance at once.
struct Server : test::IdleKafkaServer {
  // The first rebalance of an empty group does not wait (group.initial.rebalance.delay.ms = 0).
  Server() : IdleKafkaServer([](config::Config& c) { c.groups.initial_rebalance_delay_ms = 0; }) {}
};

// One client connection; the loop runs while it waits for an answer.
struct Client : test::KafkaTestClient {
  explicit Client(Server& s) : test::KafkaTestClient(s.loop, s.port, "log-test") {}
};


}  // namespace

BOOST_AUTO_TEST_SUITE(log_handlers)

BOOST_AUTO_TEST_CASE(delete_records_answers_every_partition_at_v0_and_v2) {
  Server s;
  Client c(s);
  for (int16_t v : {0, 2}) {
    msg::DeleteRecordsRequest req;
    req.timeout_ms = 1000;
    auto& bad = req.topics.emplace_back();
    bad.name = "not a topic!";
    bad.partitions.push_back({0, 5});
    auto& t = req.topics.emplace_back();
    t.name = "orders";
    t.partitions.push_back({0, -1});
    t.partitions.push_back({3, 7});
    auto r = c.call<msg::DeleteRecordsResponse>(req, v);
    BOOST_REQUIRE(r.topics.size() == 2u);
    BOOST_TEST(r.topics[0].name == "not a topic!");
    BOOST_REQUIRE(r.topics[0].partitions.size() == 1u);
    BOOST_TEST(r.topics[0].partitions[0].error_code == code(ErrorCode::kUnknownTopicOrPartition));
    BOOST_TEST(r.topics[0].partitions[0].low_watermark == -1);
    BOOST_TEST(r.topics[1].name == "orders");
    BOOST_REQUIRE(r.topics[1].partitions.size() == 2u);
    BOOST_TEST(r.topics[1].partitions[1].partition_index == 3);
    for (const auto& p : r.topics[1].partitions) {
      BOOST_TEST(p.error_code == code(ErrorCode::kLeaderNotAvailable));  // Iggy not reachable: retriable
      BOOST_TEST(p.low_watermark == -1);
    }
  }
}

BOOST_AUTO_TEST_CASE(offset_for_leader_epoch_decides_epochs_after_the_partition_check_at_v2_and_v4) {
  Server s;
  Client c(s);
  for (int16_t v : {2, 4}) {
    msg::OffsetForLeaderEpochRequest req;
    req.replica_id = -1;
    auto& t = req.topics.emplace_back();
    t.topic = "not a topic!";
    msg::OffsetForLeaderEpochRequest::OffsetForLeaderPartition p;
    p.partition = 2;
    p.current_leader_epoch = 3;
    p.leader_epoch = 0;
    t.partitions.push_back(p);
    auto r = c.call<msg::OffsetForLeaderEpochResponse>(req, v);
    BOOST_REQUIRE(r.topics.size() == 1u);
    BOOST_TEST(r.topics[0].topic == "not a topic!");
    BOOST_REQUIRE(r.topics[0].partitions.size() == 1u);
    const auto& e = r.topics[0].partitions[0];
    BOOST_TEST(e.partition == 2);
    BOOST_TEST(e.error_code == code(ErrorCode::kUnknownTopicOrPartition));
    BOOST_TEST(e.leader_epoch == -1);
    BOOST_TEST(e.end_offset == -1);
  }
}

BOOST_AUTO_TEST_CASE(describe_log_dirs_names_the_stream_at_v1) {
  Server s;
  Client c(s);
  msg::DescribeLogDirsRequest req;
  req.topics.emplace();  // an empty list: no partition
  auto r = c.call<msg::DescribeLogDirsResponse>(req, 1);
  BOOST_REQUIRE(r.results.size() == 1u);
  BOOST_TEST(r.results[0].error_code == 0);
  BOOST_TEST(r.results[0].log_dir == "iggy://127.0.0.1:8090/kafka");
  BOOST_TEST(r.results[0].topics.empty());
}

BOOST_AUTO_TEST_CASE(the_log_apis_are_advertised_with_their_served_versions) {
  const HandlerSpec* dr = find_handler(21);
  const HandlerSpec* ep = find_handler(23);
  const HandlerSpec* ld = find_handler(35);
  BOOST_REQUIRE((dr && ep && ld));
  BOOST_TEST(dr->min_version == 0);
  BOOST_TEST(dr->max_version == 2);
  BOOST_TEST(ep->min_version == 2);
  BOOST_TEST(ep->max_version == 4);
  BOOST_TEST(ld->min_version == 1);
  BOOST_TEST(ld->max_version == 4);
}

BOOST_AUTO_TEST_SUITE_END()
