// One answer awaited from several parts that complete apart: a request's partitions, topics or
// resources, a fetch pass's reads, the topics a long poll re-checks. FanIn counts the parts still
// out and runs the answer once, when the last is in.
//
//   struct Call { Response resp; FanIn<> parts{[this] { send(resp); }}; };
//   auto call = std::make_shared<Call>();
//   for (auto& p : partitions) {
//     call->parts.add();
//     start(p, [call](...) { ...; call->parts.done(); });
//   }
//   call->parts.done();  // the starter's own part: everything has gone out
//
// The count starts at one, held by whoever sends the parts out and released by its own done()
// once they all have: a part that completes at once (refused before any I/O, answered from a
// cache) cannot run the answer while later parts are still to be sent, and a request with no
// parts is answered by that one done(). Loop thread only, like the callbacks it counts.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>

namespace kib {

template <typename Then = std::function<void()>>
class FanIn {
 public:
  explicit FanIn(Then then) : then_(std::move(then)) {}
  FanIn(FanIn&&) = default;
  FanIn& operator=(FanIn&&) = default;
  FanIn(const FanIn&) = delete;
  FanIn& operator=(const FanIn&) = delete;

  // `parts` more on their way.
  void add(size_t parts = 1) { pending_ += parts; }

  // One part is in; the last runs the answer, once. The answer is moved out before it runs, so
  // it may destroy this FanIn (the object holding it answers and goes) or replace it with a new
  // one (a fetch's next pass).
  void done() {
    if (pending_ == 0 || --pending_ > 0) return;
    Then then = std::move(then_);
    then();
  }

  size_t pending() const { return pending_; }

 private:
  Then then_;
  size_t pending_ = 1;
};

}  // namespace kib
