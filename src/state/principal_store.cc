#include "state/principal_store.h"

namespace kib::state {
namespace {

constexpr const char* kColumns =
    "principal, iggy_username, iggy_password, personal_access_token, created_by_bridge, updated_at";

PrincipalIggyUser row_of(SQLite::Statement& q) {
  PrincipalIggyUser r;
  r.principal = q.getColumn(0).getString();
  r.iggy_username = q.getColumn(1).getString();
  if (!q.getColumn(2).isNull()) r.iggy_password = q.getColumn(2).getString();
  if (!q.getColumn(3).isNull()) r.personal_access_token = q.getColumn(3).getString();
  r.created_by_bridge = q.getColumn(4).getInt() != 0;
  r.updated_at_ms = q.getColumn(5).getInt64();
  return r;
}

}  // namespace

std::optional<PrincipalIggyUser> load_principal_iggy_user(SQLite::Database& db, const std::string& principal) {
  SQLite::Statement q(db, std::string("SELECT ") + kColumns + " FROM principal_iggy_users WHERE principal = ?");
  q.bind(1, principal);
  if (!q.executeStep()) return std::nullopt;
  return row_of(q);
}

std::vector<PrincipalIggyUser> load_principal_iggy_users(SQLite::Database& db) {
  std::vector<PrincipalIggyUser> rows;
  SQLite::Statement q(db, std::string("SELECT ") + kColumns + " FROM principal_iggy_users ORDER BY principal");
  while (q.executeStep()) rows.push_back(row_of(q));
  return rows;
}

void upsert_principal_iggy_user(SQLite::Database& db, const PrincipalIggyUser& r, int64_t now_ms) {
  SQLite::Statement st(db, std::string("INSERT OR REPLACE INTO principal_iggy_users(") + kColumns +
                               ") VALUES (?,?,?,?,?,?)");
  st.bind(1, r.principal);
  st.bind(2, r.iggy_username);
  if (r.iggy_password) st.bind(3, *r.iggy_password);
  else st.bind(3);
  if (r.personal_access_token) st.bind(4, *r.personal_access_token);
  else st.bind(4);
  st.bind(5, r.created_by_bridge ? 1 : 0);
  st.bind(6, static_cast<int64_t>(now_ms));
  st.exec();
}

bool delete_principal_iggy_user(SQLite::Database& db, const std::string& principal) {
  SQLite::Statement st(db, "DELETE FROM principal_iggy_users WHERE principal = ?");
  st.bind(1, principal);
  return st.exec() > 0;
}

}  // namespace kib::state
