#include "security/ssl_principal_mapper.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdint>

namespace kib::security {
namespace {

Error invalid(std::string msg) { return Error{ErrorDomain::kInvalid, 0, std::move(msg)}; }

// Bounds on one match, so that a pattern that backtracks badly on a long subject fails the
// one connection instead of holding the event loop.
constexpr uint32_t kMatchLimit = 1'000'000;
constexpr uint32_t kHeapLimitKiB = 16 * 1024;

pcre2_match_context* match_context() {
  static pcre2_match_context* ctx = [] {
    pcre2_match_context* c = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(c, kMatchLimit);
    pcre2_set_heap_limit(c, kHeapLimitKiB);
    return c;
  }();
  return ctx;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  int n = pcre2_get_error_message(code, buf, sizeof buf);
  return n < 0 ? "error " + std::to_string(code) : std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

// A compiled pattern with java.util.regex.Matcher's find()/matches() over a subject.
class Regex {
 public:
  static Result<Regex> compile(std::string_view pattern) {
    pcre2_compile_context* cc = pcre2_compile_context_create(nullptr);
    // Java's "." and "$" know every Unicode line terminator, not just \n.
    pcre2_set_newline(cc, PCRE2_NEWLINE_ANY);
    int err = 0;
    PCRE2_SIZE at = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &at, cc);
    pcre2_compile_context_free(cc);
    if (!code)
      return invalid("pattern \"" + std::string(pattern) + "\" does not compile at offset " + std::to_string(at) + ": " +
                     pcre2_message(err));
    Regex r;
    r.source_ = std::string(pattern);
    r.code_ = std::shared_ptr<pcre2_code>(code, pcre2_code_free);
    uint32_t groups = 0;
    pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &groups);
    r.groups_ = groups;
    return r;
  }

  // Spans of group 0..group_count() of the last match; -1 for a group that did not take part.
  struct Match {
    std::vector<std::pair<int64_t, int64_t>> groups;
    int64_t start() const { return groups[0].first; }
    int64_t end() const { return groups[0].second; }
  };

  // The first match at or after `from` (anchored: at `from`; whole: to the subject's end).
  // Nothing: no match; an error: the match limits were reached.
  Result<std::optional<Match>> match(std::string_view subject, size_t from, bool anchored, bool whole) const {
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
        pcre2_match_data_create_from_pattern(code_.get(), nullptr), pcre2_match_data_free);
    uint32_t opts = (anchored ? PCRE2_ANCHORED : 0) | (whole ? PCRE2_ENDANCHORED : 0);
    int rc = pcre2_match(code_.get(), reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), from, opts,
                         md.get(), match_context());
    if (rc == PCRE2_ERROR_NOMATCH) return std::optional<Match>();
    if (rc < 0) return invalid("pattern \"" + source_ + "\": " + pcre2_message(rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    Match m;
    for (uint32_t g = 0; g <= groups_; ++g) {
      bool set = g < static_cast<uint32_t>(rc) && ov[2 * g] != PCRE2_UNSET;
      m.groups.emplace_back(set ? static_cast<int64_t>(ov[2 * g]) : -1, set ? static_cast<int64_t>(ov[2 * g + 1]) : -1);
    }
    return std::optional<Match>(std::move(m));
  }

  // Matcher.find() in a loop: every match, an empty one moving the next search one character on.
  Result<std::vector<Match>> find_all(std::string_view subject) const {
    std::vector<Match> out;
    int64_t first = -1, last = 0;  // the previous match, as Matcher keeps it
    for (;;) {
      size_t at = static_cast<size_t>(last);
      if (last == first) {  // the previous match was empty: one character on
        if (at >= subject.size()) break;
        ++at;
        while (at < subject.size() && (static_cast<uint8_t>(subject[at]) & 0xC0) == 0x80) ++at;
      }
      auto m = match(subject, at, false, false);
      if (!m) return m.error();
      if (!*m) break;
      first = (*m)->start();
      last = (*m)->end();
      out.push_back(std::move(**m));
    }
    return out;
  }

  uint32_t group_count() const { return groups_; }
  std::optional<uint32_t> group_named(const std::string& name) const {
    int n = pcre2_substring_number_from_name(code_.get(), reinterpret_cast<PCRE2_SPTR>(name.c_str()));
    if (n < 0) return std::nullopt;
    return static_cast<uint32_t>(n);
  }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::shared_ptr<pcre2_code> code_;
  uint32_t groups_ = 0;
};

// Kafka's SslPrincipalMapper.RULE_PATTERN and RULE_SPLITTER, unchanged.
constexpr std::string_view kRulePattern = R"re((DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?))re";

const Regex& rule_parser() {
  static const Regex r = Regex::compile(kRulePattern).value();
  return r;
}
const Regex& rule_splitter() {
  static const Regex r = Regex::compile(R"re(\s*()re" + std::string(kRulePattern) + R"re()\s*(,\s*|$))re").value();
  return r;
}

std::string group(std::string_view s, const Regex::Match& m, size_t g) {
  if (g >= m.groups.size() || m.groups[g].first < 0) return {};
  return std::string(s.substr(static_cast<size_t>(m.groups[g].first),
                              static_cast<size_t>(m.groups[g].second - m.groups[g].first)));
}
bool has_group(const Regex::Match& m, size_t g) { return g < m.groups.size() && m.groups[g].first >= 0; }

// Java's String.trim(): every character up to and including ' ' off both ends.
std::string_view java_trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && static_cast<uint8_t>(s[b]) <= ' ') ++b;
  while (e > b && static_cast<uint8_t>(s[e - 1]) <= ' ') --e;
  return s.substr(b, e - b);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ascii_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Kafka's Rule.escapeLiteralBackReferences (from Apache NiFi), kept as it behaves: a "$N" naming
// a group the pattern does not have becomes a literal "$N" (after trying fewer digits), the
// positions found in the original string applied to the string being rewritten.
std::string escape_literal_back_references(const std::string& unescaped, uint32_t groups) {
  if (groups == 0) return unescaped;
  std::string value = unescaped;
  for (size_t i = 0; i < unescaped.size(); ++i) {
    if (unescaped[i] != '$' || i + 1 >= unescaped.size() || !is_digit(unescaped[i + 1])) continue;
    size_t j = i + 1;
    while (j < unescaped.size() && is_digit(unescaped[j])) ++j;
    std::string num = unescaped.substr(i + 1, j - i - 1);
    size_t group_start = i + 1;
    i = j - 1;
    if (num[0] == '0') continue;
    // Integer.parseInt: more digits than an int holds would throw in Kafka; such a reference
    // names no group either way.
    uint64_t index = 0;
    for (char c : num) index = std::min<uint64_t>(index * 10 + static_cast<uint64_t>(c - '0'), uint64_t{1} << 40);
    while (index > groups && index >= 10) index /= 10;
    if (index > groups && group_start - 1 <= value.size())
      value = value.substr(0, group_start - 1) + "\\" + value.substr(group_start - 1);
  }
  return value;
}

// Matcher.appendReplacement's expansion of `replacement` for match `m` of `subject`.
Result<std::string> expand(const Regex& re, std::string_view subject, const Regex::Match& m, const std::string& replacement) {
  std::string out;
  size_t cur = 0;
  while (cur < replacement.size()) {
    char c = replacement[cur];
    if (c == '\\') {
      if (++cur == replacement.size()) return invalid("replacement \"" + replacement + "\": character to be escaped is missing");
      out += replacement[cur++];
    } else if (c == '$') {
      if (++cur == replacement.size())
        return invalid("replacement \"" + replacement + "\": illegal group reference: group index is missing");
      uint32_t ref = 0;
      if (replacement[cur] == '{') {
        ++cur;
        std::string name;
        while (cur < replacement.size() && is_ascii_alnum(replacement[cur])) name += replacement[cur++];
        if (name.empty()) return invalid("replacement \"" + replacement + "\": named capturing group has 0 length name");
        if (cur >= replacement.size() || replacement[cur] != '}')
          return invalid("replacement \"" + replacement + "\": named capturing group is missing trailing '}'");
        if (is_digit(name[0]))
          return invalid("replacement \"" + replacement + "\": capturing group name {" + name + "} starts with digit character");
        auto n = re.group_named(name);
        if (!n) return invalid("replacement \"" + replacement + "\": no group with name {" + name + "}");
        ref = *n;
        ++cur;
      } else {
        if (!is_digit(replacement[cur])) return invalid("replacement \"" + replacement + "\": illegal group reference");
        ref = static_cast<uint32_t>(replacement[cur++] - '0');
        while (cur < replacement.size() && is_digit(replacement[cur])) {
          uint64_t next = uint64_t{ref} * 10 + static_cast<uint64_t>(replacement[cur] - '0');
          if (next > re.group_count()) break;
          ref = static_cast<uint32_t>(next);
          ++cur;
        }
        if (ref > re.group_count()) return invalid("replacement \"" + replacement + "\": no group " + std::to_string(ref));
      }
      out += group(subject, m, ref);
    } else {
      out += c;
      ++cur;
    }
  }
  return out;
}

}  // namespace

struct SslPrincipalMapper::Rule {
  bool is_default = true;
  std::optional<Regex> pattern;
  std::string replacement;
  bool to_lower = false;
  bool to_upper = false;

  // The mapped name, nothing when the rule does not apply.
  Result<std::optional<std::string>> apply(std::string_view dn) const {
    if (is_default) return std::optional<std::string>(std::string(dn));
    auto whole = pattern->match(dn, 0, true, true);
    if (!whole) return whole.error();
    if (!*whole) return std::optional<std::string>();
    // String.replaceAll(pattern, replacement): every match, not only the whole-DN one.
    std::string repl = escape_literal_back_references(replacement, pattern->group_count());
    auto all = pattern->find_all(dn);
    if (!all) return all.error();
    std::string result;
    size_t tail = 0;
    for (const auto& m : *all) {
      result.append(dn.substr(tail, static_cast<size_t>(m.start()) - tail));
      auto r = expand(*pattern, dn, m, repl);
      if (!r) return r.error();
      result += *r;
      tail = static_cast<size_t>(m.end());
    }
    result.append(dn.substr(tail));
    for (char& c : result) {
      if (to_lower && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      else if (to_upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return std::optional<std::string>(std::move(result));
  }

  std::string str() const {
    if (is_default) return "DEFAULT";
    std::string s = "RULE:" + pattern->source() + "/" + replacement;
    if (to_lower) s += "/L";
    else if (to_upper) s += "/U";
    return s;
  }
};

SslPrincipalMapper::SslPrincipalMapper() = default;
SslPrincipalMapper::SslPrincipalMapper(SslPrincipalMapper&&) noexcept = default;
SslPrincipalMapper& SslPrincipalMapper::operator=(SslPrincipalMapper&&) noexcept = default;
SslPrincipalMapper::~SslPrincipalMapper() = default;

Result<SslPrincipalMapper> SslPrincipalMapper::parse(std::string_view text) {
  std::string_view trimmed = java_trim(text);
  auto split = rule_splitter().find_all(trimmed);
  if (!split) return split.error();
  SslPrincipalMapper mapper;
  for (const auto& sm : *split) {
    std::string rule = group(trimmed, sm, 1);
    auto pm = rule_parser().match(rule, 0, true, false);
    if (!pm) return pm.error();
    if (!*pm) return invalid("invalid rule: " + rule);
    const Regex::Match& m = **pm;
    if (static_cast<size_t>(m.end()) != rule.size())
      return invalid("invalid rule: `" + rule + "`, unmatched substring: `" + rule.substr(static_cast<size_t>(m.end())) + "`");
    if (has_group(m, 1)) {
      mapper.rules_.push_back(std::make_unique<Rule>());
    } else if (has_group(m, 2)) {
      auto re = Regex::compile(group(rule, m, 2));
      if (!re) return invalid("invalid rule: " + rule + ": " + re.error().message);
      auto r = std::make_unique<Rule>();
      r->is_default = false;
      r->pattern = std::move(*re);
      r->replacement = group(rule, m, 4);
      std::string flag = group(rule, m, 6);
      r->to_lower = flag == "L";
      r->to_upper = flag == "U";
      mapper.rules_.push_back(std::move(r));
    }
    // else: an empty rule, ignored
  }
  return mapper;
}

Result<std::string> SslPrincipalMapper::name_of(std::string_view dn) const {
  for (const auto& r : rules_) {
    auto name = r->apply(dn);
    if (!name) return name.error();
    if (*name) return std::move(**name);
  }
  return invalid("no rules apply to " + std::string(dn) + ", rules " + str().substr(str().find('[')));
}

std::string SslPrincipalMapper::str() const {
  std::string s = "SslPrincipalMapper(rules = [";
  for (size_t i = 0; i < rules_.size(); ++i) s += (i ? ", " : "") + rules_[i]->str();
  return s + "])";
}

}  // namespace kib::security
