// One answer from parts that complete apart (common/fan_in.h).
#include <boost/test/unit_test.hpp>

#include <functional>
#include <memory>
#include <optional>

#include "common/fan_in.h"

using namespace kib;

BOOST_AUTO_TEST_SUITE(common_fan_in)

BOOST_AUTO_TEST_CASE(the_answer_runs_once_when_the_last_part_and_the_starter_are_done) {
  int answers = 0;
  FanIn<> in([&answers] { ++answers; });
  in.add();
  in.add(2);
  in.done();
  in.done();
  BOOST_TEST(answers == 0);
  in.done();  // the starter's own part: the three are in, but it still holds one
  BOOST_TEST(answers == 0);
  in.done();
  BOOST_TEST(answers == 1);
  in.done();  // one done() too many: nothing more
  BOOST_TEST(answers == 1);
  BOOST_TEST(in.pending() == 0u);
}

BOOST_AUTO_TEST_CASE(a_part_done_at_once_does_not_answer_before_the_later_parts_are_sent) {
  int answers = 0;
  FanIn<> in([&answers] { ++answers; });
  for (int i = 0; i < 3; ++i) {
    in.add();
    in.done();  // refused before any I/O
    BOOST_TEST(answers == 0);
  }
  in.done();
  BOOST_TEST(answers == 1);
}

BOOST_AUTO_TEST_CASE(a_request_with_no_parts_is_answered_by_the_starters_done) {
  int answers = 0;
  FanIn<> in([&answers] { ++answers; });
  in.done();
  BOOST_TEST(answers == 1);
}

BOOST_AUTO_TEST_CASE(the_answer_may_destroy_or_replace_the_fan_in_that_runs_it) {
  struct Holder {
    std::optional<FanIn<>> in;
  };
  auto holder = std::make_shared<Holder>();
  bool ran = false;
  holder->in.emplace([&ran, holder_ptr = holder.get()] {
    ran = true;
    holder_ptr->in.reset();  // the object holding it answers and goes
  });
  holder->in->done();
  BOOST_TEST(ran);
  BOOST_TEST(!holder->in.has_value());

  int passes = 0;
  std::function<void()> next_pass;
  FanIn<> pass([] {});
  next_pass = [&] {
    if (++passes < 3) {
      pass = FanIn<>(next_pass);  // a fetch's next pass, started from the last one's answer
      pass.done();
    }
  };
  pass = FanIn<>(next_pass);
  pass.done();
  BOOST_TEST(passes == 3);
}

BOOST_AUTO_TEST_SUITE_END()
