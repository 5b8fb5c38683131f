#include "admin/offset_listing.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

namespace kib::admin {
namespace {

Error invalid(size_t line, const std::string& msg) {
  return Error{ErrorDomain::kInvalid, 0, "line " + std::to_string(line) + ": " + msg};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// One CSV record (RFC 4180 quoting within a line); nullopt for an unterminated quote.
std::optional<std::vector<std::string>> csv_fields(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (quoted) return std::nullopt;
  for (auto& f : out) f = std::string(trim(f));
  return out;
}

template <typename T>
std::optional<T> number(std::string_view s) {
  s = trim(s);
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

Status check_row(const OffsetRow& r) {
  if (r.group.empty()) return invalid(r.line, "empty group id");
  if (r.topic.empty()) return invalid(r.line, "empty topic name");
  if (r.partition < 0) return invalid(r.line, "partition " + std::to_string(r.partition) + " is negative");
  if (r.offset < 0) return invalid(r.line, "offset " + std::to_string(r.offset) + " is negative");
  return ok_status();
}

bool is_describe_header(std::string_view line) {
  auto w = words(line);
  return w.size() >= 4 && w[0] == "GROUP" && std::find(w.begin(), w.end(), "CURRENT-OFFSET") != w.end();
}

Result<std::vector<OffsetRow>> parse_csv(const std::vector<std::string_view>& lines,
                                         const std::optional<std::string>& group) {
  std::vector<OffsetRow> rows;
  bool first = true;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = trim(lines[i]);
    if (line.empty() || line.front() == '#') continue;
    auto fields = csv_fields(lines[i]);
    if (!fields) return invalid(i + 1, "unterminated quoted field");
    auto& f = *fields;
    auto lower = [](std::string v) {
      for (auto& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return v;
    };
    const bool header = first && (lower(f[0]) == "group" || lower(f[0]) == "topic") && !number<int64_t>(f.back());
    first = false;
    if (header) continue;
    OffsetRow r;
    r.line = i + 1;
    size_t at = 0;
    if (f.size() == 3) {
      if (!group) return invalid(r.line, "3 columns (topic,partition,offset) need --group");
      r.group = *group;
    } else if (f.size() == 4 || f.size() == 5) {
      r.group = f[at++];
    } else {
      return invalid(r.line, "expected group,topic,partition,offset[,metadata] or topic,partition,offset; found " +
                                 std::to_string(f.size()) + " fields");
    }
    r.topic = f[at++];
    auto p = number<int32_t>(f[at++]);
    if (!p) return invalid(r.line, "partition \"" + f[at - 1] + "\" is not a number");
    r.partition = *p;
    auto o = number<int64_t>(f[at++]);
    if (!o) return invalid(r.line, "offset \"" + f[at - 1] + "\" is not a number");
    r.offset = *o;
    if (at < f.size()) r.metadata = f[at];
    if (auto st = check_row(r); !st) return st.error();
    if (group && r.group != *group) continue;
    rows.push_back(std::move(r));
  }
  return rows;
}

Result<std::vector<OffsetRow>> parse_describe(const std::vector<std::string_view>& lines,
                                              const std::optional<std::string>& group) {
  std::vector<OffsetRow> rows;
  std::map<std::string, size_t> column;  // of the header in effect
  for (size_t i = 0; i < lines.size(); ++i) {
    auto w = words(lines[i]);
    if (w.empty()) continue;
    if (is_describe_header(lines[i])) {
      column.clear();
      for (size_t c = 0; c < w.size(); ++c) column[std::string(w[c])] = c;
      if (!column.count("TOPIC") || !column.count("PARTITION"))
        return invalid(i + 1, "the GROUP header has no TOPIC or PARTITION column");
      continue;
    }
    if (column.empty()) continue;  // text before the first header
    const size_t g = column["GROUP"], t = column["TOPIC"], p = column["PARTITION"], o = column["CURRENT-OFFSET"];
    if (w.size() <= std::max({g, t, p, o}) || !number<int32_t>(w[p])) continue;  // not a row: a message line
    if (w[o] == "-") continue;  // nothing committed
    OffsetRow r;
    r.line = i + 1;
    r.group = std::string(w[g]);
    r.topic = std::string(w[t]);
    r.partition = *number<int32_t>(w[p]);
    auto off = number<int64_t>(w[o]);
    if (!off) return invalid(r.line, "CURRENT-OFFSET \"" + std::string(w[o]) + "\" is not a number");
    r.offset = *off;
    if (auto st = check_row(r); !st) return st.error();
    if (group && r.group != *group) continue;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

Result<std::vector<OffsetRow>> parse_offset_listing(std::string_view text, ListingFormat format,
                                                    const std::optional<std::string>& group) {
  const auto lines = lines_of(text);
  if (format == ListingFormat::kAuto) {
    format = ListingFormat::kCsv;
    for (auto l : lines) {
      auto t = trim(l);
      if (t.empty() || t.front() == '#') continue;
      if (is_describe_header(t) || t.starts_with("Consumer group '")) {
        format = ListingFormat::kDescribe;
        break;
      }
      if (t.find(',') != std::string_view::npos) break;
    }
  }
  auto rows = format == ListingFormat::kCsv ? parse_csv(lines, group) : parse_describe(lines, group);
  if (!rows) return rows;
  // The same partition twice would make the result depend on row order: refuse it.
  std::map<std::tuple<std::string, std::string, int32_t>, size_t> seen;
  for (const auto& r : *rows) {
    auto [it, fresh] = seen.emplace(std::tuple{r.group, r.topic, r.partition}, r.line);
    if (!fresh)
      return invalid(r.line, "group " + r.group + " topic " + r.topic + " partition " + std::to_string(r.partition) +
                                 " already listed on line " + std::to_string(it->second));
  }
  return rows;
}

}  // namespace kib::admin
