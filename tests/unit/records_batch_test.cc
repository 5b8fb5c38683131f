#include <boost/test/unit_test.hpp>

#include <chrono>
#include <limits>
#include <string>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "kafka/records/record_batch.h"

using namespace kib;
using namespace kib::kafka;

namespace {

constexpr size_t kMiB = 1024 * 1024;
constexpr Compression kCodecs[] = {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                                   Compression::kZstd};

ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string str(ByteSpan s) { return {reinterpret_cast<const char*>(s.data()), s.size()}; }
std::string str(const std::optional<ByteSpan>& s) { return s ? str(*s) : "<null>"; }

Bytes from_hex(std::string_view hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

void put_be32(Bytes& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
// Recomputes the CRC after a test edits a batch, so the edit itself is what gets judged.
void reseal(Bytes& batch) { put_be32(batch, 17, crc32c(batch.data() + 21, batch.size() - 21)); }

// A batch around hand-written record bytes, with any recordCount/lastOffsetDelta/attributes/magic.
Bytes raw_batch(ByteSpan records, int32_t count, int32_t last_offset_delta, int16_t attributes = 0, int8_t magic = 2) {
  ByteWriter w;
  w.be<int64_t>(0);
  w.be<int32_t>(static_cast<int32_t>(kRecordBatchHeaderSize - 12 + records.size()));
  w.be<int32_t>(-1);
  w.be<int8_t>(magic);
  w.be<uint32_t>(0);
  w.be<int16_t>(attributes);
  w.be<int32_t>(last_offset_delta);
  w.be<int64_t>(1000);
  w.be<int64_t>(1000);
  w.be<int64_t>(-1);
  w.be<int16_t>(-1);
  w.be<int32_t>(-1);
  w.be<int32_t>(count);
  w.bytes(records);
  Bytes b = w.take();
  reseal(b);
  return b;
}

// One record with a chosen offsetDelta and key length (-1 null, < -1 invalid).
void raw_record(ByteWriter& w, int32_t offset_delta, std::string_view value = "v", int32_t key_len = -1) {
  ByteWriter body;
  body.be<int8_t>(0);
  body.varlong(0);
  body.varint(offset_delta);
  body.varint(key_len);
  body.varint(static_cast<int32_t>(value.size()));
  body.string(value);
  body.varint(0);
  w.varint(static_cast<int32_t>(body.size()));
  w.bytes(body.buffer());
}

Result<std::vector<DecodedBatch>> decode(ByteSpan blob, size_t budget = 64 * kMiB) {
  DecompressionBudget b{budget};
  return decode_record_batches(blob, b);
}

RecordError error_of(const Result<std::vector<DecodedBatch>>& r) { return record_error(r.error()); }

struct SampleRecords {
  RecordHeader h1[3] = {{"h1", span_of("v1")}, {"h2", std::nullopt}, {"h1", span_of("dup")}};
  RecordHeader h2[1] = {{"", span_of("")}};
  std::string big = std::string(5000, 'z');
  std::vector<RecordToEncode> records{
      {1700000000000, span_of("k1"), span_of("hello"), h1},
      {1700000000007, std::nullopt, span_of("no key"), {}},
      {1699999999995, span_of("k3"), std::nullopt, {}},  // earlier than the first: negative delta
      {1700000000021, span_of("k1"), span_of("hello"), {}},
      {1700000000028, span_of(""), span_of(""), h2},
      {1700000000035, span_of("big"), span_of(big), {}},
  };
};

void check_matches(const DecodedBatch& b, const SampleRecords& s) {
  BOOST_REQUIRE_EQUAL(b.records.size(), s.records.size());
  for (size_t i = 0; i < s.records.size(); ++i) {
    BOOST_TEST_CONTEXT("record " << i) {
      const Record& got = b.records[i];
      const RecordToEncode& want = s.records[i];
      BOOST_TEST(got.offset_delta == static_cast<int32_t>(i));
      BOOST_TEST(b.timestamp_of(got) == want.timestamp);
      BOOST_TEST(got.key.has_value() == want.key.has_value());
      BOOST_TEST(got.value.has_value() == want.value.has_value());
      BOOST_TEST(str(got.key) == str(want.key));
      BOOST_TEST(str(got.value) == str(want.value));
      BOOST_REQUIRE_EQUAL(got.headers.size(), want.headers.size());
      for (size_t k = 0; k < want.headers.size(); ++k) {
        BOOST_TEST(got.headers[k].key == want.headers[k].key);
        BOOST_TEST(str(got.headers[k].value) == str(want.headers[k].value));
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(record_batch_v2)

// One record, key "k", value "v", header h=x, timestamp 1700000000000, no producer id; the
// CRC32C 0x5e93538d was computed independently (bitwise Castagnoli in Python).
constexpr std::string_view kHandBuiltBatch =
    "0000000000000000" "0000003e" "ffffffff" "02" "5e93538d" "0000" "00000000" "0000018bcfe56800"
    "0000018bcfe56800" "ffffffffffffffff" "ffff" "ffffffff" "00000001"
    "18" "00" "00" "00" "02" "6b" "02" "76" "02" "02" "68" "02" "78";

BOOST_AUTO_TEST_CASE(hand_built_batch_decodes_to_its_fields_with_known_crc) {
  Bytes wire = from_hex(kHandBuiltBatch);
  auto r = decode(wire);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  BOOST_REQUIRE_EQUAL(r->size(), 1u);
  const DecodedBatch& b = r->front();
  BOOST_TEST(b.header.crc == 0x5e93538du);
  BOOST_TEST(b.header.batch_length == 62);
  BOOST_TEST(b.header.partition_leader_epoch == -1);
  BOOST_TEST(b.header.magic == 2);
  BOOST_TEST((b.header.compression() == Compression::kNone));
  BOOST_TEST((b.header.timestamp_type() == TimestampType::kCreateTime));
  BOOST_TEST(!b.header.is_transactional());
  BOOST_TEST(!b.header.is_control());
  BOOST_TEST(b.header.last_offset_delta == 0);
  BOOST_TEST(b.header.base_timestamp == 1700000000000);
  BOOST_TEST(b.header.max_timestamp == 1700000000000);
  BOOST_TEST(b.header.producer_id == -1);
  BOOST_TEST(b.header.producer_epoch == -1);
  BOOST_TEST(b.header.base_sequence == -1);
  BOOST_TEST(b.header.record_count == 1);
  BOOST_TEST(b.wire.size() == wire.size());
  BOOST_REQUIRE_EQUAL(b.records.size(), 1u);
  BOOST_TEST(str(b.records[0].key) == "k");
  BOOST_TEST(str(b.records[0].value) == "v");
  BOOST_REQUIRE_EQUAL(b.records[0].headers.size(), 1u);
  BOOST_TEST(b.records[0].headers[0].key == "h");
  BOOST_TEST(str(b.records[0].headers[0].value) == "x");
}

BOOST_AUTO_TEST_CASE(encoder_reproduces_the_hand_built_batch_byte_for_byte) {
  RecordHeader h[] = {{"h", span_of("x")}};
  RecordToEncode rec{1700000000000, span_of("k"), span_of("v"), h};
  ByteWriter w;
  size_t n = encode_record_batch(w, BatchSettings{}, std::span(&rec, 1));
  BOOST_TEST(n == w.size());
  BOOST_TEST(w.buffer() == from_hex(kHandBuiltBatch));
}

BOOST_AUTO_TEST_CASE(every_codec_round_trips_nulls_empties_headers_and_duplicates) {
  SampleRecords s;
  for (Compression c : kCodecs) {
    BOOST_TEST_CONTEXT(compression_name(c)) {
      BatchSettings settings;
      settings.base_offset = 4242;
      settings.compression = c;
      settings.producer_id = 77;
      settings.producer_epoch = 3;
      settings.base_sequence = 1000;
      settings.partition_leader_epoch = 9;
      ByteWriter w;
      w.string("prefix");  // the builder appends; it must not assume it starts at 0
      size_t n = encode_record_batch(w, settings, s.records);
      BOOST_TEST(n + 6 == w.size());
      auto r = decode(ByteSpan(w.buffer()).subspan(6));
      BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
      BOOST_REQUIRE_EQUAL(r->size(), 1u);
      const DecodedBatch& b = r->front();
      BOOST_TEST((b.header.compression() == c));
      BOOST_TEST(b.header.base_offset == 4242);
      BOOST_TEST(b.header.producer_id == 77);
      BOOST_TEST(b.header.producer_epoch == 3);
      BOOST_TEST(b.header.base_sequence == 1000);
      BOOST_TEST(b.header.partition_leader_epoch == 9);
      BOOST_TEST(b.header.record_count == 6);
      BOOST_TEST(b.header.last_offset_delta == 5);
      BOOST_TEST(b.header.base_timestamp == 1700000000000);
      BOOST_TEST(b.header.max_timestamp == 1700000000035);
      BOOST_TEST(b.offset_of(b.records[5]) == 4247);
      check_matches(b, s);
    }
  }
}

BOOST_AUTO_TEST_CASE(compressed_batches_are_smaller_than_plain_ones) {
  SampleRecords s;
  ByteWriter plain, packed;
  encode_record_batch(plain, BatchSettings{}, s.records);
  BatchSettings zstd;
  zstd.compression = Compression::kZstd;
  encode_record_batch(packed, zstd, s.records);
  BOOST_TEST(packed.size() < plain.size() / 4);
}

BOOST_AUTO_TEST_CASE(batch_flags_round_trip_and_log_append_time_applies_to_every_record) {
  RecordToEncode recs[] = {{10, span_of("a"), span_of("1"), {}}, {20, span_of("b"), span_of("2"), {}}};
  BatchSettings settings;
  settings.transactional = true;
  settings.timestamp_type = TimestampType::kLogAppendTime;
  settings.log_append_time = 99999;
  ByteWriter w;
  encode_record_batch(w, settings, recs);
  auto r = decode(w.buffer());
  BOOST_REQUIRE(r.ok());
  const DecodedBatch& b = r->front();
  BOOST_TEST(b.header.is_transactional());
  BOOST_TEST(!b.header.is_control());
  BOOST_TEST((b.header.timestamp_type() == TimestampType::kLogAppendTime));
  BOOST_TEST(b.header.max_timestamp == 99999);
  BOOST_TEST(b.timestamp_of(b.records[0]) == 99999);
  BOOST_TEST(b.timestamp_of(b.records[1]) == 99999);
}

BOOST_AUTO_TEST_CASE(control_and_delete_horizon_attribute_bits_are_reported) {
  Bytes wire = from_hex(kHandBuiltBatch);
  wire[22] = BatchAttributes::kControl | BatchAttributes::kDeleteHorizon;
  reseal(wire);
  auto r = decode(wire);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->front().header.is_control());
  BOOST_TEST(r->front().header.has_delete_horizon());
}

BOOST_AUTO_TEST_CASE(builder_with_no_records_writes_nothing) {
  ByteWriter w;
  RecordBatchBuilder builder(w, BatchSettings{});
  BOOST_TEST(builder.finish() == 0u);
  BOOST_TEST(w.size() == 0u);
}

BOOST_AUTO_TEST_CASE(several_batches_in_one_records_blob_decode_in_order) {
  RecordToEncode a{1, span_of("a"), span_of("1"), {}};
  RecordToEncode b{2, span_of("b"), span_of("2"), {}};
  ByteWriter w;
  BatchSettings s1;
  encode_record_batch(w, s1, std::span(&a, 1));
  BatchSettings s2;
  s2.base_offset = 1;
  s2.compression = Compression::kLz4;
  encode_record_batch(w, s2, std::span(&b, 1));
  auto r = decode(w.buffer());
  BOOST_REQUIRE(r.ok());
  BOOST_REQUIRE_EQUAL(r->size(), 2u);
  BOOST_TEST(str((*r)[0].records[0].key) == "a");
  BOOST_TEST(str((*r)[1].records[0].key) == "b");
  BOOST_TEST((*r)[1].header.base_offset == 1);
}

BOOST_AUTO_TEST_CASE(empty_records_blob_holds_no_batches) {
  auto r = decode(ByteSpan{});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->empty());
}

BOOST_AUTO_TEST_CASE(moved_decoded_batches_keep_views_into_their_decompressed_buffer) {
  SampleRecords s;
  BatchSettings settings;
  settings.compression = Compression::kGzip;
  ByteWriter w;
  encode_record_batch(w, settings, s.records);
  Bytes wire = w.take();
  DecodedBatch kept;
  {
    auto r = decode(wire);
    BOOST_REQUIRE(r.ok());
    kept = std::move(r->front());
  }
  std::fill(wire.begin(), wire.end(), 0);  // compressed input gone: views must not need it
  check_matches(kept, s);
}

BOOST_AUTO_TEST_CASE(crc_mismatch_is_corrupt) {
  Bytes wire = from_hex(kHandBuiltBatch);
  wire.back() ^= 0x01;  // flip a bit in the last header value, CRC left alone
  auto r = decode(wire);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kCorrupt));
  BOOST_TEST(r.error().message.find("CRC32C") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(crc_covers_attributes_so_a_flipped_codec_bit_is_corrupt) {
  Bytes wire = from_hex(kHandBuiltBatch);
  wire[22] = 1;  // claims gzip
  auto r = decode(wire);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kCorrupt));
}

BOOST_AUTO_TEST_CASE(batch_truncated_anywhere_is_rejected_cleanly) {
  Bytes wire = from_hex(kHandBuiltBatch);
  for (size_t n = 1; n < wire.size(); ++n) {
    BOOST_TEST_CONTEXT("first " << n << " bytes") {
      auto r = decode(ByteSpan(wire).first(n));
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
    }
  }
}

BOOST_AUTO_TEST_CASE(second_batch_truncated_fails_the_whole_blob) {
  Bytes one = from_hex(kHandBuiltBatch);
  Bytes blob = one;
  blob.insert(blob.end(), one.begin(), one.end() - 1);
  auto r = decode(blob);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
  BOOST_TEST(r.error().message.find("batchLength") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(batch_length_below_the_header_size_is_corrupt) {
  Bytes wire = from_hex(kHandBuiltBatch);
  put_be32(wire, 8, 10);
  auto r = decode(wire);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kCorrupt));
}

BOOST_AUTO_TEST_CASE(record_count_of_2_pow_31_minus_1_fails_before_reserving) {
  ByteWriter recs;
  raw_record(recs, 0);
  Bytes wire = raw_batch(recs.buffer(), std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::max() - 1);
  auto t0 = std::chrono::steady_clock::now();
  auto r = decode(wire);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
  BOOST_TEST(r.error().message.find("recordCount") != std::string::npos);
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count() < 1000);
}

BOOST_AUTO_TEST_CASE(record_count_of_2_pow_31_wraps_negative_and_is_invalid) {
  ByteWriter recs;
  raw_record(recs, 0);
  Bytes wire = raw_batch(recs.buffer(), std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  auto r = decode(wire);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(compressed_batch_claiming_2_pow_31_records_fails_cleanly) {
  ByteWriter recs;
  raw_record(recs, 0);
  Bytes packed = compress(Compression::kZstd, recs.buffer());
  Bytes wire = raw_batch(packed, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::max() - 1,
                         static_cast<int16_t>(Compression::kZstd));
  auto r = decode(wire);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(offset_delta_that_is_not_the_record_index_is_invalid) {
  ByteWriter recs;
  raw_record(recs, 0);
  raw_record(recs, 2);  // should be 1
  auto r = decode(raw_batch(recs.buffer(), 2, 1));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
  BOOST_TEST(r.error().message.find("offsetDelta") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(last_offset_delta_must_equal_record_count_minus_one) {
  ByteWriter recs;
  raw_record(recs, 0);
  raw_record(recs, 1);
  BOOST_TEST(decode(raw_batch(recs.buffer(), 2, 1)).ok());
  auto r = decode(raw_batch(recs.buffer(), 2, 5));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
  BOOST_TEST(r.error().message.find("lastOffsetDelta") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bytes_after_the_last_counted_record_are_invalid) {
  ByteWriter recs;
  raw_record(recs, 0);
  raw_record(recs, 1);
  auto r = decode(raw_batch(recs.buffer(), 1, 0));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(fewer_records_than_counted_is_invalid) {
  ByteWriter recs;
  raw_record(recs, 0);
  raw_record(recs, 1);
  auto r = decode(raw_batch(recs.buffer(), 3, 2));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(record_length_longer_than_its_fields_is_invalid) {
  ByteWriter recs;
  raw_record(recs, 0);
  Bytes body = recs.take();
  body[0] = static_cast<uint8_t>(body[0] + 2);  // length varint +1 (zigzag)
  body.push_back(0);
  auto r = decode(raw_batch(body, 1, 0));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(key_length_below_minus_one_is_invalid) {
  ByteWriter recs;
  raw_record(recs, 0, "v", -2);
  auto r = decode(raw_batch(recs.buffer(), 1, 0));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(header_with_null_key_is_invalid) {
  ByteWriter body;
  body.be<int8_t>(0);
  body.varlong(0);
  body.varint(0);
  body.varint(-1);  // key
  body.varint(-1);  // value
  body.varint(1);   // one header
  body.varint(-1);  // null header key
  body.varint(-1);
  ByteWriter recs;
  recs.varint(static_cast<int32_t>(body.size()));
  recs.bytes(body.buffer());
  auto r = decode(raw_batch(recs.buffer(), 1, 0));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(legacy_magic_0_and_1_are_unsupported_message_format) {
  for (int8_t magic : {int8_t{0}, int8_t{1}, int8_t{3}}) {
    BOOST_TEST_CONTEXT("magic " << int(magic)) {
      ByteWriter recs;
      raw_record(recs, 0);
      auto r = decode(raw_batch(recs.buffer(), 1, 0, 0, magic));
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((error_of(r) == RecordError::kUnsupportedMagic));
      BOOST_TEST(r.error().message.find("magic") != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_CASE(codec_id_6_is_unsupported_compression) {
  ByteWriter recs;
  raw_record(recs, 0);
  auto r = decode(raw_batch(recs.buffer(), 1, 0, 6));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kUnsupportedCompression));
}

BOOST_AUTO_TEST_CASE(undecodable_compressed_records_are_corrupt) {
  ByteWriter recs;
  raw_record(recs, 0);
  auto r = decode(raw_batch(recs.buffer(), 1, 0, static_cast<int16_t>(Compression::kGzip)));  // not gzip
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kCorrupt));
}

BOOST_AUTO_TEST_CASE(compressed_batch_over_the_decompression_budget_is_too_large) {
  std::string huge(4 * kMiB, 'a');
  RecordToEncode rec{1, std::nullopt, span_of(huge), {}};
  BatchSettings settings;
  settings.compression = Compression::kZstd;
  ByteWriter w;
  encode_record_batch(w, settings, std::span(&rec, 1));
  BOOST_TEST(w.size() < 64 * 1024u);
  auto r = decode(w.buffer(), 1 * kMiB);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kTooLarge));
}

BOOST_AUTO_TEST_CASE(decompression_budget_is_shared_by_the_batches_of_a_request) {
  std::string value(60000, 'q');
  RecordToEncode rec{1, std::nullopt, span_of(value), {}};
  BatchSettings settings;
  settings.compression = Compression::kSnappy;
  ByteWriter w;
  encode_record_batch(w, settings, std::span(&rec, 1));
  encode_record_batch(w, settings, std::span(&rec, 1));

  DecompressionBudget enough{200000};
  auto ok = decode_record_batches(w.buffer(), enough);
  BOOST_REQUIRE(ok.ok());
  BOOST_TEST(enough.remaining < 200000u - 120000u);

  DecompressionBudget one_batch_worth{100000};
  auto r = decode_record_batches(w.buffer(), one_batch_worth);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kTooLarge));
}

BOOST_AUTO_TEST_SUITE_END()

// The header-only checks Produce makes before it decompresses anything.
BOOST_AUTO_TEST_SUITE(record_batch_header_checks)

BOOST_AUTO_TEST_CASE(a_codec_is_found_in_any_batch_of_the_records) {
  SampleRecords s;
  ByteWriter w;
  encode_record_batch(w, BatchSettings{}, s.records);
  BOOST_TEST(!any_batch_compressed_with(w.buffer(), Compression::kZstd));
  BatchSettings zstd;
  zstd.compression = Compression::kZstd;
  encode_record_batch(w, zstd, s.records);  // the second batch of two
  BOOST_TEST(any_batch_compressed_with(w.buffer(), Compression::kZstd));
  BOOST_TEST(!any_batch_compressed_with(w.buffer(), Compression::kLz4));
}

BOOST_AUTO_TEST_CASE(framing_the_decoder_refuses_is_left_to_it) {
  SampleRecords s;
  BatchSettings zstd;
  zstd.compression = Compression::kZstd;
  ByteWriter w;
  encode_record_batch(w, zstd, s.records);
  const auto& b = w.buffer();
  BOOST_TEST(!any_batch_compressed_with(ByteSpan(b).first(kRecordBatchHeaderSize - 1), Compression::kZstd));
  BOOST_TEST(!any_batch_compressed_with(ByteSpan(), Compression::kZstd));
  BOOST_TEST(!first_batch_is_transactional(ByteSpan(b).first(kRecordBatchHeaderSize - 1)));
}

BOOST_AUTO_TEST_CASE(only_the_first_batch_says_whether_the_records_are_transactional) {
  RecordToEncode rec{10, span_of("k"), span_of("v"), {}};
  BatchSettings txn;
  txn.transactional = true;
  txn.producer_id = 5;
  txn.producer_epoch = 0;
  txn.base_sequence = 0;
  ByteWriter plain_first, txn_first;
  encode_record_batch(plain_first, BatchSettings{}, std::span(&rec, 1));
  encode_record_batch(plain_first, txn, std::span(&rec, 1));
  encode_record_batch(txn_first, txn, std::span(&rec, 1));
  BOOST_TEST(!first_batch_is_transactional(plain_first.buffer()));
  BOOST_TEST(first_batch_is_transactional(txn_first.buffer()));
}

BOOST_AUTO_TEST_SUITE_END()
