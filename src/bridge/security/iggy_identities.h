// Which Iggy user a Kafka principal's data operations run as ([principals], docs/security.md
// "Principals -> Iggy identities"), and the ACLs written onto those users' Iggy permissions.
//
//   * shared (the default): every principal runs as the bridge's [iggy] user; resolve() answers
//     the shared identity (no pool of its own) without a lookup.
//   * per_principal: resolve() reads the principal's row of principal_iggy_users (the state
//     thread; once per Kafka connection, so a mapping made by `kafka-iggy-bridge principals map`
//     applies to the next connection without a restart) and answers an identity with an Iggy
//     connection pool of its own, logged in as the mapped user. A principal without a row is
//     refused, created (Iggy user kafka.<name>, random password kept in state.db) or run as the
//     [iggy] user, per [principals] unmapped.
//
// Creation never takes over an Iggy user someone else made: the mapping is written first
// ('pending'), then the user is created and the mapping marked 'created' once Iggy said so. A
// kafka.<name> that already exists when the bridge is about to create it is not the bridge's:
// the mapping is marked 'refused' and the principal refused. A 'pending' mapping found later (a
// crash came between the two steps, or an earlier version made it) whose user exists is the
// bridge's only if the mapping's random password logs in as it; until that is known the
// principal is refused.
//
// Permission sync ([principals] sync_iggy_permissions, with a rights function set): the topic
// entries of the bridge's stream in every mapped user's Iggy permissions are rewritten from the
// rights function (the authorizer's "*"-host ACLs), at start, when ACLs change, when a topic
// appears or goes, and before a principal's first use of a mapping. The rest of the user's
// permissions (global ones, other streams, the stream-wide flags of the bridge's stream) are read
// first and written back as they were: Iggy's UpdatePermissions replaces a user's permissions
// whole. READ -> read_topic + poll_messages, WRITE -> send_messages, READ+WRITE+ALTER+DELETE ->
// manage_topic; nothing else (groups, transactional ids, the cluster, hosts, DENY as such) has an
// Iggy equivalent.
//
// Loop thread only. Callbacks never run inside the call that was given them.
#pragma once

#include <spdlog/common.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/security/authorizer.h"
#include "common/liveness.h"
#include "common/result.h"
#include "config/config.h"
#include "iggy/client.h"
#include "iggy/pool.h"
#include "security/principal.h"
#include "uvx/tasks.h"

namespace kib::state {
class StateStore;
struct PrincipalIggyUser;
enum class IggyUserStatus;
}  // namespace kib::state

namespace kib::bridge {

// The Iggy identity a principal's Produce and Fetch use.
struct IggyIdentity {
  iggy::IggyPool* pool = nullptr;  // nullptr: the bridge's own [iggy] pool
  std::string iggy_user;           // for logs (never a secret); empty for the shared identity
};
using IggyIdentityRef = std::shared_ptr<const IggyIdentity>;

// What a principal may do with one topic, as far as Iggy can express it.
struct TopicRights {
  bool read = false;    // READ (Kafka's READ implies DESCRIBE; Iggy's read_topic implies poll)
  bool write = false;   // WRITE
  bool manage = false;  // READ, WRITE, ALTER and DELETE all allowed (Iggy's manage_topic implies them)
  friend bool operator==(const TopicRights&, const TopicRights&) = default;
};
using TopicRightsFn = std::function<TopicRights(const security::KafkaPrincipal&, const std::string& topic)>;

// What the authorizer's ACLs give `principal` on `topic` in Iggy terms: the ACLs whose host is "*"
// only (Authorizer::allowed_from_any_host), as an Iggy permission holds from every host; an ACL
// naming an address, or the empty host, is enforced by the bridge alone.
TopicRights acl_topic_rights(const Authorizer& authorizer, const security::KafkaPrincipal& principal,
                             const std::string& topic);

// The Iggy permissions of a mapped user: `rights` of each topic of the stream (`stream_id`,
// topics by name and Iggy id), nothing global, nothing stream-wide.
iggy::Permissions iggy_permissions_for(const security::KafkaPrincipal& principal, uint32_t stream_id,
                                       const std::vector<std::pair<std::string, uint32_t>>& topics,
                                       const TopicRightsFn& rights);

// `current` (a user's permissions as Iggy holds them) with the topic entries of stream `stream_id`
// replaced by those of `owned` (iggy_permissions_for): what the bridge writes. Global permissions,
// other streams and the stream-wide flags of `stream_id` stay as they are; a stream entry left
// with nothing in it is dropped.
iggy::Permissions merge_iggy_permissions(const iggy::Permissions& current, uint32_t stream_id,
                                         const iggy::Permissions& owned);

// Whether `p` lets its user reach topics of stream `stream_id` other than through that stream's
// topic entries (global or stream-wide data permissions), which the ACLs then do not bound.
bool reaches_stream_beyond_topics(const iggy::Permissions& p, uint32_t stream_id);

// "User:alice" -> the Iggy user [principals] unmapped = "create" makes ("kafka.alice").
std::string created_iggy_username(const security::KafkaPrincipal& principal);

struct IggyIdentityStats {
  uint64_t resolved = 0;        // per_principal lookups answered with an identity
  uint64_t refused = 0;         // unmapped principals refused
  // Principals refused because their kafka.<name> Iggy user exists and is not the bridge's.
  uint64_t refused_not_created = 0;
  // Principals refused for now because whether their kafka.<name> is the bridge's is not known
  // yet (a 'pending' mapping whose password could not be tried).
  uint64_t refused_unproven = 0;
  uint64_t created_users = 0;   // Iggy users created for unmapped principals
  uint64_t permission_syncs = 0;        // users whose permissions were written
  uint64_t permission_sync_failures = 0;
  size_t pools = 0;             // identities with a pool of their own
};

class IggyIdentities final : public TopicListener, public AclListener {
 public:
  // `bridge`: the [iggy] user's client (lookups of the stream, user creation, permission updates).
  IggyIdentities(uv_loop_t* loop, const config::Config& config, state::StateStore& state, iggy::IggyClient bridge,
                 iggy::PoolConfig base);
  ~IggyIdentities() override;
  IggyIdentities(const IggyIdentities&) = delete;
  IggyIdentities& operator=(const IggyIdentities&) = delete;

  bool per_principal() const { return config_.principals.iggy_identity == config::PrincipalsConfig::Identity::kPerPrincipal; }
  // The shared identity (the [iggy] user).
  IggyIdentityRef shared() const { return shared_; }

  // The principal's identity; an error is a Kafka error to answer its data request with
  // (TOPIC_AUTHORIZATION_FAILED when refused, a retriable one when the lookup failed).
  void resolve(const security::KafkaPrincipal& principal, std::function<void(Result<IggyIdentityRef>)> cb);

  // Enables the permission sync: `rights` is what a principal may do with a topic, `active` whether
  // it is to be written now (the authorizer enabled).
  void set_rights(TopicRightsFn rights, std::function<bool()> active = [] { return true; });
  // The same from the authorizer: ACLs whose host is "*" only (Authorizer::allowed_from_any_host),
  // as Iggy permissions name no host; written while [authorization] is enabled.
  void use_authorizer(const Authorizer& authorizer);
  // Rewrites every mapped user's permissions soon (ACLs changed; the catalog is ready). Calls
  // made while a sync runs are folded into one more run after it.
  void sync_all();
  bool syncing() const { return sync_running_; }
  // Whether permissions are written now (per_principal, sync_iggy_permissions, an active rights function).
  bool syncs_permissions() const;

  // TopicListener: a topic appearing or going changes what the ACLs grant in Iggy terms.
  void on_topic_created(const std::string&) override { sync_all(); }
  void on_topic_deleted(const std::string&) override { sync_all(); }
  // AclListener: the ACLs changed (durably), or SIGHUP reconfigured the authorizer.
  void on_acls_changed(const std::vector<security::AclBinding>&, const std::vector<security::AclBinding>&) override {
    sync_all();
  }
  void on_authorizer_reconfigured() override { sync_all(); }

  // Drops `owner`'s requests still queued on the identities' pools (its connection closed).
  void cancel_owner(uint64_t owner) { pools_.cancel_owner(owner); }
  // Closes every identity's pool; `done` once they are closed.
  void close(std::function<void()> done);

  IggyIdentityStats stats() const;

 private:
  void lookup(const std::string& key, const security::KafkaPrincipal& principal);
  void found(const std::string& key, const security::KafkaPrincipal& principal,
             std::optional<state::PrincipalIggyUser> row);
  void create_user(const std::string& key, const security::KafkaPrincipal& principal);
  // `fresh`: the row was written by create_user() just now, so the bridge has not asked Iggy to
  // create its user yet.
  void use_row(const std::string& key, const security::KafkaPrincipal& principal, const state::PrincipalIggyUser& row,
               bool fresh);
  // A bridge-made mapping ('pending' or 'created') after Iggy's answer to get_user.
  void check_created(const std::string& key, const security::KafkaPrincipal& principal,
                     const state::PrincipalIggyUser& row, bool fresh, bool exists);
  void create_in_iggy(const std::string& key, const security::KafkaPrincipal& principal,
                      const state::PrincipalIggyUser& row);
  // A 'pending' mapping whose user exists: it is the bridge's if the mapping's password logs in.
  void prove_created(const std::string& key, const security::KafkaPrincipal& principal,
                     const state::PrincipalIggyUser& row);
  // Records the mapping's status durably, then `then()` (also when the write failed: logged).
  void set_status(const state::PrincipalIggyUser& row, state::IggyUserStatus status, std::function<void()> then);
  void refuse_not_created(const std::string& key, const state::PrincipalIggyUser& row);
  // The level of a refused principal's warning: warn once a minute per principal, debug in
  // between (a refusal is not kept in the session, so every data request of a refused client
  // comes back here and must not flood the log).
  spdlog::level::level_enum refusal_level(const std::string& key);
  // The mapped user's permissions written (when synced), then its pool: the identity.
  void use_identity(const std::string& key, const security::KafkaPrincipal& principal,
                    const state::PrincipalIggyUser& row);
  void finish(const std::string& key, Result<IggyIdentityRef> r);
  void run_sync();
  void sync_users(std::vector<state::PrincipalIggyUser> rows, std::function<void()> done);
  // Writes one user's permissions: `done(ok)`.
  void sync_one(const security::KafkaPrincipal& principal, const std::string& iggy_user,
                std::function<void(bool)> done);

  uv_loop_t* loop_;
  const config::Config& config_;
  state::StateStore& state_;
  iggy::IggyClient bridge_;
  iggy::IggyIdentityPools pools_;
  IggyIdentityRef shared_;
  TopicRightsFn rights_;
  std::function<bool()> rights_active_;
  std::map<std::string, std::vector<std::function<void(Result<IggyIdentityRef>)>>> pending_;  // by principal
  std::map<std::string, IggyIdentityRef> by_credentials_;  // identity per pool, shared by connections
  std::map<std::string, std::chrono::steady_clock::time_point> refusal_logged_;  // by principal
  std::set<std::string> warned_wide_;  // users whose kept permissions reach past the ACLs (logged once)
  bool sync_running_ = false;
  bool sync_again_ = false;
  IggyIdentityStats stats_;
  uv::Tasks tasks_;
  Liveness alive_;
};

}  // namespace kib::bridge
