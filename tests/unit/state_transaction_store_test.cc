// The transaction coordinator's tables (state/transaction_store.h, migrations/0006).
#include <boost/test/unit_test.hpp>

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

#include "state/state_store.h"
#include "state/transaction_store.h"

using namespace kib;
using namespace kib::state;

BOOST_AUTO_TEST_SUITE(state_transaction_store)

namespace {
Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }
}  // namespace

BOOST_AUTO_TEST_CASE(a_transaction_round_trips_and_clearing_it_keeps_only_its_row) {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  BOOST_REQUIRE(migrate(db).ok());
  TransactionRow row{"tx", 7, 3, 7, 2, 60000, "Ongoing", 1000, 2000};
  save_transaction(db, row);
  add_transaction_partition(db, {"tx", "t", 1, -1, -1});
  add_transaction_partition(db, {"tx", "t", 1, -1, -1});  // twice: one row
  add_transaction_group(db, "tx", "g");
  upsert_transaction_offsets(db, {{"tx", "g", "in", 0, 42, 5, "m"}});
  upsert_transaction_offsets(db, {{"tx", "g", "in", 0, 43, 5, "m2"}});  // replaces
  const Bytes b1 = bytes_of("batch-one"), b2 = bytes_of("batch-two-longer");
  insert_transaction_batch(db, "tx", 1, "t", 1, 0, 3, b1);
  insert_transaction_batch(db, "tx", 2, "t", 1, 3, 2, b2);
  set_partition_start_offset(db, "tx", "t", 1, 17);
  set_partition_append_from(db, "tx", "t", 1, 20);

  TransactionSnapshot s = load_transactions(db);
  BOOST_REQUIRE(s.transactions.size() == 1u);
  BOOST_TEST(s.transactions[0].producer_id == 7);
  BOOST_TEST(s.transactions[0].producer_epoch == 3);
  BOOST_TEST(s.transactions[0].state == "Ongoing");
  BOOST_REQUIRE(s.partitions.size() == 1u);
  BOOST_TEST(s.partitions[0].start_offset == 17);
  BOOST_TEST(s.partitions[0].append_from == 20);
  BOOST_REQUIRE(s.groups.size() == 1u);
  BOOST_REQUIRE(s.offsets.size() == 1u);
  BOOST_TEST(s.offsets[0].committed_offset == 43);
  BOOST_TEST(s.offsets[0].metadata == "m2");
  BOOST_REQUIRE(s.batches.size() == 2u);
  BOOST_TEST(s.batches[0].seq == 1);
  BOOST_TEST(s.batches[1].bytes == static_cast<int64_t>(b2.size()));

  // Read back in seq order, in chunks: the first chunk stops once it passed max_bytes.
  auto chunk = load_transaction_batches(db, "tx", "t", 1, 0, 1);
  BOOST_REQUIRE(chunk.size() == 1u);
  BOOST_TEST((chunk[0].batch == b1));
  chunk = load_transaction_batches(db, "tx", "t", 1, chunk[0].seq, 1 << 20);
  BOOST_REQUIRE(chunk.size() == 1u);
  BOOST_TEST(chunk[0].base_sequence == 3);
  BOOST_TEST((chunk[0].batch == b2));
  BOOST_TEST(load_transaction_batches(db, "tx", "t", 0, 0, 1 << 20).empty());

  row.state = "CompleteCommit";
  clear_transaction(db, "tx");
  save_transaction(db, row);
  s = load_transactions(db);
  BOOST_REQUIRE(s.transactions.size() == 1u);
  BOOST_TEST(s.transactions[0].state == "CompleteCommit");
  BOOST_TEST(s.partitions.empty());
  BOOST_TEST(s.groups.empty());
  BOOST_TEST(s.offsets.empty());
  BOOST_TEST(s.batches.empty());

  delete_transaction(db, "tx");
  BOOST_TEST(load_transactions(db).transactions.empty());
}

BOOST_AUTO_TEST_SUITE_END()
