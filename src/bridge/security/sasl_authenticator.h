// The SASL exchanges of the bridge's SASL listeners (docs/security.md "SASL"): SCRAM-SHA-256,
// SCRAM-SHA-512 and PLAIN against the credentials in the state database. A user's credential
// is read at each authentication, through the state store's thread, so what `users add` or
// AlterUserScramCredentials changed applies to the next login without a restart. PLAIN
// passwords are checked (PBKDF2, thousands of HMACs) on libuv's thread pool: the loop only
// parses messages and computes a SCRAM proof's few HMACs.
//
// A PLAIN check costs thousands of times what Kafka's PLAIN does (Kafka compares cleartext
// passwords; the bridge stores only salted hashes), so checks are bounded: a connection has at
// most one under way (SaslExchange::busy), all connections together [sasl]
// max_pending_password_checks (from the credential read to the hash's end); one more is refused
// at once. At most kConcurrentPasswordChecks hash at a time, so libuv's thread pool (DNS
// lookups, TLS reloads) always has threads free; the others wait in order, and one whose
// connection closed meanwhile is dropped before it is hashed.
#pragma once

#include <uv.h>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/liveness.h"
#include "config/config.h"
#include "security/sasl.h"
#include "security/scram.h"

namespace kib::state {
class StateStore;
}

namespace kib::bridge {

// One exchange on one connection, from SaslHandshake to success or failure: the mechanism the
// client chose and that mechanism's server state. It is complete() only once the client proved
// it knows the password (a verified SCRAM proof, a PLAIN password that hashed to the stored
// hash); every failure is final.
class SaslExchange {
 public:
  explicit SaslExchange(security::SaslMechanism m);

  security::SaslMechanism mechanism() const { return mechanism_; }
  bool complete() const { return complete_; }
  bool failed() const { return failed_; }
  // A step is being evaluated (a credential being read, a password being hashed): the client
  // must wait for its answer before sending the next token.
  bool busy() const { return busy_; }
  // The authenticated user, once complete().
  const std::string& username() const { return username_; }
  // The user the client named (for the log), once its first message parsed.
  const std::string& claimed_username() const { return claimed_; }

 private:
  friend class SaslAuthenticator;
  security::SaslMechanism mechanism_;
  std::optional<security::ScramServer> scram_;
  bool complete_ = false;
  bool failed_ = false;
  bool busy_ = false;
  std::string username_;
  std::string claimed_;
};

// The outcome of one step: bytes for the client, and whether the exchange is now complete or
// failed (then `failure` says why).
struct SaslStepResult {
  Bytes response;
  bool complete = false;
  std::optional<security::SaslFailure> failure;
};

// PLAIN password checks since start, and now.
struct PasswordCheckStats {
  uint64_t checked = 0;   // hashed
  uint64_t refused = 0;   // refused at once: max_pending_password_checks were under way
  uint64_t dropped = 0;   // their connection closed before they were hashed
  size_t pending = 0;     // under way now (reading the credential, waiting, hashing)
};

class SaslAuthenticator {
 public:
  using StepDone = std::function<void(SaslStepResult)>;
  // Whether the step's answer is still wanted (its connection is open); a PLAIN check that is
  // not is dropped before it is hashed, and `done` is not called.
  using StillWanted = std::function<bool()>;
  static constexpr size_t kConcurrentPasswordChecks = 2;
  struct PasswordCheck;  // one PLAIN check, waiting or hashing

  SaslAuthenticator(state::StateStore& store, uv_loop_t* loop, const config::SaslConfig& config);
  ~SaslAuthenticator();
  SaslAuthenticator(const SaslAuthenticator&) = delete;
  SaslAuthenticator& operator=(const SaslAuthenticator&) = delete;

  // [sasl] enabled_mechanisms, in the configured order (what SaslHandshake answers).
  const std::vector<std::string>& enabled_mechanisms() const { return config_.enabled_mechanisms; }
  // The enabled mechanism called `name`, if any.
  std::optional<security::SaslMechanism> enabled(const std::string& name) const;

  // Evaluates the client's next token of `exchange` (which must not be busy(), complete() or
  // failed()). `done` runs on the loop: at once for what needs no credential, else once the
  // credential was read (and, for PLAIN, the password checked). It is not called if this
  // authenticator is destroyed first, nor for a PLAIN check dropped because `wanted` said no.
  void step(const std::shared_ptr<SaslExchange>& exchange, Bytes token, StepDone done,
            StillWanted wanted = nullptr);

  const PasswordCheckStats& password_checks() const { return checks_; }
  // SIGHUP: [sasl] max_pending_password_checks applies to the next check.
  void set_max_pending_password_checks(uint32_t n) { config_.max_pending_password_checks = n; }

 private:
  void scram_first(const std::shared_ptr<SaslExchange>& ex, StepDone done);
  void plain(const std::shared_ptr<SaslExchange>& ex, Bytes token, StepDone done, StillWanted wanted);
  void finish(const std::shared_ptr<SaslExchange>& ex, SaslStepResult r, const StepDone& done);
  // Starts queued PLAIN checks while fewer than kConcurrentPasswordChecks run.
  void run_password_checks();
  std::deque<PasswordCheck*> waiting_;  // owned; in arrival order
  size_t running_ = 0;
  PasswordCheckStats checks_;
  uint64_t refusal_logged_ms_ = 0;

  state::StateStore& store_;
  uv_loop_t* loop_;
  config::SaslConfig config_;
  Liveness alive_;
};

}  // namespace kib::bridge
