#include "state/credential_store.h"

namespace kib::state {
namespace {

Bytes blob(const SQLite::Column& c) {
  const auto* p = static_cast<const uint8_t*>(c.getBlob());
  return Bytes(p, p + c.getBytes());
}

void bind_blob(SQLite::Statement& st, int index, const Bytes& b) {
  // A zero-length blob, not NULL (the columns are NOT NULL).
  static const uint8_t kEmpty = 0;
  st.bind(index, b.empty() ? static_cast<const void*>(&kEmpty) : static_cast<const void*>(b.data()),
          static_cast<int>(b.size()));
}

}  // namespace

std::optional<ScramCredentialRow> load_scram_credential(SQLite::Database& db, const std::string& username,
                                                        const std::string& mechanism) {
  SQLite::Statement q(db,
                      "SELECT salt, stored_key, server_key, iterations FROM scram_credentials "
                      "WHERE username = ? AND mechanism = ?");
  q.bind(1, username);
  q.bind(2, mechanism);
  if (!q.executeStep()) return std::nullopt;
  ScramCredentialRow r;
  r.username = username;
  r.mechanism = mechanism;
  r.salt = blob(q.getColumn(0));
  r.stored_key = blob(q.getColumn(1));
  r.server_key = blob(q.getColumn(2));
  r.iterations = q.getColumn(3).getInt();
  return r;
}

std::optional<PlainCredentialRow> load_plain_credential(SQLite::Database& db, const std::string& username) {
  SQLite::Statement q(db, "SELECT salt, hash, iterations FROM plain_credentials WHERE username = ?");
  q.bind(1, username);
  if (!q.executeStep()) return std::nullopt;
  PlainCredentialRow r;
  r.username = username;
  r.salt = blob(q.getColumn(0));
  r.hash = blob(q.getColumn(1));
  r.iterations = q.getColumn(2).getInt();
  return r;
}

void upsert_scram_credential(SQLite::Database& db, const ScramCredentialRow& r, int64_t now_ms) {
  SQLite::Statement st(db,
                       "INSERT INTO scram_credentials(username, mechanism, salt, stored_key, server_key, iterations, "
                       "updated_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT(username, mechanism) DO UPDATE SET "
                       "salt = excluded.salt, stored_key = excluded.stored_key, server_key = excluded.server_key, "
                       "iterations = excluded.iterations, updated_at = excluded.updated_at");
  st.bind(1, r.username);
  st.bind(2, r.mechanism);
  bind_blob(st, 3, r.salt);
  bind_blob(st, 4, r.stored_key);
  bind_blob(st, 5, r.server_key);
  st.bind(6, r.iterations);
  st.bind(7, static_cast<int64_t>(now_ms));
  st.exec();
}

void upsert_plain_credential(SQLite::Database& db, const PlainCredentialRow& r, int64_t now_ms) {
  SQLite::Statement st(db,
                       "INSERT INTO plain_credentials(username, salt, hash, iterations, updated_at) VALUES (?,?,?,?,?) "
                       "ON CONFLICT(username) DO UPDATE SET salt = excluded.salt, hash = excluded.hash, "
                       "iterations = excluded.iterations, updated_at = excluded.updated_at");
  st.bind(1, r.username);
  bind_blob(st, 2, r.salt);
  bind_blob(st, 3, r.hash);
  st.bind(4, r.iterations);
  st.bind(5, static_cast<int64_t>(now_ms));
  st.exec();
}

bool delete_scram_credential(SQLite::Database& db, const std::string& username, const std::string& mechanism) {
  SQLite::Statement st(db, "DELETE FROM scram_credentials WHERE username = ? AND mechanism = ?");
  st.bind(1, username);
  st.bind(2, mechanism);
  return st.exec() > 0;
}

bool delete_plain_credential(SQLite::Database& db, const std::string& username) {
  SQLite::Statement st(db, "DELETE FROM plain_credentials WHERE username = ?");
  st.bind(1, username);
  return st.exec() > 0;
}

std::vector<CredentialInfo> list_credentials(SQLite::Database& db) {
  std::vector<CredentialInfo> out;
  SQLite::Statement q(db,
                      "SELECT username, mechanism, iterations, updated_at FROM ("
                      "SELECT username, mechanism, iterations, updated_at FROM scram_credentials UNION ALL "
                      "SELECT username, 'PLAIN', iterations, updated_at FROM plain_credentials) "
                      "ORDER BY username, CASE mechanism WHEN 'SCRAM-SHA-256' THEN 0 WHEN 'SCRAM-SHA-512' THEN 1 ELSE 2 END");
  while (q.executeStep())
    out.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt(),
                   q.getColumn(3).getInt64()});
  return out;
}

std::vector<CredentialInfo> list_scram_credentials(SQLite::Database& db, const std::optional<std::string>& username) {
  std::vector<CredentialInfo> out;
  SQLite::Statement q(db, username ? "SELECT username, mechanism, iterations, updated_at FROM scram_credentials "
                                     "WHERE username = ? ORDER BY mechanism"
                                   : "SELECT username, mechanism, iterations, updated_at FROM scram_credentials "
                                     "ORDER BY username, mechanism");
  if (username) q.bind(1, *username);
  while (q.executeStep())
    out.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt(),
                   q.getColumn(3).getInt64()});
  return out;
}

}  // namespace kib::state
