// Byte layouts of the generated Kafka codecs, checked by hand against the protocol guide:
// each expected frame below was written out field by field, not produced by the encoder.
#include <boost/test/unit_test.hpp>

#include <climits>
#include <cstddef>
#include <memory>
#include <optional>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kafka/protocol/generated/all.h"

using namespace kib;
using namespace kib::kafka::msg;

namespace {

std::string hex(const Bytes& b) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < b.size(); ++i) {
    std::snprintf(buf, sizeof buf, i ? " %02x" : "%02x", b[i]);
    s += buf;
  }
  return s;
}

// "00 12 'abc' ff": hex bytes, and quoted ASCII for readability.
Bytes bytes_of(const std::string& spec) {
  Bytes out;
  for (size_t i = 0; i < spec.size();) {
    char c = spec[i];
    if (c == ' ') {
      ++i;
    } else if (c == '\'') {
      size_t end = spec.find('\'', i + 1);
      out.insert(out.end(), spec.begin() + static_cast<long>(i) + 1, spec.begin() + static_cast<long>(end));
      i = end + 1;
    } else {
      out.push_back(static_cast<uint8_t>(std::stoi(spec.substr(i, 2), nullptr, 16)));
      i += 2;
    }
  }
  return out;
}

template <typename T>
Bytes encode(const T& m, int16_t version) {
  ByteWriter w;
  m.encode(w, version);
  return w.take();
}

template <typename T>
T decode_all(const Bytes& b, int16_t version) {
  ByteReader r(b);
  T m;
  m.decode(r, version);
  BOOST_TEST(r.remaining() == 0u);
  return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(protocol_layout)

BOOST_AUTO_TEST_CASE(api_versions_request_v3_uses_flexible_header_with_non_compact_client_id) {
  // librdkafka 2.0.2's first request: header v2 (client id keeps its int16 length), compact body.
  const Bytes frame = bytes_of("00 12 00 03 00 00 00 01 00 07 'rdkafka' 00 0b 'librdkafka' 06 '2.0.2' 00");
  BOOST_TEST(request_header_version(18, 3) == 2);

  RequestHeader h;
  h.request_api_key = 18;
  h.request_api_version = 3;
  h.correlation_id = 1;
  h.client_id = "rdkafka";
  ApiVersionsRequest body;
  body.client_software_name = "librdkafka";
  body.client_software_version = "2.0.2";
  ByteWriter w;
  h.encode(w, 2);
  body.encode(w, 3);
  BOOST_TEST(hex(w.buffer()) == hex(frame));

  ByteReader r(frame);
  RequestHeader h2;
  h2.decode(r, 2);
  ApiVersionsRequest body2;
  body2.decode(r, h2.request_api_version);
  BOOST_TEST(r.empty());
  BOOST_TEST((h2 == h));
  BOOST_TEST(body2.client_software_name == "librdkafka");
  BOOST_TEST(body2.client_software_version == "2.0.2");
}

BOOST_AUTO_TEST_CASE(request_header_v2_null_client_id_is_int16_minus_one) {
  RequestHeader h;
  h.request_api_key = 3;
  h.request_api_version = 12;
  h.correlation_id = 7;
  h.client_id.reset();
  BOOST_TEST(hex(encode(h, 2)) == hex(bytes_of("00 03 00 0c 00 00 00 07 ff ff 00")));
  BOOST_TEST(!decode_all<RequestHeader>(bytes_of("00 03 00 0c 00 00 00 07 ff ff 00"), 2).client_id.has_value());
}

BOOST_AUTO_TEST_CASE(metadata_request_v1_lists_topics_with_int32_count_and_int16_names) {
  MetadataRequest m;
  m.topics.emplace();
  m.topics->push_back({});
  m.topics->back().name = "foo";
  m.topics->push_back({});
  m.topics->back().name = "bar";
  const Bytes expected = bytes_of("00 00 00 02 00 03 'foo' 00 03 'bar'");
  BOOST_TEST(hex(encode(m, 1)) == hex(expected));
  auto back = decode_all<MetadataRequest>(expected, 1);
  BOOST_TEST_REQUIRE(back.topics.has_value());
  BOOST_TEST(back.topics->size() == 2u);
  BOOST_TEST((*back.topics)[1].name.value_or("<null>") == "bar");
}

BOOST_AUTO_TEST_CASE(metadata_request_null_topics_means_all_topics_from_v1_and_is_refused_in_v0) {
  MetadataRequest all;
  all.topics.reset();
  BOOST_TEST(hex(encode(all, 1)) == "ff ff ff ff");
  BOOST_TEST(!decode_all<MetadataRequest>(bytes_of("ff ff ff ff"), 1).topics.has_value());
  BOOST_CHECK_THROW(encode(all, 0), std::invalid_argument);
  BOOST_CHECK_THROW(decode_all<MetadataRequest>(bytes_of("ff ff ff ff"), 0), DecodeError);
  // v4 adds AllowAutoTopicCreation (default true)
  BOOST_TEST(hex(encode(all, 4)) == "ff ff ff ff 01");
}

BOOST_AUTO_TEST_CASE(metadata_request_v10_topic_is_uuid_then_nullable_compact_name) {
  MetadataRequest m;
  m.topics.emplace(1);
  Uuid id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(0xa0 + i);
  (*m.topics)[0].topic_id = id;
  (*m.topics)[0].name.reset();
  m.allow_auto_topic_creation = false;
  const Bytes expected = bytes_of(
      "02 a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 aa ab ac ad ae af 00 00"  // topics: [{id, null name, no tags}]
      " 00 00 00 00");  // allow auto create, include cluster ops, include topic ops, tags
  BOOST_TEST(hex(encode(m, 10)) == hex(expected));
  auto back = decode_all<MetadataRequest>(expected, 10);
  BOOST_TEST(((*back.topics)[0].topic_id == id));
  BOOST_TEST(!(*back.topics)[0].name.has_value());
}

BOOST_AUTO_TEST_CASE(produce_request_v3_behind_header_v1) {
  BOOST_TEST(request_header_version(0, 3) == 1);
  RequestHeader h;
  h.request_api_key = 0;
  h.request_api_version = 3;
  h.correlation_id = 42;
  h.client_id = "producer";
  ProduceRequest p;
  p.transactional_id.reset();
  p.acks = -1;
  p.timeout_ms = 1000;
  p.topic_data.push_back({});
  p.topic_data[0].name = "t";
  p.topic_data[0].partition_data.push_back({2, Bytes{0xaa, 0xbb, 0xcc}});
  ByteWriter w;
  h.encode(w, 1);
  p.encode(w, 3);
  const Bytes expected = bytes_of(
      "00 00 00 03 00 00 00 2a 00 08 'producer'"  // header v1
      " ff ff ff ff 00 00 03 e8"                   // null transactional id, acks -1, timeout 1000
      " 00 00 00 01 00 01 't' 00 00 00 01"         // one topic "t", one partition
      " 00 00 00 02 00 00 00 03 aa bb cc");        // partition 2, 3 bytes of records
  BOOST_TEST(hex(w.buffer()) == hex(expected));
}

BOOST_AUTO_TEST_CASE(produce_request_v9_is_compact_with_tagged_sections_at_every_level) {
  ProduceRequest p;
  p.transactional_id.reset();
  p.acks = 1;
  p.timeout_ms = 1000;
  p.topic_data.push_back({});
  p.topic_data[0].name = "t";
  p.topic_data[0].partition_data.push_back({2, Bytes{0xaa, 0xbb, 0xcc}});
  const Bytes expected = bytes_of(
      "00 00 01 00 00 03 e8"            // null compact transactional id, acks 1, timeout
      " 02 02 't' 02"                   // 1 topic "t", 1 partition
      " 00 00 00 02 04 aa bb cc 00"     // partition 2, compact records, partition tags
      " 00 00");                        // topic tags, request tags
  BOOST_TEST(hex(encode(p, 9)) == hex(expected));
  auto back = decode_all<ProduceRequest>(expected, 9);
  BOOST_TEST((back == p));
}

BOOST_AUTO_TEST_CASE(response_header_v1_adds_an_empty_tagged_section) {
  ResponseHeader h;
  h.correlation_id = 42;
  BOOST_TEST(hex(encode(h, 0)) == "00 00 00 2a");
  BOOST_TEST(hex(encode(h, 1)) == "00 00 00 2a 00");
  BOOST_TEST(response_header_version(3, 9) == 1);
  BOOST_TEST(response_header_version(3, 8) == 0);
}

BOOST_AUTO_TEST_CASE(api_versions_response_v0_and_v3_layouts) {
  ApiVersionsResponse r;
  r.api_keys.push_back({18, 0, 4});
  BOOST_TEST(hex(encode(r, 0)) == hex(bytes_of("00 00 00 00 00 01 00 12 00 00 00 04")));
  // v3: compact array, per-entry tags, throttle, and nothing tagged while everything is default
  BOOST_TEST(hex(encode(r, 3)) == hex(bytes_of("00 00 02 00 12 00 00 00 04 00 00 00 00 00 00")));
}

BOOST_AUTO_TEST_CASE(tagged_fields_are_written_in_tag_order_only_when_not_default) {
  ApiVersionsResponse r;
  r.api_keys.push_back({18, 0, 4});
  r.zk_migration_ready = true;     // tag 3
  r.finalized_features_epoch = 5;  // tag 1, default -1
  const Bytes expected = bytes_of(
      "00 00 02 00 12 00 00 00 04 00 00 00 00 00"
      " 02 01 08 00 00 00 00 00 00 00 05 03 01 01");  // 2 tags: (1, 8 bytes, 5), (3, 1 byte, true)
  BOOST_TEST(hex(encode(r, 3)) == hex(expected));
  auto back = decode_all<ApiVersionsResponse>(expected, 3);
  BOOST_TEST(back.finalized_features_epoch == 5);
  BOOST_TEST(back.zk_migration_ready);
  BOOST_TEST(back.supported_features.empty());
}

BOOST_AUTO_TEST_CASE(unknown_tags_are_skipped_and_known_ones_still_read) {
  const Bytes frame = bytes_of("00 00 01 00 00 00 00 02 07 02 ab cd 01 08 00 00 00 00 00 00 00 09");
  auto r = decode_all<ApiVersionsResponse>(frame, 4);
  BOOST_TEST(r.finalized_features_epoch == 9);
  BOOST_TEST(r.api_keys.empty());
}

BOOST_AUTO_TEST_CASE(nullable_struct_field_has_int8_presence_marker) {
  ConsumerGroupHeartbeatResponse r;  // error message, member id and assignment default to null
  BOOST_TEST(hex(encode(r, 0)) == hex(bytes_of("00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 ff 00")));
  r.assignment.emplace();
  BOOST_TEST(hex(encode(r, 0)) == hex(bytes_of("00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 01 00 00")));
  auto back = decode_all<ConsumerGroupHeartbeatResponse>(encode(r, 0), 0);
  BOOST_TEST(back.assignment.has_value());
}

BOOST_AUTO_TEST_CASE(compact_strings_distinguish_null_from_empty) {
  ConsumerGroupHeartbeatResponse r;
  r.error_message = "";
  r.member_id = "m";
  BOOST_TEST(hex(encode(r, 0)) == hex(bytes_of("00 00 00 00 00 00 01 02 'm' 00 00 00 00 00 00 00 00 ff 00")));
}

BOOST_AUTO_TEST_CASE(defaults_follow_the_specs) {
  MetadataResponse md;
  BOOST_TEST(md.controller_id == -1);
  BOOST_TEST(!md.cluster_id.has_value());
  BOOST_TEST(md.cluster_authorized_operations == INT32_MIN);
  BOOST_TEST(MetadataResponse::MetadataResponseTopic{}.topic_authorized_operations == INT32_MIN);
  BOOST_TEST(MetadataResponse::MetadataResponsePartition{}.leader_epoch == -1);
  MetadataRequest req;
  BOOST_TEST(req.allow_auto_topic_creation);
  BOOST_TEST((req.topics.has_value() && req.topics->empty()));  // empty list, not null (= all topics)
  FetchRequest fetch;
  BOOST_TEST(fetch.max_bytes == 0x7fffffff);
  BOOST_TEST(fetch.replica_id == -1);
  BOOST_TEST(!fetch.cluster_id.has_value());
  BOOST_TEST(ApiVersionsResponse{}.finalized_features_epoch == -1);
  BOOST_TEST((RequestHeader{}.client_id == std::optional<std::string>("")));
  BOOST_TEST(!ProduceRequest::PartitionProduceData{}.records.has_value());
}

// A records field is read as a view into a shared input (the request frame, which it then keeps
// alive) and copied out of a borrowed one; written piece by piece, by reference where the writer
// collects shared spans, with the same bytes on the wire either way.
BOOST_AUTO_TEST_CASE(records_fields_view_a_shared_input_and_are_written_from_their_pieces) {
  ProduceRequest req;
  req.acks = -1;
  auto& td = req.topic_data.emplace_back();
  td.name = "t";
  auto& pd = td.partition_data.emplace_back();
  Bytes batch(6000);
  for (size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<uint8_t>(i);
  pd.records = ChunkedBytes(batch);
  const Bytes wire = encode(req, 9);

  std::weak_ptr<const void> frame_alive;
  std::optional<ChunkedBytes> viewed;
  {
    auto frame = std::make_shared<const Bytes>(wire);
    const std::shared_ptr<const void> owner = frame;
    ByteReader r(*frame);
    r.set_owner(&owner);
    ProduceRequest got;
    got.decode(r, 9);
    viewed = got.topic_data[0].partition_data[0].records;
    BOOST_REQUIRE(viewed.has_value());
    BOOST_TEST(viewed->chunks().size() == 1u);
    BOOST_TEST((viewed->span().data() >= frame->data() && viewed->span().data() < frame->data() + frame->size()));
    frame_alive = frame;
  }
  BOOST_TEST(!frame_alive.expired());  // the view keeps the frame
  BOOST_TEST((viewed->to_bytes() == batch));
  viewed.reset();
  BOOST_TEST(frame_alive.expired());

  ProduceRequest copied = decode_all<ProduceRequest>(wire, 9);  // borrowed input: a copy
  const ByteSpan c = copied.topic_data[0].partition_data[0].records->span();
  BOOST_TEST((c.data() < wire.data() || c.data() >= wire.data() + wire.size()));
  BOOST_TEST((Bytes(c.begin(), c.end()) == batch));

  FetchResponse resp;
  auto& fp = resp.responses.emplace_back().partitions.emplace_back();
  auto shared = std::make_shared<const Bytes>(batch);
  ChunkedBytes pieces(Bytes{1, 2, 3});
  pieces.append(SharedSpan{shared, *shared});
  pieces.append(Bytes{4, 5});
  fp.records = pieces;
  ByteWriter scattered;
  scattered.collect_shared(4096);
  resp.encode(scattered, 12);
  BOOST_TEST(scattered.shared_spans().size() == 1u);
  BOOST_TEST(scattered.total_size() == scattered.size() + batch.size());
  Bytes flat = scattered.buffer();
  const size_t at = scattered.shared_spans()[0].at;
  flat.insert(flat.begin() + static_cast<std::ptrdiff_t>(at), batch.begin(), batch.end());
  BOOST_TEST(flat == encode(resp, 12));
  const FetchResponse back = decode_all<FetchResponse>(flat, 12);
  BOOST_TEST((back.responses[0].partitions[0].records == pieces));
  BOOST_CHECK_THROW(scattered.take(), std::logic_error);
}

BOOST_AUTO_TEST_CASE(fields_absent_from_a_version_are_neither_written_nor_read) {
  MetadataResponse md;
  md.throttle_time_ms = 100;  // v3+
  md.cluster_id = "c";        // v2+
  md.controller_id = 5;       // v1+
  BOOST_TEST(hex(encode(md, 0)) == "00 00 00 00 00 00 00 00");  // brokers [], topics []
  auto back = decode_all<MetadataResponse>(bytes_of("00 00 00 00 00 00 00 00"), 0);
  BOOST_TEST(back.controller_id == -1);
  BOOST_TEST(back.throttle_time_ms == 0);
}

BOOST_AUTO_TEST_CASE(decode_resets_fields_of_a_reused_message) {
  MetadataResponse md;
  md.controller_id = 5;
  md.throttle_time_ms = 9;
  const Bytes empty_v0 = bytes_of("00 00 00 00 00 00 00 00");
  ByteReader r(empty_v0);
  md.decode(r, 0);
  BOOST_TEST(md.controller_id == -1);
  BOOST_TEST(md.throttle_time_ms == 0);
}

BOOST_AUTO_TEST_CASE(header_versions_follow_kafka_rules) {
  BOOST_TEST(request_header_version(7, 0) == -1);  // ControlledShutdown: removed in Kafka 4.0
  BOOST_TEST(request_header_version(0, 3) == 1);
  BOOST_TEST(request_header_version(0, 9) == 2);
  BOOST_TEST(request_header_version(17, 1) == 1);  // SaslHandshake is never flexible
  BOOST_TEST(request_header_version(18, 9) == 2);  // newer than we know: still flexible
  BOOST_TEST(response_header_version(18, 0) == 0);
  BOOST_TEST(response_header_version(18, 4) == 0);  // ApiVersions responses: always header v0
  BOOST_TEST(response_header_version(0, 9) == 1);
  BOOST_TEST(response_header_version(0, 8) == 0);
  BOOST_TEST(request_header_version(999, 0) == -1);
  BOOST_TEST(response_header_version(-1, 0) == -1);
}

BOOST_AUTO_TEST_CASE(api_table_covers_every_key_of_the_specs_in_order) {
  auto apis = all_apis();
  BOOST_TEST(apis.size() == 91u);  // keys 0-94 of kafka-clients 4.4.0 without the four 4.0 removed
  for (size_t i = 1; i < apis.size(); ++i) BOOST_TEST(apis[i - 1].key < apis[i].key);
  BOOST_TEST(apis.front().key == 0);
  BOOST_TEST(apis.back().key == 94);
  for (int16_t removed : {4, 5, 6, 7}) BOOST_TEST(find_api(removed) == nullptr);  // LeaderAndIsr .. ControlledShutdown
  BOOST_TEST(std::string(api_name(4)) == "Unknown");
  BOOST_TEST(std::string(api_name(0)) == "Produce");
  BOOST_TEST(std::string(api_name(18)) == "ApiVersions");
  BOOST_TEST(std::string(api_name(3)) == "Metadata");
  BOOST_TEST(std::string(api_name(500)) == "Unknown");
  BOOST_TEST_REQUIRE(find_api(3) != nullptr);
  BOOST_TEST(find_api(3)->max_version == MetadataRequest::kMaxVersion);
  BOOST_TEST(find_api(3)->first_flexible == 9);
  BOOST_TEST(find_api(17)->first_flexible == -1);
  BOOST_TEST(find_api(93) != nullptr);  // StreamsGroupTopologyDescriptionUpdate (Kafka 4.4)
  BOOST_TEST(find_api(95) == nullptr);
  BOOST_TEST(ProduceRequest::kApiKey == 0);
  BOOST_TEST(FetchResponse::kFirstFlexibleVersion == 12);
  BOOST_TEST(SaslHandshakeRequest::kFirstFlexibleVersion == -1);
}

BOOST_AUTO_TEST_CASE(encoding_a_string_longer_than_int16_is_refused) {
  ProduceRequest p;
  p.topic_data.push_back({});
  p.topic_data[0].name = std::string(40000, 'x');
  BOOST_CHECK_THROW(encode(p, 3), std::length_error);
  BOOST_CHECK_THROW(encode(p, 9), std::length_error);
}

BOOST_AUTO_TEST_CASE(encoding_null_where_the_version_forbids_it_is_refused) {
  MetadataResponse md;
  md.topics.push_back({});
  md.topics[0].name.reset();  // nullable only from v12
  BOOST_CHECK_THROW(encode(md, 11), std::invalid_argument);
  BOOST_CHECK_NO_THROW(encode(md, 12));
}

BOOST_AUTO_TEST_SUITE_END()
