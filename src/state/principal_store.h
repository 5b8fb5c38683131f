// SQL for principal_iggy_users (migrations/0007_security.sql): which Iggy user a Kafka principal's
// data operations log in as when [principals] iggy_identity = "per_principal" (docs/security.md).
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kib::state {

// Whose Iggy user a mapping names (migrations/0008): the operator's choice, or the one the
// bridge creates for [principals] unmapped = "create", which is its own only once Iggy has said
// it created it.
enum class IggyUserStatus {
  kMapped,   // `principals map`: the operator chose the Iggy user
  kPending,  // the bridge wrote the mapping, Iggy has not (yet) been seen creating the user
  kCreated,  // Iggy created the user for the bridge
  kRefused,  // an Iggy user of that name exists that the bridge did not create: never used
};
const char* iggy_user_status_name(IggyUserStatus s);  // "mapped", "pending", ...

struct PrincipalIggyUser {
  std::string principal;      // "User:alice"
  std::string iggy_username;
  // Exactly one of the two (a password login or a personal access token). Secrets: never logged.
  std::optional<std::string> iggy_password;
  std::optional<std::string> personal_access_token;
  bool created_by_bridge = false;  // [principals] unmapped = "create"
  IggyUserStatus status = IggyUserStatus::kMapped;
  int64_t updated_at_ms = 0;
};

std::optional<PrincipalIggyUser> load_principal_iggy_user(SQLite::Database& db, const std::string& principal);
std::vector<PrincipalIggyUser> load_principal_iggy_users(SQLite::Database& db);
// Inserts or replaces the principal's mapping.
void upsert_principal_iggy_user(SQLite::Database& db, const PrincipalIggyUser& row, int64_t now_ms);
// Inserts the mapping unless the principal has one already: whether it did.
bool insert_principal_iggy_user(SQLite::Database& db, const PrincipalIggyUser& row, int64_t now_ms);
// Sets the status of the bridge's mapping `row` if the principal is still mapped by it (same
// Iggy user, same password: an operator's `principals map` in between wins): whether it did.
bool set_principal_iggy_user_status(SQLite::Database& db, const PrincipalIggyUser& row, IggyUserStatus status,
                                    int64_t now_ms);
// Whether a mapping was there to delete.
bool delete_principal_iggy_user(SQLite::Database& db, const std::string& principal);

}  // namespace kib::state
