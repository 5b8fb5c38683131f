// Request frames captured from real clients (tests/golden/*.bin, see tests/golden/README.md):
// each decodes at its version to the values the client is known to send, and re-encodes to
// exactly the captured bytes.
#include <boost/test/unit_test.hpp>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "kafka/protocol/generated/all.h"

using namespace kib;
using namespace kib::kafka::msg;

namespace {

std::filesystem::path golden_dir() {
  if (const char* env = std::getenv("KIB_GOLDEN_DIR")) return env;
  for (std::filesystem::path p : {std::filesystem::path("tests/golden"),
                                  std::filesystem::path(__FILE__).parent_path().parent_path() / "golden"}) {
    if (std::filesystem::exists(p / "README.md")) return p;
  }
  return "tests/golden";
}

Bytes load(const std::string& name) {
  std::ifstream in(golden_dir() / name, std::ios::binary);
  BOOST_TEST_REQUIRE(in.good(), "cannot open golden file " << (golden_dir() / name).string()
                                                          << " (run from the repository root or set KIB_GOLDEN_DIR)");
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <typename Body>
struct Frame {
  RequestHeader header;
  Body body;
};

// Decodes header (at the version Kafka's rules give) and body, requires every byte consumed, and
// requires the re-encoding to be byte-identical.
template <typename Body>
Frame<Body> decode_frame(const std::string& name) {
  const Bytes bytes = load(name);
  ByteReader peek(bytes);
  const int16_t key = peek.be<int16_t>();
  const int16_t version = peek.be<int16_t>();
  BOOST_TEST_REQUIRE(key == Body::kApiKey);
  const int16_t header_version = request_header_version(key, version);

  Frame<Body> f;
  ByteReader r(bytes);
  f.header.decode(r, header_version);
  f.body.decode(r, version);
  BOOST_TEST(r.remaining() == 0u, name << ": " << r.remaining() << " bytes not decoded");

  ByteWriter w;
  f.header.encode(w, header_version);
  f.body.encode(w, version);
  BOOST_TEST((w.buffer() == bytes), name << ": re-encoding differs from the captured frame");
  return f;
}

bool is_v2_record_batch(const std::optional<ChunkedBytes>& records) {
  return records && records->size() > 61 && records->span()[16] == 2;  // magic byte of a v2 batch
}

}  // namespace

BOOST_AUTO_TEST_SUITE(protocol_golden_frames)

BOOST_AUTO_TEST_CASE(librdkafka_2_0_api_versions_v3_names_its_software) {
  auto f = decode_frame<ApiVersionsRequest>("kcat-list-api_versions-v3.bin");
  BOOST_TEST(f.header.request_api_version == 3);
  BOOST_TEST(f.header.correlation_id == 1);
  BOOST_TEST(f.header.client_id.value_or("<null>") == "rdkafka");
  BOOST_TEST(f.body.client_software_name == "librdkafka");
  BOOST_TEST(f.body.client_software_version == "2.0.2");
}

BOOST_AUTO_TEST_CASE(librdkafka_metadata_v4_asks_for_no_topics_with_empty_and_for_all_with_null) {
  auto none = decode_frame<MetadataRequest>("kcat-list-metadata-v4.bin");
  BOOST_TEST_REQUIRE(none.body.topics.has_value());
  BOOST_TEST(none.body.topics->empty());
  BOOST_TEST(!none.body.allow_auto_topic_creation);
  auto all = decode_frame<MetadataRequest>("kcat-list-metadata-v4-2.bin");
  BOOST_TEST(!all.body.topics.has_value());
  BOOST_TEST(all.body.allow_auto_topic_creation);
}

BOOST_AUTO_TEST_CASE(librdkafka_producer_metadata_v4_names_its_topic) {
  auto f = decode_frame<MetadataRequest>("kcat-produce-metadata-v4.bin");
  BOOST_TEST_REQUIRE(f.body.topics.has_value());
  BOOST_TEST_REQUIRE(f.body.topics->size() == 1u);
  BOOST_TEST((*f.body.topics)[0].name.value_or("<null>") == "golden-topic");
  BOOST_TEST(f.body.allow_auto_topic_creation);
}

BOOST_AUTO_TEST_CASE(librdkafka_produce_v7_carries_one_v2_batch_for_partition_0) {
  auto f = decode_frame<ProduceRequest>("kcat-produce-produce-v7.bin");
  BOOST_TEST(f.header.client_id.value_or("<null>") == "rdkafka");
  BOOST_TEST(!f.body.transactional_id.has_value());
  BOOST_TEST(f.body.acks == -1);
  BOOST_TEST(f.body.timeout_ms == 30000);
  BOOST_TEST_REQUIRE(f.body.topic_data.size() == 1u);
  BOOST_TEST(f.body.topic_data[0].name == "golden-topic");
  BOOST_TEST_REQUIRE(f.body.topic_data[0].partition_data.size() == 1u);
  BOOST_TEST(f.body.topic_data[0].partition_data[0].index == 0);
  BOOST_TEST(is_v2_record_batch(f.body.topic_data[0].partition_data[0].records));
}

BOOST_AUTO_TEST_CASE(java_4_1_api_versions_v4_uses_header_v2_and_names_its_software) {
  for (const char* name : {"java-producer-api_versions-v4.bin", "java-admin-api_versions-v4.bin"}) {
    auto f = decode_frame<ApiVersionsRequest>(name);
    BOOST_TEST(f.header.request_api_version == 4);
    BOOST_TEST(f.body.client_software_name == "apache-kafka-java");
    BOOST_TEST(f.body.client_software_version == "4.1.0");
  }
  BOOST_TEST(decode_frame<ApiVersionsRequest>("java-producer-api_versions-v4.bin").header.client_id.value_or("") ==
             "golden-producer");
  BOOST_TEST(decode_frame<ApiVersionsRequest>("java-admin-api_versions-v4.bin").header.client_id.value_or("") ==
             "golden-admin");
}

BOOST_AUTO_TEST_CASE(java_producer_metadata_v12_asks_for_its_topic_by_name_with_zero_topic_id) {
  auto f = decode_frame<MetadataRequest>("java-producer-metadata-v12.bin");
  BOOST_TEST_REQUIRE(f.body.topics.has_value());
  BOOST_TEST_REQUIRE(f.body.topics->size() == 1u);
  const auto& t = (*f.body.topics)[0];
  BOOST_TEST(t.name.value_or("<null>") == "golden-topic");
  BOOST_TEST((t.topic_id == Uuid{}));
  BOOST_TEST(f.body.allow_auto_topic_creation);
  BOOST_TEST(!f.body.include_topic_authorized_operations);
}

BOOST_AUTO_TEST_CASE(java_admin_metadata_v12_asks_for_no_topics_then_all_topics_with_null) {
  auto none = decode_frame<MetadataRequest>("java-admin-metadata-v12.bin");
  BOOST_TEST((none.body.topics.has_value() && none.body.topics->empty()));
  auto all = decode_frame<MetadataRequest>("java-admin-metadata-v12-2.bin");
  BOOST_TEST(!all.body.topics.has_value());
}

BOOST_AUTO_TEST_CASE(java_idempotent_producer_init_producer_id_v4) {
  auto f = decode_frame<InitProducerIdRequest>("java-producer-init_producer_id-v4.bin");
  BOOST_TEST(!f.body.transactional_id.has_value());
  BOOST_TEST(f.body.transaction_timeout_ms == INT32_MAX);
  BOOST_TEST(f.body.producer_id == -1);
  BOOST_TEST(f.body.producer_epoch == -1);
}

BOOST_AUTO_TEST_CASE(java_produce_v9_is_flexible_and_carries_one_v2_batch) {
  auto f = decode_frame<ProduceRequest>("java-producer-produce-v9.bin");
  BOOST_TEST(request_header_version(0, 9) == 2);
  BOOST_TEST(f.header.client_id.value_or("<null>") == "golden-producer");
  BOOST_TEST(f.body.acks == -1);
  BOOST_TEST(f.body.timeout_ms == 5000);
  BOOST_TEST_REQUIRE(f.body.topic_data.size() == 1u);
  BOOST_TEST(f.body.topic_data[0].name == "golden-topic");
  BOOST_TEST_REQUIRE(f.body.topic_data[0].partition_data.size() == 1u);
  BOOST_TEST(is_v2_record_batch(f.body.topic_data[0].partition_data[0].records));
}

BOOST_AUTO_TEST_CASE(every_truncation_of_a_golden_produce_frame_is_a_decode_error) {
  const Bytes bytes = load("java-producer-produce-v9.bin");
  for (size_t len = 0; len < bytes.size(); ++len) {
    ByteReader r(bytes.data(), len);
    RequestHeader h;
    ProduceRequest p;
    BOOST_CHECK_THROW((h.decode(r, 2), p.decode(r, 9)), DecodeError);
  }
}

BOOST_AUTO_TEST_SUITE_END()
