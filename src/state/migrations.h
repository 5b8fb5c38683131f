#pragma once

#include <string>
#include <vector>

namespace kib::state {

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

// Every migration in migrations/, embedded at build time, ordered by version.
const std::vector<Migration>& migrations();

}  // namespace kib::state
