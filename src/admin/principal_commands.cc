#include "admin/principal_commands.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "admin/sync_iggy.h"
#include "admin/text_table.h"
#include "iggy/errors.h"
#include "state/principal_store.h"
#include "state/state_store.h"

namespace kib::admin {
namespace {

using json = nlohmann::ordered_json;

Error usage(std::string message) { return Error{ErrorDomain::kInvalid, 0, std::move(message)}; }

// The secret in `path` ("-": standard input), without its trailing newline.
Result<std::string> read_secret(const std::string& path, const char* what) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return usage(std::string("cannot read the ") + what + " file " + path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) return usage(std::string("the ") + what + " is empty");
  return text;
}

// "User:alice": Kafka's principal form (type and a non-empty name).
bool valid_principal(const std::string& p) {
  const auto colon = p.find(':');
  return colon != std::string::npos && colon > 0 && colon + 1 < p.size();
}

Result<std::unique_ptr<SQLite::Database>> open_state(const config::Config& cfg) {
  auto db = state::open_database(cfg.state.path);
  if (!db) return db.error();
  auto v = state::migrate(**db);
  if (!v) return v.error();
  return std::move(*db);
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int principals_map(const AdminContext& c, const PrincipalMapOptions& o) {
  if (!valid_principal(o.principal)) return fail(c, usage("principal must be TYPE:NAME, e.g. User:alice"));
  if (o.iggy_user.empty()) return fail(c, usage("--iggy-user is required"));
  if (o.password_file.empty() == o.token_file.empty())
    return fail(c, usage("give exactly one of --password-file and --token-file"));
  if (o.create && o.password_file.empty()) return fail(c, usage("--create needs --password-file"));
  state::PrincipalIggyUser row;
  row.principal = o.principal;
  row.iggy_username = o.iggy_user;
  if (!o.password_file.empty()) {
    auto pw = read_secret(o.password_file, "password");
    if (!pw) return fail(c, pw.error());
    row.iggy_password = std::move(*pw);
  } else {
    auto tok = read_secret(o.token_file, "token");
    if (!tok) return fail(c, tok.error());
    row.personal_access_token = std::move(*tok);
  }
  if (o.create) {
    SyncIggy iggy(c.cfg);
    auto user = iggy.run<std::optional<iggy::UserInfo>>(
        [&](iggy::IggyClient& cl, auto cb) { cl.get_user(iggy::Identifier::named(o.iggy_user), cb); });
    if (!user) return fail(c, usage("looking up Iggy user " + o.iggy_user + ": " + iggy_message(user.error())));
    if (!*user) {
      auto made = iggy.run<iggy::UserInfo>([&](iggy::IggyClient& cl, auto cb) {
        cl.create_user(o.iggy_user, *row.iggy_password, iggy::UserStatus::kActive, std::nullopt, cb);
      });
      if (!made) return fail(c, usage("creating Iggy user " + o.iggy_user + ": " + iggy_message(made.error())));
      c.err << "created Iggy user " << o.iggy_user << " (no permissions until the bridge writes its ACLs)\n";
    }
  }
  auto db = open_state(c.cfg);
  if (!db) return fail(c, db.error());
  try {
    state::upsert_principal_iggy_user(**db, row, now_ms());
  } catch (const std::exception& e) {
    return fail(c, usage(std::string("writing ") + c.cfg.state.path + ": " + e.what()));
  }
  c.out << o.principal << " -> Iggy user " << o.iggy_user << " ("
        << (row.iggy_password ? "password" : "personal access token") << ")\n";
  return 0;
}

int principals_list(const AdminContext& c) {
  auto db = open_state(c.cfg);
  if (!db) return fail(c, db.error());
  std::vector<state::PrincipalIggyUser> rows;
  try {
    rows = state::load_principal_iggy_users(**db);
  } catch (const std::exception& e) {
    return fail(c, usage(std::string("reading ") + c.cfg.state.path + ": " + e.what()));
  }
  if (c.json) {
    json doc = json::array();
    for (const auto& r : rows)
      doc.push_back({{"principal", r.principal},
                     {"iggy_user", r.iggy_username},
                     {"credential", r.iggy_password ? "password" : "personal_access_token"},
                     {"created_by_bridge", r.created_by_bridge},
                     {"status", state::iggy_user_status_name(r.status)},
                     {"updated_at_ms", r.updated_at_ms}});
    c.out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return 0;
  }
  TextTable t({"PRINCIPAL", "IGGY-USER", "CREDENTIAL", "CREATED-BY-BRIDGE", "STATUS"});
  bool refused = false, pending = false;
  for (const auto& r : rows) {
    t.add({r.principal, r.iggy_username, r.iggy_password ? "password" : "token", r.created_by_bridge ? "yes" : "no",
           state::iggy_user_status_name(r.status)});
    refused = refused || r.status == state::IggyUserStatus::kRefused;
    pending = pending || r.status == state::IggyUserStatus::kPending;
  }
  c.out << t.render();
  // What the two states that are not simply "in use" mean, and what the operator can do.
  if (refused)
    c.out << "refused: the Iggy user existed and the bridge did not create it; the principal's data requests get "
             "TOPIC_AUTHORIZATION_FAILED and the user is left as it is. Map it (principals map PRINCIPAL --iggy-user "
             "NAME --password-file FILE) or, to let the bridge create one, delete the Iggy user and unmap the "
             "principal.\n";
  if (pending)
    c.out << "pending: the bridge has not yet seen Iggy create the user; it settles that at the principal's next "
             "data request.\n";
  return 0;
}

int principals_unmap(const AdminContext& c, const std::string& principal) {
  if (!valid_principal(principal)) return fail(c, usage("principal must be TYPE:NAME, e.g. User:alice"));
  auto db = open_state(c.cfg);
  if (!db) return fail(c, db.error());
  bool deleted = false;
  try {
    deleted = state::delete_principal_iggy_user(**db, principal);
  } catch (const std::exception& e) {
    return fail(c, usage(std::string("writing ") + c.cfg.state.path + ": " + e.what()));
  }
  if (!deleted) return fail(c, usage(principal + " has no Iggy user"));
  c.out << principal << " unmapped\n";
  return 0;
}

}  // namespace kib::admin
