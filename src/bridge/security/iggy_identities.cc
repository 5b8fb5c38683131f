#include "bridge/security/iggy_identities.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "bridge/errors.h"
#include "common/text.h"
#include "iggy/errors.h"
#include "state/principal_store.h"
#include "state/state_store.h"

namespace kib::bridge {
namespace {

using kafka::ErrorCode;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// 32 hex digits from OpenSSL's RNG: the password of an Iggy user the bridge creates.
std::optional<std::string> random_password() {
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof(raw)) != 1) return std::nullopt;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : raw) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

iggy::Credentials credentials_of(const state::PrincipalIggyUser& row) {
  if (row.personal_access_token) return iggy::Credentials::personal_access_token(*row.personal_access_token);
  return iggy::Credentials::password_login(row.iggy_username, row.iggy_password.value_or(""));
}

}  // namespace

iggy::Permissions iggy_permissions_for(const security::KafkaPrincipal& principal, uint32_t stream_id,
                                       const std::vector<std::pair<std::string, uint32_t>>& topics,
                                       const TopicRightsFn& rights) {
  iggy::Permissions p;
  iggy::StreamPermissions sp;
  for (const auto& [name, id] : topics) {
    const TopicRights r = rights(principal, name);
    iggy::TopicPermissions tp;
    tp.manage_topic = r.manage;
    tp.read_topic = r.read;
    tp.poll_messages = r.read;
    tp.send_messages = r.write;
    if (tp != iggy::TopicPermissions{}) sp.topics[id] = tp;
  }
  p.streams[stream_id] = std::move(sp);
  return p;
}

std::string created_iggy_username(const security::KafkaPrincipal& principal) { return "kafka." + principal.name; }

IggyIdentities::IggyIdentities(uv_loop_t* loop, const config::Config& config, state::StateStore& state,
                               iggy::IggyClient bridge, iggy::PoolConfig base)
    : loop_(loop),
      config_(config),
      state_(state),
      bridge_(bridge),
      pools_(loop, std::move(base)),
      shared_(std::make_shared<IggyIdentity>()),
      tasks_(loop) {}

IggyIdentities::~IggyIdentities() { alive_.end(); }

void IggyIdentities::resolve(const security::KafkaPrincipal& principal,
                             std::function<void(Result<IggyIdentityRef>)> cb) {
  if (!per_principal()) {
    tasks_.post([cb = std::move(cb), id = shared_] { cb(id); });
    return;
  }
  const std::string key = principal.str();
  auto& waiting = pending_[key];
  waiting.push_back(std::move(cb));
  if (waiting.size() == 1) lookup(key, principal);  // others join the lookup in flight
}

void IggyIdentities::lookup(const std::string& key, const security::KafkaPrincipal& principal) {
  auto row = std::make_shared<std::optional<state::PrincipalIggyUser>>();
  state_.write([row, key](SQLite::Database& db) { *row = state::load_principal_iggy_user(db, key); },
               [this, alive = alive_.token(), key, principal, row](Status s) {
                 if (!alive) return;
                 if (!s)
                   return finish(key, kafka_error(ErrorCode::kUnknownServerError,
                                                  "reading the Iggy user of " + key + ": " + s.error().message));
                 found(key, principal, std::move(*row));
               });
}

void IggyIdentities::found(const std::string& key, const security::KafkaPrincipal& principal,
                           std::optional<state::PrincipalIggyUser> row) {
  if (row) return use_row(key, principal, *row);
  switch (config_.principals.unmapped) {
    case config::PrincipalsConfig::Unmapped::kShared:
      return finish(key, shared_);
    case config::PrincipalsConfig::Unmapped::kCreate:
      return create_user(key, principal);
    case config::PrincipalsConfig::Unmapped::kRefuse:
      break;
  }
  ++stats_.refused;
  spdlog::warn("principals: {} has no Iggy user ([principals] unmapped = \"refuse\"); map one with "
               "`kafka-iggy-bridge principals map {} --iggy-user NAME --password-file FILE`",
               esc(key), esc(key));
  finish(key, kafka_error(ErrorCode::kTopicAuthorizationFailed, "principal " + key + " has no Iggy user"));
}

void IggyIdentities::create_user(const std::string& key, const security::KafkaPrincipal& principal) {
  auto password = random_password();
  if (!password) return finish(key, kafka_error(ErrorCode::kUnknownServerError, "no random bytes for a password"));
  state::PrincipalIggyUser row;
  row.principal = key;
  row.iggy_username = created_iggy_username(principal);
  row.iggy_password = *password;
  row.created_by_bridge = true;
  // The mapping is durable before the Iggy user exists: a crash in between leaves a mapping whose
  // user use_row() creates, never an Iggy user whose password nobody knows.
  state_.write([row](SQLite::Database& db) { state::upsert_principal_iggy_user(db, row, now_ms()); },
               [this, alive = alive_.token(), key, principal, row](Status s) {
                 if (!alive) return;
                 if (!s)
                   return finish(key, kafka_error(ErrorCode::kUnknownServerError,
                                                  "storing the Iggy user of " + key + ": " + s.error().message));
                 use_row(key, principal, row);
               });
}

void IggyIdentities::use_row(const std::string& key, const security::KafkaPrincipal& principal,
                             const state::PrincipalIggyUser& row) {
  auto with_user = [this, key, principal, row] {
    // Its permissions are written before its first use, so a new mapping never starts with
    // rights the ACLs do not give (nor without the ones they do).
    auto use = [this, key, row](bool) {
      const iggy::Credentials creds = credentials_of(row);
      auto& slot = by_credentials_[creds.identity_key()];
      if (!slot) {
        iggy::IggyPool& pool = pools_.pool_for(creds, config_.principals.pool_size);
        pool.start();
        slot = std::make_shared<IggyIdentity>(IggyIdentity{&pool, row.iggy_username});
        spdlog::info("principals: {} runs as Iggy user {}", esc(key), esc(row.iggy_username));
      }
      ++stats_.resolved;
      finish(key, slot);
    };
    if (syncs_permissions())
      sync_one(principal, row.iggy_username, use);
    else
      use(true);
  };
  if (!row.created_by_bridge) return with_user();
  // A user the bridge made: make sure it exists (a crash may have come between the mapping and
  // the user, or an operator may have deleted it).
  bridge_.get_user(iggy::Identifier::named(row.iggy_username),
                   [this, alive = alive_.token(), key, row, with_user](Result<std::optional<iggy::UserInfo>> r) {
                     if (!alive) return;
                     if (!r)
                       return finish(key, kafka_error(to_kafka_error(r.error()),
                                                      "looking up Iggy user " + row.iggy_username + ": " +
                                                          r.error().message));
                     if (*r) return with_user();
                     bridge_.create_user(row.iggy_username, *row.iggy_password, iggy::UserStatus::kActive,
                                         std::nullopt,
                                         [this, alive, key, row, with_user](Result<iggy::UserInfo> c) {
                                           if (!alive) return;
                                           if (!c) {
                                             spdlog::error("principals: cannot create Iggy user {} for {}: {}",
                                                           esc(row.iggy_username), esc(key), c.error().message);
                                             return finish(key, kafka_error(ErrorCode::kTopicAuthorizationFailed,
                                                                            "cannot create Iggy user " +
                                                                                row.iggy_username));
                                           }
                                           ++stats_.created_users;
                                           spdlog::info("principals: created Iggy user {} for {}",
                                                        esc(row.iggy_username), esc(key));
                                           with_user();
                                         });
                   });
}

void IggyIdentities::finish(const std::string& key, Result<IggyIdentityRef> r) {
  auto it = pending_.find(key);
  if (it == pending_.end()) return;
  auto waiting = std::move(it->second);
  pending_.erase(it);
  for (auto& cb : waiting) cb(r);
}

void IggyIdentities::set_rights(TopicRightsFn rights, std::function<bool()> active) {
  rights_ = std::move(rights);
  rights_active_ = std::move(active);
}

void IggyIdentities::use_authorizer(const Authorizer& authorizer) {
  set_rights(
      [&authorizer](const security::KafkaPrincipal& p, const std::string& topic) {
        using Op = security::AclOperation;
        // "" is no host: only ACLs whose host is "*" apply (Authorizer::allowed).
        auto may = [&](Op op) { return authorizer.allowed(p, "", op, security::ResourceType::kTopic, topic); };
        TopicRights r;
        r.read = may(Op::kRead);
        r.write = may(Op::kWrite);
        r.manage = r.read && r.write && may(Op::kAlter) && may(Op::kDelete);
        return r;
      },
      [&authorizer] { return authorizer.enabled(); });
}

bool IggyIdentities::syncs_permissions() const {
  return per_principal() && rights_ && config_.principals.sync_iggy_permissions && (!rights_active_ || rights_active_());
}

void IggyIdentities::sync_all() {
  if (!syncs_permissions()) return;
  if (sync_running_) {
    sync_again_ = true;
    return;
  }
  sync_running_ = true;
  tasks_.post([this] { run_sync(); });
}

void IggyIdentities::run_sync() {
  auto rows = std::make_shared<std::vector<state::PrincipalIggyUser>>();
  state_.write([rows](SQLite::Database& db) { *rows = state::load_principal_iggy_users(db); },
               [this, alive = alive_.token(), rows](Status s) {
                 if (!alive) return;
                 auto again = [this] {
                   sync_running_ = false;
                   if (sync_again_) {
                     sync_again_ = false;
                     sync_all();
                   }
                 };
                 if (!s) {
                   ++stats_.permission_sync_failures;
                   spdlog::error("principals: permission sync: reading the mapped users: {}", s.error().message);
                   return again();
                 }
                 sync_users(std::move(*rows), again);
               });
}

void IggyIdentities::sync_users(std::vector<state::PrincipalIggyUser> rows, std::function<void()> done) {
  if (rows.empty()) return done();
  state::PrincipalIggyUser row = std::move(rows.back());
  rows.pop_back();
  security::KafkaPrincipal principal;
  if (auto colon = row.principal.find(':'); colon != std::string::npos)
    principal = security::KafkaPrincipal{row.principal.substr(0, colon), row.principal.substr(colon + 1)};
  sync_one(principal, row.iggy_username,
           [this, alive = alive_.token(), rows = std::move(rows), done = std::move(done)](bool) mutable {
             if (!alive) return;
             sync_users(std::move(rows), std::move(done));
           });
}

void IggyIdentities::sync_one(const security::KafkaPrincipal& principal, const std::string& iggy_user,
                              std::function<void(bool)> done) {
  const std::string stream = config_.iggy.stream;
  bridge_.get_stream(
      iggy::Identifier::named(stream),
      [this, alive = alive_.token(), principal, iggy_user, done](Result<std::optional<iggy::StreamInfo>> r) {
        if (!alive) return;
        auto failed = [&](const std::string& why) {
          ++stats_.permission_sync_failures;
          spdlog::error("principals: permissions of Iggy user {} ({}) not written: {}", esc(iggy_user),
                        esc(principal.str()), why);
          done(false);
        };
        if (!r) return failed(r.error().message);
        if (!*r) return failed("stream " + config_.iggy.stream + " not found");
        if (!rights_) return done(false);  // the rights function went (shutdown)
        std::vector<std::pair<std::string, uint32_t>> topics;
        for (const auto& t : (*r)->topics) topics.emplace_back(t.name, t.id);
        const iggy::Permissions perms = iggy_permissions_for(principal, (*r)->id, topics, rights_);
        bridge_.update_permissions(iggy::Identifier::named(iggy_user), perms,
                                   [this, alive, principal, iggy_user, done](Result<Unit> u) {
                                     if (!alive) return;
                                     if (!u) {
                                       ++stats_.permission_sync_failures;
                                       spdlog::error("principals: permissions of Iggy user {} ({}) not written: {}",
                                                     esc(iggy_user), esc(principal.str()), u.error().message);
                                       return done(false);
                                     }
                                     ++stats_.permission_syncs;
                                     spdlog::debug("principals: permissions of Iggy user {} written from the ACLs of {}",
                                                   esc(iggy_user), esc(principal.str()));
                                     done(true);
                                   });
      });
}

void IggyIdentities::close(std::function<void()> done) { pools_.close(std::move(done)); }

IggyIdentityStats IggyIdentities::stats() const {
  IggyIdentityStats s = stats_;
  s.pools = pools_.identities();
  return s;
}

}  // namespace kib::bridge
