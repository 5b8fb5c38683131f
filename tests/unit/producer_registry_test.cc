// The idempotent producer registry against a real SQLite database, with the uv loop run here.
// Kafka references: ProducerAppendInfo.checkSequence / checkProducerEpoch,
// ProducerStateEntry.findDuplicateBatch (five batches), TransactionCoordinator.handleInitProducerId.
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <limits>
#include <optional>

#include "bridge/errors.h"
#include "bridge/producers/producer_registry_impl.h"
#include "state/producer_store.h"
#include "state/state_store.h"

using namespace kib;
using namespace kib::bridge;
using kib::state::StateStore;

namespace {

constexpr int64_t kDay = 24LL * 60 * 60 * 1000;
constexpr int64_t kStart = 1'700'000'000'000;  // wall clock at the start of every test

struct Bridge {
  std::filesystem::path dir;
  uv_loop_t loop{};
  int64_t clock_ms = kStart;
  ProducerRegistryOptions options;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<PersistentProducerRegistry> producers;

  explicit Bridge(int64_t id_block_size = 1000) {
    char tmpl[] = "/tmp/kib-producers-XXXXXX";
    dir = mkdtemp(tmpl);
    uv_loop_init(&loop);
    options.id_block_size = id_block_size;
    options.now_ms = [this] { return clock_ms; };
    start();
  }
  ~Bridge() {
    stop();
    uv_loop_close(&loop);
    std::filesystem::remove_all(dir);
  }

  void start() {
    auto s = StateStore::open((dir / "state.db").string(), &loop);
    BOOST_REQUIRE(s.ok());
    store = std::move(*s);
    producers = std::make_unique<PersistentProducerRegistry>(*store, &loop, options);
    BOOST_REQUIRE(producers->load().ok());
  }
  // A clean stop: every queued write commits (StateStore::close drains the queue).
  void stop() {
    producers.reset();
    if (store) store->close();
    store.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  void restart() {
    stop();
    start();
  }

  Result<ProducerIdAndEpoch> init(std::optional<ProducerIdAndEpoch> existing = std::nullopt) {
    std::optional<Result<ProducerIdAndEpoch>> out;
    producers->init_producer(existing, [&](Result<ProducerIdAndEpoch> r) { out = std::move(r); });
    while (!out) uv_run(&loop, UV_RUN_ONCE);
    return *out;
  }
  int64_t new_producer() {
    auto r = init();
    BOOST_REQUIRE(r.ok());
    return r->producer_id();
  }

  SequenceCheck check(int64_t pid, int16_t epoch, int32_t first, int32_t count, int32_t partition = 0) {
    return producers->check(ProducerId(pid), ProducerEpoch(epoch), "orders", PartitionId(partition), first, count);
  }
  // check() + record_append(): a batch the client sent once and the bridge appended.
  void append(int64_t pid, int16_t epoch, int32_t first, int32_t count, int64_t offset, int32_t partition = 0) {
    auto c = check(pid, epoch, first, count, partition);
    BOOST_REQUIRE(c.verdict == SequenceVerdict::kAppend);
    bool done = false;
    producers->record_append(ProducerId(pid), ProducerEpoch(epoch), "orders", PartitionId(partition), first, count,
                             KafkaOffset(offset), [&](Status s) {
      BOOST_TEST(s.ok());
      done = true;
    });
    while (!done) uv_run(&loop, UV_RUN_ONCE);
  }

  int64_t count_rows(const std::string& sql) {
    int64_t n = -1;
    BOOST_REQUIRE(store->run_blocking([&](SQLite::Database& db) { n = db.execAndGet(sql).getInt64(); }).ok());
    return n;
  }
};

bool is(const SequenceCheck& c, SequenceVerdict v) { return c.verdict == v; }

}  // namespace

BOOST_AUTO_TEST_SUITE(producer_registry)

// ---- producer ids ----

BOOST_AUTO_TEST_CASE(producer_ids_increase_across_blocks_and_restarts_and_are_never_reused) {
  Bridge b(/*id_block_size=*/3);
  std::vector<int64_t> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(b.new_producer());
  for (size_t i = 1; i < ids.size(); ++i) BOOST_TEST(ids[i] == ids[i - 1] + 1);
  for (int round = 0; round < 3; ++round) {
    b.restart();
    int64_t next = b.new_producer();
    BOOST_TEST(next > ids.back());
    ids.push_back(next);
  }
  BOOST_TEST(b.count_rows("SELECT count(*) FROM producers") == static_cast<int64_t>(ids.size()));
  BOOST_TEST(b.count_rows("SELECT CAST(value AS INTEGER) FROM bridge_meta WHERE key='producer_id_high_water'") >
             ids.back());
}

BOOST_AUTO_TEST_CASE(init_producer_id_always_answers_epoch_zero) {
  Bridge b;
  auto r = b.init();
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->producer_epoch() == 0);
}

BOOST_AUTO_TEST_CASE(non_transactional_init_with_known_id_and_epoch_gets_a_fresh_id_like_kafka) {
  // TransactionCoordinator.handleInitProducerId: a null transactional id "always blindly
  // accepts the request and returns a new producerId", whatever producer id/epoch it carries.
  Bridge b;
  int64_t first = b.new_producer();
  auto r = b.init(ProducerIdAndEpoch{ProducerId(first), ProducerEpoch(7)});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->producer_id() > first);
  BOOST_TEST(r->producer_epoch() == 0);
}

BOOST_AUTO_TEST_CASE(producer_ids_survive_an_unclean_stop_without_reuse) {
  Bridge b(/*id_block_size=*/1000);
  int64_t last = -1;
  for (int i = 0; i < 5; ++i) last = b.new_producer();
  // Like kill -9: the registry vanishes without its producer rows; only the block is durable.
  b.producers.reset();
  BOOST_REQUIRE(b.store->run_blocking([](SQLite::Database& db) { db.exec("DELETE FROM producers"); }).ok());
  b.restart();
  BOOST_TEST(b.new_producer() > last);
}

BOOST_AUTO_TEST_CASE(id_reservation_failure_is_retriable_coordinator_load_in_progress) {
  // Kafka answers COORDINATOR_LOAD_IN_PROGRESS while its producer id block is missing
  // (RPCProducerIdManager); COORDINATOR_NOT_AVAILABLE would send an idempotent Java producer
  // to FindCoordinator with a null key.
  Bridge b(/*id_block_size=*/1);
  BOOST_REQUIRE(b.store->run_blocking([](SQLite::Database& db) { db.exec("DROP TABLE bridge_meta"); }).ok());
  BOOST_TEST(b.init().ok());  // the one id reserved at load is still durable and served
  auto r = b.init();          // the next block cannot be reserved
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(static_cast<int>(to_kafka_error(r.error())) ==
             static_cast<int>(kafka::ErrorCode::kCoordinatorLoadInProgress));
  BOOST_TEST(kafka::is_retriable(to_kafka_error(r.error())));
  BOOST_REQUIRE(b.store->run_blocking([](SQLite::Database& db) {
    db.exec("CREATE TABLE bridge_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID");
  }).ok());
  BOOST_TEST(b.init().ok());  // the client's retry succeeds once the database recovers
}

// ---- sequences ----

BOOST_AUTO_TEST_CASE(a_producer_without_state_starts_at_any_sequence_as_in_kafka_2_5) {
  // checkSequence: "If there is no current producer epoch ... accept writes with any sequence".
  Bridge b;
  int64_t pid = b.new_producer();
  BOOST_TEST(is(b.check(pid, 0, 42, 3), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(a_retry_of_an_appended_batch_is_a_duplicate_answered_with_its_offset) {
  Bridge b;
  int64_t pid = b.new_producer();
  b.append(pid, 0, 0, 5, 100);
  b.append(pid, 0, 5, 5, 105);
  auto first = b.check(pid, 0, 0, 5);
  BOOST_TEST(is(first, SequenceVerdict::kDuplicate));
  BOOST_TEST(first.duplicate_base_offset() == 100);
  auto second = b.check(pid, 0, 5, 5);
  BOOST_TEST(is(second, SequenceVerdict::kDuplicate));
  BOOST_TEST(second.duplicate_base_offset() == 105);
  BOOST_TEST(is(b.check(pid, 0, 10, 1), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(duplicates_are_still_detected_after_a_restart) {
  Bridge b;
  int64_t pid = b.new_producer();
  b.append(pid, 0, 0, 5, 100);
  b.append(pid, 0, 5, 5, 105);
  b.append(pid, 0, 0, 2, 7, /*partition=*/1);
  b.restart();
  auto retry = b.check(pid, 0, 5, 5);
  BOOST_TEST(is(retry, SequenceVerdict::kDuplicate));
  BOOST_TEST(retry.duplicate_base_offset() == 105);
  BOOST_TEST(b.check(pid, 0, 0, 2, 1).duplicate_base_offset() == 7);
  BOOST_TEST(is(b.check(pid, 0, 11, 1), SequenceVerdict::kOutOfOrder));  // still expects 10
  BOOST_TEST(is(b.check(pid, 0, 10, 1), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(a_gap_in_sequence_is_out_of_order_and_reserves_nothing) {
  Bridge b;
  int64_t pid = b.new_producer();
  b.append(pid, 0, 0, 5, 0);
  BOOST_TEST(is(b.check(pid, 0, 6, 1), SequenceVerdict::kOutOfOrder));
  BOOST_TEST(is(b.check(pid, 0, 3, 5), SequenceVerdict::kOutOfOrder));  // overlaps, not identical
  BOOST_TEST(is(b.check(pid, 0, 5, 1), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(a_lower_epoch_is_fenced_and_a_higher_epoch_must_restart_at_sequence_zero) {
  Bridge b;
  int64_t pid = b.new_producer();
  b.append(pid, 1, 0, 5, 0);
  BOOST_TEST(is(b.check(pid, 0, 5, 1), SequenceVerdict::kInvalidEpoch));
  BOOST_TEST(is(b.check(pid, 2, 5, 1), SequenceVerdict::kOutOfOrder));  // bumped epoch, seq not 0
  b.append(pid, 2, 0, 3, 5);                                             // epoch bump: seq 0
  BOOST_TEST(is(b.check(pid, 1, 0, 5), SequenceVerdict::kInvalidEpoch));  // old epoch's batch: forgotten, fenced
  BOOST_TEST(b.check(pid, 2, 0, 3).duplicate_base_offset() == 5);
  BOOST_TEST(is(b.check(pid, 2, 3, 1), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(epoch_fencing_is_per_partition_as_in_kafka) {
  Bridge b;
  int64_t pid = b.new_producer();
  b.append(pid, 3, 0, 1, 0, /*partition=*/0);
  b.append(pid, 1, 0, 1, 0, /*partition=*/1);
  BOOST_TEST(is(b.check(pid, 1, 1, 1, 1), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(sequence_numbers_wrap_from_int32_max_to_zero) {
  Bridge b;
  int64_t pid = b.new_producer();
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  b.append(pid, 0, kMax - 4, 3, 10);  // kMax-4 .. kMax-2
  b.append(pid, 0, kMax - 1, 4, 13);  // kMax-1, kMax, 0, 1
  BOOST_TEST(b.check(pid, 0, kMax - 1, 4).duplicate_base_offset() == 13);
  BOOST_TEST(is(b.check(pid, 0, 0, 1), SequenceVerdict::kOutOfOrder));
  b.append(pid, 0, 2, 1, 17);
  b.append(pid, 0, 3, 1, 18);
  b.restart();
  BOOST_TEST(b.check(pid, 0, kMax - 1, 4).duplicate_base_offset() == 13);
  BOOST_TEST(is(b.check(pid, 0, 4, 1), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(only_the_last_five_batches_are_remembered_an_older_retry_is_out_of_order) {
  // ProducerStateEntry.NUM_BATCHES_TO_RETAIN = 5; a retry of the sixth-newest batch is neither
  // a duplicate nor the next sequence, so Kafka answers OUT_OF_ORDER_SEQUENCE_NUMBER.
  Bridge b;
  int64_t pid = b.new_producer();
  for (int i = 0; i < 6; ++i) b.append(pid, 0, i * 10, 10, 1000 + i * 10);
  BOOST_TEST(is(b.check(pid, 0, 0, 10), SequenceVerdict::kOutOfOrder));
  BOOST_TEST(b.check(pid, 0, 10, 10).duplicate_base_offset() == 1010);
  BOOST_TEST(b.count_rows("SELECT count(*) FROM producer_batches") == 5);
  b.restart();
  BOOST_TEST(is(b.check(pid, 0, 0, 10), SequenceVerdict::kOutOfOrder));
  BOOST_TEST(b.check(pid, 0, 50, 10).duplicate_base_offset() == 1050);
}

BOOST_AUTO_TEST_CASE(each_batch_deletes_the_row_it_displaces_and_a_new_epoch_or_a_restart_prunes_in_full) {
  // The registry tells the store which row a batch displaces (one delete by primary key) instead
  // of a scan per batch; the scan runs on the key's first batch in a process and on a new epoch.
  Bridge b;
  int64_t pid = b.new_producer();
  auto rows = [&](const std::string& where = "") {
    return b.count_rows("SELECT count(*) FROM producer_batches WHERE producer_id = " + std::to_string(pid) + where);
  };
  for (int i = 0; i < 12; ++i) b.append(pid, 0, i * 10, 10, 1000 + i * 10);
  BOOST_TEST(rows() == 5);
  BOOST_TEST(rows(" AND first_sequence >= 70") == 5);  // the newest five: 70..110

  // Rows the registry does not know (here: left by hand, as an older bridge might) stay until
  // the next full prune, which the first batch after a restart runs.
  BOOST_REQUIRE(b.store->run_blocking([&](SQLite::Database& db) {
    db.exec("INSERT INTO producer_batches VALUES (" + std::to_string(pid) + ", 'orders', 0, 0, 5000, 5009, 1, 1)");
  }).ok());
  b.append(pid, 0, 120, 10, 1120);
  BOOST_TEST(rows() == 6);
  b.restart();
  BOOST_TEST(b.check(pid, 0, 80, 10).duplicate_base_offset() == 1080);  // the loader keeps the newest five
  b.append(pid, 0, 130, 10, 1130);
  BOOST_TEST(rows() == 5);
  BOOST_TEST(rows(" AND first_sequence = 5000") == 0);

  // A new epoch forgets the old epoch's rows at once, then evicts one by one again.
  b.append(pid, 1, 0, 10, 1140);
  BOOST_TEST(rows() == 1);
  for (int i = 1; i < 7; ++i) b.append(pid, 1, i * 10, 10, 1140 + i * 10);
  BOOST_TEST(rows() == 5);
  BOOST_TEST(rows(" AND producer_epoch = 1 AND first_sequence >= 20") == 5);
  b.restart();
  BOOST_TEST(b.check(pid, 1, 60, 10).duplicate_base_offset() == 1200);
  BOOST_TEST(is(b.check(pid, 1, 10, 10), SequenceVerdict::kOutOfOrder));
}

BOOST_AUTO_TEST_CASE(a_producers_row_is_written_on_a_new_epoch_and_otherwise_at_most_once_a_minute) {
  Bridge b;
  int64_t pid = b.new_producer();
  auto updated_at = [&] {
    return b.count_rows("SELECT updated_at FROM producers WHERE producer_id = " + std::to_string(pid));
  };
  auto epoch = [&] {
    return b.count_rows("SELECT producer_epoch FROM producers WHERE producer_id = " + std::to_string(pid));
  };
  b.clock_ms = kStart + 1000;
  b.append(pid, 0, 0, 1, 0);
  BOOST_TEST(updated_at() == kStart + 1000);
  b.clock_ms = kStart + 1000 + kProducerTouchIntervalMs - 1;
  b.append(pid, 0, 1, 1, 1);
  BOOST_TEST(updated_at() == kStart + 1000);  // not rewritten within the interval
  b.append(pid, 0, 0, 1, 7, /*partition=*/1);  // the interval is per producer, not per partition
  BOOST_TEST(updated_at() == kStart + 1000);
  b.clock_ms = kStart + 1000 + kProducerTouchIntervalMs;
  b.append(pid, 0, 2, 1, 2);
  BOOST_TEST(updated_at() == kStart + 1000 + kProducerTouchIntervalMs);
  b.clock_ms += 1;
  b.append(pid, 1, 0, 1, 3);  // a new epoch is written at once
  BOOST_TEST(epoch() == 1);
  BOOST_TEST(updated_at() == kStart + 1001 + kProducerTouchIntervalMs);
  b.restart();  // a restarted bridge writes the row with its first batch
  b.clock_ms += 1;
  b.append(pid, 1, 1, 1, 4);
  BOOST_TEST(updated_at() == kStart + 1002 + kProducerTouchIntervalMs);
}

BOOST_AUTO_TEST_CASE(an_id_this_bridge_never_issued_is_an_unknown_producer) {
  Bridge b;
  int64_t pid = b.new_producer();
  BOOST_TEST(is(b.check(pid + 1, 0, 0, 1), SequenceVerdict::kUnknownProducer));
  BOOST_TEST(is(b.check(pid + 1'000'000, 0, 0, 1), SequenceVerdict::kUnknownProducer));
}

BOOST_AUTO_TEST_CASE(batches_without_a_producer_id_are_not_tracked) {
  Bridge b;
  BOOST_TEST(is(b.check(-1, -1, -1, 5), SequenceVerdict::kAppend));
  BOOST_TEST(is(b.check(-1, -1, -1, 5), SequenceVerdict::kAppend));
  BOOST_TEST(b.producers->tracked_partitions() == 0u);
}

// ---- pipelining: reservations ----

BOOST_AUTO_TEST_CASE(pipelined_batches_are_checked_as_if_the_earlier_ones_had_succeeded) {
  Bridge b;
  int64_t pid = b.new_producer();
  BOOST_TEST(is(b.check(pid, 0, 0, 5), SequenceVerdict::kAppend));
  BOOST_TEST(is(b.check(pid, 0, 5, 5), SequenceVerdict::kAppend));
  BOOST_TEST(is(b.check(pid, 0, 10, 5), SequenceVerdict::kAppend));
  BOOST_TEST(is(b.check(pid, 0, 16, 1), SequenceVerdict::kOutOfOrder));
  // The client timed out and resent the first batch while it is still being appended.
  BOOST_TEST(is(b.check(pid, 0, 0, 5), SequenceVerdict::kInFlight));
  BOOST_TEST(b.producers->is_reserved(ProducerId(pid), "orders", PartitionId(0), 5));
  b.producers->record_append(ProducerId(pid), ProducerEpoch(0), "orders", PartitionId(0), 0, 5, KafkaOffset(200));
  b.producers->record_append(ProducerId(pid), ProducerEpoch(0), "orders", PartitionId(0), 5, 5, KafkaOffset(205));
  BOOST_TEST(b.check(pid, 0, 0, 5).duplicate_base_offset() == 200);
  BOOST_TEST(is(b.check(pid, 0, 10, 5), SequenceVerdict::kInFlight));
  b.producers->record_append(ProducerId(pid), ProducerEpoch(0), "orders", PartitionId(0), 10, 5, KafkaOffset(210));
  BOOST_TEST(is(b.check(pid, 0, 15, 1), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(an_aborted_append_cancels_every_later_reservation_so_the_client_resends_in_order) {
  Bridge b;
  int64_t pid = b.new_producer();
  b.append(pid, 0, 0, 5, 0);
  BOOST_TEST(is(b.check(pid, 0, 5, 5), SequenceVerdict::kAppend));   // R1
  BOOST_TEST(is(b.check(pid, 0, 10, 5), SequenceVerdict::kAppend));  // R2, waiting behind R1
  BOOST_TEST(is(b.check(pid, 0, 15, 5), SequenceVerdict::kAppend));  // R3
  b.producers->abort_append(ProducerId(pid), "orders", PartitionId(0), 5);  // Iggy refused R1
  BOOST_TEST(!b.producers->is_reserved(ProducerId(pid), "orders", PartitionId(0), 10));  // so R2, R3 are not appended
  BOOST_TEST(!b.producers->is_reserved(ProducerId(pid), "orders", PartitionId(0), 15));
  // The client retries R1 (retriable error), then R2 and R3 (OUT_OF_ORDER, not next in line).
  BOOST_TEST(is(b.check(pid, 0, 10, 5), SequenceVerdict::kOutOfOrder));
  BOOST_TEST(is(b.check(pid, 0, 5, 5), SequenceVerdict::kAppend));
  BOOST_TEST(is(b.check(pid, 0, 10, 5), SequenceVerdict::kAppend));
  BOOST_TEST(is(b.check(pid, 0, 15, 5), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(aborting_a_later_batch_keeps_the_earlier_reservations) {
  Bridge b;
  int64_t pid = b.new_producer();
  BOOST_TEST(is(b.check(pid, 0, 0, 5), SequenceVerdict::kAppend));
  BOOST_TEST(is(b.check(pid, 0, 5, 5), SequenceVerdict::kAppend));
  b.producers->abort_append(ProducerId(pid), "orders", PartitionId(0), 5);
  BOOST_TEST(b.producers->is_reserved(ProducerId(pid), "orders", PartitionId(0), 0));
  b.producers->record_append(ProducerId(pid), ProducerEpoch(0), "orders", PartitionId(0), 0, 5, KafkaOffset(40));
  BOOST_TEST(is(b.check(pid, 0, 5, 5), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(aborting_the_first_batch_of_a_new_epoch_restores_the_old_epoch) {
  Bridge b;
  int64_t pid = b.new_producer();
  b.append(pid, 0, 0, 5, 0);
  BOOST_TEST(is(b.check(pid, 1, 0, 2), SequenceVerdict::kAppend));
  BOOST_TEST(is(b.check(pid, 0, 5, 1), SequenceVerdict::kInvalidEpoch));
  b.producers->abort_append(ProducerId(pid), "orders", PartitionId(0), 0);
  BOOST_TEST(b.check(pid, 0, 0, 5).duplicate_base_offset() == 0);
  BOOST_TEST(is(b.check(pid, 0, 5, 1), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(aborting_the_only_batch_of_a_new_producer_leaves_no_state) {
  Bridge b;
  int64_t pid = b.new_producer();
  BOOST_TEST(is(b.check(pid, 0, 0, 5), SequenceVerdict::kAppend));
  b.producers->abort_append(ProducerId(pid), "orders", PartitionId(0), 0);
  BOOST_TEST(b.producers->tracked_partitions() == 0u);
  BOOST_TEST(is(b.check(pid, 0, 0, 5), SequenceVerdict::kAppend));
}

// ---- expiry ----

BOOST_AUTO_TEST_CASE(idle_producers_keep_their_state_for_seven_days_then_start_over_without_failing) {
  Bridge b;
  int64_t pid = b.new_producer();
  b.append(pid, 0, 0, 5, 100);
  b.clock_ms += 7 * kDay - 1;
  b.producers->expire_idle();
  BOOST_TEST(b.check(pid, 0, 0, 5).duplicate_base_offset() == 100);
  BOOST_TEST(is(b.check(pid, 0, 7, 1), SequenceVerdict::kOutOfOrder));

  b.clock_ms += 1;
  b.producers->expire_idle();
  BOOST_TEST(b.producers->tracked_partitions() == 0u);
  b.restart();  // the sweep's DELETE commits; load() must not bring the batches back
  BOOST_TEST(b.count_rows("SELECT count(*) FROM producer_batches") == 0);
  BOOST_TEST(b.count_rows("SELECT count(*) FROM producers") == 0);
  // With no state left any sequence is accepted (Kafka 2.5+), so the producer carries on.
  BOOST_TEST(is(b.check(pid, 0, 7, 1), SequenceVerdict::kAppend));
}

BOOST_AUTO_TEST_CASE(expiry_spares_active_producers_and_batches_being_appended) {
  Bridge b;
  int64_t idle = b.new_producer();
  int64_t active = b.new_producer();
  b.append(idle, 0, 0, 1, 0);
  b.append(active, 0, 0, 1, 1);
  BOOST_TEST(is(b.check(idle, 0, 1, 1), SequenceVerdict::kAppend));  // in flight for 8 days (Iggy hung)
  b.clock_ms += 6 * kDay;
  b.append(active, 0, 1, 1, 2);
  b.clock_ms += 2 * kDay;
  b.producers->expire_idle();
  BOOST_TEST(b.producers->tracked_partitions() == 2u);
  BOOST_TEST(b.check(active, 0, 1, 1).duplicate_base_offset() == 2);
  b.producers->record_append(ProducerId(idle), ProducerEpoch(0), "orders", PartitionId(0), 1, 1, KafkaOffset(3));
  BOOST_TEST(b.check(idle, 0, 1, 1).duplicate_base_offset() == 3);
}

BOOST_AUTO_TEST_CASE(state_older_than_the_expiry_is_dropped_at_startup) {
  Bridge b;
  int64_t pid = b.new_producer();
  b.append(pid, 0, 0, 5, 100);
  b.stop();
  b.clock_ms += 8 * kDay;
  b.start();
  BOOST_TEST(b.producers->tracked_partitions() == 0u);
  BOOST_TEST(b.count_rows("SELECT count(*) FROM producer_batches") == 0);
  BOOST_TEST(b.new_producer() > pid);  // expiry never lowers the id high-water mark
}

BOOST_AUTO_TEST_SUITE_END()
