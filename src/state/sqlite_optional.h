// Nullable TEXT columns for the state stores: std::nullopt is SQL NULL both ways.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <optional>
#include <string>

namespace kib::state {

inline void bind_optional(SQLite::Statement& st, int index, const std::optional<std::string>& v) {
  if (v)
    st.bind(index, *v);
  else
    st.bind(index);
}

inline std::optional<std::string> optional_column(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getString();
}

}  // namespace kib::state
