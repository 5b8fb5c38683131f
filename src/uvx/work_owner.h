// Who work on the loop is done for: the Kafka connection whose request caused it (its id), 0 for
// the bridge's own work (catalog refreshes, lag metrics, group timers, ...). The IggyPool queues
// each owner's requests in a FIFO of its own and serves the owners round-robin, bounds how many
// one owner may queue, and drops an owner's queued cancellable requests when its connection
// closes.
//
// The owner is ambient, like a logging context: OwnerScope sets it for the code it encloses,
// IggyPool::submit reads it, and uv::Tasks, uv::Timer and the pool's reply callbacks carry it
// over to the continuations they run, so work a request starts stays its owner's across
// callbacks. Work shared between owners (a coalesced refresh) is charged to whoever started it,
// which is why only requests marked cancellable (a read nobody else waits for) are ever dropped.
// Loop thread only.
#pragma once

#include <cstdint>

namespace kib::uv {

struct WorkOwner {
  uint64_t id = 0;           // 0 = the bridge itself
  bool cancellable = false;  // requests submitted now may be dropped when the owner goes away
};

inline WorkOwner& current_owner() {
  thread_local WorkOwner owner;
  return owner;
}

// Sets the ambient owner until the end of the scope.
class OwnerScope {
 public:
  explicit OwnerScope(WorkOwner owner) : saved_(current_owner()) { current_owner() = owner; }
  explicit OwnerScope(uint64_t id) : OwnerScope(WorkOwner{id, false}) {}
  ~OwnerScope() { current_owner() = saved_; }
  OwnerScope(const OwnerScope&) = delete;
  OwnerScope& operator=(const OwnerScope&) = delete;

 private:
  WorkOwner saved_;
};

// `fn` wrapped to run as the current owner's work (not cancellable), wherever it is called from;
// `fn` itself when the current owner is the bridge.
template <typename Fn>
Fn carry_owner(Fn fn) {
  const WorkOwner owner = current_owner();
  if (owner.id == 0 || !fn) return fn;
  return [owner, fn = std::move(fn)] {
    OwnerScope scope(WorkOwner{owner.id, false});
    fn();
  };
}

}  // namespace kib::uv
