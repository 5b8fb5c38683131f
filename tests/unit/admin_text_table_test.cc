// The admin CLI's tables show client-chosen strings (group, member and client ids, topic
// names): escaped, so they cannot drive the operator's terminal, and aligned on what is shown.
#include <boost/test/unit_test.hpp>

#include <string>

#include "admin/text_table.h"

using kib::admin::TextTable;

BOOST_AUTO_TEST_SUITE(admin_text_table)

BOOST_AUTO_TEST_CASE(cells_with_control_characters_are_escaped_and_aligned) {
  TextTable t({"GROUP", "CLIENT-ID"});
  t.add({"g\x1b[2J", "c\nFORGED"});
  t.add({"plain", "x"});
  const std::string out = t.render();
  BOOST_TEST(out.find('\x1b') == std::string::npos);
  BOOST_TEST(out ==
             "GROUP     CLIENT-ID\n"
             "g\\x1b[2J  c\\x0aFORGED\n"
             "plain     x\n");
}

BOOST_AUTO_TEST_CASE(huge_cells_are_cut_with_their_size) {
  TextTable t({"GROUP"});
  t.add({std::string(40'000, 'g')});
  const std::string out = t.render();
  BOOST_TEST(out.size() < 2 * TextTable::kMaxCellBytes);
  BOOST_TEST(out.find("(40000 bytes)") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
