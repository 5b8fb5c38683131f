// Kafka request frames (header + body, without the 4-byte size prefix), as KafkaServer::on_frame
// receives them: the header is decoded at the version Kafka's rules give, the body with the
// generated type of the API at the request's version, for every API and version the bridge
// serves (the table below; the replay test checks it equals the handler registry). What
// decoded is re-encoded, the re-encoding decoded again, and both decodings must be equal and
// re-encode to the same bytes. Group protocol blobs (JoinGroup metadata, SyncGroup assignments)
// go through the coordinator's parsers as well.
#include <array>
#include <memory>

#include "bridge/groups/consumer_protocol.h"
#include "kafka/protocol/generated/all.h"
#include "fuzz/targets/fuzz_targets.h"

namespace kib::fuzz {
namespace {

using namespace kib::kafka::msg;

template <typename Msg>
void check_round_trip(const Msg& first, int16_t version) {
  ByteWriter w;
  first.encode(w, version);
  Msg second;
  ByteReader r(w.buffer());
  try {
    second.decode(r, version);
  } catch (const DecodeError& e) {
    fail("kafka_request", "the re-encoding of a decoded message does not decode");
  }
  FUZZ_CHECK(r.remaining() == 0, "the re-encoding decodes with bytes left over");
  FUZZ_CHECK(second == first, "the re-encoding decodes to a different message");
  ByteWriter again;
  second.encode(again, version);
  FUZZ_CHECK(again.buffer() == w.buffer(), "encoding is not deterministic");
}

template <typename Msg>
void extra(const Msg&) {}

template <>
void extra(const JoinGroupRequest& m) {
  for (const auto& p : m.protocols) (void)bridge::subscribed_topics(p.metadata);
}

template <>
void extra(const SyncGroupRequest& m) {
  for (const auto& a : m.assignments) {
    if (auto parts = bridge::assigned_partitions(a.assignment)) (void)bridge::format_partitions(*parts);
  }
}

template <typename Msg>
void body(ByteReader& r, int16_t version) {
  Msg m;
  try {
    m.decode(r, version);
  } catch (const DecodeError&) {
    return;  // the server closes the connection
  }
  check_round_trip(m, version);
  extra(m);
}

struct Served {
  int16_t key, min_version, max_version;
  void (*decode)(ByteReader&, int16_t);
};

// Mirrors the handler registry, src/server/handlers (api key, lowest and highest version served).
constexpr std::array kServed{
    Served{ProduceRequest::kApiKey, 3, 12, &body<ProduceRequest>},
    Served{FetchRequest::kApiKey, 4, 12, &body<FetchRequest>},
    Served{ListOffsetsRequest::kApiKey, 1, 8, &body<ListOffsetsRequest>},
    Served{MetadataRequest::kApiKey, 0, 12, &body<MetadataRequest>},
    Served{OffsetCommitRequest::kApiKey, 2, 10, &body<OffsetCommitRequest>},
    Served{OffsetFetchRequest::kApiKey, 1, 10, &body<OffsetFetchRequest>},
    Served{FindCoordinatorRequest::kApiKey, 0, 6, &body<FindCoordinatorRequest>},
    Served{JoinGroupRequest::kApiKey, 0, 9, &body<JoinGroupRequest>},
    Served{HeartbeatRequest::kApiKey, 0, 4, &body<HeartbeatRequest>},
    Served{LeaveGroupRequest::kApiKey, 0, 5, &body<LeaveGroupRequest>},
    Served{SyncGroupRequest::kApiKey, 0, 5, &body<SyncGroupRequest>},
    Served{DescribeGroupsRequest::kApiKey, 0, 6, &body<DescribeGroupsRequest>},
    Served{ListGroupsRequest::kApiKey, 0, 5, &body<ListGroupsRequest>},
    Served{ApiVersionsRequest::kApiKey, 0, 4, &body<ApiVersionsRequest>},
    Served{CreateTopicsRequest::kApiKey, 2, 7, &body<CreateTopicsRequest>},
    Served{InitProducerIdRequest::kApiKey, 0, 4, &body<InitProducerIdRequest>},
    Served{DeleteGroupsRequest::kApiKey, 0, 2, &body<DeleteGroupsRequest>},
    Served{OffsetDeleteRequest::kApiKey, 0, 0, &body<OffsetDeleteRequest>},
    Served{DeleteRecordsRequest::kApiKey, 0, 2, &body<DeleteRecordsRequest>},
    Served{OffsetForLeaderEpochRequest::kApiKey, 2, 4, &body<OffsetForLeaderEpochRequest>},
    Served{DescribeLogDirsRequest::kApiKey, 1, 4, &body<DescribeLogDirsRequest>},
    Served{DescribeConfigsRequest::kApiKey, 1, 4, &body<DescribeConfigsRequest>},
    Served{AlterConfigsRequest::kApiKey, 0, 2, &body<AlterConfigsRequest>},
    Served{IncrementalAlterConfigsRequest::kApiKey, 0, 1, &body<IncrementalAlterConfigsRequest>},
    Served{DescribeClusterRequest::kApiKey, 0, 2, &body<DescribeClusterRequest>},
    Served{DeleteTopicsRequest::kApiKey, 1, 6, &body<DeleteTopicsRequest>},
    Served{CreatePartitionsRequest::kApiKey, 0, 3, &body<CreatePartitionsRequest>},
    Served{DescribeTopicPartitionsRequest::kApiKey, 0, 0, &body<DescribeTopicPartitionsRequest>},
    Served{AddPartitionsToTxnRequest::kApiKey, 0, 5, &body<AddPartitionsToTxnRequest>},
    Served{AddOffsetsToTxnRequest::kApiKey, 0, 4, &body<AddOffsetsToTxnRequest>},
    Served{EndTxnRequest::kApiKey, 0, 5, &body<EndTxnRequest>},
    Served{TxnOffsetCommitRequest::kApiKey, 0, 5, &body<TxnOffsetCommitRequest>},
    Served{DescribeProducersRequest::kApiKey, 0, 0, &body<DescribeProducersRequest>},
    Served{DescribeTransactionsRequest::kApiKey, 0, 0, &body<DescribeTransactionsRequest>},
    Served{ListTransactionsRequest::kApiKey, 0, 2, &body<ListTransactionsRequest>},
    Served{SaslHandshakeRequest::kApiKey, 0, 1, &body<SaslHandshakeRequest>},
    Served{SaslAuthenticateRequest::kApiKey, 0, 2, &body<SaslAuthenticateRequest>},
    Served{DescribeUserScramCredentialsRequest::kApiKey, 0, 0, &body<DescribeUserScramCredentialsRequest>},
    Served{AlterUserScramCredentialsRequest::kApiKey, 0, 0, &body<AlterUserScramCredentialsRequest>},
    Served{DescribeClientQuotasRequest::kApiKey, 0, 1, &body<DescribeClientQuotasRequest>},
    Served{DescribeAclsRequest::kApiKey, 1, 3, &body<DescribeAclsRequest>},
    Served{CreateAclsRequest::kApiKey, 1, 3, &body<CreateAclsRequest>},
    Served{DeleteAclsRequest::kApiKey, 1, 3, &body<DeleteAclsRequest>},
    Served{ConsumerGroupHeartbeatRequest::kApiKey, 0, 1, &body<ConsumerGroupHeartbeatRequest>},
    Served{ConsumerGroupDescribeRequest::kApiKey, 0, 1, &body<ConsumerGroupDescribeRequest>},
    Served{ListConfigResourcesRequest::kApiKey, 0, 1, &body<ListConfigResourcesRequest>},
    Served{StreamsGroupHeartbeatRequest::kApiKey, 0, 1, &body<StreamsGroupHeartbeatRequest>},
    Served{StreamsGroupDescribeRequest::kApiKey, 0, 1, &body<StreamsGroupDescribeRequest>},
    Served{StreamsGroupTopologyDescriptionUpdateRequest::kApiKey, 0, 0, &body<StreamsGroupTopologyDescriptionUpdateRequest>},
};

}  // namespace

// For the replay test: the table must list exactly what the registry serves.
std::span<const std::array<int16_t, 3>> fuzz_served_versions() {
  static const auto table = [] {
    std::array<std::array<int16_t, 3>, kServed.size()> t{};
    for (size_t i = 0; i < kServed.size(); ++i) t[i] = {kServed[i].key, kServed[i].min_version, kServed[i].max_version};
    return t;
  }();
  return table;
}

int fuzz_kafka_request(const uint8_t* data, size_t size) {
  ByteReader peek(ByteSpan(data, size));
  int16_t key, version;
  try {
    key = peek.be<int16_t>();
    version = peek.be<int16_t>();
  } catch (const DecodeError&) {
    return 0;
  }
  const Served* api = nullptr;
  for (const auto& s : kServed)
    if (s.key == key) api = &s;
  if (!api) return 0;
  const bool served = version >= api->min_version && version <= api->max_version;
  // As KafkaServer: an unserved ApiVersions version still has its v1 header decoded.
  if (!served && key != ApiVersionsRequest::kApiKey) return 0;
  const int16_t header_version = served ? request_header_version(key, version) : 1;

  // Shared, as Request::frame is: a records field (Produce) decodes as a view into it.
  const auto frame = std::make_shared<const Bytes>(data, data + size);
  const std::shared_ptr<const void> owner = frame;
  ByteReader r(*frame);
  r.set_owner(&owner);
  RequestHeader header;
  try {
    header.decode(r, header_version);
  } catch (const DecodeError&) {
    return 0;
  }
  FUZZ_CHECK(header.request_api_key == key && header.request_api_version == version, "header fields moved");
  check_round_trip(header, header_version);
  if (served) api->decode(r, version);
  return 0;
}

}  // namespace kib::fuzz
