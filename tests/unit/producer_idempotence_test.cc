// Idempotent appends (bridge/producers/idempotence.h): the Iggy message-id codec, finding
// producer batches in a partition's tail, verdicts, and tail recovery against a registry double.
#include <boost/test/unit_test.hpp>

#include "bridge/producers/idempotence.h"
#include "log_services_support.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::testing;
using kafka::ErrorCode;

namespace {
iggy::MessageView view(uint64_t offset, iggy::MessageId id) {
  iggy::MessageView v;
  v.offset = offset;
  v.id = id;
  return v;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(producer_idempotence)

BOOST_AUTO_TEST_CASE(message_ids_carry_producer_epoch_sequence_and_batch_start) {
  const iggy::MessageId id = producer_message_id(ProducerId(123456789), ProducerEpoch(7), 2'000'000'000, true);
  auto seq = parse_producer_message_id(id);
  BOOST_REQUIRE(seq.has_value());
  BOOST_TEST(seq->producer_id() == 123456789);
  BOOST_TEST(seq->epoch() == 7);
  BOOST_TEST(seq->sequence == 2'000'000'000);
  BOOST_TEST(seq->batch_start);
  BOOST_TEST(!parse_producer_message_id(producer_message_id(ProducerId(1), ProducerEpoch(-1), 0, false))->batch_start);
  BOOST_TEST(parse_producer_message_id(producer_message_id(ProducerId(1), ProducerEpoch(-1), 0, false))->epoch() == -1);
  // Ids a native Iggy producer chose: no marker, or a producer id Kafka cannot have.
  iggy::MessageId foreign;
  foreign.hi = 5;
  foreign.lo = 42;
  BOOST_TEST(!parse_producer_message_id(foreign).has_value());
  iggy::MessageId too_big = producer_message_id(ProducerId(1), ProducerEpoch(0), 0, true);
  too_big.hi = UINT64_MAX;
  BOOST_TEST(!parse_producer_message_id(too_big).has_value());
}

BOOST_AUTO_TEST_CASE(stamping_numbers_records_from_the_base_sequence_and_wraps) {
  kafka::RecordBatchHeader h;
  h.producer_id = 9;
  h.producer_epoch = 1;
  h.base_sequence = INT32_MAX;
  std::vector<iggy::OutgoingMessage> msgs(2);
  stamp_producer_ids(h, msgs);
  BOOST_TEST(parse_producer_message_id(msgs[0].id)->sequence == INT32_MAX);
  BOOST_TEST(parse_producer_message_id(msgs[0].id)->batch_start);
  BOOST_TEST(parse_producer_message_id(msgs[1].id)->sequence == 0);
  BOOST_TEST(!parse_producer_message_id(msgs[1].id)->batch_start);
  kafka::RecordBatchHeader plain;  // not idempotent: ids untouched
  std::vector<iggy::OutgoingMessage> other(1);
  other[0].id.lo = 77;
  stamp_producer_ids(plain, other);
  BOOST_TEST(other[0].id.lo == 77u);
}

BOOST_AUTO_TEST_CASE(runs_are_consecutive_records_of_one_batch_from_its_start) {
  std::vector<iggy::MessageView> tail{
      view(10, producer_message_id(ProducerId(1), ProducerEpoch(0), 5, false)),  // its batch started before the tail
      view(11, producer_message_id(ProducerId(1), ProducerEpoch(0), 6, true)),
      view(12, producer_message_id(ProducerId(1), ProducerEpoch(0), 7, false)),
      view(13, iggy::MessageId{}),                     // a native message
      view(14, producer_message_id(ProducerId(2), ProducerEpoch(3), 0, true)),
      view(15, producer_message_id(ProducerId(1), ProducerEpoch(0), 8, false)),  // not adjacent to producer 1's run
  };
  auto runs = producer_runs(tail);
  BOOST_REQUIRE_EQUAL(runs.size(), 2u);
  BOOST_TEST(runs[0].first.producer_id() == 1);
  BOOST_TEST(runs[0].first.sequence == 6);
  BOOST_TEST(runs[0].count == 2);
  BOOST_TEST(runs[0].base_offset() == 11);
  BOOST_TEST(runs[1].first.producer_id() == 2);
  BOOST_TEST(runs[1].count == 1);
  BOOST_TEST(runs[1].base_offset() == 14);
}

BOOST_AUTO_TEST_CASE(each_verdict_maps_to_its_kafka_answer) {
  kafka::RecordBatchHeader h;
  h.producer_id = 4;
  h.producer_epoch = 2;
  h.base_sequence = 10;
  using Kind = IdempotenceVerdict::Kind;
  BOOST_TEST((verdict_for({SequenceVerdict::kAppend, kNoOffset}, h).kind == Kind::kAppend));
  auto dup = verdict_for({SequenceVerdict::kDuplicate, KafkaOffset(33)}, h);
  BOOST_TEST((dup.kind == Kind::kDuplicate));
  BOOST_TEST(dup.duplicate_base_offset() == 33);
  const std::pair<SequenceVerdict, ErrorCode> refused[] = {
      {SequenceVerdict::kOutOfOrder, ErrorCode::kOutOfOrderSequenceNumber},
      {SequenceVerdict::kInvalidEpoch, ErrorCode::kInvalidProducerEpoch},
      {SequenceVerdict::kUnknownProducer, ErrorCode::kUnknownProducerId},
      {SequenceVerdict::kInFlight, ErrorCode::kNotEnoughReplicas},
  };
  for (const auto& [verdict, code] : refused) {
    auto v = verdict_for({verdict, kNoOffset}, h);
    BOOST_TEST((v.kind == Kind::kRefused));
    BOOST_TEST(kafka::to_int16(v.error) == kafka::to_int16(code));
    BOOST_TEST(!v.message.empty());
  }
}

BOOST_AUTO_TEST_CASE(tail_recovery_records_the_batches_the_registry_takes_as_new) {
  FakeRegistry registry;
  registry.verdicts[0] = SequenceCheck{SequenceVerdict::kDuplicate, KafkaOffset(0)};  // already known
  Idempotence idem(&registry);
  std::vector<iggy::MessageView> stored{view(0, producer_message_id(ProducerId(1), ProducerEpoch(0), 0, true)),
                                        view(1, producer_message_id(ProducerId(1), ProducerEpoch(0), 1, true)),
                                        view(2, producer_message_id(ProducerId(1), ProducerEpoch(0), 2, false))};
  TailState tail;
  int64_t read_from = -1;
  uint32_t read_count = 0;
  bool done = false;
  idem.recover_tail("t", PartitionId(0), /*log_start=*/KafkaOffset(0), /*high_watermark=*/KafkaOffset(3), tail,
                    [&](KafkaOffset from, uint32_t count, iggy::Callback<iggy::PolledMessages> cb) {
                      read_from = from();
                      read_count = count;
                      iggy::PolledMessages r;
                      r.messages = stored;
                      cb(r);
                    },
                    [&] { done = true; });
  BOOST_TEST(done);
  BOOST_TEST(tail.recovered);
  BOOST_TEST(read_from == 0);
  BOOST_TEST(read_count == 3u);
  BOOST_REQUIRE_EQUAL(registry.recorded.size(), 1u);
  BOOST_TEST(registry.recorded[0].first_sequence == 1);
  BOOST_TEST(registry.recorded[0].count == 2);
  BOOST_TEST(registry.recorded[0].base_offset == 1);
}

BOOST_AUTO_TEST_CASE(only_the_last_messages_are_read_and_a_failed_read_leaves_the_tail_unrecovered) {
  FakeRegistry registry;
  Idempotence idem(&registry);
  TailState tail;
  int64_t read_from = -1;
  bool done = false;
  idem.recover_tail("t", PartitionId(0), KafkaOffset(100), KafkaOffset(100 + Idempotence::kTailMessages + 50), tail,
                    [&](KafkaOffset from, uint32_t, iggy::Callback<iggy::PolledMessages> cb) {
                      read_from = from();
                      cb(Error{ErrorDomain::kTransport, 1, "down"});
                    },
                    [&] { done = true; });
  BOOST_TEST(done);
  BOOST_TEST(read_from == 150);
  BOOST_TEST(!tail.recovered);
  BOOST_TEST(registry.recorded.empty());
  // An empty partition has no tail to read.
  TailState empty;
  bool read = false;
  idem.recover_tail("t", PartitionId(0), KafkaOffset(5), KafkaOffset(5), empty,
                    [&](KafkaOffset, uint32_t, iggy::Callback<iggy::PolledMessages>) { read = true; },
                    [] {});
  BOOST_TEST(!read);
  BOOST_TEST(empty.recovered);
}

BOOST_AUTO_TEST_SUITE_END()
