// `kafka-iggy-bridge principals map|list|unmap`: which Iggy user a Kafka principal's data
// requests run as when [principals] iggy_identity = "per_principal" (docs/security.md). They
// write the state database directly (the bridge reads a principal's row when a connection of it
// first produces or fetches, so a change applies to new connections without a restart) and
// never print or log a secret.
#pragma once

#include <string>

#include "admin/admin_commands.h"

namespace kib::admin {

struct PrincipalMapOptions {
  std::string principal;      // "User:alice"
  std::string iggy_user;
  std::string password_file;  // "-" = standard input; exactly one of the two files
  std::string token_file;     // a personal access token of iggy_user
  bool create = false;        // create iggy_user in Iggy (with the password) when it does not exist
};
int principals_map(const AdminContext& c, const PrincipalMapOptions& o);
int principals_list(const AdminContext& c);
int principals_unmap(const AdminContext& c, const std::string& principal);

}  // namespace kib::admin
