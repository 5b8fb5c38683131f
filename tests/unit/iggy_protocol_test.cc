// Iggy wire protocol 0.11: byte layouts against docs/iggy-protocol.md's worked examples and field tables.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <xxhash.h>

#include "common/bytes.h"
#include "iggy/errors.h"
#include "iggy/protocol.h"
#include "iggy/user_headers.h"

using namespace kib;
using namespace kib::iggy;

namespace {

uint32_t u32_at(const Bytes& b, size_t off) {
  ByteReader r(ByteSpan(b).subspan(off, 4));
  return r.le<uint32_t>();
}
uint64_t u64_at(const Bytes& b, size_t off) {
  ByteReader r(ByteSpan(b).subspan(off, 8));
  return r.le<uint64_t>();
}
ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

bool all_zero(const Bytes& b, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i)
    if (b[i] != 0) return false;
  return true;
}

// A reply/eviction header as the server builds it.
Bytes reply_header(uint32_t size, uint8_t operation, uint32_t status, uint64_t request = 1) {
  Bytes h(wire::kHeaderSize, 0);
  h[60] = 8;
  std::memcpy(h.data() + 48, &size, 4);
  std::memcpy(h.data() + 200, &request, 8);
  h[208] = operation;
  std::memcpy(h.data() + 216, &status, 4);
  return h;
}

Bytes eviction_header(uint8_t reason, uint32_t max = 0, uint32_t min = 0) {
  Bytes h(wire::kHeaderSize, 0);
  uint32_t size = 256;
  std::memcpy(h.data() + 48, &size, 4);
  h[60] = 13;
  std::memcpy(h.data() + 144, &max, 4);
  std::memcpy(h.data() + 148, &min, 4);
  h[255] = reason;
  return h;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(iggy_protocol)

BOOST_AUTO_TEST_CASE(protocol_version_is_0_11_0_packed_as_11264) {
  BOOST_TEST(wire::kProtocolVersion == 11264u);
  BOOST_TEST(wire::kProtocolVersion == 0x2C00u);
}

BOOST_AUTO_TEST_CASE(ping_before_login_matches_worked_example) {
  wire::RequestFrame f = wire::encode_ping();
  U128 client{0x1122334455667788ull, 0x99AABBCCDDEEFF00ull};
  wire::stamp_request(f.bytes, client, 0, 1);
  BOOST_TEST(f.bytes.size() == 256u);
  BOOST_TEST(u32_at(f.bytes, 48) == 256u);  // 00 01 00 00
  BOOST_TEST(f.bytes[60] == 5);
  BOOST_TEST(u64_at(f.bytes, 128) == client.lo);
  BOOST_TEST(u64_at(f.bytes, 136) == client.hi);
  BOOST_TEST(f.bytes[176] == 2);           // NonReplicated
  BOOST_TEST(u32_at(f.bytes, 196) == 1u);  // PING code
  BOOST_TEST(all_zero(f.bytes, 0, 48));
  BOOST_TEST(all_zero(f.bytes, 61, 128));
  BOOST_TEST(all_zero(f.bytes, 144, 168));  // no request checksum on reads
  BOOST_TEST(all_zero(f.bytes, 184, 196));  // session 0, user id 0
  BOOST_TEST(all_zero(f.bytes, 200, 256));
}

BOOST_AUTO_TEST_CASE(login_iggy_iggy_from_cpp_0_1_is_26_byte_body_282_byte_frame) {
  auto f = wire::encode_login_password("iggy", "iggy", {"cpp", "0.1"});
  BOOST_REQUIRE(f.ok());
  const Bytes expected_body = {0x00, 0x2C, 0x00, 0x00, 3, 'c', 'p', 'p', 3, '0', '.', '1', 4,
                               'i',  'g',  'g',  'y',  4, 'i', 'g', 'g', 'y', 0,   0,   0,   0};
  BOOST_REQUIRE(f->bytes.size() == 282u);
  BOOST_TEST(Bytes(f->bytes.begin() + 256, f->bytes.end()) == expected_body, boost::test_tools::per_element());
  BOOST_TEST(f->bytes[48] == 0x1A);
  BOOST_TEST(f->bytes[49] == 0x01);
  BOOST_TEST(f->bytes[60] == 5);
  BOOST_TEST(f->bytes[176] == 1);             // Register
  BOOST_TEST(all_zero(f->bytes, 168, 176));   // request 0
  BOOST_TEST(all_zero(f->bytes, 184, 192));   // session 0
  BOOST_TEST(all_zero(f->bytes, 196, 200));   // code not sent for Register
  // Register is deduplicated: request checksum = XXH3-64(body), high half zero.
  BOOST_TEST(u64_at(f->bytes, 144) == XXH3_64bits(expected_body.data(), expected_body.size()));
  BOOST_TEST(u64_at(f->bytes, 152) == 0u);
  BOOST_TEST((f->operation == wire::Operation::kRegister));
}

BOOST_AUTO_TEST_CASE(personal_access_token_login_body_is_version_token_and_empty_context) {
  auto f = wire::encode_login_token("secret-token", {"cpp", "0.1"});
  BOOST_REQUIRE(f.ok());
  Bytes body(f->bytes.begin() + 256, f->bytes.end());
  ByteReader r(body);
  BOOST_TEST(r.le<uint32_t>() == 11264u);
  r.skip(4);  // "cpp"
  r.skip(4);  // "0.1"
  BOOST_TEST(r.le<uint8_t>() == 12u);
  BOOST_TEST(r.take_string(12) == "secret-token");
  BOOST_TEST(r.le<uint32_t>() == 0u);
  BOOST_TEST(r.empty());
  BOOST_TEST(f->bytes[176] == 1);
}

BOOST_AUTO_TEST_CASE(stamp_request_places_client_session_and_request_number) {
  wire::RequestFrame f = wire::encode_get_streams();
  wire::stamp_request(f.bytes, U128{7, 9}, 42, 1234);
  BOOST_TEST(u64_at(f.bytes, 128) == 7u);
  BOOST_TEST(u64_at(f.bytes, 136) == 9u);
  BOOST_TEST(u64_at(f.bytes, 184) == 42u);
  BOOST_TEST(u64_at(f.bytes, 168) == 1234u);
}

BOOST_AUTO_TEST_CASE(identifiers_encode_as_kind_length_value) {
  ByteWriter w;
  wire::write_identifier(w, Identifier::numeric(5));
  wire::write_identifier(w, Identifier::named("orders"));
  const Bytes expected = {1, 4, 5, 0, 0, 0, 2, 6, 'o', 'r', 'd', 'e', 'r', 's'};
  BOOST_TEST(w.buffer() == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(metadata_writes_use_their_op_byte_and_carry_a_body_checksum) {
  auto f = wire::encode_create_stream("kafka");
  BOOST_REQUIRE(f.ok());
  BOOST_TEST(f->bytes[176] == 128);
  BOOST_TEST(u32_at(f->bytes, 196) == 0u);
  const Bytes body = {5, 'k', 'a', 'f', 'k', 'a'};  // name, empty options block
  BOOST_TEST(Bytes(f->bytes.begin() + 256, f->bytes.end()) == body, boost::test_tools::per_element());
  BOOST_TEST(u64_at(f->bytes, 144) == XXH3_64bits(body.data(), body.size()));
}

BOOST_AUTO_TEST_CASE(every_command_maps_to_the_documented_operation) {
  using wire::Operation;
  BOOST_TEST(static_cast<int>(wire::operation_for_code(wire::cmd::kLogoutUser)) == 3);
  BOOST_TEST(static_cast<int>(wire::operation_for_code(wire::cmd::kPurgeTopic)) == 135);
  BOOST_TEST(static_cast<int>(wire::operation_for_code(wire::cmd::kDeleteSegments)) == 138);
  BOOST_TEST(static_cast<int>(wire::operation_for_code(wire::cmd::kCreateUser)) == 141);
  BOOST_TEST(static_cast<int>(wire::operation_for_code(wire::cmd::kLeaveConsumerGroup)) == 149);
  BOOST_TEST(static_cast<int>(wire::operation_for_code(wire::cmd::kSendMessages)) == 160);
  BOOST_TEST(static_cast<int>(wire::operation_for_code(wire::cmd::kDeleteConsumerOffset)) == 162);
  for (uint32_t read : {wire::cmd::kPing, wire::cmd::kGetStats, wire::cmd::kGetMe, wire::cmd::kPollMessages,
                        wire::cmd::kGetConsumerOffset, wire::cmd::kGetTopic, wire::cmd::kSyncConsumerGroup,
                        wire::cmd::kGetPersonalAccessTokens})
    BOOST_TEST((wire::operation_for_code(read) == Operation::kNonReplicated));
  BOOST_TEST(wire::is_deduplicated_op(Operation::kDeleteSegments));
  BOOST_TEST(!wire::is_deduplicated_op(Operation::kSendMessages));
  BOOST_TEST(!wire::is_deduplicated_op(Operation::kNonReplicated));
}

BOOST_AUTO_TEST_CASE(partition_ops_and_reads_are_not_checksummed) {
  auto store = wire::encode_store_consumer_offset(Consumer::consumer(Identifier::numeric(1)),
                                                  Identifier::named("s"), Identifier::named("t"), 0u, 5);
  BOOST_REQUIRE(store.ok());
  BOOST_TEST(store->bytes[176] == 161);
  BOOST_TEST(all_zero(store->bytes, 144, 160));
  auto poll = wire::encode_poll_messages(PollRequest{});
  BOOST_REQUIRE(poll.ok());
  BOOST_TEST(all_zero(poll->bytes, 144, 160));
  BOOST_TEST(u32_at(poll->bytes, 196) == 100u);
}

BOOST_AUTO_TEST_CASE(send_messages_sizing_example_is_586_bytes) {
  const uint8_t payload[] = {0xAB, 0xCD};
  OutgoingMessage m;
  m.id = U128{0x0102030405060708ull, 0};
  m.origin_timestamp_us = 1'700'000'000'000'000ull;
  m.payload = ByteSpan(payload, 2);
  auto f = wire::encode_send_messages(Identifier::named("kafka"), Identifier::named("t"), Partitioning::partition(0),
                                      std::span<const OutgoingMessage>(&m, 1), 0);
  BOOST_REQUIRE(f.ok());
  const Bytes& b = f->bytes;
  BOOST_TEST(b.size() == 586u);
  BOOST_TEST(u32_at(b, 48) == 586u);
  BOOST_TEST(b[176] == 160);
  BOOST_TEST(all_zero(b, 144, 160));  // partition ops are not stamped
  BOOST_TEST(wire::send_messages_frame_size(Identifier::named("kafka"), Identifier::named("t"),
                                            Partitioning::partition(0), std::span<const OutgoingMessage>(&m, 1)) == 586u);

  // metadata section: [len=20][Id "kafka" (7)][Id "t" (3)][PartitionId 0 (6)][count=1 (4)]
  size_t p = 256;
  BOOST_TEST(u32_at(b, p) == 20u);
  const Bytes metadata = {2, 5, 'k', 'a', 'f', 'k', 'a', 2, 1, 't', 2, 4, 0, 0, 0, 0, 1, 0, 0, 0};
  BOOST_TEST(Bytes(b.begin() + 260, b.begin() + 280) == metadata, boost::test_tools::per_element());

  // batch header (256 bytes at body offset 24 = frame offset 280)
  const size_t bh = 280;
  BOOST_TEST(u64_at(b, bh + 0) == 0u);   // partition_id
  BOOST_TEST(u64_at(b, bh + 8) == 0u);   // base_offset
  BOOST_TEST(u64_at(b, bh + 16) == 0u);  // base_timestamp
  BOOST_TEST(u64_at(b, bh + 24) == m.origin_timestamp_us);
  BOOST_TEST(u64_at(b, bh + 32) == 306u);  // batch_length
  BOOST_TEST(u32_at(b, bh + 48) == 1u);
  BOOST_TEST(all_zero(b, bh + 52, bh + 256));

  // message frame: 48-byte header, payload, (no headers)
  const size_t mf = bh + 256;
  BOOST_TEST(u64_at(b, mf + 8) == m.id.lo);
  BOOST_TEST(u64_at(b, mf + 16) == 0u);
  BOOST_TEST(u32_at(b, mf + 24) == 0u);  // offset_delta
  BOOST_TEST(u32_at(b, mf + 28) == 0u);  // timestamp_delta
  BOOST_TEST(u32_at(b, mf + 32) == 0u);  // user_headers_length
  BOOST_TEST(u32_at(b, mf + 36) == 2u);  // payload_length
  BOOST_TEST(u64_at(b, mf + 40) == 0u);
  BOOST_TEST(b[mf + 48] == 0xAB);
  BOOST_TEST(b[mf + 49] == 0xCD);

  // checksums: frame = XXH3(frame[8..end)); batch = XXH3(header[0,40) ++ header[48,52) ++ frame checksums)
  const uint64_t frame_sum = XXH3_64bits(b.data() + mf + 8, 48 - 8 + 2);
  BOOST_TEST(u64_at(b, mf) == frame_sum);
  Bytes concat(b.begin() + bh, b.begin() + bh + 40);
  concat.insert(concat.end(), b.begin() + bh + 48, b.begin() + bh + 52);
  concat.insert(concat.end(), b.begin() + mf, b.begin() + mf + 8);
  BOOST_TEST(u64_at(b, bh + 40) == XXH3_64bits(concat.data(), concat.size()));
}

BOOST_AUTO_TEST_CASE(batch_of_many_messages_has_index_offset_deltas_timestamp_deltas_and_headers_after_payload) {
  UserHeadersBuilder hb;
  BOOST_REQUIRE(hb.add_string("k", "v").ok());
  Bytes headers = hb.take();
  std::vector<std::string> payloads = {"one", "two!", "three"};
  std::vector<OutgoingMessage> msgs(3);
  for (size_t i = 0; i < 3; ++i) {
    msgs[i].id = U128{i + 1, 0};
    msgs[i].payload = span_of(payloads[i]);
    msgs[i].origin_timestamp_us = 1000 + 10 * (2 - i);  // min is the last one
  }
  msgs[1].user_headers = headers;
  msgs[2].origin_timestamp_us = 0;  // "now"
  auto f = wire::encode_send_messages(Identifier::numeric(1), Identifier::numeric(2), Partitioning::balanced(), msgs,
                                      990);
  BOOST_REQUIRE(f.ok());
  const Bytes& b = f->bytes;
  const size_t metadata_len = 6 + 6 + 2 + 4;
  BOOST_TEST(u32_at(b, 256) == metadata_len);
  const size_t bh = 256 + 4 + metadata_len;
  BOOST_TEST(u64_at(b, bh + 24) == 990u);  // min origin timestamp ("now" for message 2)
  BOOST_TEST(u32_at(b, bh + 48) == 3u);
  BOOST_TEST(u64_at(b, bh + 32) == b.size() - bh);
  size_t mf = bh + 256;
  Bytes concat(b.begin() + bh, b.begin() + bh + 40);
  concat.insert(concat.end(), b.begin() + bh + 48, b.begin() + bh + 52);
  const uint64_t expected_ts[] = {1020, 1010, 990};
  for (uint32_t i = 0; i < 3; ++i) {
    BOOST_TEST(u32_at(b, mf + 24) == i);
    BOOST_TEST(u32_at(b, mf + 28) == expected_ts[i] - 990);
    uint32_t hl = u32_at(b, mf + 32);
    uint32_t pl = u32_at(b, mf + 36);
    BOOST_TEST(pl == payloads[i].size());
    BOOST_TEST(hl == (i == 1 ? headers.size() : 0u));
    BOOST_TEST(std::string(b.begin() + mf + 48, b.begin() + mf + 48 + pl) == payloads[i]);
    if (i == 1) BOOST_TEST(Bytes(b.begin() + mf + 48 + pl, b.begin() + mf + 48 + pl + hl) == headers);
    BOOST_TEST(u64_at(b, mf) == XXH3_64bits(b.data() + mf + 8, 40 + hl + pl));
    concat.insert(concat.end(), b.begin() + mf, b.begin() + mf + 8);
    mf += 48 + hl + pl;
  }
  BOOST_TEST(mf == b.size());
  BOOST_TEST(u64_at(b, bh + 40) == XXH3_64bits(concat.data(), concat.size()));
}

BOOST_AUTO_TEST_CASE(send_refuses_empty_batches_and_timestamp_spreads_beyond_u32) {
  BOOST_TEST(!wire::encode_send_messages(Identifier::numeric(0), Identifier::numeric(0), Partitioning::balanced(), {}, 1)
                  .ok());
  std::vector<OutgoingMessage> msgs(2);
  msgs[0].origin_timestamp_us = 1;
  msgs[1].origin_timestamp_us = 2 + 0xFFFFFFFFull;
  auto r = wire::encode_send_messages(Identifier::numeric(0), Identifier::numeric(0), Partitioning::balanced(), msgs, 1);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((r.error().domain == ErrorDomain::kInvalid));
}

BOOST_AUTO_TEST_CASE(partitioning_kinds_encode_as_documented) {
  const Bytes key = {'k', 'e', 'y'};
  OutgoingMessage m;
  uint8_t one = 1;
  m.payload = ByteSpan(&one, 1);
  auto f = wire::encode_send_messages(Identifier::numeric(0), Identifier::numeric(0), Partitioning::messages_key(key),
                                      std::span<const OutgoingMessage>(&m, 1), 5);
  BOOST_REQUIRE(f.ok());
  const Bytes expected = {3, 3, 'k', 'e', 'y'};
  BOOST_TEST(Bytes(f->bytes.begin() + 260 + 12, f->bytes.begin() + 260 + 17) == expected, boost::test_tools::per_element());
  auto g = wire::encode_send_messages(Identifier::numeric(0), Identifier::numeric(0), Partitioning::balanced(),
                                      std::span<const OutgoingMessage>(&m, 1), 5);
  BOOST_REQUIRE(g.ok());
  BOOST_TEST(g->bytes[260 + 12] == 1);
  BOOST_TEST(g->bytes[260 + 13] == 0);
}

BOOST_AUTO_TEST_CASE(poll_request_layout) {
  PollRequest q;
  q.consumer = Consumer::group(Identifier::numeric(3));
  q.stream = Identifier::named("s");
  q.topic = Identifier::numeric(7);
  q.partition_id = 2;
  q.strategy = PollingStrategy::offset(99);
  q.count = 10;
  auto f = wire::encode_poll_messages(q);
  BOOST_REQUIRE(f.ok());
  const Bytes expected = {2, 1, 4, 3, 0, 0, 0,      // consumer group 3
                          2, 1, 's',                // stream "s"
                          1, 4, 7, 0, 0, 0,         // topic 7
                          1, 2, 0, 0, 0,            // partition 2
                          1, 99, 0, 0, 0, 0, 0, 0, 0,  // Offset 99
                          10, 0, 0, 0,              // count
                          0};                       // auto_commit off
  BOOST_TEST(Bytes(f->bytes.begin() + 256, f->bytes.end()) == expected, boost::test_tools::per_element());
}

namespace {
ServerProfile edge_server() { return profile_from_login(wire::kProtocolVersion, "0.9.0-edge.5").profile; }
ServerProfile release_server() { return profile_from_login(wire::kProtocolVersion, "0.9.0").profile; }
}  // namespace

BOOST_AUTO_TEST_CASE(create_topic_body_carries_create_time_durability_options) {
  TopicConfig c;
  c.name = "orders";
  c.partitions_count = 3;
  c.enforce_fsync = true;
  c.messages_required_to_save = 1;
  c.message_expiry_us = 60'000'000;
  c.compression = CompressionAlgorithm::kGzip;
  auto f = wire::encode_create_topic(Identifier::named("kafka"), c, edge_server());
  BOOST_REQUIRE(f.ok());
  ByteReader r(ByteSpan(f->bytes).subspan(256));
  r.skip(7);  // stream id
  BOOST_TEST(r.le<uint32_t>() == 3u);
  BOOST_TEST(r.le<uint8_t>() == 6u);
  BOOST_TEST(r.take_string(6) == "orders");
  auto opts = parse_user_headers(r.rest());
  BOOST_REQUIRE(opts.ok());
  BOOST_REQUIRE(opts->size() == 4u);
  BOOST_TEST((*opts)[0].key_string() == "compression_algorithm");
  BOOST_TEST(((*opts)[0].value_kind == HeaderKind::kUint8));
  BOOST_TEST((*opts)[0].value[0] == 2);
  BOOST_TEST((*opts)[1].key_string() == "message_expiry");
  BOOST_TEST(((*opts)[1].value_kind == HeaderKind::kUint64));
  BOOST_TEST((*opts)[2].key_string() == "enforce_fsync");
  BOOST_TEST(((*opts)[2].value_kind == HeaderKind::kBool));
  BOOST_TEST((*opts)[2].value[0] == 1);
  BOOST_TEST((*opts)[3].key_string() == "messages_required_to_save");
  BOOST_TEST(((*opts)[3].value_kind == HeaderKind::kUint32));

  // The release refuses enforce_fsync (4041 UnsupportedOptionKey): durability is a string there.
  for (bool fsync : {true, false}) {
    c.enforce_fsync = fsync;
    auto rel = wire::encode_create_topic(Identifier::named("kafka"), c, release_server());
    BOOST_REQUIRE(rel.ok());
    ByteReader rr(ByteSpan(rel->bytes).subspan(256));
    rr.skip(7 + 4 + 1 + 6);
    auto ro = parse_user_headers(rr.rest());
    BOOST_REQUIRE(ro.ok());
    BOOST_REQUIRE(ro->size() == 4u);
    BOOST_TEST((*ro)[2].key_string() == "durability");
    BOOST_TEST(((*ro)[2].value_kind == HeaderKind::kString));
    BOOST_TEST(std::string((*ro)[2].value.begin(), (*ro)[2].value.end()) == (fsync ? "persisted" : "replicated"));
    for (const auto& o : *ro) BOOST_TEST(o.key_string() != "enforce_fsync");
  }
}

BOOST_AUTO_TEST_CASE(create_topic_rejects_replication_factor_other_than_one_and_too_many_partitions) {
  TopicConfig c;
  c.name = "t";
  c.replication_factor = 3;
  auto r = wire::encode_create_topic(Identifier::numeric(0), c, release_server());
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((r.error().domain == ErrorDomain::kInvalid));
  c.replication_factor = 1;
  BOOST_TEST(wire::encode_create_topic(Identifier::numeric(0), c, release_server()).ok());
  c.partitions_count = 1001;
  BOOST_TEST(!wire::encode_create_topic(Identifier::numeric(0), c, release_server()).ok());
}

BOOST_AUTO_TEST_CASE(names_must_be_1_to_255_bytes) {
  BOOST_TEST(!wire::encode_create_stream("").ok());
  BOOST_TEST(!wire::encode_create_stream(std::string(256, 'x')).ok());
  BOOST_TEST(wire::encode_create_stream(std::string(255, 'x')).ok());
  BOOST_TEST(!wire::encode_get_stream(Identifier::named("")).ok());
}

BOOST_AUTO_TEST_CASE(reply_with_nonzero_status_is_an_iggy_error_before_any_body) {
  Bytes h = reply_header(256, 2, 1009);
  auto fh = wire::decode_frame_header(h);
  BOOST_REQUIRE(fh.ok());
  auto p = wire::reply_payload(*fh, {});
  BOOST_REQUIRE(!p.ok());
  BOOST_TEST((p.error().domain == ErrorDomain::kIggy));
  BOOST_TEST(p.error().code == 1009u);
  BOOST_TEST(p.error().message.find("StreamIdNotFound") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(result_section_count_zero_strips_to_payload_and_count_one_is_the_code) {
  const Bytes ok_body = {0, 0, 0, 0, 'x', 'y'};
  auto fh = wire::decode_frame_header(reply_header(256 + 6, 128, 0));
  BOOST_REQUIRE(fh.ok());
  auto p = wire::reply_payload(*fh, ok_body);
  BOOST_REQUIRE(p.ok());
  BOOST_TEST(p->size() == 2u);
  BOOST_TEST((*p)[0] == 'x');

  const Bytes rejected = {1, 0, 0, 0, 0, 0, 0, 0, 0xF4, 0x03, 0, 0};  // 1012
  auto fr = wire::decode_frame_header(reply_header(256 + 12, 128, 0));
  auto e = wire::reply_payload(*fr, rejected);
  BOOST_REQUIRE(!e.ok());
  BOOST_TEST(e.error().code == 1012u);

  const Bytes truncated = {1, 0, 0, 0};
  auto t = wire::reply_payload(*fr, truncated);
  BOOST_REQUIRE(!t.ok());
  BOOST_TEST((t.error().domain == ErrorDomain::kProtocol));
}

BOOST_AUTO_TEST_CASE(result_framing_follows_the_reply_operation) {
  // CreateTopic is answered with op 64 and DeleteSegments with op 68, both result-framed.
  BOOST_TEST(wire::reply_is_result_framed(64, 10));
  BOOST_TEST(wire::reply_is_result_framed(68, 4));
  BOOST_TEST(wire::reply_is_result_framed(161, 4));
  BOOST_TEST(!wire::reply_is_result_framed(2, 4));
  BOOST_TEST(!wire::reply_is_result_framed(3, 0));
  BOOST_TEST(!wire::reply_is_result_framed(138, 0));
  BOOST_TEST(!wire::reply_is_result_framed(160, 24));
  BOOST_TEST(wire::reply_is_result_framed(1, 5));
  BOOST_TEST(!wire::reply_is_result_framed(1, 0));
  // A send confirmation that happens to look like a rejection passes through untouched.
  const Bytes body = {1, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x10, 0, 0};
  auto fh = wire::decode_frame_header(reply_header(256 + 12, 160, 0));
  auto p = wire::reply_payload(*fh, body);
  BOOST_REQUIRE(p.ok());
  BOOST_TEST(p->size() == 12u);
}

BOOST_AUTO_TEST_CASE(evictions_map_to_the_sdk_error_codes) {
  struct Case {
    uint8_t reason;
    uint32_t code;
  } cases[] = {{1, 40}, {7, 40}, {8, 40}, {9, 42}, {10, 53}, {11, 40}, {12, 40}, {13, 30}, {14, 14003}, {15, 4}, {5, 3}};
  for (const auto& c : cases) {
    auto fh = wire::decode_frame_header(eviction_header(c.reason, 11264, 11264));
    BOOST_REQUIRE(fh.ok());
    BOOST_TEST((fh->command == wire::Command::kEviction));
    Error e = wire::eviction_error(*fh);
    BOOST_TEST(e.code == c.code);
    BOOST_TEST((e.domain == ErrorDomain::kIggy));
  }
}

BOOST_AUTO_TEST_CASE(frame_headers_outside_size_bounds_or_with_request_command_are_refused) {
  Bytes h = reply_header(255, 2, 0);
  BOOST_TEST(!wire::decode_frame_header(h).ok());
  h = reply_header(1024, 2, 0);
  BOOST_TEST(!wire::decode_frame_header(h, 512).ok());
  h = reply_header(256, 2, 0);
  h[60] = 5;
  BOOST_TEST(!wire::decode_frame_header(h).ok());
  BOOST_TEST(!wire::decode_frame_header(ByteSpan(h).first(100)).ok());
}

BOOST_AUTO_TEST_CASE(login_reply_payload_decodes_session_and_server_version) {
  ByteWriter w;
  w.le<uint32_t>(0);
  w.le<uint64_t>(77);
  w.le<uint32_t>(11264);
  w.le<uint8_t>(12);
  w.string("0.9.0-edge.5");
  auto l = wire::decode_login(w.buffer());
  BOOST_REQUIRE(l.ok());
  BOOST_TEST(l->user_id == 0u);
  BOOST_TEST(l->session == 77u);
  BOOST_TEST(l->server_version == "0.9.0-edge.5");
  BOOST_TEST(!wire::decode_login(ByteSpan(w.buffer()).first(10)).ok());
}

namespace {
void write_topic_header(ByteWriter& w, uint32_t id, std::string_view name, uint32_t partitions) {
  w.le<uint32_t>(id);
  w.le<uint64_t>(111);
  w.le<uint32_t>(partitions);
  w.le<uint64_t>(UINT64_MAX);
  w.le<uint8_t>(1);
  w.le<uint64_t>(UINT64_MAX);
  w.le<uint64_t>(0);
  w.le<uint64_t>(0);
  w.le<uint8_t>(static_cast<uint8_t>(name.size()));
  w.string(name);
  w.le<uint32_t>(0);
  w.le<uint32_t>(0);
}
}  // namespace

BOOST_AUTO_TEST_CASE(topic_details_decode_header_and_40_byte_partitions) {
  ByteWriter w;
  write_topic_header(w, 3, "orders", 2);
  BOOST_TEST(w.size() == 50u + 6u + 8u);  // fixed 50 incl. name length byte, name, 2 option lengths
  for (uint32_t p = 0; p < 2; ++p) {
    w.le<uint32_t>(p);
    w.le<uint64_t>(5);
    w.le<uint32_t>(1);
    w.le<uint64_t>(p == 0 ? 9 : 0);
    w.le<uint64_t>(100);
    w.le<uint64_t>(p == 0 ? 10 : 0);
  }
  auto t = wire::decode_topic_details(w.buffer());
  BOOST_REQUIRE(t.ok());
  BOOST_REQUIRE(t->has_value());
  const TopicInfo& info = **t;
  BOOST_TEST(info.id == 3u);
  BOOST_TEST(info.name == "orders");
  BOOST_TEST(info.message_expiry_us == kNeverExpire);
  BOOST_TEST((info.compression == CompressionAlgorithm::kNone));
  BOOST_REQUIRE(info.partitions.size() == 2u);
  BOOST_TEST(info.partitions[0].current_offset == 9u);
  BOOST_TEST(info.partitions[0].messages_count == 10u);
  BOOST_TEST(info.partitions[1].id == 1u);

  auto missing = wire::decode_topic_details({});
  BOOST_REQUIRE(missing.ok());
  BOOST_TEST(!missing->has_value());
  auto truncated = wire::decode_topic_details(ByteSpan(w.buffer()).first(w.size() - 1));
  BOOST_TEST(!truncated.ok());
}

BOOST_AUTO_TEST_CASE(stream_details_decode_stream_response_then_topic_headers) {
  ByteWriter w;
  w.le<uint32_t>(0);
  w.le<uint64_t>(1);
  w.le<uint32_t>(2);
  w.le<uint64_t>(0);
  w.le<uint64_t>(0);
  w.le<uint8_t>(5);
  w.string("kafka");
  w.le<uint32_t>(0);
  BOOST_TEST(w.size() == 33u + 5u + 4u);
  write_topic_header(w, 0, "a", 1);
  write_topic_header(w, 1, "b", 1);
  auto s = wire::decode_stream_details(w.buffer());
  BOOST_REQUIRE(s.ok());
  BOOST_REQUIRE(s->has_value());
  BOOST_TEST((*s)->name == "kafka");
  BOOST_REQUIRE((*s)->topics.size() == 2u);
  BOOST_TEST((*s)->topics[1].name == "b");
}

BOOST_AUTO_TEST_CASE(polled_messages_are_views_into_the_reply_buffer) {
  // Build the batch the way a producer does, then stamp it like the server and wrap it in a poll
  // reply: [partition_id][current_offset][messages_count] + batch.
  std::vector<std::string> payloads = {"alpha", "beta"};
  UserHeadersBuilder hb;
  BOOST_REQUIRE(hb.add_string("h", "1").ok());
  Bytes headers = hb.take();
  std::vector<OutgoingMessage> msgs(2);
  for (size_t i = 0; i < 2; ++i) {
    msgs[i].id = U128{100 + i, 0};
    msgs[i].payload = span_of(payloads[i]);
    msgs[i].origin_timestamp_us = 5000 + i;
  }
  msgs[0].user_headers = headers;
  auto f = wire::encode_send_messages(Identifier::numeric(0), Identifier::numeric(0), Partitioning::partition(0), msgs, 1);
  BOOST_REQUIRE(f.ok());
  const size_t batch_at = 256 + 4 + u32_at(f->bytes, 256);
  Bytes batch(f->bytes.begin() + batch_at, f->bytes.end());
  uint64_t base_offset = 40, base_ts = 9000;
  std::memcpy(batch.data() + 8, &base_offset, 8);
  std::memcpy(batch.data() + 16, &base_ts, 8);

  ByteWriter reply;
  reply.le<uint32_t>(0);
  reply.le<uint64_t>(41);
  reply.le<uint32_t>(2);
  reply.bytes(batch);
  auto buffer = std::make_shared<const Bytes>(reply.take());
  auto polled = wire::decode_polled_messages(buffer, *buffer);
  BOOST_REQUIRE(polled.ok());
  BOOST_TEST(polled->current_offset == 41u);
  BOOST_REQUIRE(polled->messages.size() == 2u);
  const MessageView& a = polled->messages[0];
  const MessageView& b = polled->messages[1];
  BOOST_TEST(a.offset == 40u);
  BOOST_TEST(b.offset == 41u);
  BOOST_TEST(a.timestamp_us == 9000u);
  BOOST_TEST(a.origin_timestamp_us == 5000u);
  BOOST_TEST(b.origin_timestamp_us == 5001u);
  BOOST_TEST(a.id.lo == 100u);
  BOOST_TEST(std::string(a.payload.begin(), a.payload.end()) == "alpha");
  BOOST_TEST(Bytes(a.user_headers.begin(), a.user_headers.end()) == headers);
  BOOST_TEST(b.user_headers.empty());
  // zero copy: the spans point inside the shared buffer
  BOOST_TEST((a.payload.data() >= buffer->data() && a.payload.data() < buffer->data() + buffer->size()));
  BOOST_TEST(polled->buffer.get() == buffer.get());
  BOOST_TEST(!polled->fenced());
}

BOOST_AUTO_TEST_CASE(empty_and_fenced_poll_replies) {
  ByteWriter w;
  w.le<uint32_t>(0xFFFFFFFFu);
  w.le<uint64_t>(0);
  w.le<uint32_t>(0);
  auto buffer = std::make_shared<const Bytes>(w.take());
  auto p = wire::decode_polled_messages(buffer, *buffer);
  BOOST_REQUIRE(p.ok());
  BOOST_TEST(p->messages.empty());
  BOOST_TEST(p->fenced());
}

BOOST_AUTO_TEST_CASE(poll_reply_with_a_truncated_frame_is_a_protocol_error) {
  ByteWriter w;
  w.le<uint32_t>(0);
  w.le<uint64_t>(0);
  w.le<uint32_t>(1);
  w.zeros(256);
  w.patch_le<uint64_t>(16 + 32, 256 + 48 + 10);  // batch_length claims a frame
  w.zeros(48);
  auto buffer = std::make_shared<const Bytes>(w.take());
  auto p = wire::decode_polled_messages(buffer, *buffer);
  BOOST_REQUIRE(!p.ok());
  BOOST_TEST((p.error().domain == ErrorDomain::kProtocol));
}

BOOST_AUTO_TEST_CASE(send_confirmation_decodes_base_offset) {
  ByteWriter w;
  w.le<uint32_t>(1);
  w.le<uint32_t>(0);
  w.le<uint32_t>(2);
  w.le<uint32_t>(3);
  w.le<uint64_t>(1234);
  auto c = wire::decode_send_confirmation(w.buffer(), 5, ServerGeneration::kRelease);
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->reported);
  BOOST_TEST(c->topic_id == 2u);
  BOOST_TEST(c->partition_id == 3u);
  BOOST_TEST(c->base_offset == 1234u);
  BOOST_TEST(c->message_count == 5u);
  const Bytes none = {0, 0, 0, 0};
  auto n = wire::decode_send_confirmation(none, 1, ServerGeneration::kRelease);
  BOOST_REQUIRE(n.ok());
  BOOST_TEST(!n->reported);
}

BOOST_AUTO_TEST_CASE(empty_send_reply_is_a_success_only_from_an_edge_server) {
  // The release server answers a request it classified as a duplicate with an empty body: nothing
  // was appended for it, so it must never read as a stored batch.
  for (auto g : {ServerGeneration::kRelease, ServerGeneration::kUnknown}) {
    auto r = wire::decode_send_confirmation(ByteSpan(), 3, g);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST((r.error().domain == ErrorDomain::kTransport));
    BOOST_TEST(r.error().code == static_cast<uint32_t>(TransportCode::kUnconfirmed));
    BOOST_TEST(is_retriable(r.error()));
  }
  auto edge = wire::decode_send_confirmation(ByteSpan(), 3, ServerGeneration::kEdge);
  BOOST_REQUIRE(edge.ok());
  BOOST_TEST(!edge->reported);
  // a truncated confirmation is malformed for either
  const Bytes cut = {1, 0, 0, 0, 9};
  BOOST_TEST(!wire::decode_send_confirmation(cut, 1, ServerGeneration::kEdge).ok());
  BOOST_TEST(!wire::decode_send_confirmation(cut, 1, ServerGeneration::kRelease).ok());
}

BOOST_AUTO_TEST_CASE(server_profile_from_the_register_reply) {
  auto edge = profile_from_login(pack_protocol_version(0, 11, 0), "0.9.0-edge.5");
  BOOST_TEST(edge.refusal.empty());
  BOOST_TEST((edge.profile.generation == ServerGeneration::kEdge));
  BOOST_TEST(!edge.profile.empty_send_reply_is_duplicate());
  BOOST_TEST(!edge.profile.durability_option());
  auto rel = profile_from_login(pack_protocol_version(0, 11, 0), "0.9.0");
  BOOST_TEST(rel.refusal.empty());
  BOOST_TEST((rel.profile.generation == ServerGeneration::kRelease));
  BOOST_TEST(rel.profile.empty_send_reply_is_duplicate());
  BOOST_TEST(rel.profile.durability_option());
  BOOST_TEST((profile_from_login(pack_protocol_version(0, 11, 3), "0.9.2").profile.generation ==
              ServerGeneration::kRelease));
  // another minor: refused, naming both versions
  auto next = profile_from_login(pack_protocol_version(0, 12, 0), "0.10.0-edge.1");
  BOOST_TEST(!next.refusal.empty());
  BOOST_TEST(next.refusal.find("0.12.0") != std::string::npos);
  BOOST_TEST(next.refusal.find("0.11.0") != std::string::npos);
  BOOST_TEST(next.refusal.find("0.10.0-edge.1") != std::string::npos);
  BOOST_TEST(!profile_from_login(pack_protocol_version(0, 10, 1), "0.8.0").refusal.empty());
  BOOST_TEST(format_protocol_version(11264) == "0.11.0");
  // a hostile version string is escaped and bounded in the profile
  auto odd = profile_from_login(pack_protocol_version(0, 11, 0), std::string("0.9.0\n\x1b[31m") + std::string(300, 'x'));
  BOOST_TEST(odd.profile.version.find('\n') == std::string::npos);
  BOOST_TEST(odd.profile.version.size() < 100u);
}

BOOST_AUTO_TEST_CASE(permissions_round_trip_with_nested_streams_and_topics) {
  Permissions p;
  p.global.read_servers = true;
  p.global.poll_messages = true;
  p.streams[0].read_stream = true;
  p.streams[0].topics[4].send_messages = true;
  p.streams[0].topics[9].manage_topic = true;
  p.streams[7].manage_topics = true;
  ByteWriter w;
  wire::write_permissions(w, p);
  // 10 global + has_streams + (4+6+1 + 2*(4+4+1)) + 1 + (4+6+1) + 1
  BOOST_TEST(w.size() == 10u + 1u + 11u + 18u + 1u + 11u + 1u);
  auto back = wire::decode_permissions(w.buffer());
  BOOST_REQUIRE(back.ok());
  BOOST_TEST((*back == p));

  Permissions none;
  ByteWriter w2;
  wire::write_permissions(w2, none);
  BOOST_TEST(w2.size() == 11u);
}

BOOST_AUTO_TEST_CASE(user_details_without_permissions_end_in_four_zero_bytes) {
  ByteWriter w;
  w.le<uint32_t>(3);
  w.le<uint64_t>(1);
  w.le<uint8_t>(1);
  w.le<uint8_t>(5);
  w.string("alice");
  w.le<uint32_t>(0);
  w.le<uint32_t>(0);
  auto u = wire::decode_user_details(w.buffer());
  BOOST_REQUIRE(u.ok());
  BOOST_REQUIRE(u->has_value());
  BOOST_TEST((*u)->username == "alice");
  BOOST_TEST(!(*u)->permissions.has_value());

  ByteWriter perms;
  Permissions p;
  p.global.manage_users = true;
  wire::write_permissions(perms, p);
  ByteWriter w2;
  w2.le<uint32_t>(3);
  w2.le<uint64_t>(1);
  w2.le<uint8_t>(2);
  w2.le<uint8_t>(5);
  w2.string("alice");
  w2.le<uint32_t>(0);
  w2.le<uint8_t>(1);
  w2.le<uint32_t>(static_cast<uint32_t>(perms.size()));
  w2.bytes(perms.buffer());
  auto u2 = wire::decode_user_details(w2.buffer());
  BOOST_REQUIRE(u2.ok());
  BOOST_TEST(((*u2)->status == UserStatus::kInactive));
  BOOST_REQUIRE((*u2)->permissions.has_value());
  BOOST_TEST((*u2)->permissions->global.manage_users);
}

BOOST_AUTO_TEST_CASE(create_user_body_layout) {
  auto f = wire::encode_create_user("bob", "secret", UserStatus::kActive, std::nullopt);
  BOOST_REQUIRE(f.ok());
  const Bytes expected = {3, 'b', 'o', 'b', 6, 's', 'e', 'c', 'r', 'e', 't', 1, 0};
  BOOST_TEST(Bytes(f->bytes.begin() + 256, f->bytes.end()) == expected, boost::test_tools::per_element());
  BOOST_TEST(f->bytes[176] == 141);
}

BOOST_AUTO_TEST_CASE(stats_decode_reads_the_108_byte_head_strings_and_cache_metrics) {
  ByteWriter w;
  w.le<uint32_t>(42);
  w.le<float>(1.5f);
  w.le<float>(2.5f);
  for (int i = 0; i < 8; ++i) w.le<uint64_t>(static_cast<uint64_t>(i));
  for (int i = 0; i < 4; ++i) w.le<uint32_t>(10u + static_cast<uint32_t>(i));
  w.le<uint64_t>(99);
  w.le<uint32_t>(3);
  w.le<uint32_t>(4);
  BOOST_TEST(w.size() == 108u);
  for (std::string_view s : {"host", "linux", "12", "6.1", "0.9.0-edge.5"}) {
    w.le<uint32_t>(static_cast<uint32_t>(s.size()));
    w.string(s);
  }
  w.le<uint32_t>(0);
  w.le<uint32_t>(1);
  w.le<uint32_t>(1);
  w.le<uint32_t>(2);
  w.le<uint32_t>(3);
  w.le<uint64_t>(4);
  w.le<uint64_t>(5);
  w.le<float>(0.5f);
  w.le<uint32_t>(8);
  w.le<uint64_t>(100);
  w.le<uint64_t>(200);
  auto s = wire::decode_stats(w.buffer());
  BOOST_REQUIRE(s.ok());
  BOOST_TEST(s->process_id == 42u);
  BOOST_TEST(s->messages_count == 99u);
  BOOST_TEST(s->consumer_groups_count == 4u);
  BOOST_TEST(s->server_version == "0.9.0-edge.5");
  BOOST_REQUIRE(s->cache_metrics.size() == 1u);
  BOOST_TEST(s->cache_metrics[0].misses == 5u);
  BOOST_TEST(s->total_disk_space == 200u);
}

BOOST_AUTO_TEST_CASE(consumer_group_details_and_assignment) {
  ByteWriter w;
  w.le<uint32_t>(0);
  w.le<uint32_t>(3);
  w.le<uint32_t>(1);
  w.le<uint8_t>(1);
  w.string("g");
  w.le<uint32_t>(7);
  w.le<uint32_t>(2);
  w.le<uint32_t>(0);
  w.le<uint32_t>(2);
  auto g = wire::decode_consumer_group_details(w.buffer());
  BOOST_REQUIRE(g.ok());
  BOOST_REQUIRE(g->has_value());
  BOOST_REQUIRE((*g)->members.size() == 1u);
  BOOST_TEST((*g)->members[0].partitions.size() == 2u);

  ByteWriter a;
  a.le<uint64_t>(4);
  a.le<uint32_t>(1);
  a.le<uint32_t>(2);
  auto s = wire::decode_consumer_group_assignment(a.buffer());
  BOOST_REQUIRE(s.ok());
  BOOST_REQUIRE(s->has_value());
  BOOST_TEST((*s)->generation == 4u);
  BOOST_TEST(!wire::decode_consumer_group_assignment({})->has_value());
}

BOOST_AUTO_TEST_CASE(personal_access_token_list_is_name_expiry_pairs_to_the_end) {
  ByteWriter w;
  w.le<uint8_t>(1);
  w.string("a");
  w.le<uint64_t>(0);
  w.le<uint8_t>(2);
  w.string("bb");
  w.le<uint64_t>(55);
  auto l = wire::decode_personal_access_tokens(w.buffer());
  BOOST_REQUIRE(l.ok());
  BOOST_REQUIRE(l->size() == 2u);
  BOOST_TEST((*l)[1].name == "bb");
  BOOST_TEST((*l)[1].expiry_at_us == 55u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(iggy_user_headers)

BOOST_AUTO_TEST_CASE(builder_writes_typed_tlv_and_parser_reads_it_back_without_copying) {
  UserHeadersBuilder b;
  BOOST_REQUIRE(b.add_string("kafka.key", "k1").ok());
  const uint8_t raw[] = {0, 1, 2};
  BOOST_REQUIRE(b.add_raw("blob", ByteSpan(raw, 3)).ok());
  BOOST_REQUIRE(b.add_uint64("n", 7).ok());
  BOOST_REQUIRE(b.add_bool("flag", true).ok());
  Bytes tlv = b.take();
  // first pair: [2][9,0,0,0]["kafka.key"][2][2,0,0,0]["k1"]
  BOOST_TEST(tlv[0] == 2);
  BOOST_TEST(u32_at(tlv, 1) == 9u);
  BOOST_TEST(tlv[14] == 2);
  BOOST_TEST(u32_at(tlv, 15) == 2u);
  auto parsed = parse_user_headers(tlv);
  BOOST_REQUIRE(parsed.ok());
  BOOST_REQUIRE(parsed->size() == 4u);
  BOOST_TEST((*parsed)[0].key_string() == "kafka.key");
  BOOST_TEST((*parsed)[0].value_string() == "k1");
  BOOST_TEST(((*parsed)[1].value_kind == HeaderKind::kRaw));
  BOOST_TEST((*parsed)[1].value.size() == 3u);
  BOOST_TEST(((*parsed)[2].value_kind == HeaderKind::kUint64));
  BOOST_TEST(((*parsed)[0].key.data() >= tlv.data() && (*parsed)[0].key.data() < tlv.data() + tlv.size()));
}

BOOST_AUTO_TEST_CASE(builder_refuses_empty_long_and_mis_sized_fields) {
  UserHeadersBuilder b;
  BOOST_TEST(!b.add_string("", "v").ok());
  BOOST_TEST(!b.add_string("k", "").ok());
  BOOST_TEST(!b.add_string("k", std::string(256, 'x')).ok());
  const uint8_t two[] = {1, 2};
  BOOST_TEST(!b.add(HeaderKind::kString, span_of("k"), HeaderKind::kUint32, ByteSpan(two, 2)).ok());
  BOOST_TEST(!b.add(static_cast<HeaderKind>(16), span_of("k"), HeaderKind::kRaw, ByteSpan(two, 2)).ok());
  BOOST_TEST(b.size() == 0u);
}

BOOST_AUTO_TEST_CASE(parser_refuses_truncated_or_zero_length_pairs) {
  UserHeadersBuilder b;
  BOOST_REQUIRE(b.add_string("k", "v").ok());
  Bytes tlv = b.take();
  BOOST_TEST(!parse_user_headers(ByteSpan(tlv).first(tlv.size() - 1)).ok());
  Bytes zero = {2, 0, 0, 0, 0};
  BOOST_TEST(!parse_user_headers(zero).ok());
  BOOST_TEST(parse_user_headers({})->empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(iggy_errors)

BOOST_AUTO_TEST_CASE(every_documented_code_has_its_iggy_name) {
  BOOST_TEST(std::string(iggy_error_name(1009)) == "StreamIdNotFound");
  BOOST_TEST(std::string(iggy_error_name(2013)) == "TopicNameAlreadyExists");
  BOOST_TEST(std::string(iggy_error_name(4100)) == "InvalidOffset");
  BOOST_TEST(std::string(iggy_error_name(57)) == "TransientNotCommitted");
  BOOST_TEST(std::string(iggy_error_name(14003)) == "IncompatibleProtocolVersion");
  BOOST_TEST(std::string(iggy_error_name(42)) == "InvalidCredentials");
  BOOST_TEST(std::string(iggy_error_name(3021)) == "ConsumerOffsetNotFound");
  BOOST_TEST(std::string(iggy_error_name(1)) == "Error");
  BOOST_TEST(std::string(iggy_error_name(17)) == "Unknown");
  BOOST_TEST(std::string(iggy_error_name(999999)) == "Unknown");
}

BOOST_AUTO_TEST_CASE(transport_errors_are_a_separate_retriable_domain) {
  Error t = transport_error(TransportCode::kTimeout, "x");
  BOOST_TEST((t.domain == ErrorDomain::kTransport));
  BOOST_TEST(is_retriable(t));
  BOOST_TEST(is_transport(t));
  BOOST_TEST(!is_retriable(transport_error(TransportCode::kClosed)));
  Error i = iggy_error(1009);
  BOOST_TEST((i.domain == ErrorDomain::kIggy));
  BOOST_TEST(!is_retriable(i));
  BOOST_TEST(is_retriable(iggy_error(58)));
  BOOST_TEST(is_iggy(i, 1009));
}

BOOST_AUTO_TEST_SUITE_END()
