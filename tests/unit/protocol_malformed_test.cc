// Hostile input: decoding must throw DecodeError, never crash or allocate what the peer claims.
// (Every message truncated at every byte is covered by the generated round-trip tests.)
#include <boost/test/unit_test.hpp>

#include <string>

#include "kafka/protocol/generated/all.h"

using namespace kib;
using namespace kib::kafka::msg;

namespace {

Bytes bytes_of(const std::string& spec) {
  Bytes out;
  for (size_t i = 0; i < spec.size();) {
    char c = spec[i];
    if (c == ' ' || c == '|') {
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
void decode(const Bytes& b, int16_t version) {
  ByteReader r(b);
  T m;
  m.decode(r, version);
}

// Decoding must fail with a DecodeError whose message names `mention` (the field or the limit).
template <typename T>
void expect_decode_error(const Bytes& b, int16_t version, const std::string& mention) {
  try {
    decode<T>(b, version);
    BOOST_ERROR("decoded without error; expected DecodeError mentioning '" << mention << "'");
  } catch (const DecodeError& e) {
    BOOST_CHECK_MESSAGE(std::string(e.what()).find(mention) != std::string::npos,
                        "DecodeError '" << e.what() << "' does not mention '" << mention << "'");
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(protocol_malformed_input)

BOOST_AUTO_TEST_CASE(array_count_of_int32_max_is_rejected_before_allocating) {
  expect_decode_error<MetadataRequest>(bytes_of("7f ff ff ff 00 01 'a'"), 1, "MetadataRequest.Topics: count 2147483647");
  expect_decode_error<ProduceResponse>(bytes_of("7f ff ff ff"), 0, "ProduceResponse.Responses: count 2147483647");
  expect_decode_error<MetadataResponse>(bytes_of("00 00 00 00 | 00 00 00 01 | 00 00 | 00 01 't'"  // 1 topic
                                                 " | 00 00 00 01 | 00 00 | 00 00 00 00 | 00 00 00 01"  // 1 partition
                                                 " | 7f ff ff ff | 00 00 00 00"),  // replica nodes, isr nodes
                                        0, "MetadataResponse.MetadataResponsePartition.ReplicaNodes: count 2147483647");
}

BOOST_AUTO_TEST_CASE(array_count_of_2_pow_31_is_a_negative_length) {
  expect_decode_error<ProduceRequest>(bytes_of("ff ff | 00 00 | 00 00 00 00 | 80 00 00 00"), 3,
                                      "ProduceRequest.TopicData: negative length -2147483648");
}

BOOST_AUTO_TEST_CASE(compact_array_count_of_2_pow_32_minus_2_is_rejected) {
  expect_decode_error<ProduceRequest>(bytes_of("00 | 00 01 | 00 00 00 00 | ff ff ff ff 0f"), 9,
                                      "ProduceRequest.TopicData: count 4294967294");
}

BOOST_AUTO_TEST_CASE(nested_array_count_is_checked_against_the_remaining_bytes) {
  // one topic whose partition list claims 1,000,000 entries in a 21-byte frame
  expect_decode_error<ProduceRequest>(
      bytes_of("ff ff | 00 00 | 00 00 00 00 | 00 00 00 01 | 00 01 't' | 00 0f 42 40 | 00 00"), 3,
      "ProduceRequest.TopicProduceData.PartitionData: count 1000000");
}

BOOST_AUTO_TEST_CASE(negative_lengths_other_than_minus_one_are_rejected) {
  expect_decode_error<MetadataRequest>(bytes_of("00 00 00 01 | ff fe"), 1,
                                       "MetadataRequest.MetadataRequestTopic.Name: negative length -2");
  expect_decode_error<ProduceRequest>(bytes_of("ff ff | 00 01 | 00 00 00 00 | 00 00 00 01 | 00 01 't'"
                                               " | 00 00 00 01 | 00 00 00 00 | ff ff ff fb"),
                                      3, "ProduceRequest.PartitionProduceData.Records: negative length -5");
  expect_decode_error<MetadataRequest>(bytes_of("ff ff ff fe"), 1, "MetadataRequest.Topics: negative length -2");
}

BOOST_AUTO_TEST_CASE(null_for_a_non_nullable_field_is_rejected) {
  expect_decode_error<MetadataRequest>(bytes_of("00 00 00 01 | ff ff"), 1,
                                       "MetadataRequest.MetadataRequestTopic.Name: null for a non-nullable field");
  expect_decode_error<ProduceRequest>(bytes_of("ff ff | 00 01 | 00 00 00 00 | ff ff ff ff"), 3,
                                      "ProduceRequest.TopicData: null for a non-nullable field");
  expect_decode_error<ApiVersionsRequest>(bytes_of("00 01 00"), 3,
                                          "ApiVersionsRequest.ClientSoftwareName: null for a non-nullable field");
  expect_decode_error<MetadataRequest>(bytes_of("ff ff ff ff"), 0, "MetadataRequest.Topics: null");
}

BOOST_AUTO_TEST_CASE(string_claiming_more_bytes_than_remain_is_rejected) {
  expect_decode_error<MetadataRequest>(bytes_of("00 00 00 01 | 7f ff 'abc'"), 1,
                                       "MetadataRequest.MetadataRequestTopic.Name: need 32767 bytes, 3 left");
  expect_decode_error<ApiVersionsRequest>(bytes_of("8a 01 'abc'"), 3,
                                          "ApiVersionsRequest.ClientSoftwareName: need 137 bytes, 3 left");
}

BOOST_AUTO_TEST_CASE(compact_string_longer_than_int16_is_rejected) {
  Bytes frame = bytes_of("c1 b8 02");  // compact length 40000 + 1, and the 40000 bytes present
  frame.insert(frame.end(), 40000, 'x');
  frame.push_back(0x01);
  frame.push_back(0x00);
  expect_decode_error<ApiVersionsRequest>(frame, 3, "string length 40000 exceeds 32767");
}

BOOST_AUTO_TEST_CASE(overlong_varints_are_rejected) {
  expect_decode_error<ApiVersionsRequest>(bytes_of("ff ff ff ff ff 01"), 3, "varint overflows 32 bits");
  expect_decode_error<ApiVersionsRequest>(bytes_of("ff ff ff ff 7f"), 3, "varint overflows 32 bits");
}

BOOST_AUTO_TEST_CASE(tagged_field_larger_than_the_frame_is_rejected) {
  // two empty names, then one tagged field (tag 5) claiming 100 bytes
  expect_decode_error<ApiVersionsRequest>(bytes_of("01 01 | 01 | 05 64 00 00"), 3,
                                          "ApiVersionsRequest tagged fields: need 100 bytes, 2 left");
  // 2^32-1 tagged fields announced, none present
  expect_decode_error<ApiVersionsRequest>(bytes_of("01 01 | ff ff ff ff 0f"), 3, "ApiVersionsRequest tagged fields");
}

BOOST_AUTO_TEST_CASE(truncated_known_tagged_field_is_rejected) {
  // ApiVersionsResponse v3, tag 1 (int64 epoch) with a 2-byte payload
  expect_decode_error<ApiVersionsResponse>(bytes_of("00 00 | 01 | 00 00 00 00 | 01 | 01 02 00 05"), 3,
                                           "ApiVersionsResponse.FinalizedFeaturesEpoch");
}

BOOST_AUTO_TEST_CASE(truncated_nullable_struct_is_rejected) {
  // ConsumerGroupHeartbeatResponse: the assignment marker says present, the struct is missing
  expect_decode_error<ConsumerGroupHeartbeatResponse>(
      bytes_of("00 00 00 00 | 00 00 | 00 | 00 | 00 00 00 00 | 00 00 00 00 | 01"), 0,
      "ConsumerGroupHeartbeatResponse.Assignment.TopicPartitions");
}

BOOST_AUTO_TEST_CASE(truncated_headers_are_rejected) {
  expect_decode_error<RequestHeader>(Bytes{}, 1, "RequestHeader.RequestApiKey");
  expect_decode_error<RequestHeader>(bytes_of("00 00 00 09 00 00 00"), 1, "RequestHeader.CorrelationId");
  expect_decode_error<RequestHeader>(bytes_of("00 00 00 09 00 00 00 01 00 05 'ab'"), 1, "RequestHeader.ClientId");
  expect_decode_error<RequestHeader>(bytes_of("00 00 00 09 00 00 00 01 00 02 'ab'"), 2, "RequestHeader tagged fields");
}

BOOST_AUTO_TEST_CASE(random_mutations_never_escape_as_anything_but_decode_error) {
  // Mutations of a valid Fetch request: each either decodes or throws DecodeError.
  FetchRequest f;
  f.topics.push_back({});
  f.topics[0].topic = "t";
  f.topics[0].partitions.push_back({});
  ByteWriter w;
  f.encode(w, 12);
  const Bytes valid = w.take();
  uint32_t state = 12345;
  int rejected = 0;
  for (int i = 0; i < 2000; ++i) {
    Bytes b = valid;
    for (int k = 0; k < 3; ++k) {
      state = state * 1103515245u + 12345u;
      b[(state >> 8) % b.size()] = static_cast<uint8_t>(state >> 16);
    }
    try {
      decode<FetchRequest>(b, 12);
    } catch (const DecodeError&) {
      ++rejected;
    }
  }
  BOOST_TEST(rejected > 0);
}

BOOST_AUTO_TEST_SUITE_END()
