#include "common/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

namespace kib {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reversed Castagnoli polynomial

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kTable = make_table();

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(const uint8_t* p, size_t n, uint32_t crc) {
  uint64_t c = ~crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}

bool detect_sse42() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & bit_SSE4_2) != 0;
}
#endif

}  // namespace

uint32_t crc32c_portable(const uint8_t* p, size_t n, uint32_t crc) {
  uint32_t c = ~crc;
  while (n--) c = kTable[(c ^ *p++) & 0xFF] ^ (c >> 8);
  return ~c;
}

bool crc32c_has_hardware() {
#if defined(__x86_64__)
  static const bool has = detect_sse42();
  return has;
#else
  return false;
#endif
}

uint32_t crc32c(const uint8_t* p, size_t n, uint32_t crc) {
#if defined(__x86_64__)
  if (crc32c_has_hardware()) return crc32c_sse42(p, n, crc);
#endif
  return crc32c_portable(p, n, crc);
}

}  // namespace kib
