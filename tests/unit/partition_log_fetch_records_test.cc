// Fetch's pure half (bridge/log/fetch_records.h): which offsets are readable, poll sizing, and the
// v2 batches rebuilt from polled Iggy messages — exact start offset, contiguous runs, byte
// budgets cut at record boundaries, KIP-74's first record.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "bridge/log/fetch_records.h"
#include "bridge/mapping/generation_mapping.h"
#include "iggy/user_headers.h"
#include "kafka/records/record_batch.h"

using namespace kib;
using namespace kib::bridge;
using kib::kafka::DecodedBatch;
using kib::kafka::RecordHeader;

namespace {

ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string str(const std::optional<ByteSpan>& s) {
  return s ? std::string(reinterpret_cast<const char*>(s->data()), s->size()) : "<null>";
}

// Records with their backing strings kept alive by the fixture.
struct Records {
  std::vector<std::string> keep;
  std::vector<std::vector<RecordHeader>> headers;
  std::vector<FetchedRecord> records;

  Records() {
    keep.reserve(1000);
    headers.reserve(1000);
  }
  const std::string& hold(std::string s) { return keep.emplace_back(std::move(s)); }

  void add(int64_t offset, int64_t ts, std::optional<std::string> key, std::optional<std::string> value,
           std::vector<std::pair<std::string, std::optional<std::string>>> hs = {}) {
    FetchedRecord r;
    r.offset = offset;
    r.record.timestamp_ms = ts;
    if (key) r.record.key = span_of(hold(*key));
    if (value) r.record.value = span_of(hold(*value));
    for (auto& [k, v] : hs) {
      RecordHeader h;
      h.key = hold(k);
      if (v) h.value = span_of(hold(*v));
      r.record.headers.push_back(h);
    }
    records.push_back(std::move(r));
  }
};

std::vector<DecodedBatch> decode(const Bytes& bytes) {
  kafka::DecompressionBudget budget{1u << 30};
  auto r = kafka::decode_record_batches(bytes, budget);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return std::move(r.value());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(partition_log_fetch_records)

BOOST_AUTO_TEST_CASE(fetch_offsets_are_out_of_range_below_log_start_and_beyond_high_watermark) {
  BOOST_TEST((classify_fetch_offset(4, 5, 10) == FetchPosition::kBelowLogStart));
  BOOST_TEST((classify_fetch_offset(5, 5, 10) == FetchPosition::kReadable));
  BOOST_TEST((classify_fetch_offset(9, 5, 10) == FetchPosition::kReadable));
  BOOST_TEST((classify_fetch_offset(10, 5, 10) == FetchPosition::kAtEnd));
  BOOST_TEST((classify_fetch_offset(11, 5, 10) == FetchPosition::kBeyondEnd));
}

BOOST_AUTO_TEST_CASE(an_empty_partition_answers_offset_zero_as_end_of_data_not_an_error) {
  BOOST_TEST((classify_fetch_offset(0, 0, 0) == FetchPosition::kAtEnd));
  BOOST_TEST((classify_fetch_offset(1, 0, 0) == FetchPosition::kBeyondEnd));
  // Retention emptied the partition: log start = high watermark.
  BOOST_TEST((classify_fetch_offset(7, 7, 7) == FetchPosition::kAtEnd));
  BOOST_TEST((classify_fetch_offset(6, 7, 7) == FetchPosition::kBelowLogStart));
}

BOOST_AUTO_TEST_CASE(poll_count_follows_the_byte_budget_within_bounds) {
  BOOST_TEST(poll_count_for(0, 100) == 1u);
  BOOST_TEST(poll_count_for(1000, 100) == 11u);
  BOOST_TEST(poll_count_for(1u << 20, 10) == kMaxPollMessages);
  BOOST_TEST(poll_count_for(UINT64_MAX, 1) == kMaxPollMessages);
  // Unknown size: assume 1 KiB.
  BOOST_TEST(poll_count_for(10 * 1024, 0) == 11u);
  // Huge messages: never more than kMaxPollReplyBytes per reply, never less than one message.
  BOOST_TEST(poll_count_for(1u << 30, 4u << 20) == kMaxPollReplyBytes / (4u << 20));
  BOOST_TEST(poll_count_for(1u << 30, 64u << 20) == 1u);
}

BOOST_AUTO_TEST_CASE(record_wire_size_matches_the_batch_builder_byte_for_byte) {
  Records rs;
  rs.add(0, 1000, std::nullopt, std::string("v"));
  rs.add(1, 900, std::string("key"), std::nullopt, {{"h", std::nullopt}, {"h2", std::string("")}});
  rs.add(2, 1'700'000'000'000, std::string(""), std::string(300, 'x'), {{"a", std::string(200, 'y')}});
  rs.add(3, -1, std::nullopt, std::string(""));
  for (size_t n = 1; n <= rs.records.size(); ++n) {
    std::vector<kafka::RecordToEncode> enc;
    size_t expected = kafka::kRecordBatchHeaderSize;
    for (size_t i = 0; i < n; ++i) {
      const auto& r = rs.records[i].record;
      enc.push_back({r.timestamp_ms, r.key, r.value, r.headers});
      expected += record_wire_size(enc.back(), rs.records[0].record.timestamp_ms, static_cast<int32_t>(i));
    }
    ByteWriter w;
    BOOST_TEST(kafka::encode_record_batch(w, {}, enc) == expected);
  }
}

BOOST_AUTO_TEST_CASE(batches_start_exactly_at_the_first_fetched_offset_and_round_trip) {
  Records rs;
  rs.add(42, 5000, std::string("k1"), std::string("v1"), {{"h", std::string("x")}, {"h", std::nullopt}});
  rs.add(43, 4000, std::nullopt, std::nullopt);
  rs.add(44, 6000, std::string(""), std::string(""));
  EncodedRecords enc = encode_fetched_records(rs.records, 1 << 20, false);
  BOOST_TEST(enc.records == 3u);
  BOOST_TEST(enc.next_offset == 45);
  auto batches = decode(enc.bytes);
  BOOST_REQUIRE(batches.size() == 1u);
  const DecodedBatch& b = batches[0];
  BOOST_TEST(b.header.base_offset == 42);
  BOOST_TEST(b.header.producer_id == -1);
  // The leader epoch Metadata reports, as Kafka writes it; consumers commit it with the offset.
  BOOST_TEST(b.header.partition_leader_epoch == 0);
  BOOST_TEST(b.header.attributes == 0);  // uncompressed, CreateTime, not transactional
  BOOST_TEST(b.header.max_timestamp == 6000);
  BOOST_REQUIRE(b.records.size() == 3u);
  BOOST_TEST(b.offset_of(b.records[1]) == 43);
  BOOST_TEST(b.timestamp_of(b.records[1]) == 4000);
  BOOST_TEST(str(b.records[0].key) == "k1");
  BOOST_TEST(str(b.records[0].value) == "v1");
  BOOST_REQUIRE(b.records[0].headers.size() == 2u);
  BOOST_TEST(b.records[0].headers[1].key == "h");
  BOOST_TEST(!b.records[0].headers[1].value.has_value());
  BOOST_TEST(str(b.records[1].key) == "<null>");
  BOOST_TEST(str(b.records[1].value) == "<null>");
  BOOST_TEST(str(b.records[2].key) == "");
  BOOST_TEST(str(b.records[2].value) == "");
}

BOOST_AUTO_TEST_CASE(offset_gaps_start_a_new_batch_so_offsets_stay_exact) {
  Records rs;
  rs.add(5, 1, std::nullopt, std::string("a"));
  rs.add(6, 1, std::nullopt, std::string("b"));
  rs.add(9, 1, std::nullopt, std::string("c"));
  EncodedRecords enc = encode_fetched_records(rs.records, 1 << 20, false);
  auto batches = decode(enc.bytes);
  BOOST_REQUIRE(batches.size() == 2u);
  BOOST_TEST(batches[0].header.base_offset == 5);
  BOOST_TEST(batches[0].header.last_offset() == 6);
  BOOST_TEST(batches[1].header.base_offset == 9);
  BOOST_TEST(batches[1].records.size() == 1u);
  BOOST_TEST(enc.next_offset == 10);
}

BOOST_AUTO_TEST_CASE(the_byte_budget_cuts_at_a_record_boundary) {
  Records rs;
  for (int i = 0; i < 10; ++i) rs.add(100 + i, 1, std::nullopt, std::string(100, 'v'));
  const size_t one = encode_fetched_records(std::span(rs.records).first(1), 1 << 20, false).bytes.size();
  const size_t all = encode_fetched_records(rs.records, 1 << 20, false).bytes.size();
  for (size_t budget : {one, one + 50, all - 1, all}) {
    EncodedRecords enc = encode_fetched_records(rs.records, budget, false);
    BOOST_TEST(enc.bytes.size() <= budget);
    auto batches = decode(enc.bytes);
    BOOST_REQUIRE(batches.size() == 1u);
    BOOST_TEST(batches[0].header.base_offset == 100);
    BOOST_TEST(static_cast<size_t>(batches[0].header.record_count) == enc.records);
    BOOST_TEST(enc.next_offset == 100 + static_cast<int64_t>(enc.records));
  }
  BOOST_TEST(encode_fetched_records(rs.records, all - 1, false).records == 9u);
  BOOST_TEST(encode_fetched_records(rs.records, all, false).records == 10u);
}

BOOST_AUTO_TEST_CASE(a_record_larger_than_the_limit_is_returned_alone_when_it_comes_first_kip_74) {
  Records rs;
  rs.add(0, 1, std::nullopt, std::string(5000, 'x'));
  rs.add(1, 1, std::nullopt, std::string("small"));
  EncodedRecords first = encode_fetched_records(rs.records, 100, true);
  BOOST_TEST(first.records == 1u);
  BOOST_TEST(first.next_offset == 1);
  BOOST_TEST(decode(first.bytes).size() == 1u);
  // Not the first partition with data in the response: nothing, no error.
  EncodedRecords later = encode_fetched_records(rs.records, 100, false);
  BOOST_TEST(later.records == 0u);
  BOOST_TEST(later.bytes.empty());
  BOOST_TEST(later.next_offset == -1);
}

BOOST_AUTO_TEST_CASE(no_records_encode_to_no_bytes) {
  EncodedRecords enc = encode_fetched_records({}, 1 << 20, true);
  BOOST_TEST(enc.bytes.empty());
  BOOST_TEST(enc.records == 0u);
}

BOOST_AUTO_TEST_CASE(native_iggy_messages_read_as_records_with_null_key_and_payload_value) {
  std::string p0 = "first", p1 = "second";
  std::vector<iggy::MessageView> msgs(2);
  msgs[0].offset = 7;
  msgs[0].origin_timestamp_us = 1'700'000'000'123'000;
  msgs[0].timestamp_us = 1'700'000'000'124'000;
  msgs[0].payload = span_of(p0);
  msgs[1] = msgs[0];
  msgs[1].offset = 8;
  msgs[1].payload = span_of(p1);
  PolledRecords polled = map_polled_messages(msgs, 7);
  BOOST_TEST(!polled.unmappable.has_value());
  BOOST_REQUIRE(polled.records.size() == 2u);
  BOOST_TEST(polled.records[0].offset == 7);
  BOOST_TEST(str(polled.records[0].record.key) == "<null>");
  BOOST_TEST(str(polled.records[1].record.value) == "second");
  BOOST_TEST(polled.records[0].record.timestamp_ms == 1'700'000'000'123);
  // Messages before the fetch offset are never returned.
  BOOST_TEST(map_polled_messages(msgs, 8).records.size() == 1u);
}

BOOST_AUTO_TEST_CASE(mapping_stops_before_the_first_unreadable_message) {
  std::string p = "v";
  iggy::UserHeadersBuilder bad;
  const uint8_t unknown_version = 0x7f;
  BOOST_REQUIRE(bad.add_raw("kafka.v", ByteSpan(&unknown_version, 1)).ok());
  std::vector<iggy::MessageView> msgs(3);
  for (size_t i = 0; i < msgs.size(); ++i) {
    msgs[i].offset = 10 + i;
    msgs[i].payload = span_of(p);
  }
  msgs[1].user_headers = bad.bytes();
  PolledRecords polled = map_polled_messages(msgs, 10);
  BOOST_TEST(polled.records.size() == 1u);
  BOOST_REQUIRE(polled.unmappable.has_value());
  BOOST_TEST(polled.unmappable_offset == 11);
  // First message unreadable: nothing at all.
  PolledRecords none = map_polled_messages(std::span(msgs).subspan(1), 11);
  BOOST_TEST(none.records.empty());
  BOOST_TEST(none.unmappable.has_value());
}

// Views of `mapped`'s messages at offsets from `first`, as a poll would return them.
std::vector<iggy::MessageView> views_at(const MappedMessages& mapped, uint64_t first) {
  std::vector<iggy::MessageView> out;
  for (const iggy::OutgoingMessage& m : mapped.messages) {
    iggy::MessageView v;
    v.offset = first + out.size();
    v.origin_timestamp_us = m.origin_timestamp_us;
    v.timestamp_us = m.origin_timestamp_us;
    v.payload = m.payload;
    v.user_headers = m.user_headers;
    out.push_back(v);
  }
  return out;
}

BOOST_AUTO_TEST_CASE(a_run_of_aborted_placeholders_reads_as_one_marker_at_its_last_offset) {
  // Offsets 0-1 committed, 2-4 aborted by producer 7 epoch 3, 5 committed, 6-7 aborted by 8/0.
  std::string v = "value";
  const MappedMessages aborted7 = map_aborted_placeholders({7, 3}, 3, 1'700'000'000'000'000);
  const MappedMessages aborted8 = map_aborted_placeholders({8, 0}, 2, 1'700'000'000'000'000);
  std::vector<iggy::MessageView> msgs;
  for (uint64_t o : {0, 1}) {
    iggy::MessageView m;
    m.offset = o;
    m.payload = span_of(v);
    msgs.push_back(m);
  }
  for (const auto& m : views_at(aborted7, 2)) msgs.push_back(m);
  iggy::MessageView five;
  five.offset = 5;
  five.payload = span_of(v);
  msgs.push_back(five);
  for (const auto& m : views_at(aborted8, 6)) msgs.push_back(m);

  PolledRecords polled = map_polled_messages(msgs, 0);
  BOOST_TEST(!polled.unmappable.has_value());
  std::vector<int64_t> offsets;
  for (const auto& r : polled.records) offsets.push_back(r.offset);
  BOOST_TEST(offsets == (std::vector<int64_t>{0, 1, 4, 5, 7}), boost::test_tools::per_element());
  BOOST_REQUIRE(polled.records[2].record.aborted.has_value());
  BOOST_TEST(polled.records[2].record.aborted->producer_id == 7);
  BOOST_TEST(polled.records[2].record.aborted->producer_epoch == 3);
  BOOST_TEST(!polled.records[3].record.aborted.has_value());
  BOOST_TEST(polled.records[4].record.aborted->producer_id == 8);

  // Encoded: data 0-1, ABORT control batch at 4, data 5, ABORT control batch at 7; a consumer's
  // next offset is 8.
  EncodedRecords enc = encode_fetched_records(polled.records, 1 << 20, true);
  BOOST_TEST(enc.records == 5u);
  BOOST_TEST(enc.next_offset == 8);
  // Fetch's aborted_transactions at read_committed: each marker's producer and first offset.
  const std::vector<std::pair<int64_t, int64_t>> aborted{{7, 2}, {8, 6}};
  BOOST_CHECK(enc.aborted == aborted);
  auto batches = decode(enc.bytes);
  BOOST_REQUIRE(batches.size() == 4u);
  BOOST_TEST(batches[0].header.base_offset == 0);
  BOOST_TEST(!batches[0].header.is_control());
  BOOST_TEST(batches[1].header.base_offset == 4);
  BOOST_TEST(batches[1].header.is_control());
  BOOST_TEST(batches[1].header.is_transactional());
  BOOST_TEST(batches[1].header.producer_id == 7);
  BOOST_TEST(batches[1].header.producer_epoch == 3);
  BOOST_REQUIRE(batches[1].records.size() == 1u);
  // Kafka's EndTransactionMarker: key version 0, type 0 (ABORT).
  BOOST_TEST(str(batches[1].records[0].key) == std::string("\0\0\0\0", 4));
  BOOST_TEST(batches[2].header.base_offset == 5);
  BOOST_TEST(batches[3].header.base_offset == 7);
  BOOST_TEST(batches[3].header.is_control());
}

BOOST_AUTO_TEST_CASE(a_fetch_of_aborted_records_only_still_moves_the_consumer_past_them) {
  const MappedMessages aborted = map_aborted_placeholders({5, 0}, 4, 0);
  std::vector<iggy::MessageView> msgs = views_at(aborted, 10);
  // From the middle of the run: the marker at its last offset.
  PolledRecords polled = map_polled_messages(msgs, 11);
  BOOST_REQUIRE(polled.records.size() == 1u);
  BOOST_TEST(polled.records[0].offset == 13);
  BOOST_TEST(polled.records[0].aborted_from == 11);  // the first one polled
  // Even with a tiny budget, the first partition with data gets its marker (KIP-74).
  EncodedRecords enc = encode_fetched_records(polled.records, 1, true);
  BOOST_TEST(enc.records == 1u);
  BOOST_TEST(enc.next_offset == 14);
  // Not the first partition with data and no room: nothing.
  BOOST_TEST(encode_fetched_records(polled.records, 1, false).records == 0u);
}

BOOST_AUTO_TEST_CASE(placeholders_of_two_producers_side_by_side_are_two_markers) {
  const MappedMessages a = map_aborted_placeholders({1, 0}, 2, 0);
  const MappedMessages b = map_aborted_placeholders({2, 0}, 2, 0);
  std::vector<iggy::MessageView> msgs = views_at(a, 0);
  for (const auto& m : views_at(b, 2)) msgs.push_back(m);
  PolledRecords polled = map_polled_messages(msgs, 0);
  BOOST_REQUIRE(polled.records.size() == 2u);
  BOOST_TEST(polled.records[0].offset == 1);
  BOOST_TEST(polled.records[1].offset == 3);
  BOOST_TEST(decode(encode_fetched_records(polled.records, 1 << 20, true).bytes).size() == 2u);
}

// A generation of a compacted partition (docs/compaction.md): messages 0, 1, 2... of the
// generation topic carry the Kafka offsets 3, 9, 10, 15; a read from 5 below the cleaner point 15
// gets 9 and 10, one batch (contiguous), and they encode at their own offsets.
BOOST_AUTO_TEST_CASE(generation_messages_read_at_their_kafka_offsets_below_the_cleaner_point) {
  const std::vector<int64_t> kept = {3, 9, 10, 15};
  std::vector<Bytes> blocks;
  std::string p = "value";
  for (int64_t o : kept) {
    auto b = generation_header_block({}, o, std::nullopt);
    BOOST_REQUIRE(b.ok());
    blocks.push_back(std::move(b.value()));
  }
  std::vector<iggy::MessageView> msgs(kept.size());
  for (size_t i = 0; i < msgs.size(); ++i) {
    msgs[i].offset = i;
    msgs[i].origin_timestamp_us = 1'700'000'000'000'000;
    msgs[i].payload = span_of(p);
    msgs[i].user_headers = blocks[i];
  }
  PolledRecords polled = map_generation_messages(msgs, 5, 15);
  BOOST_TEST(!polled.unmappable.has_value());
  BOOST_REQUIRE(polled.records.size() == 2u);
  BOOST_TEST(polled.records[0].offset == 9);
  BOOST_TEST(polled.records[1].offset == 10);
  BOOST_TEST(polled.records[0].record.headers.empty());  // kib.offset is not a Kafka header
  BOOST_TEST(polled.last_generation_offset == 15);  // read up to the first at the cleaner point
  auto enc = encode_fetched_records(polled.records, 1 << 20, true);
  BOOST_TEST(enc.next_offset == 11);
  auto batches = decode(enc.bytes);
  BOOST_REQUIRE(batches.size() == 1u);
  BOOST_TEST(batches[0].header.base_offset == 9);
  // From 0: 3, then a gap to 9 — two batches.
  PolledRecords all = map_generation_messages(msgs, 0, 15);
  BOOST_REQUIRE(all.records.size() == 3u);
  BOOST_TEST(decode(encode_fetched_records(all.records, 1 << 20, true).bytes).size() == 2u);
  // A message without kib.offset stops the read there.
  msgs[2].user_headers = {};
  PolledRecords broken = map_generation_messages(msgs, 0, 15);
  BOOST_TEST(broken.records.size() == 2u);
  BOOST_TEST(broken.unmappable.has_value());
  BOOST_TEST(broken.unmappable_offset == 10);
}

BOOST_AUTO_TEST_SUITE_END()
