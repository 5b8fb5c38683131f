// `users add|list|delete`: the SASL credentials in the state database ([state] path), written
// directly, so the first user exists before any client can log in (Kafka's `kafka-storage
// format --add-scram`). The running bridge reads a user's credential at each login, so a change
// applies to the next one. Passwords come from a file, standard input or the terminal, never
// from the command line, and are never printed; only salts and derived keys are stored.
#include <termios.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "admin/admin_commands.h"
#include "admin/text_table.h"
#include "security/crypto.h"
#include "security/plain.h"
#include "security/sasl.h"
#include "security/scram.h"
#include "state/credential_store.h"
#include "state/state_store.h"

namespace kib::admin {
namespace {

using nlohmann::json;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string utc(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The first line of `in` (without its line ending).
std::string first_line(std::istream& in) {
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

// From the terminal, not echoed, asked twice.
Result<std::string> prompt_password(const std::string& user) {
  termios old{};
  tcgetattr(STDIN_FILENO, &old);
  termios quiet = old;
  quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
  tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
  std::cerr << "Password for " << user << ": " << std::flush;
  std::string first = first_line(std::cin);
  std::cerr << "\nAgain: " << std::flush;
  std::string second = first_line(std::cin);
  std::cerr << "\n";
  tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
  const bool same = first == second;
  security::wipe(second);
  if (!same) {
    security::wipe(first);
    return Error{ErrorDomain::kInvalid, 0, "the two passwords differ"};
  }
  return first;
}

// --password-file FILE: its first line; "-" or no option without a terminal: standard
// input's first line; no option on a terminal: asked for.
Result<std::string> read_password(const UserOptions& o) {
  std::string password;
  if (o.password_file.empty() && isatty(STDIN_FILENO)) {
    auto p = prompt_password(o.name);
    if (!p) return p.error();
    password = std::move(*p);
  } else if (o.password_file.empty() || o.password_file == "-") {
    password = first_line(std::cin);
  } else {
    std::ifstream in(o.password_file);
    if (!in) return Error{ErrorDomain::kInvalid, 0, o.password_file + ": cannot read the password file"};
    password = first_line(in);
  }
  if (password.empty()) return Error{ErrorDomain::kInvalid, 0, "the password is empty"};
  return password;
}

struct Database {
  std::unique_ptr<SQLite::Database> db;
};

Result<Database> open(const AdminContext& c) {
  auto db = state::open_database(c.cfg.state.path);
  if (!db) return db.error();
  auto v = state::migrate(**db);
  if (!v) return v.error();
  return Database{std::move(*db)};
}

}  // namespace

int users_add(const AdminContext& c, const UserOptions& o) {
  if (o.name.empty()) return fail(c, Error{ErrorDomain::kInvalid, 0, "the user name is empty"});
  auto mechanism = security::parse_sasl_mechanism(o.mechanism);
  if (!mechanism)
    return fail(c, Error{ErrorDomain::kInvalid, 0,
                         "--mechanism " + o.mechanism + ": expected SCRAM-SHA-256, SCRAM-SHA-512 or PLAIN"});
  // Kafka's SCRAM grammar takes user names of ASCII 0x01-0x7F only (',' and '=' escaped).
  if (security::is_scram(*mechanism))
    for (unsigned char ch : o.name)
      if (ch == 0 || ch > 0x7F)
        return fail(c, Error{ErrorDomain::kInvalid, 0, "a SCRAM user name is ASCII (Kafka's SCRAM grammar)"});
  const int32_t iterations = o.iterations.value_or(c.cfg.sasl.scram_iterations);
  if (iterations < config::SaslConfig::kMinIterations || iterations > config::SaslConfig::kMaxIterations)
    return fail(c, Error{ErrorDomain::kInvalid, 0,
                         "--iterations " + std::to_string(iterations) + ": must be between 4096 and 16384 (Kafka's bounds)"});
  auto password = read_password(o);
  if (!password) return fail(c, password.error());
  auto db = open(c);
  if (!db) {
    security::wipe(*password);
    return fail(c, db.error());
  }
  bool replaced = false;
  try {
    SQLite::Transaction tx(*db->db, SQLite::TransactionBehavior::IMMEDIATE);
    if (auto scram = security::scram_mechanism(*mechanism)) {
      const std::string name(security::scram_mechanism_name(*scram));
      replaced = state::load_scram_credential(*db->db, o.name, name).has_value();
      security::ScramCredential cred = security::make_scram_credential(*scram, *password, iterations);
      state::upsert_scram_credential(
          *db->db, {o.name, name, cred.salt, cred.stored_key, cred.server_key, cred.iterations}, now_ms());
    } else {
      replaced = state::load_plain_credential(*db->db, o.name).has_value();
      security::PlainCredential cred = security::make_plain_credential(*password, iterations);
      state::upsert_plain_credential(*db->db, {o.name, cred.salt, cred.hash, cred.iterations}, now_ms());
    }
    tx.commit();
  } catch (const std::exception& e) {
    security::wipe(*password);
    return fail(c, Error{ErrorDomain::kState, 0, c.cfg.state.path + ": " + e.what()});
  }
  security::wipe(*password);
  c.out << (replaced ? "Updated " : "Added ") << o.mechanism << " credential for user " << o.name << " ("
        << iterations << " iterations)\n";
  return 0;
}

int users_list(const AdminContext& c) {
  auto db = open(c);
  if (!db) return fail(c, db.error());
  std::vector<state::CredentialInfo> rows;
  try {
    rows = state::list_credentials(*db->db);
  } catch (const std::exception& e) {
    return fail(c, Error{ErrorDomain::kState, 0, c.cfg.state.path + ": " + e.what()});
  }
  json doc = json::array();
  TextTable table({"USER", "MECHANISM", "ITERATIONS", "UPDATED"});
  for (const auto& r : rows) {
    table.add({r.username, r.mechanism, std::to_string(r.iterations), utc(r.updated_at_ms)});
    doc.push_back({{"user", r.username}, {"mechanism", r.mechanism}, {"iterations", r.iterations},
                   {"updated_at_ms", r.updated_at_ms}});
  }
  if (c.json) c.out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  else c.out << table.render();
  return 0;
}

int users_delete(const AdminContext& c, const UserOptions& o) {
  std::optional<security::SaslMechanism> mechanism;
  if (!o.mechanism.empty()) {
    mechanism = security::parse_sasl_mechanism(o.mechanism);
    if (!mechanism)
      return fail(c, Error{ErrorDomain::kInvalid, 0,
                           "--mechanism " + o.mechanism + ": expected SCRAM-SHA-256, SCRAM-SHA-512 or PLAIN"});
  }
  auto db = open(c);
  if (!db) return fail(c, db.error());
  std::vector<std::string> deleted;
  try {
    SQLite::Transaction tx(*db->db, SQLite::TransactionBehavior::IMMEDIATE);
    for (auto m : {security::SaslMechanism::kScramSha256, security::SaslMechanism::kScramSha512,
                   security::SaslMechanism::kPlain}) {
      if (mechanism && *mechanism != m) continue;
      const bool gone = m == security::SaslMechanism::kPlain
                            ? state::delete_plain_credential(*db->db, o.name)
                            : state::delete_scram_credential(*db->db, o.name, std::string(security::sasl_mechanism_name(m)));
      if (gone) deleted.emplace_back(security::sasl_mechanism_name(m));
    }
    tx.commit();
  } catch (const std::exception& e) {
    return fail(c, Error{ErrorDomain::kState, 0, c.cfg.state.path + ": " + e.what()});
  }
  if (deleted.empty())
    return fail(c, Error{ErrorDomain::kInvalid, 0,
                         "user " + o.name + " has no " + (o.mechanism.empty() ? std::string() : o.mechanism + " ") +
                             "credential"});
  for (const auto& m : deleted) c.out << "Deleted " << m << " credential of user " << o.name << "\n";
  return 0;
}

}  // namespace kib::admin
