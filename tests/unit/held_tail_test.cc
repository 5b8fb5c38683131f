// The held tail as a model (bridge/log/held_tail.h; docs/transactions.md, "Real offsets at
// produce time"): offsets taken on arrival, appends in offset order behind the oldest undecided
// transaction, aborted and lost batches as placeholders, the bound, shifts and the rebuild at
// startup.
#include <boost/test/unit_test.hpp>

#include <vector>

#include "bridge/log/held_tail.h"

using namespace kib;
using namespace kib::bridge;

namespace {

constexpr AbortedRecordMarker kP1{1001, 0};
constexpr AbortedRecordMarker kP2{1002, 3};
constexpr AbortedRecordMarker kPlain{-1, -1};

std::vector<int64_t> bases(const HeldTail& t) {
  std::vector<int64_t> out;
  for (const HeldBatch& b : t.batches()) out.push_back(b.base());
  return out;
}

// Appends every ready batch, as the partition log's drain does; the bases appended, in order.
std::vector<int64_t> drain(HeldTail& t) {
  std::vector<int64_t> out;
  while (auto b = t.next_ready()) {
    out.push_back(b->base());
    t.appended(b->base);
  }
  return out;
}

HeldBatch row(int64_t base, int32_t count, HeldTxn txn, HeldOutcome outcome) {
  HeldBatch b;
  b.base = KafkaOffset(base);
  b.count = count;
  b.bytes = 100;
  b.txn = txn;
  b.producer = kP1;
  b.outcome = outcome;
  return b;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(held_tail)

BOOST_AUTO_TEST_CASE(offsets_are_taken_on_arrival_in_arrival_order_from_the_high_watermark) {
  HeldTail t;
  BOOST_TEST(!t.holding());
  t.begin(KafkaOffset(40));
  BOOST_TEST(t.holding());
  BOOST_TEST(t.take(5, 500, 7, kP1)() == 40);      // transaction 7
  BOOST_TEST(t.take(2, 200, kPlainBatch, kPlain)() == 45);  // a plain producer behind it
  BOOST_TEST(t.take(3, 300, 8, kP2)() == 47);      // another transaction
  BOOST_TEST(t.next_offset()() == 50);
  BOOST_TEST(t.held_bytes() == 1000u);
}

BOOST_AUTO_TEST_CASE(nothing_reaches_iggy_past_the_oldest_undecided_transaction) {
  HeldTail t;
  t.begin(KafkaOffset(0));
  t.take(5, 1, 7, kP1);
  t.take(2, 1, kPlainBatch, kPlain);
  t.take(3, 1, 8, kP2);
  BOOST_TEST(drain(t).empty());  // 7 is open: nothing, the plain batch included
  // 8 commits first: still nothing, 7 is older.
  BOOST_TEST(t.decide(8, true) == 1u);
  BOOST_TEST(drain(t).empty());
  // 7 commits: everything, in offset order, and the hold ends.
  BOOST_TEST(t.decide(7, true) == 1u);
  BOOST_TEST(drain(t) == (std::vector<int64_t>{0, 5, 7}), boost::test_tools::per_element());
  BOOST_TEST(!t.holding());
  BOOST_TEST(t.held_bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(an_aborted_batch_keeps_its_offsets_and_names_its_producer) {
  HeldTail t;
  t.begin(KafkaOffset(10));
  t.take(4, 1, 7, kP1);
  t.take(1, 1, kPlainBatch, kPlain);
  t.decide(7, false);
  auto first = t.next_ready();
  BOOST_REQUIRE(first.has_value());
  BOOST_TEST(first->base() == 10);
  BOOST_TEST((first->outcome == HeldOutcome::kAborted));
  BOOST_TEST(first->count == 4);
  BOOST_TEST((first->producer == kP1));
  // One batch in flight at a time: the next waits for the acknowledgement.
  BOOST_TEST(!t.next_ready().has_value());
  t.appended(first->base);
  auto second = t.next_ready();
  BOOST_REQUIRE(second.has_value());
  BOOST_TEST(second->base() == 14);
  BOOST_TEST((second->outcome == HeldOutcome::kCommitted));
}

BOOST_AUTO_TEST_CASE(a_failed_append_is_ready_again_and_a_stale_acknowledgement_changes_nothing) {
  HeldTail t;
  t.begin(KafkaOffset(0));
  t.take(1, 1, kPlainBatch, kPlain);
  t.take(1, 1, kPlainBatch, kPlain);
  auto b = t.next_ready();
  BOOST_REQUIRE(b.has_value());
  t.append_failed(b->base);
  auto again = t.next_ready();
  BOOST_REQUIRE(again.has_value());
  BOOST_TEST(again->base() == 0);
  t.appended(KafkaOffset(1));  // not the first batch: ignored
  BOOST_TEST(bases(t) == (std::vector<int64_t>{0, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(deciding_one_transaction_leaves_the_others_and_plain_batches_alone) {
  HeldTail t;
  t.begin(KafkaOffset(0));
  t.take(1, 1, 7, kP1);
  t.take(1, 1, 8, kP2);
  t.take(1, 1, 7, kP1);
  BOOST_TEST(t.decide(7, false) == 2u);
  BOOST_TEST(t.decide(7, true) == 0u);  // decided once
  BOOST_TEST(t.decide(kPlainBatch, false) == 0u);
  BOOST_TEST((t.batches()[1].outcome == HeldOutcome::kUndecided));
}

BOOST_AUTO_TEST_CASE(a_batch_whose_row_was_lost_becomes_placeholders_of_no_producer) {
  HeldTail t;
  t.begin(KafkaOffset(0));
  t.take(3, 1, 7, kP1);
  t.take(2, 1, 7, kP1);
  BOOST_TEST(t.lose(KafkaOffset(3)));
  BOOST_TEST(!t.lose(KafkaOffset(99)));
  const HeldBatch& lost = t.batches()[1];
  BOOST_TEST((lost.outcome == HeldOutcome::kAborted));
  BOOST_TEST((lost.producer == kNoProducer));
  // Its transaction's decision no longer reaches it.
  BOOST_TEST(t.decide(7, true) == 1u);
  BOOST_TEST((t.batches()[1].outcome == HeldOutcome::kAborted));
}

BOOST_AUTO_TEST_CASE(the_bound_refuses_a_batch_past_it_but_never_the_first) {
  HeldTail t;
  t.begin(KafkaOffset(0));
  BOOST_TEST(t.fits(5000, 1000));  // empty: the first batch always fits
  t.take(1, 800, 7, kP1);
  BOOST_TEST(t.fits(200, 1000));
  BOOST_TEST(!t.fits(201, 1000));
}

BOOST_AUTO_TEST_CASE(a_native_append_shifts_every_held_batch_up) {
  HeldTail t;
  t.begin(KafkaOffset(10));
  t.take(2, 1, 7, kP1);
  t.take(2, 1, kPlainBatch, kPlain);
  BOOST_TEST(t.shift_to(KafkaOffset(10)) == 0);
  BOOST_TEST(t.shift_to(KafkaOffset(13)) == 3);
  BOOST_TEST(bases(t) == (std::vector<int64_t>{13, 15}), boost::test_tools::per_element());
  BOOST_TEST(t.next_offset()() == 17);
}

BOOST_AUTO_TEST_CASE(restore_drops_rows_iggy_has_and_fills_ranges_without_a_row) {
  HeldTail t;
  // Iggy ends at 12: rows 5-9 and 10-11 got there before their deletion was stored; 12-13 was
  // taken but never written; 14-16 is an open transaction; 17-18 a plain batch.
  std::vector<HeldBatch> rows = {row(17, 2, kPlainBatch, HeldOutcome::kCommitted),
                                 row(5, 5, 7, HeldOutcome::kCommitted), row(14, 3, 8, HeldOutcome::kUndecided),
                                 row(10, 2, kPlainBatch, HeldOutcome::kCommitted)};
  HeldRestore r = t.restore(rows, KafkaOffset(12));
  BOOST_TEST(r.already_appended.size() == 2u);
  BOOST_TEST(r.filled_ranges == 1u);
  BOOST_TEST(r.largest_gap == 2);
  BOOST_TEST(t.holding());
  BOOST_TEST(bases(t) == (std::vector<int64_t>{12, 14, 17}), boost::test_tools::per_element());
  BOOST_TEST((t.batches()[0].producer == kNoProducer));
  BOOST_TEST(t.next_offset()() == 19);
  // The filler goes, then the open transaction holds the plain batch behind it.
  BOOST_TEST(drain(t) == (std::vector<int64_t>{12}), boost::test_tools::per_element());
  t.decide(8, true);
  BOOST_TEST(drain(t) == (std::vector<int64_t>{14, 17}), boost::test_tools::per_element());
  BOOST_TEST(!t.holding());
}

BOOST_AUTO_TEST_CASE(restore_with_every_row_in_iggy_does_not_hold) {
  HeldTail t;
  HeldRestore r = t.restore({row(0, 3, kPlainBatch, HeldOutcome::kCommitted)}, KafkaOffset(3));
  BOOST_TEST(r.already_appended.size() == 1u);
  BOOST_TEST(!t.holding());
}

BOOST_AUTO_TEST_CASE(a_long_aborted_range_is_split_into_sends_and_only_its_first_part_has_the_row) {
  HeldTail t;
  t.begin(KafkaOffset(0));
  t.take(25, 100, 7, kP1);
  t.take(1, 1, kPlainBatch, kPlain);
  t.decide(7, false);
  t.split_front(10);
  t.split_front(10);  // the first part is 10 already: no change
  BOOST_TEST(bases(t) == (std::vector<int64_t>{0, 10, 25}), boost::test_tools::per_element());
  BOOST_TEST(t.batches()[0].stored);
  BOOST_TEST(!t.batches()[1].stored);
  BOOST_TEST((t.batches()[1].producer == kP1));
  BOOST_TEST((t.batches()[1].outcome == HeldOutcome::kAborted));
  auto first = t.next_ready();
  t.split_front(5);  // in flight: not cut
  BOOST_TEST(t.batches()[0].count == 10);
  t.appended(first->base);
  t.split_front(10);
  BOOST_TEST(bases(t) == (std::vector<int64_t>{10, 20, 25}), boost::test_tools::per_element());
  BOOST_TEST(drain(t) == (std::vector<int64_t>{10, 20, 25}), boost::test_tools::per_element());
  BOOST_TEST(!t.holding());
}

BOOST_AUTO_TEST_SUITE_END()
