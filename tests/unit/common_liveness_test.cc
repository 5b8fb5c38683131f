// The one liveness guard (common/liveness.h).
#include <boost/test/unit_test.hpp>

#include <functional>
#include <memory>
#include <optional>

#include "common/liveness.h"

using namespace kib;

BOOST_AUTO_TEST_SUITE(common_liveness)

BOOST_AUTO_TEST_CASE(a_token_is_alive_while_its_owner_is) {
  std::optional<Liveness> owner;
  owner.emplace();
  Liveness::Token t = owner->token();
  Liveness::Token copy = t;
  BOOST_TEST(owner->alive());
  BOOST_TEST(t.alive());
  BOOST_TEST(static_cast<bool>(copy));
  owner.reset();
  BOOST_TEST(!t.alive());
  BOOST_TEST(!copy);
}

BOOST_AUTO_TEST_CASE(end_kills_every_token_before_the_owner_is_gone) {
  Liveness owner;
  Liveness::Token before = owner.token();
  owner.end();
  owner.end();  // idempotent
  BOOST_TEST(!owner.alive());
  BOOST_TEST(!before.alive());
  BOOST_TEST(!owner.token().alive());  // a token taken after end() is dead too
}

BOOST_AUTO_TEST_CASE(a_default_token_is_never_alive) { BOOST_TEST(!Liveness::Token{}.alive()); }

BOOST_AUTO_TEST_CASE(a_callback_that_outlives_its_owner_sees_it_gone) {
  struct Service {
    int calls = 0;
    Liveness alive_;
    std::function<void()> callback() {
      return [this, alive = alive_.token()] {
        if (!alive) return;
        ++calls;
      };
    }
  };
  auto s = std::make_unique<Service>();
  auto cb = s->callback();
  cb();
  BOOST_TEST(s->calls == 1);
  s.reset();
  cb();  // would touch freed memory without the guard (ASan build)
}

BOOST_AUTO_TEST_CASE(a_local_liveness_tells_whether_the_call_is_still_on_the_stack) {
  std::function<bool()> inside;
  auto call = [&] {
    Liveness in_call;
    inside = [t = in_call.token()] { return t.alive(); };
    return inside();
  };
  BOOST_TEST(call());
  BOOST_TEST(!inside());
}

BOOST_AUTO_TEST_SUITE_END()
