#include "admin/text_table.h"

#include <algorithm>

#include "common/text.h"

namespace kib::admin {

void TextTable::add(std::vector<std::string> row) {
  for (auto& cell : row) cell = escape(cell, kMaxCellBytes);
  rows_.push_back(std::move(row));
}

std::string TextTable::render() const {
  std::vector<size_t> width;
  for (const auto& r : rows_) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows_) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line.append(width[i] - r[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace kib::admin
