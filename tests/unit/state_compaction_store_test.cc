// Compaction's rows in SQLite (state/compaction_store.h, migrations/0015): a pass from `writing`
// to `committed` in one job, the index replaced per generation, recovery's view, DeleteTopics.
#include <boost/test/unit_test.hpp>

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>
#include <vector>

#include "state/compaction_store.h"
#include "state/state_store.h"
#include "state/topic_store.h"

using namespace kib;
using namespace kib::state;

namespace {

CompactionPassRow pass(const std::string& topic, int64_t generation, int64_t from, int64_t to) {
  CompactionPassRow p;
  p.topic = topic;
  p.partition = 0;
  p.generation = generation;
  p.generation_topic = "id-0-" + std::to_string(generation);
  if (generation > 1) p.previous_topic = "id-0-" + std::to_string(generation - 1);
  p.from_offset = from;
  p.to_offset = to;
  p.started_at = 1000 * generation;
  return p;
}

CompactionStateRow state_of(const CompactionPassRow& p, int64_t kept) {
  CompactionStateRow s;
  s.topic = p.topic;
  s.partition = p.partition;
  s.generation = p.generation;
  s.generation_topic = p.generation_topic;
  s.cleaner_point = p.to_offset;
  s.kept_records = kept;
  s.kept_bytes = kept * 100;
  s.last_pass_at = p.started_at + 5;
  s.last_pass_ms = 5;
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(state_compaction_store)

BOOST_AUTO_TEST_CASE(a_pass_goes_from_writing_to_committed_and_its_index_replaces_the_last) {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  BOOST_REQUIRE(migrate(db).ok());
  const CompactionPassRow first = pass("t", 1, 0, 1000);
  begin_compaction_pass(db, first);
  auto open = load_unfinished_compaction_passes(db);
  BOOST_REQUIRE(open.size() == 1u);
  BOOST_TEST(open[0].state == "writing");
  BOOST_TEST(!open[0].previous_topic.has_value());
  BOOST_TEST(load_compaction_states(db).empty());  // readers still use the live log

  commit_compaction_pass(db, state_of(first, 10), {{3, 0, 50}, {700, 5, 90}});
  open = load_unfinished_compaction_passes(db);
  BOOST_REQUIRE(open.size() == 1u);
  BOOST_TEST(open[0].state == "committed");  // recovery still owes the barrier and the deletes
  auto states = load_compaction_states(db);
  BOOST_REQUIRE(states.size() == 1u);
  BOOST_TEST(states[0].cleaner_point == 1000);
  BOOST_TEST(states[0].generation_topic == "id-0-1");
  BOOST_TEST(load_compaction_index(db, "t", 0, 1).size() == 2u);
  delete_compaction_pass(db, "t", 0, 1);
  BOOST_TEST(load_unfinished_compaction_passes(db).empty());

  const CompactionPassRow second = pass("t", 2, 1000, 1500);
  begin_compaction_pass(db, second);
  begin_compaction_pass(db, second);  // redone after a crash: one row
  BOOST_TEST(load_unfinished_compaction_passes(db).size() == 1u);
  BOOST_TEST(*load_unfinished_compaction_passes(db)[0].previous_topic == "id-0-1");
  commit_compaction_pass(db, state_of(second, 12), {{3, 0, 90}});
  BOOST_TEST(load_compaction_index(db, "t", 0, 1).empty());  // the old generation's index went
  auto idx = load_compaction_index(db, "t", 0, 2);
  BOOST_REQUIRE(idx.size() == 1u);
  BOOST_TEST(idx[0].max_timestamp == 90);
  BOOST_TEST(load_compaction_states(db)[0].generation == 2);
}

BOOST_AUTO_TEST_CASE(rows_go_with_their_topic) {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  BOOST_REQUIRE(migrate(db).ok());
  for (const std::string t : {"t", "u"}) {
    begin_compaction_pass(db, pass(t, 1, 0, 10));
    commit_compaction_pass(db, state_of(pass(t, 1, 0, 10), 1), {{0, 0, 1}});
  }
  delete_topic_everywhere(db, "u");
  auto states = load_compaction_states(db);
  BOOST_REQUIRE(states.size() == 1u);
  BOOST_TEST(states[0].topic == "t");
  BOOST_TEST(load_compaction_index(db, "u", 0, 1).empty());
  BOOST_TEST(load_unfinished_compaction_passes(db).size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
