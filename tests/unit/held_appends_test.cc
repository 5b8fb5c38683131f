// The held side of the Produce path (bridge/log/held_appends.h) against an in-memory Iggy and an
// in-memory store: a reservation makes the partition hold, plain batches behind it take their
// offsets on arrival and are answered from the store, nothing reaches Iggy past an undecided
// transaction, a commit appends in offset order, an abort appends placeholders, the bound.
#include <boost/test/unit_test.hpp>

#include <map>

#include "bridge/log/appender.h"
#include "bridge/log/held_appends.h"
#include "log_services_support.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::testing;
using kafka::ErrorCode;

namespace {

// SQLite's held_batches, in memory; callbacks posted as the state thread's are.
struct MemoryHeldStore final : HeldStore {
  uv::Tasks& tasks;
  std::map<int64_t, std::shared_ptr<Bytes>> rows;
  bool fail_inserts = false;
  explicit MemoryHeldStore(uv::Tasks& t) : tasks(t) {}

  void insert_plain(const std::string&, PartitionId, const HeldBatch& b, std::shared_ptr<const Bytes> wire,
                    std::function<void(Status)> done) override {
    if (fail_inserts) return tasks.post([done] { done(Error{ErrorDomain::kState, 1, "disk full (test)"}); });
    rows[b.base()] = std::make_shared<Bytes>(*wire);
    tasks.post([done] { done(ok_status()); });
  }
  void load(const std::string&, PartitionId, KafkaOffset base,
            std::function<void(Result<std::shared_ptr<Bytes>>)> done) override {
    auto it = rows.find(base());
    if (it == rows.end()) return tasks.post([done] { done(Error{ErrorDomain::kState, 2, "no row (test)"}); });
    auto bytes = it->second;
    tasks.post([done, bytes] { done(bytes); });
  }
  void erase(const std::string&, PartitionId, KafkaOffset base) override { rows.erase(base()); }
};

struct Holding {
  TestLoop loop;
  FakeIggy iggy;
  FakeRegistry registry;
  uv::Tasks tasks{&loop.loop};
  OffsetsTable offsets{&loop.loop, iggy};
  Idempotence idempotence{&registry};
  Appender appender{iggy, offsets, idempotence, nullptr};
  MemoryHeldStore store{tasks};
  HeldAppends held{&loop.loop, offsets, appender, idempotence, tasks, 1 << 20};
  std::vector<ProduceResult> results;

  Holding() {
    iggy.add_topic("t", 1);
    held.set_store(&store);
  }
  PartitionOffsets& p() { return offsets.at("t", PartitionId(0)); }
  // Runs the loop and answers Iggy until neither has anything left.
  void settle() {
    for (int i = 0; i < 50; ++i) {
      loop.spin();
      if (iggy.serve() == 0 && iggy.pending() == 0) loop.spin();
    }
  }
  // A transactional batch of `values` reserved for `txn`, its row stored as the coordinator does.
  int64_t reserve_txn(HeldTxn txn, std::vector<std::string> values, int64_t pid = 9) {
    auto job = make_job({values, 1'700'000'000'000, {}, pid, 0, 0});
    int64_t base = -1;
    held.reserve(p(), static_cast<int32_t>(values.size()), job->batches.front().wire.size(), txn, {pid, 0},
                 [&](Result<KafkaOffset> r) {
                   BOOST_REQUIRE(r.ok());
                   base = (*r)();
                 });
    settle();
    BOOST_REQUIRE(base >= 0);
    store.rows[base] = std::make_shared<Bytes>(job->batches.front().wire.begin(), job->batches.front().wire.end());
    return base;
  }
  std::string payload_at(size_t offset) {
    const auto& m = iggy.partition("t", 0).messages.at(offset);
    return std::string(m.payload.begin(), m.payload.end());
  }
  bool placeholder_at(size_t offset) {
    const auto& m = iggy.partition("t", 0).messages.at(offset);
    std::string headers(m.headers.begin(), m.headers.end());
    return headers.find("kib.aborted") != std::string::npos;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(held_appends)

BOOST_FIXTURE_TEST_CASE(plain_batches_behind_an_open_transaction_take_their_offsets_and_wait_for_it, Holding) {
  appender.append(p(), make_job({{"a", "b"}}, &results));  // before any transaction: straight to Iggy
  settle();
  BOOST_REQUIRE_EQUAL(results.size(), 1u);
  BOOST_TEST(!held.holding(p()));
  BOOST_TEST(reserve_txn(7, {"t1", "t2", "t3"}) == 2);
  BOOST_TEST(held.holding(p()));
  held.append_plain(p(), make_job({{"c"}}, &results));
  settle();
  BOOST_REQUIRE_EQUAL(results.size(), 2u);
  BOOST_TEST(kafka::to_int16(results[1].error) == 0);
  BOOST_TEST(results[1].base_offset() == 5);  // after the transaction's three
  BOOST_TEST(iggy.partition("t", 0).messages.size() == 2u);  // nothing past the open transaction

  held.decide(p(), 7, true);
  settle();
  BOOST_REQUIRE_EQUAL(iggy.partition("t", 0).messages.size(), 6u);
  BOOST_TEST(payload_at(2) == "t1");
  BOOST_TEST(payload_at(4) == "t3");
  BOOST_TEST(payload_at(5) == "c");
  BOOST_TEST(!held.holding(p()));
  BOOST_TEST(store.rows.empty());  // every row went once Iggy had it
}

BOOST_FIXTURE_TEST_CASE(an_aborted_transaction_leaves_placeholders_and_later_records_keep_their_offsets, Holding) {
  BOOST_TEST(reserve_txn(8, {"x", "y"}) == 0);
  held.append_plain(p(), make_job({{"z"}}, &results));
  settle();
  BOOST_REQUIRE_EQUAL(results.size(), 1u);
  BOOST_TEST(results[0].base_offset() == 2);
  held.decide(p(), 8, false);
  settle();
  BOOST_REQUIRE_EQUAL(iggy.partition("t", 0).messages.size(), 3u);
  BOOST_TEST(placeholder_at(0));
  BOOST_TEST(placeholder_at(1));
  BOOST_TEST(payload_at(2) == "z");
  BOOST_TEST(held.stats().placeholders == 2u);
}

BOOST_FIXTURE_TEST_CASE(an_older_undecided_transaction_holds_a_newer_committed_one, Holding) {
  BOOST_TEST(reserve_txn(1, {"old"}) == 0);
  BOOST_TEST(reserve_txn(2, {"new"}) == 1);
  held.decide(p(), 2, true);
  settle();
  BOOST_TEST(iggy.partition("t", 0).messages.empty());
  held.decide(p(), 1, true);
  settle();
  BOOST_REQUIRE_EQUAL(iggy.partition("t", 0).messages.size(), 2u);
  BOOST_TEST(payload_at(0) == "old");
  BOOST_TEST(payload_at(1) == "new");
}

BOOST_FIXTURE_TEST_CASE(a_plain_batch_whose_row_fails_is_refused_and_its_offsets_become_placeholders, Holding) {
  BOOST_TEST(reserve_txn(3, {"t"}) == 0);
  store.fail_inserts = true;
  held.append_plain(p(), make_job({{"lost"}}, &results));
  settle();
  store.fail_inserts = false;
  held.append_plain(p(), make_job({{"kept"}}, &results));
  settle();
  BOOST_REQUIRE_EQUAL(results.size(), 2u);
  BOOST_TEST((results[0].error == ErrorCode::kKafkaStorageError));
  BOOST_TEST(results[1].base_offset() == 2);
  held.decide(p(), 3, true);
  settle();
  BOOST_REQUIRE_EQUAL(iggy.partition("t", 0).messages.size(), 3u);
  BOOST_TEST(payload_at(0) == "t");
  BOOST_TEST(placeholder_at(1));
  BOOST_TEST(payload_at(2) == "kept");
}

BOOST_FIXTURE_TEST_CASE(past_the_bound_a_batch_is_refused_retriably, Holding) {
  HeldAppends small{&loop.loop, offsets, appender, idempotence, tasks, 1};
  small.set_store(&store);
  KafkaOffset base = kNoOffset;
  small.reserve(p(), 1, 100, 4, {9, 0}, [&](Result<KafkaOffset> r) { base = *r; });  // the first always fits
  settle();
  BOOST_TEST(base() == 0);
  small.append_plain(p(), make_job({{"no room"}}, &results));
  settle();
  BOOST_REQUIRE_EQUAL(results.size(), 1u);
  BOOST_TEST((results[0].error == ErrorCode::kNotEnoughReplicas));
  BOOST_TEST(small.stats().refused_full == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_failed_held_append_is_retried_without_storing_it_twice, Holding) {
  BOOST_TEST(reserve_txn(5, {"once"}) == 0);
  iggy.fail_sends = true;
  held.decide(p(), 5, true);
  settle();
  BOOST_TEST(iggy.partition("t", 0).messages.empty());
  iggy.fail_sends = false;
  loop.run_until([&] {
    iggy.serve();
    return iggy.partition("t", 0).messages.size() == 1u && !held.holding(p());
  }, 5000);
  BOOST_REQUIRE_EQUAL(iggy.partition("t", 0).messages.size(), 1u);
  BOOST_TEST(payload_at(0) == "once");
  BOOST_TEST(!held.holding(p()));
}

BOOST_AUTO_TEST_SUITE_END()
