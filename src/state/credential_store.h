// SQL for the SASL credentials (migrations/0007_security.sql): scram_credentials and
// plain_credentials. Rows hold salts and derived keys, never a password. Mechanisms are Kafka's
// names ("SCRAM-SHA-256", "SCRAM-SHA-512"; PLAIN rows live in their own table).
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"

namespace kib::state {

struct ScramCredentialRow {
  std::string username;
  std::string mechanism;
  Bytes salt;
  Bytes stored_key;
  Bytes server_key;
  int32_t iterations = 0;
};

struct PlainCredentialRow {
  std::string username;
  Bytes salt;
  Bytes hash;
  int32_t iterations = 0;
};

// One credential of one user, without its secrets: what `users list` and
// DescribeUserScramCredentials show. `mechanism` is "PLAIN" for plain_credentials rows.
struct CredentialInfo {
  std::string username;
  std::string mechanism;
  int32_t iterations = 0;
  int64_t updated_at_ms = 0;
};

std::optional<ScramCredentialRow> load_scram_credential(SQLite::Database& db, const std::string& username,
                                                        const std::string& mechanism);
std::optional<PlainCredentialRow> load_plain_credential(SQLite::Database& db, const std::string& username);

void upsert_scram_credential(SQLite::Database& db, const ScramCredentialRow& row, int64_t now_ms);
void upsert_plain_credential(SQLite::Database& db, const PlainCredentialRow& row, int64_t now_ms);
// Whether a row was deleted.
bool delete_scram_credential(SQLite::Database& db, const std::string& username, const std::string& mechanism);
bool delete_plain_credential(SQLite::Database& db, const std::string& username);

// Every credential, ordered by user then mechanism (SCRAM-SHA-256, SCRAM-SHA-512, PLAIN).
std::vector<CredentialInfo> list_credentials(SQLite::Database& db);
// The SCRAM credentials of `username` (SCRAM-SHA-256 first), or of every user when empty.
std::vector<CredentialInfo> list_scram_credentials(SQLite::Database& db, const std::optional<std::string>& username);

}  // namespace kib::state
