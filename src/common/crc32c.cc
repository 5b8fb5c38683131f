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
// The crc32 instruction has a latency of three cycles and a throughput of one per cycle, so one
// dependency chain runs at a third of the CPU's speed. Long inputs are split into three streams
// of kLong (then kShort) bytes computed side by side and combined by shifting the first two over
// the bytes that follow them (M. Adler's crc32c.c, zlib licence: the shift of a CRC over n zero
// bytes is a linear operator on its 32 bits, tabulated per byte of the CRC).
constexpr size_t kLong = 8192;
constexpr size_t kShort = 256;

uint32_t gf2_matrix_times(const uint32_t* mat, uint32_t vec) {
  uint32_t sum = 0;
  for (; vec; vec >>= 1, ++mat)
    if (vec & 1) sum ^= *mat;
  return sum;
}

void gf2_matrix_square(uint32_t* square, const uint32_t* mat) {
  for (int n = 0; n < 32; ++n) square[n] = gf2_matrix_times(mat, mat[n]);
}

// The operator that appends `len` zero bytes (len a power of two) to a CRC register.
void zeros_operator(uint32_t* even, size_t len) {
  uint32_t odd[32];
  odd[0] = kPoly;  // one zero bit
  uint32_t row = 1;
  for (int n = 1; n < 32; ++n, row <<= 1) odd[n] = row;
  gf2_matrix_square(even, odd);  // two zero bits
  gf2_matrix_square(odd, even);  // four zero bits
  // Each square doubles: the first gives one zero byte, in `even`.
  do {
    gf2_matrix_square(even, odd);
    len >>= 1;
    if (len == 0) return;
    gf2_matrix_square(odd, even);
    len >>= 1;
  } while (len);
  for (int n = 0; n < 32; ++n) even[n] = odd[n];
}

struct ShiftTable {
  uint32_t t[4][256];
  explicit ShiftTable(size_t len) {
    uint32_t op[32];
    zeros_operator(op, len);
    for (uint32_t n = 0; n < 256; ++n) {
      t[0][n] = gf2_matrix_times(op, n);
      t[1][n] = gf2_matrix_times(op, n << 8);
      t[2][n] = gf2_matrix_times(op, n << 16);
      t[3][n] = gf2_matrix_times(op, n << 24);
    }
  }
  uint32_t shift(uint32_t crc) const {
    return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
  }
};

const ShiftTable& long_shift() {
  static const ShiftTable table(kLong);
  return table;
}
const ShiftTable& short_shift() {
  static const ShiftTable table(kShort);
  return table;
}

__attribute__((target("sse4.2"))) uint64_t crc_u64(uint64_t c, const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return _mm_crc32_u64(c, v);
}

// Three streams of `block` bytes at a time while 3 * block remain; returns the register.
__attribute__((target("sse4.2"))) uint64_t crc_three_way(uint64_t c0, const uint8_t*& p, size_t& n, size_t block,
                                                         const ShiftTable& shift) {
  while (n >= 3 * block) {
    uint64_t c1 = 0, c2 = 0;
    const uint8_t* end = p + block;
    do {
      c0 = crc_u64(c0, p);
      c1 = crc_u64(c1, p + block);
      c2 = crc_u64(c2, p + 2 * block);
      p += 8;
    } while (p < end);
    c0 = shift.shift(static_cast<uint32_t>(c0)) ^ c1;
    c0 = shift.shift(static_cast<uint32_t>(c0)) ^ c2;
    p += 2 * block;
    n -= 3 * block;
  }
  return c0;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(const uint8_t* p, size_t n, uint32_t crc) {
  uint64_t c = ~crc;
  if (n >= 3 * kShort) {
    c = crc_three_way(c, p, n, kLong, long_shift());
    c = crc_three_way(c, p, n, kShort, short_shift());
  }
  while (n >= 8) {
    c = crc_u64(c, p);
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
