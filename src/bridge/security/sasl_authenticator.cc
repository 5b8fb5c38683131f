#include "bridge/security/sasl_authenticator.h"

#include <spdlog/spdlog.h>

#include <chrono>

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

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// A PLAIN password check, waiting in SaslAuthenticator::waiting_ or running on libuv's thread
// pool. The password is wiped once checked or dropped.
struct SaslAuthenticator::PasswordCheck {
  uv_work_t req{};
  std::optional<security::PlainCredential> credential;  // nullopt: no such user
  int32_t dummy_iterations = 0;
  std::string password;
  bool verified = false;
  std::string error;  // an exception from OpenSSL
  StillWanted wanted;
  std::function<void(PasswordCheck&)> after;
  ~PasswordCheck() { security::wipe(password); }
};

namespace {

using PlainCheck = SaslAuthenticator::PasswordCheck;

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

}  // namespace

SaslExchange::SaslExchange(security::SaslMechanism m) : mechanism_(m) {
  if (auto s = security::scram_mechanism(m)) scram_.emplace(*s);
}

SaslAuthenticator::SaslAuthenticator(state::StateStore& store, uv_loop_t* loop, const config::SaslConfig& config)
    : store_(store), loop_(loop), config_(config) {}

SaslAuthenticator::~SaslAuthenticator() {
  for (PasswordCheck* w : waiting_) delete w;
}

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

void SaslAuthenticator::step(const std::shared_ptr<SaslExchange>& ex, Bytes token, StepDone done, StillWanted wanted) {
  if (ex->busy_ || ex->complete_ || ex->failed_)
    return finish(ex, failed("SASL token after the exchange " +
                             std::string(ex->busy_ ? "had a step under way" : ex->complete_ ? "completed" : "failed")),
                  done);
  if (!ex->scram_) return plain(ex, std::move(token), std::move(done), std::move(wanted));
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

void SaslAuthenticator::plain(const std::shared_ptr<SaslExchange>& ex, Bytes token, StepDone done,
                              StillWanted wanted) {
  security::PlainParse p = security::parse_plain(token);
  security::wipe(token);
  if (p.failure) return finish(ex, failed(p.failure->reason, true), done);
  ex->claimed_ = p.message.username;
  if (checks_.pending >= config_.max_pending_password_checks) {
    security::wipe(p.message.password);
    ++checks_.refused;
    if (const int64_t now = steady_ms(); refusal_logged_ms_ == 0 || now - static_cast<int64_t>(refusal_logged_ms_) >= 10000) {
      refusal_logged_ms_ = static_cast<uint64_t>(now);
      spdlog::warn("SASL/PLAIN: {} password checks under way ([sasl] max_pending_password_checks); refusing more "
                   "logins until they finish ({} refused since start)",
                   checks_.pending, checks_.refused);
    }
    return finish(ex, failed("Authentication failed: too many logins under way, retry later", true), done);
  }
  ++checks_.pending;
  ex->busy_ = true;
  auto row = std::make_shared<std::optional<state::PlainCredentialRow>>();
  auto message = std::make_shared<security::PlainMessage>(std::move(p.message));
  const std::string user = message->username;
  store_.write(
      [row, user](SQLite::Database& db) { *row = state::load_plain_credential(db, user); },
      [this, alive = alive_.token(), ex, row, message, done = std::move(done),
       wanted = std::move(wanted)](Status st) mutable {
        if (!alive) return security::wipe(message->password);
        if (wanted && !wanted()) {
          // The connection closed while its credential was read: nothing to hash or answer.
          --checks_.pending;
          ++checks_.dropped;
          return security::wipe(message->password);
        }
        if (!st) {
          --checks_.pending;
          security::wipe(message->password);
          return finish(ex, failed("Authentication failed: credentials for user could not be verified", true), done);
        }
        auto w = std::make_unique<PasswordCheck>();
        w->req.data = w.get();
        if (*row) w->credential = security::PlainCredential{(*row)->salt, (*row)->hash, (*row)->iterations};
        w->dummy_iterations = config_.scram_iterations;
        w->password = std::move(message->password);
        security::wipe(message->password);
        w->wanted = std::move(wanted);
        w->after = [this, alive, ex, message, done = std::move(done)](PasswordCheck& c) {
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
        waiting_.push_back(w.release());
        run_password_checks();
      });
}

void SaslAuthenticator::run_password_checks() {
  while (running_ < kConcurrentPasswordChecks && !waiting_.empty()) {
    std::unique_ptr<PasswordCheck> w(waiting_.front());
    waiting_.pop_front();
    if (w->wanted && !w->wanted()) {
      // Its connection closed while it waited: nobody is left to answer.
      --checks_.pending;
      ++checks_.dropped;
      continue;
    }
    ++running_;
    w->after = [this, alive = alive_.token(), after = std::move(w->after)](PasswordCheck& c) {
      if (!alive) return;
      --running_;
      --checks_.pending;
      if (c.error.empty()) ++checks_.checked;
      after(c);
      run_password_checks();
    };
    PasswordCheck* raw = w.release();  // the thread pool's until its callback runs on the loop
    int rc = uv_queue_work(loop_, &raw->req, &run_plain_check, [](uv_work_t* req, int status) {
      std::unique_ptr<PasswordCheck> w(static_cast<PasswordCheck*>(req->data));
      if (status != 0 && w->error.empty()) w->error = uv_strerror(status);
      guard::run(guard::Boundary::kLoopTask, "PLAIN password check", [&] { w->after(*w); });
    });
    if (rc != 0) {
      std::unique_ptr<PasswordCheck> failed(raw);
      failed->error = uv_strerror(rc);
      return failed->after(*failed);  // runs the next ones itself
    }
  }
}

}  // namespace kib::bridge
