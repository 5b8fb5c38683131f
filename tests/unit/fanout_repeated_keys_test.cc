// repeated_keys (server/handlers/fanout.h): which entries of a fan-out request share their key,
// as ListOffsets needs to answer each occurrence of a partition named twice INVALID_REQUEST.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "server/handlers/fanout.h"

using kib::kafka::repeated_keys;

namespace {

using Key = std::pair<std::string, int32_t>;

std::vector<bool> marks(const std::vector<Key>& keys, bool colliding_hashes) {
  return repeated_keys(
      keys.size(),
      [&](size_t i) -> uint64_t {
        return colliding_hashes ? 7 : std::hash<std::string>{}(keys[i].first) ^ static_cast<uint64_t>(keys[i].second) * 31;
      },
      [&](size_t i, size_t j) { return keys[i] == keys[j]; });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fanout_repeated_keys)

BOOST_AUTO_TEST_CASE(every_occurrence_of_a_repeated_key_is_marked_and_nothing_else) {
  const std::vector<Key> keys{{"a", 0}, {"a", 1}, {"b", 0}, {"a", 0}, {"b", 1}, {"a", 0}, {"b", 1}};
  for (bool colliding : {false, true}) {
    const auto r = marks(keys, colliding);
    const std::vector<bool> want{true, false, false, true, true, true, true};
    BOOST_TEST(r == want, "colliding hashes: " << colliding);
  }
}

BOOST_AUTO_TEST_CASE(no_entries_and_200000_distinct_ones) {
  BOOST_TEST(marks({}, false).empty());
  std::vector<Key> keys;
  for (int32_t p = 0; p < 200'000; ++p) keys.push_back({"fan", p});
  keys.push_back({"fan", 199'999});
  const auto r = marks(keys, false);
  size_t marked = 0;
  for (bool b : r) marked += b;
  BOOST_TEST(marked == 2u);
  BOOST_TEST(r[199'999]);
  BOOST_TEST(r[200'000]);
}

BOOST_AUTO_TEST_SUITE_END()
