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

// Iggy's answers to a login that mean "these credentials are not this user's" (rather than "the
// login could not be tried").
bool login_refused(const Error& e) {
  if (e.domain != ErrorDomain::kIggy) return false;
  switch (e.code) {
    case iggy::code::kUnauthenticated:
    case iggy::code::kInvalidCredentials:
    case iggy::code::kInvalidUsername:
    case iggy::code::kUserInactive:
      return true;
    default:
      return false;
  }
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

iggy::Permissions merge_iggy_permissions(const iggy::Permissions& current, uint32_t stream_id,
                                         const iggy::Permissions& owned) {
  iggy::Permissions merged = current;
  iggy::StreamPermissions& sp = merged.streams[stream_id];
  if (auto it = owned.streams.find(stream_id); it != owned.streams.end())
    sp.topics = it->second.topics;
  else
    sp.topics.clear();
  // An empty entry grants nothing; dropping it keeps an unchanged user equal to what Iggy holds,
  // so the sync need not write it.
  if (sp == iggy::StreamPermissions{}) merged.streams.erase(stream_id);
  return merged;
}

bool reaches_stream_beyond_topics(const iggy::Permissions& p, uint32_t stream_id) {
  const iggy::GlobalPermissions& g = p.global;
  if (g.manage_streams || g.read_streams || g.manage_topics || g.read_topics || g.poll_messages || g.send_messages)
    return true;
  auto it = p.streams.find(stream_id);
  if (it == p.streams.end()) return false;
  const iggy::StreamPermissions& s = it->second;
  return s.manage_stream || s.read_stream || s.manage_topics || s.read_topics || s.poll_messages || s.send_messages;
}

TopicRights acl_topic_rights(const Authorizer& authorizer, const security::KafkaPrincipal& principal,
                             const std::string& topic) {
  using Op = security::AclOperation;
  // Iggy permissions hold wherever the user connects from: only ACLs whose host is "*" say what
  // the principal may do from everywhere.
  auto may = [&](Op op) {
    return authorizer.allowed_from_any_host(principal, op, security::ResourceType::kTopic, topic);
  };
  TopicRights r;
  r.read = may(Op::kRead);
  r.write = may(Op::kWrite);
  r.manage = r.read && r.write && may(Op::kAlter) && may(Op::kDelete);
  return r;
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
  if (row) return use_row(key, principal, *row, false);
  switch (config_.principals.unmapped) {
    case config::PrincipalsConfig::Unmapped::kShared:
      return finish(key, shared_);
    case config::PrincipalsConfig::Unmapped::kCreate:
      return create_user(key, principal);
    case config::PrincipalsConfig::Unmapped::kRefuse:
      break;
  }
  ++stats_.refused;
  spdlog::log(refusal_level(key),
              "principals: {} has no Iggy user ([principals] unmapped = \"refuse\"); map one with "
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
  row.status = state::IggyUserStatus::kPending;
  // The mapping is durable before the Iggy user exists: a crash in between leaves a 'pending'
  // mapping whose user use_row() creates (or, if Iggy did create it, proves the bridge's by its
  // password), never an Iggy user whose password nobody knows. An operator's mapping written
  // since the lookup is left alone (and looked up again).
  auto inserted = std::make_shared<bool>(false);
  state_.write([row, inserted](SQLite::Database& db) {
                 *inserted = state::insert_principal_iggy_user(db, row, now_ms());
               },
               [this, alive = alive_.token(), key, principal, row, inserted](Status s) {
                 if (!alive) return;
                 if (!s)
                   return finish(key, kafka_error(ErrorCode::kUnknownServerError,
                                                  "storing the Iggy user of " + key + ": " + s.error().message));
                 if (!*inserted) return lookup(key, principal);
                 use_row(key, principal, row, true);
               });
}

void IggyIdentities::use_row(const std::string& key, const security::KafkaPrincipal& principal,
                             const state::PrincipalIggyUser& row, bool fresh) {
  switch (row.status) {
    case state::IggyUserStatus::kMapped:
      // The operator chose this Iggy user (`principals map`): the bridge uses it as it is and
      // writes only its own part of its permissions.
      return use_identity(key, principal, row);
    case state::IggyUserStatus::kRefused:
      return refuse_not_created(key, row);
    case state::IggyUserStatus::kPending:
    case state::IggyUserStatus::kCreated:
      break;
  }
  // A user the bridge makes: does it exist (a crash may have come between the mapping and the
  // user, or an operator may have deleted it), and is it the bridge's?
  bridge_.get_user(iggy::Identifier::named(row.iggy_username),
                   [this, alive = alive_.token(), key, principal, row, fresh](Result<std::optional<iggy::UserInfo>> r) {
                     if (!alive) return;
                     if (!r)
                       return finish(key, kafka_error(to_kafka_error(r.error()),
                                                      "looking up Iggy user " + row.iggy_username + ": " +
                                                          r.error().message));
                     check_created(key, principal, row, fresh, r->has_value());
                   });
}

void IggyIdentities::check_created(const std::string& key, const security::KafkaPrincipal& principal,
                                   const state::PrincipalIggyUser& row, bool fresh, bool exists) {
  if (!exists) return create_in_iggy(key, principal, row);
  if (row.status == state::IggyUserStatus::kCreated) return use_identity(key, principal, row);
  // 'pending' and the user exists. Written just now, the bridge has not asked Iggy for it: someone
  // else made it. Found pending, it may be the bridge's, created before a crash kept the mapping
  // from saying so.
  if (fresh) {
    spdlog::warn("principals: Iggy user {} already exists and was not created by the bridge; not taking it over",
                 esc(row.iggy_username));
    return set_status(row, state::IggyUserStatus::kRefused, [this, key, row] { refuse_not_created(key, row); });
  }
  prove_created(key, principal, row);
}

void IggyIdentities::create_in_iggy(const std::string& key, const security::KafkaPrincipal& principal,
                                    const state::PrincipalIggyUser& row) {
  bridge_.create_user(
      row.iggy_username, *row.iggy_password, iggy::UserStatus::kActive, std::nullopt,
      [this, alive = alive_.token(), key, principal, row](Result<iggy::UserInfo> c) {
        if (!alive) return;
        if (!c) {
          if (c.error().domain == ErrorDomain::kIggy && c.error().code == iggy::code::kUserAlreadyExists) {
            // Someone made it between the lookup and the creation: not the bridge's.
            spdlog::warn("principals: Iggy user {} was created by someone else while the bridge was creating it; "
                         "not taking it over",
                         esc(row.iggy_username));
            return set_status(row, state::IggyUserStatus::kRefused, [this, key, row] { refuse_not_created(key, row); });
          }
          // The mapping stays 'pending': if Iggy did create the user (a lost reply), the next
          // lookup proves it the bridge's by its password.
          spdlog::error("principals: cannot create Iggy user {} for {}: {}", esc(row.iggy_username), esc(key),
                        c.error().message);
          return finish(key, kafka_error(ErrorCode::kTopicAuthorizationFailed, "cannot create Iggy user " +
                                                                                  row.iggy_username));
        }
        ++stats_.created_users;
        spdlog::info("principals: created Iggy user {} for {}", esc(row.iggy_username), esc(key));
        state::PrincipalIggyUser created = row;
        created.status = state::IggyUserStatus::kCreated;
        set_status(row, state::IggyUserStatus::kCreated,
                   [this, key, principal, created] { use_identity(key, principal, created); });
      });
}

void IggyIdentities::prove_created(const std::string& key, const security::KafkaPrincipal& principal,
                                   const state::PrincipalIggyUser& row) {
  // Nobody but the bridge knows the mapping's random password: if it logs in as the user, the
  // bridge created the user. The pool it logs in with is the one the principal would use.
  const iggy::Credentials creds = credentials_of(row);
  iggy::IggyPool& pool = pools_.pool_for(creds, config_.principals.pool_size);
  pool.start();
  iggy::IggyClient(pool).get_me([this, alive = alive_.token(), key, principal, row,
                                 creds](Result<iggy::ClientInfo> me) {
    if (!alive) return;
    if (me) {
      spdlog::info("principals: Iggy user {} logs in with the password the bridge gave it: the bridge's own",
                   esc(row.iggy_username));
      state::PrincipalIggyUser created = row;
      created.status = state::IggyUserStatus::kCreated;
      return set_status(row, state::IggyUserStatus::kCreated,
                        [this, key, principal, created] { use_identity(key, principal, created); });
    }
    if (login_refused(me.error())) {
      pools_.release(creds);
      spdlog::warn("principals: Iggy user {} exists but does not log in with the password the bridge made for it "
                   "({}): not created by the bridge; not taking it over",
                   esc(row.iggy_username), me.error().message);
      return set_status(row, state::IggyUserStatus::kRefused, [this, key, row] { refuse_not_created(key, row); });
    }
    // Fail closed: the principal is refused until the password can be tried.
    ++stats_.refused_unproven;
    spdlog::warn("principals: Iggy user {} exists and the mapping of {} does not yet say the bridge created it; "
                 "trying its password failed ({}), so {} is refused until it can be tried (next connection)",
                 esc(row.iggy_username), esc(key), me.error().message, esc(key));
    finish(key, kafka_error(ErrorCode::kTopicAuthorizationFailed,
                            "cannot tell whether Iggy user " + row.iggy_username + " is the bridge's"));
  });
}

void IggyIdentities::set_status(const state::PrincipalIggyUser& row, state::IggyUserStatus status,
                                std::function<void()> then) {
  state_.write([row, status](SQLite::Database& db) {
                 state::set_principal_iggy_user_status(db, row, status, now_ms());
               },
               [alive = alive_.token(), row, status, then = std::move(then)](Status s) {
                 if (!alive) return;
                 if (!s)
                   spdlog::error("principals: cannot record Iggy user {} as {}: {}", esc(row.iggy_username),
                                 state::iggy_user_status_name(status), s.error().message);
                 then();
               });
}

void IggyIdentities::refuse_not_created(const std::string& key, const state::PrincipalIggyUser& row) {
  ++stats_.refused_not_created;
  spdlog::log(refusal_level(key),
              "principals: {} is refused ([principals] unmapped = \"create\"): its Iggy user {} exists and was not "
              "created by the bridge, which neither logs in as it nor writes its permissions. To run {} as that "
              "user, map it: `kafka-iggy-bridge principals map {} --iggy-user {} --password-file FILE`; to have the "
              "bridge create a user of its own, delete the Iggy user and `kafka-iggy-bridge principals unmap {}`",
              esc(key), esc(row.iggy_username), esc(key), esc(key), esc(row.iggy_username), esc(key));
  finish(key, kafka_error(ErrorCode::kTopicAuthorizationFailed,
                          "Iggy user " + row.iggy_username + " of " + key + " was not created by the bridge"));
}

spdlog::level::level_enum IggyIdentities::refusal_level(const std::string& key) {
  static constexpr auto kInterval = std::chrono::minutes(1);
  static constexpr size_t kMaxPrincipals = 10000;  // beyond: forget them all (the map stays small)
  const auto now = std::chrono::steady_clock::now();
  if (refusal_logged_.size() >= kMaxPrincipals) refusal_logged_.clear();
  auto [it, first] = refusal_logged_.try_emplace(key, now);
  if (first) return spdlog::level::warn;
  if (now - it->second < kInterval) return spdlog::level::debug;
  it->second = now;
  return spdlog::level::warn;
}

void IggyIdentities::use_identity(const std::string& key, const security::KafkaPrincipal& principal,
                                  const state::PrincipalIggyUser& row) {
  // Its permissions are written before its first use, so a new mapping never starts with
  // rights the ACLs do not give (nor without the ones they do).
  auto use = [this, alive = alive_.token(), key, row](bool) {
    if (!alive) return;
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
  set_rights([&authorizer](const security::KafkaPrincipal& p,
                           const std::string& topic) { return acl_topic_rights(authorizer, p, topic); },
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
  // Only users that are the bridge's to write: an operator's mapping, or a user the bridge
  // created. A 'pending' one is written before its first use, once it is known to be the bridge's.
  if (row.status == state::IggyUserStatus::kPending || row.status == state::IggyUserStatus::kRefused)
    return sync_users(std::move(rows), std::move(done));
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
  struct Sync {
    security::KafkaPrincipal principal;
    std::string iggy_user;
    std::function<void(bool)> done;
  };
  auto job = std::make_shared<Sync>(Sync{principal, iggy_user, std::move(done)});
  auto failed = [this](const std::shared_ptr<Sync>& j, const std::string& why) {
    ++stats_.permission_sync_failures;
    spdlog::error("principals: permissions of Iggy user {} ({}) not written: {}", esc(j->iggy_user),
                  esc(j->principal.str()), why);
    j->done(false);
  };
  bridge_.get_stream(
      iggy::Identifier::named(config_.iggy.stream),
      [this, alive = alive_.token(), job, failed](Result<std::optional<iggy::StreamInfo>> r) {
        if (!alive) return;
        if (!r) return failed(job, r.error().message);
        if (!*r) return failed(job, "stream " + config_.iggy.stream + " not found");
        auto stream = std::make_shared<iggy::StreamInfo>(std::move(**r));
        // Iggy's UpdatePermissions replaces the user's permissions whole: read them first, so that
        // what the bridge does not own is written back as it was.
        bridge_.get_user(
            iggy::Identifier::named(job->iggy_user),
            [this, alive, job, failed, stream](Result<std::optional<iggy::UserInfo>> u) {
              if (!alive) return;
              if (!u) return failed(job, "reading its permissions: " + u.error().message);
              if (!*u) return failed(job, "no such Iggy user");
              if (!rights_) return job->done(false);  // the rights function went (shutdown)
              std::vector<std::pair<std::string, uint32_t>> topics;
              for (const auto& t : stream->topics) topics.emplace_back(t.name, t.id);
              const iggy::Permissions current = (*u)->permissions.value_or(iggy::Permissions{});
              const iggy::Permissions merged = merge_iggy_permissions(
                  current, stream->id, iggy_permissions_for(job->principal, stream->id, topics, rights_));
              if (reaches_stream_beyond_topics(merged, stream->id) && warned_wide_.insert(job->iggy_user).second)
                spdlog::warn("principals: Iggy user {} ({}) has global or stream-wide permissions, kept as they are, "
                             "that reach topics of stream {} whatever the ACLs say: a native Iggy client logged in as "
                             "it is not bound by the ACLs there",
                             esc(job->iggy_user), esc(job->principal.str()), esc(stream->name));
              if (merged == current) {
                ++stats_.permission_syncs;
                return job->done(true);
              }
              bridge_.update_permissions(iggy::Identifier::named(job->iggy_user), merged,
                                         [this, alive, job, failed](Result<Unit> w) {
                                           if (!alive) return;
                                           if (!w) return failed(job, w.error().message);
                                           ++stats_.permission_syncs;
                                           spdlog::debug("principals: permissions of Iggy user {} written from the "
                                                         "ACLs of {}",
                                                         esc(job->iggy_user), esc(job->principal.str()));
                                           job->done(true);
                                         });
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
