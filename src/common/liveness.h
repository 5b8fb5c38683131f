// The one liveness guard: lets a callback that may outlive its owner (a state store completion,
// an Iggy reply, a catalog answer) find out whether the owner still exists before touching it.
//
//   class Service { ... Liveness alive_; };
//   store_.write(job, [this, alive = alive_.token()](Status st) {
//     if (!alive) return;  // the service is gone
//     ...
//   });
//
// The owner holds a Liveness; it ends when the Liveness is destroyed (with its owner) or when
// end() is called, for an owner whose destructor does work its own callbacks must not see.
// Tokens are cheap to copy and never keep anything alive. The same holds for a call frame: a
// Liveness local to a function tells a callback whether that call is still on the stack.
// Loop thread only (like every owner that uses one).
#pragma once

#include <memory>

namespace kib {

class Liveness {
 public:
  class Token {
   public:
    Token() = default;  // never alive
    bool alive() const { return !flag_.expired(); }
    explicit operator bool() const { return alive(); }

   private:
    friend class Liveness;
    explicit Token(const std::shared_ptr<const char>& flag) : flag_(flag) {}
    std::weak_ptr<const char> flag_;
  };

  Liveness() : flag_(std::make_shared<const char>('\0')) {}
  ~Liveness() = default;
  Liveness(const Liveness&) = delete;
  Liveness& operator=(const Liveness&) = delete;

  Token token() const { return Token(flag_); }
  bool alive() const { return flag_ != nullptr; }
  // Ends now; every token reads not alive from here on. Idempotent.
  void end() { flag_.reset(); }

 private:
  std::shared_ptr<const char> flag_;
};

}  // namespace kib
