// Column-aligned text tables for the admin subcommands, in the shape of Kafka's own tools
// (upper-case headers, one row per line, columns separated by at least two spaces).
// Cells hold what clients chose (topic names, group, member and client ids): each is escaped
// (common/text.h) so a control character cannot reach the operator's terminal, and cut at
// kMaxCellBytes; `--json` output has the full values.
#pragma once

#include <string>
#include <vector>

namespace kib::admin {

class TextTable {
 public:
  static constexpr size_t kMaxCellBytes = 1024;
  explicit TextTable(std::vector<std::string> headers) : rows_{std::move(headers)} {}
  void add(std::vector<std::string> row);
  size_t rows() const { return rows_.size() - 1; }
  std::string render() const;

 private:
  std::vector<std::vector<std::string>> rows_;  // rows_[0] is the header
};

}  // namespace kib::admin
