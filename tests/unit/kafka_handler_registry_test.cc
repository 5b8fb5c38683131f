// The handler registry as each handler file registers itself: the served and advertised ranges
// (ApiVersions answers exactly these), ordered by key, one registration per API, every handler
// linked.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <vector>

#include "server/handlers/registry.h"
#include "kafka/protocol/generated/api_keys.h"

using namespace kib::kafka;

BOOST_AUTO_TEST_SUITE(kafka_handler_registry)

BOOST_AUTO_TEST_CASE(serves_exactly_these_apis_and_versions) {
  // api key, min served, max served, min advertised
  const std::vector<std::array<int16_t, 4>> expected{
      {0, 3, 12, 0},  // Produce: v0-2 refused but advertised, for librdkafka < 2.11 (KAFKA-18659)
      {1, 4, 12, 4},  {2, 1, 8, 1},   {3, 0, 12, 0},
      {8, 2, 10, 2},  // OffsetCommit: Kafka 4 serves it from v2 (KIP-896); v10 names topics by id
      {9, 1, 10, 1},  {10, 0, 6, 0},  {11, 0, 9, 0},  {12, 0, 4, 0}, {13, 0, 5, 0}, {14, 0, 5, 0},
      {15, 0, 6, 0},  {16, 0, 5, 0},
      {17, 0, 1, 0},  // SaslHandshake (v0: bare SASL tokens follow)
      {18, 0, 4, 0},  {19, 2, 7, 2},
      {20, 1, 6, 1},  // DeleteTopics
      {21, 0, 2, 0},  // DeleteRecords
      {22, 0, 4, 0},
      {23, 2, 4, 2},  // OffsetForLeaderEpoch (v0-1 removed in Kafka 4.0)
      {24, 0, 5, 0},  // AddPartitionsToTxn (v4+: a partition leader verifying, KIP-890)
      {25, 0, 4, 0},  // AddOffsetsToTxn
      {26, 0, 5, 0},  // EndTxn (v5: transaction version 2)
      {28, 0, 5, 0},  // TxnOffsetCommit (v5: transaction version 2)
      {29, 1, 3, 1},  // DescribeAcls (v0 removed in Kafka 4.0)
      {30, 1, 3, 1},  // CreateAcls
      {31, 1, 3, 1},  // DeleteAcls
      {32, 1, 4, 1},  // DescribeConfigs
      {33, 0, 2, 0},  // AlterConfigs
      {35, 1, 4, 1},  // DescribeLogDirs (v0 removed in Kafka 4.0)
      {36, 0, 2, 0},  // SaslAuthenticate
      {37, 0, 3, 0},  // CreatePartitions
      {42, 0, 2, 0},
      {44, 0, 1, 0},  // IncrementalAlterConfigs
      {47, 0, 0, 0},
      {48, 0, 1, 0},  // DescribeClientQuotas (no quotas: kafka-configs --describe --entity-type users)
      {50, 0, 0, 0},  // DescribeUserScramCredentials
      {51, 0, 0, 0},  // AlterUserScramCredentials
      {60, 0, 2, 0},  // DescribeCluster
      {61, 0, 0, 0},  // DescribeProducers
      {65, 0, 0, 0},  // DescribeTransactions
      {66, 0, 2, 0},  // ListTransactions
      {68, 0, 1, 0},  // ConsumerGroupHeartbeat (KIP-848)
      {69, 0, 1, 0},  // ConsumerGroupDescribe
      {74, 0, 1, 0},  // ListConfigResources (kafka-configs --entity-type groups)
      {75, 0, 0, 0},  // DescribeTopicPartitions
      {88, 0, 1, 0},  // StreamsGroupHeartbeat (KIP-1071)
      {89, 0, 1, 0},  // StreamsGroupDescribe
      {93, 0, 0, 0},  // StreamsGroupTopologyDescriptionUpdate (KIP-1331): refused as Kafka 4.4 without its plugin
  };
  std::vector<std::array<int16_t, 4>> served;
  for (const HandlerSpec& h : handler_registry()) served.push_back({h.api_key, h.min_version, h.max_version, h.advertised_min});
  BOOST_TEST(served.size() == expected.size());
  for (size_t i = 0; i < std::min(served.size(), expected.size()); ++i)
    BOOST_TEST((served[i] == expected[i]), "entry " << i << ": key " << served[i][0] << " v" << served[i][1] << "-"
                                                    << served[i][2] << " advertised from " << served[i][3]);
}

BOOST_AUTO_TEST_CASE(every_entry_has_a_handler_within_the_spec_range) {
  int16_t previous = -1;
  for (const HandlerSpec& h : handler_registry()) {
    BOOST_TEST(h.api_key > previous, "registered twice or out of order: key " << h.api_key);
    previous = h.api_key;
    BOOST_TEST(h.handle != nullptr);
    const msg::ApiInfo* api = msg::find_api(h.api_key);
    BOOST_REQUIRE(api);
    BOOST_TEST(h.min_version >= api->min_version);
    BOOST_TEST(h.max_version <= api->max_version);
    BOOST_TEST(find_handler(h.api_key) == &h);
  }
  BOOST_TEST(!find_handler(76));  // ShareGroupHeartbeat (KIP-932): not served
}

BOOST_AUTO_TEST_SUITE_END()
