#include "bridge/security/scram_credentials.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>

#include "security/scram.h"
#include "state/credential_store.h"
#include "state/state_store.h"

namespace kib::bridge {
namespace {

using kafka::ErrorCode;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ScramControlManager.validateScramUsernameAndMechanism.
std::optional<ScramAlterResult> check_name_and_mechanism(const std::string& user, int8_t mechanism) {
  if (user.empty()) return ScramAlterResult{user, ErrorCode::kUnacceptableCredential, "Username must not be empty"};
  if (!security::scram_mechanism_from_type(mechanism))
    return ScramAlterResult{user, ErrorCode::kUnsupportedSaslMechanism, "Unknown SCRAM mechanism"};
  return std::nullopt;
}

std::string mechanism_name(int8_t type) {
  return std::string(security::scram_mechanism_name(*security::scram_mechanism_from_type(type)));
}

}  // namespace

void ScramCredentials::describe(std::optional<std::vector<std::string>> users,
                                std::function<void(Result<std::vector<ScramUserDescription>>)> done) {
  auto out = std::make_shared<std::vector<ScramUserDescription>>();
  store_.write(
      [out, users = std::move(users)](SQLite::Database& db) {
        out->clear();
        if (!users || users->empty()) {
          std::map<std::string, ScramUserDescription> by_user;
          for (const auto& c : state::list_scram_credentials(db, std::nullopt)) {
            auto m = security::parse_scram_mechanism(c.mechanism);
            if (!m) continue;
            auto& d = by_user[c.username];
            d.user = c.username;
            d.credentials.emplace_back(static_cast<int8_t>(*m), c.iterations);
          }
          for (auto& [_, d] : by_user) out->push_back(std::move(d));
          return;
        }
        std::map<std::string, int> count;
        for (const auto& u : *users) ++count[u];
        std::set<std::string> seen;
        for (const auto& u : *users) {
          if (!seen.insert(u).second) continue;
          ScramUserDescription d;
          d.user = u;
          if (count[u] > 1) {
            d.error = ErrorCode::kDuplicateResource;
            d.message = "Cannot describe SCRAM credentials for the same user twice in a single request: " + u;
          } else {
            for (const auto& c : state::list_scram_credentials(db, u))
              if (auto m = security::parse_scram_mechanism(c.mechanism))
                d.credentials.emplace_back(static_cast<int8_t>(*m), c.iterations);
            if (d.credentials.empty()) {
              d.error = ErrorCode::kResourceNotFound;
              d.message = "Attempt to describe a user credential that does not exist: " + u;
            }
          }
          out->push_back(std::move(d));
        }
      },
      [alive = alive_.token(), out, done = std::move(done)](Status st) {
        if (!alive) return;
        if (!st) return done(st.error());
        done(std::move(*out));
      });
}

namespace {

// ScramControlManager.alterCredentials: a user may appear once per request; the first error of a
// user is its answer and its later entries are ignored; accepted entries are applied by user, in
// request order, and a second entry of a user withdraws the first.
class AlterPlan {
 public:
  void add_deletions(SQLite::Database& db, const std::vector<ScramDeletion>& deletions) {
    for (const auto& d : deletions) {
      if (errors_.count(d.user)) continue;
      if (withdraw(to_delete_, delete_index_, d.user)) {
        refuse({d.user, ErrorCode::kDuplicateResource, kTwice});
      } else if (auto e = check_name_and_mechanism(d.user, d.mechanism)) {
        refuse(std::move(*e));
      } else if (!state::load_scram_credential(db, d.user, mechanism_name(d.mechanism))) {
        refuse({d.user, ErrorCode::kResourceNotFound, "Attempt to delete a user credential that does not exist"});
      } else {
        delete_index_[d.user] = to_delete_.size();
        to_delete_.push_back(&d);
      }
    }
  }

  void add_upsertions(const std::vector<ScramUpsertion>& upsertions) {
    for (const auto& u : upsertions) {
      if (errors_.count(u.user)) continue;
      if (withdraw(to_delete_, delete_index_, u.user) || withdraw(to_upsert_, upsert_index_, u.user)) {
        refuse({u.user, ErrorCode::kDuplicateResource, kTwice});
      } else if (auto e = check_name_and_mechanism(u.user, u.mechanism)) {
        refuse(std::move(*e));
      } else if (u.iterations < security::kScramMinIterations) {
        refuse({u.user, ErrorCode::kUnacceptableCredential, "Too few iterations"});
      } else if (u.iterations > security::kScramMaxIterations) {
        refuse({u.user, ErrorCode::kUnacceptableCredential, "Too many iterations"});
      } else if (u.salted_password.empty()) {
        // Kafka fails this one with UNKNOWN_SERVER_ERROR (an empty HMAC key); it is the client's
        // credential that is wrong.
        refuse({u.user, ErrorCode::kUnacceptableCredential, "Salted password must not be empty"});
      } else {
        upsert_index_[u.user] = to_upsert_.size();
        to_upsert_.push_back(&u);
      }
    }
  }

  // Writes the accepted entries; `out` gets their results, then the errors, in request order.
  void apply(SQLite::Database& db, int64_t now, std::vector<ScramAlterResult>& out) const {
    for (const ScramDeletion* d : to_delete_) {
      if (!d) continue;
      state::delete_scram_credential(db, d->user, mechanism_name(d->mechanism));
      out.push_back({d->user, ErrorCode::kNone, std::nullopt});
    }
    for (const ScramUpsertion* u : to_upsert_) {
      if (!u) continue;
      const auto m = *security::scram_mechanism_from_type(u->mechanism);
      security::ScramCredential c = security::scram_credential(m, u->salt, u->salted_password, u->iterations);
      state::upsert_scram_credential(
          db, state::ScramCredentialRow{u->user, mechanism_name(u->mechanism), c.salt, c.stored_key, c.server_key,
                                        c.iterations},
          now);
      out.push_back({u->user, ErrorCode::kNone, std::nullopt});
    }
    for (const auto& user : error_order_)
      if (auto it = errors_.find(user); it != errors_.end()) out.push_back(it->second);
  }

 private:
  static constexpr const char* kTwice = "A user credential cannot be altered twice in the same request";

  void refuse(ScramAlterResult r) {
    error_order_.push_back(r.user);
    errors_.emplace(r.user, std::move(r));
  }
  // An earlier accepted entry of `user` in `list`, withdrawn; false if there was none.
  template <typename Entry>
  static bool withdraw(std::vector<const Entry*>& list, std::map<std::string, size_t>& index, const std::string& user) {
    auto it = index.find(user);
    if (it == index.end()) return false;
    list[it->second] = nullptr;
    index.erase(it);
    return true;
  }

  std::map<std::string, ScramAlterResult> errors_;
  std::vector<std::string> error_order_;
  std::vector<const ScramDeletion*> to_delete_;
  std::vector<const ScramUpsertion*> to_upsert_;
  std::map<std::string, size_t> delete_index_, upsert_index_;
};

}  // namespace

void ScramCredentials::alter(std::vector<ScramDeletion> deletions, std::vector<ScramUpsertion> upsertions,
                             std::function<void(Result<std::vector<ScramAlterResult>>)> done) {
  auto out = std::make_shared<std::vector<ScramAlterResult>>();
  store_.write(
      [out, deletions = std::move(deletions), upsertions = std::move(upsertions)](SQLite::Database& db) mutable {
        out->clear();
        AlterPlan plan;
        plan.add_deletions(db, deletions);
        plan.add_upsertions(upsertions);
        plan.apply(db, now_ms(), *out);
        for (auto& u : upsertions) security::wipe(u.salted_password);
      },
      [alive = alive_.token(), out, done = std::move(done)](Status st) {
        if (!alive) return;
        if (!st) return done(st.error());
        done(std::move(*out));
      });
}

}  // namespace kib::bridge
