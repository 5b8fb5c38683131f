// Kafka's produce rules for one partition (bridge/log/produce_validation.h), on batches decoded
// the way the Produce handler decodes them.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "bridge/errors.h"
#include "bridge/log/produce_validation.h"
#include "kafka/records/record_batch.h"

using namespace kib;
using namespace kib::bridge;
using kib::kafka::ErrorCode;

namespace {

ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

// Owns the wire bytes the decoded batches point into.
struct Batches {
  Bytes wire;
  std::vector<kafka::DecodedBatch> decoded;
};

Batches make(std::vector<kafka::BatchSettings> settings, size_t records = 2, size_t value_size = 10) {
  const std::string value(value_size, 'v');
  ByteWriter w;
  for (const auto& s : settings) {
    std::vector<kafka::RecordToEncode> rs(records, kafka::RecordToEncode{1000, std::nullopt, span_of(value), {}});
    kafka::encode_record_batch(w, s, rs);
  }
  Batches b;
  b.wire = w.take();
  kafka::DecompressionBudget budget{1u << 30};
  auto r = kafka::decode_record_batches(b.wire, budget);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  b.decoded = std::move(r.value());
  return b;
}

ErrorCode code_of(const Status& s) { return s.ok() ? ErrorCode::kNone : to_kafka_error(s.error()); }

}  // namespace

BOOST_AUTO_TEST_SUITE(partition_log_produce_validation)

BOOST_AUTO_TEST_CASE(one_plain_batch_is_accepted) {
  auto b = make({{}});
  BOOST_TEST((code_of(validate_produce_batches(b.decoded, 1 << 20)) == ErrorCode::kNone));
}

BOOST_AUTO_TEST_CASE(v3_plus_requires_exactly_one_batch_per_partition) {
  auto two = make({{}, {}});
  BOOST_TEST((code_of(validate_produce_batches(two.decoded, 1 << 20)) == ErrorCode::kInvalidRecord));
  std::vector<kafka::DecodedBatch> none;
  BOOST_TEST((code_of(validate_produce_batches(none, 1 << 20)) == ErrorCode::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(a_batch_without_records_is_invalid) {
  std::vector<kafka::DecodedBatch> batches(1);
  batches[0].header.record_count = 0;
  BOOST_TEST((code_of(validate_produce_batches(batches, 1 << 20)) == ErrorCode::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(clients_may_not_write_control_batches) {
  kafka::BatchSettings s;
  s.control = true;
  auto b = make({s});
  BOOST_TEST((code_of(validate_produce_batches(b.decoded, 1 << 20)) == ErrorCode::kInvalidRecord));
}

BOOST_AUTO_TEST_CASE(transactional_batches_only_through_the_transaction_coordinator) {
  kafka::BatchSettings s;
  s.transactional = true;
  s.producer_id = 7;
  s.producer_epoch = 0;
  s.base_sequence = 0;
  auto b = make({s});
  // The plain Produce path must never append one: its records would skip the buffer.
  BOOST_TEST((code_of(validate_produce_batches(b.decoded, 1 << 20)) == ErrorCode::kInvalidTxnState));
  BOOST_TEST((code_of(validate_produce_batches(b.decoded, 1 << 20, /*transactional=*/true)) == ErrorCode::kNone));
  // The other rules still hold for the coordinator's batches.
  BOOST_TEST((code_of(validate_produce_batches(b.decoded, 10, true)) == ErrorCode::kMessageTooLarge));
}

BOOST_AUTO_TEST_CASE(an_idempotent_batch_needs_a_sequence) {
  kafka::BatchSettings s;
  s.producer_id = 7;
  s.producer_epoch = 0;
  s.base_sequence = -1;
  auto b = make({s});
  BOOST_TEST((code_of(validate_produce_batches(b.decoded, 1 << 20)) == ErrorCode::kInvalidRecord));
  s.base_sequence = 0;
  auto ok = make({s});
  BOOST_TEST((code_of(validate_produce_batches(ok.decoded, 1 << 20)) == ErrorCode::kNone));
}

BOOST_AUTO_TEST_CASE(max_message_bytes_applies_to_the_batch_as_sent) {
  auto b = make({{}}, 3, 1000);
  const auto size = static_cast<int32_t>(b.decoded[0].wire.size());
  BOOST_TEST((code_of(validate_produce_batches(b.decoded, size)) == ErrorCode::kNone));
  Status s = validate_produce_batches(b.decoded, size - 1);
  BOOST_TEST((code_of(s) == ErrorCode::kMessageTooLarge));
  BOOST_TEST(s.error().message.find("max.message.bytes") != std::string::npos);
}

// Records with the given keys (nullopt: no key), one batch.
Batches keyed(const std::vector<std::optional<std::string>>& keys) {
  std::vector<kafka::RecordToEncode> rs;
  for (const auto& k : keys)
    rs.push_back({1000, k ? std::optional<ByteSpan>(span_of(*k)) : std::nullopt, span_of("v"), {}});
  ByteWriter w;
  kafka::encode_record_batch(w, {}, rs);
  Batches b;
  b.wire = w.take();
  kafka::DecompressionBudget budget{1u << 30};
  auto r = kafka::decode_record_batches(b.wire, budget);
  BOOST_REQUIRE(r.ok());
  b.decoded = std::move(r.value());
  return b;
}

// Kafka's LogValidator.validateKey and processRecordErrors: every keyless record is listed, the
// message shows the count and the first three.
BOOST_AUTO_TEST_CASE(keyless_records_on_a_compacted_topic_are_listed_as_kafka_lists_them) {
  const std::vector<std::string> storage = {"a", "", "c"};
  auto b = keyed({storage[0], std::nullopt, storage[1], std::nullopt, std::nullopt, std::nullopt, storage[2]});
  auto r = refuse_keyless_records(b.decoded, "changelog", 3);
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST((r->error == ErrorCode::kInvalidRecord));
  BOOST_REQUIRE_EQUAL(r->record_errors.size(), 4u);  // an empty key is a key, as Record.hasKey()
  BOOST_TEST(r->record_errors[0].batch_index == 1);
  BOOST_TEST(r->record_errors[1].batch_index == 3);
  BOOST_TEST(r->record_errors[3].batch_index == 5);
  const std::string one = "Compacted topic cannot accept message without key in topic partition changelog-3";
  BOOST_TEST(r->record_errors[2].message == one);
  BOOST_TEST(r->message ==
             "One or more records have been rejected due to 4 record errors in total, and only showing the first "
             "three errors at most: [RecordError(batchIndex=1, message='" + one + "'), RecordError(batchIndex=3, "
             "message='" + one + "'), RecordError(batchIndex=4, message='" + one + "')]");
}

BOOST_AUTO_TEST_CASE(records_that_all_have_keys_pass) {
  const std::string k = "k";
  auto b = keyed({k, k});
  BOOST_TEST(!refuse_keyless_records(b.decoded, "t", 0).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
