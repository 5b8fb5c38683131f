// SQL for the acls table (migrations/0007_security.sql): Kafka ACL bindings, one row each, in
// Kafka's names ('TOPIC', 'PREFIXED', 'READ', 'ALLOW'). The bridge's Authorizer holds them in
// memory; these run at startup and on the state store's writer thread.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kib::state {

struct AclRow {
  std::string resource_type;
  std::string resource_name;
  std::string pattern_type;
  std::string principal;
  std::string host;
  std::string operation;
  std::string permission;
  friend bool operator==(const AclRow&, const AclRow&) = default;
};

std::vector<AclRow> load_acls(SQLite::Database& db);
// Rows already there stay as they are (ACLs are a set); returns how many were new.
size_t insert_acls(SQLite::Database& db, const std::vector<AclRow>& rows, int64_t now_ms);
// Returns how many existed.
size_t delete_acls(SQLite::Database& db, const std::vector<AclRow>& rows);

}  // namespace kib::state
