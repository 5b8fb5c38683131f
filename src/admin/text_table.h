// Column-aligned text tables for the admin subcommands, in the shape of Kafka's own tools
// (upper-case headers, one row per line, columns separated by at least two spaces).
#pragma once

#include <string>
#include <vector>

namespace kib::admin {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers) : rows_{std::move(headers)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t rows() const { return rows_.size() - 1; }
  std::string render() const;

 private:
  std::vector<std::vector<std::string>> rows_;  // rows_[0] is the header
};

}  // namespace kib::admin
