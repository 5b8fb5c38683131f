// The SASL exchanges of the bridge's SASL listeners (docs/security.md "SASL"): SCRAM-SHA-256,
// SCRAM-SHA-512 and PLAIN against the credentials in the state database. A user's credential
// is read at each authentication, through the state store's thread, so what `users add` or
// AlterUserScramCredentials changed applies to the next login without a restart. PLAIN
// passwords are checked (PBKDF2, thousands of HMACs) on libuv's thread pool: the loop only
// parses messages and computes a SCRAM proof's few HMACs.
#pragma once

#include <uv.h>

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

class SaslAuthenticator {
 public:
  using StepDone = std::function<void(SaslStepResult)>;

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
  // authenticator is destroyed first.
  void step(const std::shared_ptr<SaslExchange>& exchange, Bytes token, StepDone done);

 private:
  void scram_first(const std::shared_ptr<SaslExchange>& ex, StepDone done);
  void plain(const std::shared_ptr<SaslExchange>& ex, Bytes token, StepDone done);
  void finish(const std::shared_ptr<SaslExchange>& ex, SaslStepResult r, const StepDone& done);

  state::StateStore& store_;
  uv_loop_t* loop_;
  config::SaslConfig config_;
  Liveness alive_;
};

}  // namespace kib::bridge
