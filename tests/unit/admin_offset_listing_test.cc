// `offsets import` input: CSV files and kafka-consumer-groups --describe listings.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>

#include "admin/offset_listing.h"
#include "admin/text_table.h"

using namespace kib::admin;

namespace {

std::vector<OffsetRow> parse_ok(std::string_view text, ListingFormat f = ListingFormat::kAuto,
                                std::optional<std::string> group = std::nullopt) {
  auto r = parse_offset_listing(text, f, group);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  return *r;
}

std::string parse_error(std::string_view text, ListingFormat f = ListingFormat::kAuto,
                        std::optional<std::string> group = std::nullopt) {
  auto r = parse_offset_listing(text, f, group);
  BOOST_REQUIRE(!r.ok());
  return r.error().message;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(admin_offset_listing)

BOOST_AUTO_TEST_CASE(four_column_csv_with_header_comments_and_quoted_metadata) {
  auto rows = parse_ok(
      "# exported from kafka-prod\n"
      "group,topic,partition,offset\n"
      "\n"
      "billing,orders,0,42\n"
      "billing , orders , 1 , 7\r\n"
      "audit,payments,3,0,\"pos=1, \"\"tz\"\"=Z\"\n");
  BOOST_REQUIRE_EQUAL(rows.size(), 3u);
  BOOST_TEST(rows[0].group == "billing");
  BOOST_TEST(rows[0].topic == "orders");
  BOOST_TEST(rows[0].partition == 0);
  BOOST_TEST(rows[0].offset == 42);
  BOOST_TEST(!rows[0].metadata.has_value());
  BOOST_TEST(rows[0].line == 4u);
  BOOST_TEST(rows[1].topic == "orders");
  BOOST_TEST(rows[1].offset == 7);
  BOOST_TEST(rows[2].metadata.value() == "pos=1, \"tz\"=Z");
}

BOOST_AUTO_TEST_CASE(three_column_csv_is_kafka_reset_offsets_export_and_needs_a_group) {
  // kafka-consumer-groups --reset-offsets --export writes topic,partition,offset for one group.
  const std::string text = "orders,0,5\norders,1,9\n";
  BOOST_TEST(parse_error(text).find("need --group") != std::string::npos);
  auto rows = parse_ok(text, ListingFormat::kAuto, "billing");
  BOOST_REQUIRE_EQUAL(rows.size(), 2u);
  BOOST_TEST(rows[1].group == "billing");
  BOOST_TEST(rows[1].partition == 1);
  BOOST_TEST(rows[1].offset == 9);
}

BOOST_AUTO_TEST_CASE(group_option_keeps_only_that_groups_rows) {
  auto rows = parse_ok("a,t,0,1\nb,t,0,2\na,t,1,3\n", ListingFormat::kCsv, "a");
  BOOST_REQUIRE_EQUAL(rows.size(), 2u);
  BOOST_TEST(rows[0].offset == 1);
  BOOST_TEST(rows[1].offset == 3);
}

BOOST_AUTO_TEST_CASE(csv_errors_name_the_line_and_the_field) {
  BOOST_TEST(parse_error("g,t,0,1\ng,t,x,1\n") == "line 2: partition \"x\" is not a number");
  BOOST_TEST(parse_error("g,t,0,1\ng,t,1,ten\n") == "line 2: offset \"ten\" is not a number");
  BOOST_TEST(parse_error("g,t,0,-5\n") == "line 1: offset -5 is negative");
  BOOST_TEST(parse_error("g,t,-1,5\n") == "line 1: partition -1 is negative");
  BOOST_TEST(parse_error("g,,0,5\n") == "line 1: empty topic name");
  BOOST_TEST(parse_error("g,t\n").find("line 1: expected group,topic,partition,offset") == 0);
  BOOST_TEST(parse_error("g,t,0,5,\"open\n") == "line 1: unterminated quoted field");
  BOOST_TEST(parse_error("g,t,0,5\ng,t,0,6\n") == "line 2: group g topic t partition 0 already listed on line 1");
  BOOST_TEST(parse_error("g,t,0,99999999999999999999\n").find("is not a number") != std::string::npos);
}

// What kafka-consumer-groups 4.1 prints for --describe of two groups, one of them without
// active members (captured from a Kafka 4.1.0 broker; names shortened).
const char* kDescribeListing = R"(
Consumer group 'audit' has no active members.

GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID
audit           payments        0          12              20              8               -               -               -
audit           payments        1          -               4               -               -               -               -

GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID                                                   HOST            CLIENT-ID
billing         orders          0          5               5               0               rdkafka-6c1ae5b3-7d0e-4b7e-9f55-2f7b0b4d1c2a                  /127.0.0.1      rdkafka
billing         orders          1          9               10              1               rdkafka-6c1ae5b3-7d0e-4b7e-9f55-2f7b0b4d1c2a                  /127.0.0.1      rdkafka
)";

BOOST_AUTO_TEST_CASE(describe_listing_of_several_groups_skips_partitions_without_commits) {
  auto rows = parse_ok(kDescribeListing);
  BOOST_REQUIRE_EQUAL(rows.size(), 3u);
  BOOST_TEST(rows[0].group == "audit");
  BOOST_TEST(rows[0].topic == "payments");
  BOOST_TEST(rows[0].offset == 12);
  BOOST_TEST(rows[1].group == "billing");
  BOOST_TEST(rows[1].partition == 0);
  BOOST_TEST(rows[2].offset == 9);
  BOOST_TEST(rows[2].line == 10u);
  auto billing = parse_ok(kDescribeListing, ListingFormat::kDescribe, "billing");
  BOOST_TEST(billing.size() == 2u);
}

BOOST_AUTO_TEST_CASE(describe_listing_is_detected_and_bad_numbers_are_errors) {
  BOOST_TEST(parse_ok("GROUP TOPIC PARTITION CURRENT-OFFSET\ng t 0 3\n").size() == 1u);
  BOOST_TEST(parse_error("GROUP TOPIC PARTITION CURRENT-OFFSET\ng t 0 3x\n") ==
             "line 2: CURRENT-OFFSET \"3x\" is not a number");
  // Lines that are not rows (warnings, messages) are skipped, not misread.
  BOOST_TEST(parse_ok("GROUP TOPIC PARTITION CURRENT-OFFSET\nWarning: something happened here\n").empty());
  // A describe listing read as CSV is refused line by line.
  BOOST_TEST(!parse_offset_listing(kDescribeListing, ListingFormat::kCsv, std::nullopt).ok());
}

BOOST_AUTO_TEST_CASE(our_own_groups_describe_output_can_be_imported_again) {
  TextTable t({"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
               "CLIENT-ID"});
  t.add({"g", "orders", "0", "17", "20", "3", "-", "-", "-"});
  t.add({"g", "orders", "1", "-", "20", "-", "m-1", "/10.0.0.1", "c"});
  auto rows = parse_ok("Consumer group 'g': Empty, 0 members\n\n" + t.render());
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_TEST(rows[0].offset == 17);
}

BOOST_AUTO_TEST_CASE(text_table_pads_columns_by_their_widest_cell) {
  TextTable t({"A", "LONG-HEADER", "C"});
  t.add({"value", "x", "z"});
  BOOST_TEST(t.render() == "A      LONG-HEADER  C\nvalue  x            z\n");
  BOOST_TEST(t.rows() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
