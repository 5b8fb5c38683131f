#include "state/acl_store.h"

namespace kib::state {

std::vector<AclRow> load_acls(SQLite::Database& db) {
  std::vector<AclRow> rows;
  SQLite::Statement q(db,
                      "SELECT resource_type, resource_name, pattern_type, principal, host, operation, permission "
                      "FROM acls");
  while (q.executeStep()) {
    AclRow r;
    r.resource_type = q.getColumn(0).getString();
    r.resource_name = q.getColumn(1).getString();
    r.pattern_type = q.getColumn(2).getString();
    r.principal = q.getColumn(3).getString();
    r.host = q.getColumn(4).getString();
    r.operation = q.getColumn(5).getString();
    r.permission = q.getColumn(6).getString();
    rows.push_back(std::move(r));
  }
  return rows;
}

namespace {

void bind_key(SQLite::Statement& st, const AclRow& r) {
  st.bind(1, r.resource_type);
  st.bind(2, r.resource_name);
  st.bind(3, r.pattern_type);
  st.bind(4, r.principal);
  st.bind(5, r.host);
  st.bind(6, r.operation);
  st.bind(7, r.permission);
}

}  // namespace

size_t insert_acls(SQLite::Database& db, const std::vector<AclRow>& rows, int64_t now_ms) {
  SQLite::Statement st(db,
                       "INSERT OR IGNORE INTO acls(resource_type, resource_name, pattern_type, principal, host, "
                       "operation, permission, created_at) VALUES (?,?,?,?,?,?,?,?)");
  size_t added = 0;
  for (const AclRow& r : rows) {
    bind_key(st, r);
    st.bind(8, static_cast<int64_t>(now_ms));
    added += static_cast<size_t>(st.exec());
    st.reset();
  }
  return added;
}

size_t delete_acls(SQLite::Database& db, const std::vector<AclRow>& rows) {
  SQLite::Statement st(db,
                       "DELETE FROM acls WHERE resource_type = ? AND resource_name = ? AND pattern_type = ? AND "
                       "principal = ? AND host = ? AND operation = ? AND permission = ?");
  size_t removed = 0;
  for (const AclRow& r : rows) {
    bind_key(st, r);
    removed += static_cast<size_t>(st.exec());
    st.reset();
  }
  return removed;
}

}  // namespace kib::state
