// SQL for principal_iggy_users (migrations/0007_security.sql): which Iggy user a Kafka principal's
// data operations log in as when [principals] iggy_identity = "per_principal" (docs/security.md).
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kib::state {

struct PrincipalIggyUser {
  std::string principal;      // "User:alice"
  std::string iggy_username;
  // Exactly one of the two (a password login or a personal access token). Secrets: never logged.
  std::optional<std::string> iggy_password;
  std::optional<std::string> personal_access_token;
  bool created_by_bridge = false;  // [principals] unmapped = "create"
  int64_t updated_at_ms = 0;
};

std::optional<PrincipalIggyUser> load_principal_iggy_user(SQLite::Database& db, const std::string& principal);
std::vector<PrincipalIggyUser> load_principal_iggy_users(SQLite::Database& db);
// Inserts or replaces the principal's mapping.
void upsert_principal_iggy_user(SQLite::Database& db, const PrincipalIggyUser& row, int64_t now_ms);
// Whether a mapping was there to delete.
bool delete_principal_iggy_user(SQLite::Database& db, const std::string& principal);

}  // namespace kib::state
