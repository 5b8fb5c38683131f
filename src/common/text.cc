#include "common/text.h"

#include <algorithm>
#include <cstdint>

namespace kib {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0 when the bytes there are not one.
size_t utf8_seq_len(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const size_t left = s.size() - i;
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  auto cont = [&](size_t k) { return k < left && (b(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// Code point of a well-formed sequence of length n at s[i].
uint32_t code_point(std::string_view s, size_t i, size_t n) {
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(s[i + k])); };
  switch (n) {
    case 1: return b(0);
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default: return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

// Code points a terminal or a reader may be fooled by: C0 and C1 controls, DEL, and the
// bidirectional embedding/override/isolate controls (Trojan Source), line/paragraph separators.
bool needs_escape(uint32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029 || cp == 0x200E || cp == 0x200F ||
         cp == 0x061C;
}

void hex_byte(std::string& out, uint8_t c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xF];
}

void append_cut_note(std::string& out, size_t total) { out += fmt::format("\u2026({} bytes)", total); }

}  // namespace

std::string_view utf8_prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  // Whole characters only (an invalid byte counts as one), so the cut never splits a sequence.
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = std::max<size_t>(1, utf8_seq_len(s, i));
    if (i + n > max_bytes) break;
    i += n;
  }
  return s.substr(0, i);
}

std::string truncate_message(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  const std::string note = fmt::format("\u2026({} bytes)", s.size());
  if (max_bytes <= note.size()) return std::string(utf8_prefix(s, max_bytes));
  std::string out(utf8_prefix(s, max_bytes - note.size()));
  out += note;
  return out;
}

void escape_to(std::string& out, std::string_view s, size_t max_bytes) {
  const std::string_view head = utf8_prefix(s, max_bytes);
  out.reserve(out.size() + head.size());
  for (size_t i = 0; i < head.size();) {
    const size_t n = utf8_seq_len(head, i);
    if (n == 0) {
      hex_byte(out, static_cast<uint8_t>(head[i]));
      ++i;
      continue;
    }
    if (needs_escape(code_point(head, i, n))) {
      for (size_t k = 0; k < n; ++k) hex_byte(out, static_cast<uint8_t>(head[i + k]));
    } else {
      out.append(head.data() + i, n);
    }
    i += n;
  }
  if (head.size() < s.size()) append_cut_note(out, s.size());
}

std::string escape(std::string_view s, size_t max_bytes) {
  std::string out;
  escape_to(out, s, max_bytes);
  return out;
}

}  // namespace kib
