#include <boost/test/unit_test.hpp>

#include <random>
#include <string>

#include "common/bytes.h"
#include "common/crc32c.h"

using namespace kib;

BOOST_AUTO_TEST_SUITE(crc32c_checksum)

BOOST_AUTO_TEST_CASE(known_vector_123456789_is_e3069283) {
  std::string s = "123456789";
  auto* p = reinterpret_cast<const uint8_t*>(s.data());
  BOOST_TEST(crc32c(p, s.size()) == 0xE3069283u);
  BOOST_TEST(crc32c_portable(p, s.size()) == 0xE3069283u);
}

BOOST_AUTO_TEST_CASE(hardware_and_portable_agree_on_random_inputs_and_chunking) {
  std::mt19937 rng(7);
  // Lengths around the three-stream block sizes (3 x 256 and 3 x 8192 bytes) too.
  for (size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 767u, 768u, 769u, 1000u, 4097u, 24575u, 24576u, 24577u, 50001u,
                   1000003u}) {
    Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    uint32_t whole = crc32c(b.data(), n);
    BOOST_TEST(whole == crc32c_portable(b.data(), n));
    size_t half = n / 2;
    BOOST_TEST(crc32c(b.data() + half, n - half, crc32c(b.data(), half)) == whole);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(byte_buffers)

BOOST_AUTO_TEST_CASE(varint_and_zigzag_round_trip_extremes) {
  ByteWriter w;
  const int32_t v32[] = {0, 1, -1, 63, -64, 64, INT32_MAX, INT32_MIN};
  const int64_t v64[] = {0, -1, INT64_MAX, INT64_MIN, 1LL << 40};
  for (int32_t v : v32) w.varint(v);
  for (int64_t v : v64) w.varlong(v);
  w.uvarint(UINT32_MAX);
  ByteReader r(w.buffer());
  for (int32_t v : v32) BOOST_TEST(r.varint() == v);
  for (int64_t v : v64) BOOST_TEST(r.varlong() == v);
  BOOST_TEST(r.uvarint() == UINT32_MAX);
  BOOST_TEST(r.empty());
}

BOOST_AUTO_TEST_CASE(zigzag_matches_kafka_examples) {
  BOOST_TEST(zigzag_encode32(0) == 0u);
  BOOST_TEST(zigzag_encode32(-1) == 1u);
  BOOST_TEST(zigzag_encode32(1) == 2u);
  BOOST_TEST(zigzag_encode32(-2) == 3u);
}

BOOST_AUTO_TEST_CASE(reader_refuses_to_read_past_end) {
  // The view is 3 bytes of a larger buffer: what matters is the view's end, not the storage's
  // (and GCC's -Warray-bounds cannot see that the bounds check throws first).
  Bytes backing{0x01, 0x02, 0x03, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE};
  ByteReader r(ByteSpan(backing).first(3));
  BOOST_CHECK_THROW(r.be<int32_t>(), DecodeError);
  BOOST_TEST(r.be<int16_t>() == 0x0102);
  BOOST_CHECK_THROW(r.take(2), DecodeError);
  BOOST_TEST(r.be<uint8_t>() == 3);
}

BOOST_AUTO_TEST_CASE(overlong_varint_is_rejected) {
  Bytes b{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
  ByteReader r(b);
  BOOST_CHECK_THROW(r.uvarint(), DecodeError);
}

BOOST_AUTO_TEST_CASE(claimed_array_count_beyond_input_is_rejected_before_allocation) {
  Bytes b(10);
  ByteReader r(b);
  BOOST_CHECK_THROW(r.check_count(1u << 31, 1, "topics"), DecodeError);
  BOOST_CHECK_NO_THROW(r.check_count(10, 1, "topics"));
  BOOST_CHECK_THROW(r.check_count(3, 4, "partitions"), DecodeError);
}

BOOST_AUTO_TEST_CASE(endianness_is_explicit) {
  ByteWriter w;
  w.be<uint32_t>(0x01020304);
  w.le<uint32_t>(0x01020304);
  Bytes expect{1, 2, 3, 4, 4, 3, 2, 1};
  BOOST_TEST(w.buffer() == expect, boost::test_tools::per_element());
  w.patch_be<uint16_t>(0, 0xAABB);
  BOOST_TEST(w.buffer()[0] == 0xAA);
}

BOOST_AUTO_TEST_SUITE_END()
