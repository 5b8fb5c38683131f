#include "state/principal_store.h"

namespace kib::state {
namespace {

constexpr const char* kColumns =
    "principal, iggy_username, iggy_password, personal_access_token, created_by_bridge, updated_at, "
    "iggy_user_status";

IggyUserStatus status_of(const std::string& s) {
  if (s == "pending") return IggyUserStatus::kPending;
  if (s == "created") return IggyUserStatus::kCreated;
  if (s == "refused") return IggyUserStatus::kRefused;
  return IggyUserStatus::kMapped;
}

PrincipalIggyUser row_of(SQLite::Statement& q) {
  PrincipalIggyUser r;
  r.principal = q.getColumn(0).getString();
  r.iggy_username = q.getColumn(1).getString();
  if (!q.getColumn(2).isNull()) r.iggy_password = q.getColumn(2).getString();
  if (!q.getColumn(3).isNull()) r.personal_access_token = q.getColumn(3).getString();
  r.created_by_bridge = q.getColumn(4).getInt() != 0;
  r.updated_at_ms = q.getColumn(5).getInt64();
  r.status = status_of(q.getColumn(6).getString());
  return r;
}

void bind_row(SQLite::Statement& st, const PrincipalIggyUser& r, int64_t now_ms) {
  st.bind(1, r.principal);
  st.bind(2, r.iggy_username);
  if (r.iggy_password) st.bind(3, *r.iggy_password);
  else st.bind(3);
  if (r.personal_access_token) st.bind(4, *r.personal_access_token);
  else st.bind(4);
  st.bind(5, r.created_by_bridge ? 1 : 0);
  st.bind(6, static_cast<int64_t>(now_ms));
  st.bind(7, iggy_user_status_name(r.status));
}

}  // namespace

const char* iggy_user_status_name(IggyUserStatus s) {
  switch (s) {
    case IggyUserStatus::kMapped: return "mapped";
    case IggyUserStatus::kPending: return "pending";
    case IggyUserStatus::kCreated: return "created";
    case IggyUserStatus::kRefused: return "refused";
  }
  return "mapped";
}

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
                               ") VALUES (?,?,?,?,?,?,?)");
  bind_row(st, r, now_ms);
  st.exec();
}

bool insert_principal_iggy_user(SQLite::Database& db, const PrincipalIggyUser& r, int64_t now_ms) {
  SQLite::Statement st(db, std::string("INSERT OR IGNORE INTO principal_iggy_users(") + kColumns +
                               ") VALUES (?,?,?,?,?,?,?)");
  bind_row(st, r, now_ms);
  return st.exec() > 0;
}

bool set_principal_iggy_user_status(SQLite::Database& db, const PrincipalIggyUser& r, IggyUserStatus status,
                                    int64_t now_ms) {
  SQLite::Statement st(db,
                       "UPDATE principal_iggy_users SET iggy_user_status = ?, updated_at = ? WHERE principal = ? "
                       "AND iggy_username = ? AND created_by_bridge <> 0 AND iggy_password IS ?");
  st.bind(1, iggy_user_status_name(status));
  st.bind(2, static_cast<int64_t>(now_ms));
  st.bind(3, r.principal);
  st.bind(4, r.iggy_username);
  if (r.iggy_password) st.bind(5, *r.iggy_password);
  else st.bind(5);
  return st.exec() > 0;
}

bool delete_principal_iggy_user(SQLite::Database& db, const std::string& principal) {
  SQLite::Statement st(db, "DELETE FROM principal_iggy_users WHERE principal = ?");
  st.bind(1, principal);
  return st.exec() > 0;
}

}  // namespace kib::state
