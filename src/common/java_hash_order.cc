#include "common/java_hash_order.h"

#include <algorithm>
#include <unordered_set>

namespace kib {
namespace {

// Decodes one UTF-8 sequence at s[i], advancing i; U+FFFD for a malformed one.
uint32_t next_code_point(std::string_view s, size_t& i) {
  const auto b = static_cast<uint8_t>(s[i++]);
  if (b < 0x80) return b;
  int extra = b >= 0xF0 && b < 0xF8 ? 3 : b >= 0xE0 ? 2 : b >= 0xC2 && b < 0xE0 ? 1 : -1;
  if (extra < 0) return 0xFFFD;
  uint32_t cp = b & (0x3F >> extra);
  for (int k = 0; k < extra; ++k) {
    if (i >= s.size() || (static_cast<uint8_t>(s[i]) & 0xC0) != 0x80) return 0xFFFD;
    cp = (cp << 6) | (static_cast<uint8_t>(s[i++]) & 0x3F);
  }
  return cp > 0x10FFFF ? 0xFFFD : cp;
}

}  // namespace

int32_t java_string_hash(std::string_view s) {
  uint32_t h = 0;  // Java's int arithmetic wraps; unsigned arithmetic wraps the same way
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = next_code_point(s, i);
    if (cp >= 0x10000) {
      h = 31 * h + (0xD800 + ((cp - 0x10000) >> 10));
      h = 31 * h + (0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      h = 31 * h + cp;
    }
  }
  return static_cast<int32_t>(h);
}

std::vector<std::string> java_hash_order(const std::vector<std::string>& inserted, size_t peak_size,
                                         size_t initial_capacity) {
  std::vector<std::string> keys;
  std::unordered_set<std::string_view> seen;
  keys.reserve(inserted.size());
  for (const auto& k : inserted)
    if (seen.insert(k).second) keys.push_back(k);
  const size_t size = std::max(peak_size, keys.size());
  uint64_t capacity = 1;  // HashMap.tableSizeFor
  while (capacity < initial_capacity) capacity <<= 1;
  while (size > capacity * 3 / 4) capacity <<= 1;  // HashMap.resize when ++size > threshold
  auto bucket = [capacity](const std::string& k) {
    const auto h = static_cast<uint32_t>(java_string_hash(k));
    return (h ^ (h >> 16)) & (capacity - 1);
  };
  std::stable_sort(keys.begin(), keys.end(), [&](const std::string& a, const std::string& b) { return bucket(a) < bucket(b); });
  return keys;
}

}  // namespace kib
