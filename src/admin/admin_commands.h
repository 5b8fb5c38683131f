// The admin subcommands of kafka-iggy-bridge(8): `topics list`, `groups list|describe`,
// `offsets import|export`, `users add|list|delete`. They talk to the running bridge over its Kafka listener (as
// kafka-topics and kafka-consumer-groups do) and, for `offsets export`, to Iggy with the
// [iggy] credentials. Readable tables by default, one JSON document with `--json`.
//
// Exit codes: 0 done; 1 something failed (the bridge or Iggy did not answer, a Kafka or Iggy
// error, or at least one row could not be imported or exported; the message says which).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "admin/offset_listing.h"
#include "admin/iggy_offset_export.h"
#include "common/result.h"
#include "config/config.h"
#include "state/compaction_store.h"

namespace kib::admin {

struct AdminContext {
  const config::Config& cfg;
  config::HostPort bootstrap;  // the bridge's Kafka listener
  bool json = false;
  std::ostream& out;
  std::ostream& err;
};

// Prints why a command failed and gives its exit status (1).
inline int fail(const AdminContext& c, const Error& e) {
  c.err << e.message << "\n";
  return 1;
}

// The cleaned partitions (docs/compaction.md), read from the state database read-only: empty when
// it cannot be opened (the command runs where the database is not, or before the first start).
std::map<std::pair<std::string, int32_t>, state::CompactionStateRow> cleaned_partitions(const config::Config& cfg);

// The first [kafka] listener, wildcard addresses meaning loopback.
config::HostPort default_bootstrap(const config::Config& cfg);

int topics_list(const AdminContext& c);
int groups_list(const AdminContext& c);
int groups_describe(const AdminContext& c, const std::vector<std::string>& group_ids);

struct ImportOptions {
  std::string file;  // "-" = standard input
  ListingFormat format = ListingFormat::kAuto;
  std::optional<std::string> group;
  bool execute = false;  // false: print the plan only (as kafka-consumer-groups --dry-run)
};
int offsets_import(const AdminContext& c, const ImportOptions& o);

struct ExportOptions {
  std::string group;                // the Kafka group
  std::vector<std::string> topics;  // empty = every topic the group committed
  IggyOffsetTarget target;          // name empty = the Kafka group id
  bool execute = false;
};
int offsets_export(const AdminContext& c, const ExportOptions& o);

// `users add|list|delete` (docs/security.md "Credentials"): SASL users in the state database
// ([state] path), written directly; the bridge need not run.
struct UserOptions {
  std::string name;
  std::string mechanism;             // add: required; delete: empty = every mechanism
  std::string password_file;         // empty: the terminal, or standard input when it is not one; "-": standard input
  std::optional<int32_t> iterations; // add: default [sasl] scram_iterations
};
int users_add(const AdminContext& c, const UserOptions& o);
int users_list(const AdminContext& c);
int users_delete(const AdminContext& c, const UserOptions& o);

}  // namespace kib::admin
