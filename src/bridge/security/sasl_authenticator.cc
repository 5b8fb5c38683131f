#include "bridge/security/sasl_authenticator.h"

#include <spdlog/spdlog.h>

#include "common/guard.h"
#include "security/crypto.h"
#include "security/plain.h"
#include "state/credential_store.h"
#include "state/state_store.h"

namespace kib::bridge {
namespace {

SaslStepResult failed(std::string reason, bool tell_client = false) {
  SaslStepResult r;
  r.failure = security::SaslFailure{std::move(reason), tell_client};
  return r;
}

// A PLAIN password check on libuv's thread pool. The password is wiped once checked.
struct PlainCheck {
  uv_work_t req{};
  std::optional<security::PlainCredential> credential;  // nullopt: no such user
  int32_t dummy_iterations = 0;
  std::string password;
  bool verified = false;
  std::string error;  // an exception from OpenSSL
  std::function<void(PlainCheck&)> after;
};

void run_plain_check(uv_work_t* req) {
  auto* w = static_cast<PlainCheck*>(req->data);
  try {
    if (w->credential) {
      w->verified = security::verify_plain(*w->credential, w->password);
    } else {
      // No such user: hash anyway, so an unknown user takes as long to refuse as a wrong
      // password does.
      static const uint8_t kSalt[32] = {};
      (void)security::pbkdf2(security::Digest::kSha512, security::as_bytes(w->password), kSalt, w->dummy_iterations);
      w->verified = false;
    }
  } catch (const std::exception& e) {
    w->error = e.what();
  } catch (...) {
    w->error = "unknown exception";
  }
  security::wipe(w->password);
}

void after_plain_check(uv_work_t* req, int status) {
  std::unique_ptr<PlainCheck> w(static_cast<PlainCheck*>(req->data));
  if (status != 0 && w->error.empty()) w->error = uv_strerror(status);
  guard::run(guard::Boundary::kLoopTask, "PLAIN password check", [&] { w->after(*w); });
}

}  // namespace

SaslExchange::SaslExchange(security::SaslMechanism m) : mechanism_(m) {
  if (auto s = security::scram_mechanism(m)) scram_.emplace(*s);
}

SaslAuthenticator::SaslAuthenticator(state::StateStore& store, uv_loop_t* loop, const config::SaslConfig& config)
    : store_(store), loop_(loop), config_(config) {}

SaslAuthenticator::~SaslAuthenticator() = default;

std::optional<security::SaslMechanism> SaslAuthenticator::enabled(const std::string& name) const {
  for (const auto& m : config_.enabled_mechanisms)
    if (m == name) return security::parse_sasl_mechanism(name);
  return std::nullopt;
}

void SaslAuthenticator::finish(const std::shared_ptr<SaslExchange>& ex, SaslStepResult r, const StepDone& done) {
  ex->busy_ = false;
  if (r.failure) ex->failed_ = true;
  if (r.complete) ex->complete_ = true;
  done(std::move(r));
}

void SaslAuthenticator::step(const std::shared_ptr<SaslExchange>& ex, Bytes token, StepDone done) {
  if (ex->busy_ || ex->complete_ || ex->failed_)
    return finish(ex, failed("SASL token after the exchange " +
                             std::string(ex->busy_ ? "had a step under way" : ex->complete_ ? "completed" : "failed")),
                  done);
  if (!ex->scram_) return plain(ex, std::move(token), std::move(done));
  security::ScramServer& scram = *ex->scram_;
  if (scram.awaiting_client_first()) {
    security::SaslStep s = scram.receive_client_first(token);
    ex->claimed_ = scram.username();
    if (!s.ok()) return finish(ex, failed(s.failure->reason, s.failure->tell_client), done);
    return scram_first(ex, std::move(done));
  }
  security::SaslStep s = scram.receive_client_final(token);
  if (!s.ok()) return finish(ex, failed(s.failure->reason, s.failure->tell_client), done);
  // receive_client_final succeeds only with a verified proof.
  SaslStepResult r;
  r.response = std::move(s.response);
  r.complete = scram.complete();
  ex->username_ = scram.username();
  finish(ex, std::move(r), done);
}

void SaslAuthenticator::scram_first(const std::shared_ptr<SaslExchange>& ex, StepDone done) {
  ex->busy_ = true;
  auto row = std::make_shared<std::optional<state::ScramCredentialRow>>();
  const std::string user = ex->scram_->username();
  const std::string mechanism(security::scram_mechanism_name(ex->scram_->mechanism()));
  store_.write([row, user, mechanism](SQLite::Database& db) { *row = state::load_scram_credential(db, user, mechanism); },
               [this, alive = alive_.token(), ex, row, done = std::move(done)](Status st) {
                 if (!alive) return;
                 if (!st)
                   return finish(ex, failed("Authentication failed: Credentials could not be obtained (" +
                                            st.error().message + ")"),
                                 done);
                 std::optional<security::ScramCredential> credential;
                 if (*row)
                   credential = security::ScramCredential{(*row)->salt, (*row)->stored_key, (*row)->server_key,
                                                          (*row)->iterations};
                 security::SaslStep s = ex->scram_->server_first(credential, security::scram_server_nonce());
                 if (!s.ok()) return finish(ex, failed(s.failure->reason, s.failure->tell_client), done);
                 SaslStepResult r;
                 r.response = std::move(s.response);
                 finish(ex, std::move(r), done);
               });
}

void SaslAuthenticator::plain(const std::shared_ptr<SaslExchange>& ex, Bytes token, StepDone done) {
  security::PlainParse p = security::parse_plain(token);
  security::wipe(token);
  if (p.failure) return finish(ex, failed(p.failure->reason, true), done);
  ex->claimed_ = p.message.username;
  ex->busy_ = true;
  auto row = std::make_shared<std::optional<state::PlainCredentialRow>>();
  auto message = std::make_shared<security::PlainMessage>(std::move(p.message));
  const std::string user = message->username;
  store_.write(
      [row, user](SQLite::Database& db) { *row = state::load_plain_credential(db, user); },
      [this, alive = alive_.token(), ex, row, message, done = std::move(done)](Status st) mutable {
        if (!alive) return;
        if (!st) {
          security::wipe(message->password);
          return finish(ex, failed("Authentication failed: credentials for user could not be verified", true), done);
        }
        auto* w = new PlainCheck;
        w->req.data = w;
        if (*row) w->credential = security::PlainCredential{(*row)->salt, (*row)->hash, (*row)->iterations};
        w->dummy_iterations = config_.scram_iterations;
        w->password = std::move(message->password);
        security::wipe(message->password);
        w->after = [this, alive, ex, message, done = std::move(done)](PlainCheck& c) {
          if (!alive) return;
          if (!c.error.empty()) {
            spdlog::error("PLAIN password check failed: {}", c.error);
            return finish(ex, failed("Authentication failed: credentials for user could not be verified", true), done);
          }
          if (!c.verified) return finish(ex, failed("Authentication failed: Invalid username or password", true), done);
          if (auto f = security::check_plain_authzid(*message)) return finish(ex, failed(f->reason, true), done);
          ex->username_ = message->username;
          SaslStepResult r;
          r.complete = true;
          finish(ex, std::move(r), done);
        };
        if (int rc = uv_queue_work(loop_, &w->req, &run_plain_check, &after_plain_check); rc != 0) {
          std::unique_ptr<PlainCheck> owned(w);
          security::wipe(owned->password);
          finish(ex, failed(std::string("Authentication failed: credentials for user could not be verified (") +
                                uv_strerror(rc) + ")",
                            true),
                 done);
        }
      });
}

}  // namespace kib::bridge
