// Fixed-position little-endian loads and stores (common/bytes.h), which the Iggy frame code uses
// to read and patch headers in place: the byte order on the wire, independent of the host's; and
// ByteReader's varints.
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>
#include <vector>

#include "common/bytes.h"

using namespace kib;

BOOST_AUTO_TEST_SUITE(common_bytes)

BOOST_AUTO_TEST_CASE(load_le_reads_the_least_significant_byte_first) {
  const std::array<uint8_t, 8> b{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88};
  BOOST_TEST(load_le<uint32_t>(b.data()) == 0x04030201u);
  BOOST_TEST(load_le<uint64_t>(b.data()) == 0x8807060504030201ull);
  BOOST_TEST(load_le<uint16_t>(b.data() + 6) == 0x8807u);
  BOOST_TEST(load_le<int64_t>(b.data()) == static_cast<int64_t>(0x8807060504030201ull));  // sign bit kept
}

BOOST_AUTO_TEST_CASE(store_le_writes_what_load_le_and_ByteReader_read_back) {
  std::array<uint8_t, 12> b{};
  store_le<uint32_t>(b.data(), 0xA1B2C3D4u);
  store_le<uint64_t>(b.data() + 4, 0x0102030405060708ull);
  BOOST_TEST(b[0] == 0xD4);
  BOOST_TEST(b[3] == 0xA1);
  BOOST_TEST(b[4] == 0x08);
  BOOST_TEST(b[11] == 0x01);
  BOOST_TEST(load_le<uint32_t>(b.data()) == 0xA1B2C3D4u);
  ByteReader r(ByteSpan(b.data(), b.size()));
  BOOST_TEST(r.le<uint32_t>("u32") == 0xA1B2C3D4u);
  BOOST_TEST(r.le<uint64_t>("u64") == 0x0102030405060708ull);
}

// ByteReader reads one- and two-byte varints without a bounds check per byte when the longest
// varint fits in what is left; the byte-by-byte path serves the rest. Both must agree.
BOOST_AUTO_TEST_CASE(varints_read_back_whatever_is_left_after_them) {
  const std::vector<uint64_t> values = {0, 1, 0x7F, 0x80, 0xFF, 0x3FFF, 0x4000, 0x1FFFFF, 0xFFFFFFF, 0xFFFFFFFFull,
                                        0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull};
  for (uint64_t v : values) {
    for (size_t trailing = 0; trailing <= 10; ++trailing) {
      ByteWriter w;
      w.uvarlong(v);
      const size_t encoded = w.size();
      w.zeros(trailing);
      {
        ByteReader r(w.buffer());
        BOOST_TEST(r.uvarlong("v") == v);
        BOOST_TEST(r.remaining() == trailing);
      }
      if (v <= 0xFFFFFFFFull) {
        ByteReader r(w.buffer());
        BOOST_TEST(r.uvarint("v") == static_cast<uint32_t>(v));
        BOOST_TEST(r.remaining() == trailing);
      }
      // Cut short: an error, whichever path reads it.
      if (encoded > 1) {
        ByteReader cut(ByteSpan(w.buffer()).first(encoded - 1));
        BOOST_CHECK_THROW(cut.uvarlong("v"), DecodeError);
      }
    }
  }
  for (int32_t v : {0, -1, 1, 63, -64, 64, -65, 8191, -8192, 8192, INT32_MAX, INT32_MIN}) {
    ByteWriter w;
    w.varint(v);
    w.zeros(8);
    ByteReader r(w.buffer());
    BOOST_TEST(r.varint("v") == v);
  }
}

BOOST_AUTO_TEST_SUITE_END()
