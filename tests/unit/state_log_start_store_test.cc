// The DeleteRecords floors in SQLite (state/log_start_store.h, migrations/0005).
#include <boost/test/unit_test.hpp>

#include <SQLiteCpp/SQLiteCpp.h>

#include <map>
#include <string>

#include "state/log_start_store.h"
#include "state/state_store.h"
#include "state/topic_store.h"

using namespace kib;
using namespace kib::state;

BOOST_AUTO_TEST_SUITE(state_log_start_store)

BOOST_AUTO_TEST_CASE(floors_are_raised_never_lowered_and_dropped_with_their_topic) {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  BOOST_REQUIRE(migrate(db).ok());
  upsert_log_start(db, {"t", 0, 5}, 1000);
  upsert_log_start(db, {"t", 0, 3}, 2000);  // a late, lower write keeps the higher floor
  upsert_log_start(db, {"t", 1, 7}, 1000);
  upsert_log_start(db, {"u", 0, 2}, 1000);
  auto rows = load_log_starts(db);
  BOOST_REQUIRE(rows.size() == 3u);
  std::map<std::pair<std::string, int32_t>, int64_t> by;
  for (const auto& r : rows) by[{r.topic, r.partition}] = r.log_start_offset;
  BOOST_TEST((by[{"t", 0}]) == 5);
  BOOST_TEST((by[{"t", 1}]) == 7);
  BOOST_TEST((by[{"u", 0}]) == 2);
  upsert_log_start(db, {"t", 0, 9}, 3000);
  delete_topic_everywhere(db, "u");  // DeleteTopics takes the topic's floors along
  rows = load_log_starts(db);
  BOOST_REQUIRE(rows.size() == 2u);
  for (const auto& r : rows) BOOST_TEST(r.topic == "t");
  BOOST_TEST(db.execAndGet("SELECT log_start_offset FROM partition_log_start WHERE topic='t' AND partition=0")
                 .getInt64() == 9);
}

BOOST_AUTO_TEST_SUITE_END()
