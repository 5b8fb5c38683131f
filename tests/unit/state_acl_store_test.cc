// The acls table (state/acl_store.h, migrations/0007): a set of bindings in Kafka's names.
#include <boost/test/unit_test.hpp>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <vector>

#include "state/acl_store.h"
#include "state/state_store.h"

using namespace kib;
using namespace kib::state;

BOOST_AUTO_TEST_SUITE(state_acl_store)

BOOST_AUTO_TEST_CASE(acls_are_stored_once_and_deleted_exactly) {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  BOOST_REQUIRE(migrate(db).ok());
  const AclRow read{"TOPIC", "orders", "LITERAL", "User:alice", "*", "READ", "ALLOW"};
  const AclRow deny{"TOPIC", "orders", "LITERAL", "User:alice", "10.0.0.1", "READ", "DENY"};
  const AclRow group{"GROUP", "app-", "PREFIXED", "User:*", "*", "READ", "ALLOW"};
  BOOST_TEST(insert_acls(db, {read, deny}, 1000) == 2u);
  BOOST_TEST(insert_acls(db, {read, group}, 2000) == 1u);  // `read` is there already
  auto rows = load_acls(db);
  BOOST_REQUIRE(rows.size() == 3u);
  BOOST_TEST((std::find(rows.begin(), rows.end(), group) != rows.end()));
  // The first write's time stays: a repeated CreateAcls changes nothing.
  BOOST_TEST(db.execAndGet("SELECT created_at FROM acls WHERE permission = 'ALLOW' AND resource_type = 'TOPIC'")
                 .getInt64() == 1000);
  AclRow other_host = deny;
  other_host.host = "10.0.0.2";
  BOOST_TEST(delete_acls(db, {deny, other_host}) == 1u);
  rows = load_acls(db);
  BOOST_REQUIRE(rows.size() == 2u);
  BOOST_TEST((std::find(rows.begin(), rows.end(), deny) == rows.end()));
}

BOOST_AUTO_TEST_SUITE_END()
