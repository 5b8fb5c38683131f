#include <boost/test/unit_test.hpp>

#include <snappy.h>
#include <sys/resource.h>
#include <zlib.h>
#include <zstd.h>

#include <chrono>
#include <random>
#include <string>

#include "common/bytes.h"
#include "kafka/records/compression.h"

using namespace kib;
using namespace kib::kafka;

namespace {

constexpr Compression kCodecs[] = {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                                   Compression::kZstd};
constexpr size_t kMiB = 1024 * 1024;

Bytes text_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

Bytes repetitive_bytes(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>("kafka-iggy-bridge "[i % 18]);
  return b;
}

DecompressFailure failure_of(const Result<Bytes>& r) { return static_cast<DecompressFailure>(r.error().code); }

// 1 GiB of zeros as one zstd frame without a content size, streamed so the test never holds
// the plaintext: about 32 KiB of input claiming a gigabyte of output.
Bytes zstd_bomb_1gib() {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  Bytes zeros(kMiB, 0);
  Bytes out;
  Bytes chunk(ZSTD_CStreamOutSize());
  for (int i = 0; i < 1024; ++i) {
    ZSTD_inBuffer in{zeros.data(), zeros.size(), 0};
    ZSTD_EndDirective mode = i == 1023 ? ZSTD_e_end : ZSTD_e_continue;
    size_t rem;
    do {
      ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
      rem = ZSTD_compressStream2(cctx, &o, &in, mode);
      BOOST_REQUIRE(!ZSTD_isError(rem));
      out.insert(out.end(), chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(o.pos));
    } while (mode == ZSTD_e_end ? rem != 0 : in.pos < in.size);
  }
  ZSTD_freeCCtx(cctx);
  return out;
}

// 1 GiB of zeros as 64 concatenated gzip members of 16 MiB each (deflate caps at ~1000:1, so
// this is ~1 MiB of input).
Bytes gzip_bomb_1gib() {
  Bytes member = compress(Compression::kGzip, Bytes(16 * kMiB, 0));
  Bytes out;
  for (int i = 0; i < 64; ++i) out.insert(out.end(), member.begin(), member.end());
  return out;
}

long peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;  // Linux reports KiB
}

}  // namespace

BOOST_AUTO_TEST_SUITE(compression_codecs)

BOOST_AUTO_TEST_CASE(every_codec_round_trips_empty_small_random_and_repetitive_input) {
  const Bytes inputs[] = {Bytes{}, text_bytes("x"), text_bytes("hello, kafka"), random_bytes(100000, 1),
                          repetitive_bytes(300000)};
  for (Compression c : kCodecs) {
    for (const Bytes& in : inputs) {
      BOOST_TEST_CONTEXT(compression_name(c) << " input of " << in.size() << " bytes") {
        Bytes packed = compress(c, in);
        auto out = decompress(c, packed, in.size());
        BOOST_REQUIRE_MESSAGE(out.ok(), (out.ok() ? std::string() : out.error().message));
        BOOST_TEST(out.value() == in);
        if (c != Compression::kNone && in.size() == 300000) BOOST_TEST(packed.size() < in.size() / 10);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(output_of_exactly_the_budget_is_accepted_and_one_byte_less_is_over_budget) {
  Bytes in = repetitive_bytes(70000);
  for (Compression c : kCodecs) {
    BOOST_TEST_CONTEXT(compression_name(c)) {
      Bytes packed = compress(c, in);
      BOOST_TEST(decompress(c, packed, in.size()).ok());
      auto r = decompress(c, packed, in.size() - 1);
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((failure_of(r) == DecompressFailure::kOverBudget));
      BOOST_TEST(r.error().message.find("budget") != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_CASE(garbage_and_truncated_streams_are_corrupt_not_crashes) {
  Bytes in = random_bytes(50000, 2);
  for (Compression c : kCodecs) {
    if (c == Compression::kNone) continue;
    BOOST_TEST_CONTEXT(compression_name(c)) {
      Bytes packed = compress(c, in);
      Bytes truncated(packed.begin(), packed.begin() + static_cast<ptrdiff_t>(packed.size() / 2));
      auto r = decompress(c, truncated, 64 * kMiB);
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((failure_of(r) == DecompressFailure::kCorrupt));

      // Raw snappy garbage may also claim a huge length and be refused as over budget.
      auto g = decompress(c, random_bytes(1000, 3), 64 * kMiB);
      BOOST_REQUIRE(!g.ok());
      if (c != Compression::kSnappy) BOOST_TEST((failure_of(g) == DecompressFailure::kCorrupt));

      auto e = decompress(c, Bytes{}, 64 * kMiB);
      BOOST_TEST(!e.ok());
    }
  }
}

BOOST_AUTO_TEST_CASE(snappy_writes_java_xerial_framing_with_big_endian_header) {
  Bytes packed = compress(Compression::kSnappy, repetitive_bytes(100000));
  const uint8_t header[16] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  BOOST_REQUIRE(packed.size() > 20);
  BOOST_TEST(std::equal(header, header + 16, packed.begin()));
  // 100000 bytes are split into 32 KiB blocks, as xerial's SnappyOutputStream does: 4 blocks.
  ByteReader r(ByteSpan(packed).subspan(16));
  int blocks = 0;
  while (!r.empty()) {
    int32_t len = r.be<int32_t>();
    size_t plain = 0;
    BOOST_REQUIRE(snappy::GetUncompressedLength(reinterpret_cast<const char*>(r.rest().data()),
                                                static_cast<size_t>(len), &plain));
    BOOST_TEST(plain <= 32768u);
    r.skip(static_cast<size_t>(len));
    ++blocks;
  }
  BOOST_TEST(blocks == 4);
}

BOOST_AUTO_TEST_CASE(snappy_accepts_raw_blocks_as_librdkafka_writes_them) {
  std::string plain = "raw snappy from librdkafka, raw snappy from librdkafka";
  std::string raw;
  snappy::Compress(plain.data(), plain.size(), &raw);
  auto out = decompress(Compression::kSnappy, ByteSpan(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()), 1000);
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(std::string(out->begin(), out->end()) == plain);
}

BOOST_AUTO_TEST_CASE(snappy_raw_block_claiming_more_than_the_budget_fails_before_allocating) {
  ByteWriter w;
  w.uvarint(0xFFFFFFF0u);  // a raw block's header: ~4 GiB uncompressed
  w.zeros(8);
  auto r = decompress(Compression::kSnappy, w.buffer(), 64 * kMiB);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((failure_of(r) == DecompressFailure::kOverBudget));
}

BOOST_AUTO_TEST_CASE(snappy_xerial_accepts_concatenated_streams) {
  Bytes a = compress(Compression::kSnappy, text_bytes("first stream;"));
  Bytes b = compress(Compression::kSnappy, text_bytes("second stream"));
  a.insert(a.end(), b.begin(), b.end());
  auto out = decompress(Compression::kSnappy, a, 1000);
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(std::string(out->begin(), out->end()) == "first stream;second stream");
}

BOOST_AUTO_TEST_CASE(gzip_accepts_concatenated_members) {
  Bytes a = compress(Compression::kGzip, text_bytes("member one,"));
  Bytes b = compress(Compression::kGzip, text_bytes("member two"));
  a.insert(a.end(), b.begin(), b.end());
  auto out = decompress(Compression::kGzip, a, 1000);
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(std::string(out->begin(), out->end()) == "member one,member two");
}

BOOST_AUTO_TEST_CASE(lz4_writes_independent_64k_blocks_without_checksums) {
  Bytes packed = compress(Compression::kLz4, repetitive_bytes(200000));
  BOOST_REQUIRE(packed.size() > 7);
  BOOST_TEST(packed[0] == 0x04);  // magic 0x184D2204, little-endian
  BOOST_TEST(packed[3] == 0x18);
  uint8_t flg = packed[4], bd = packed[5];
  BOOST_TEST((flg >> 6) == 1);        // version 01
  BOOST_TEST((flg & 0x20) != 0);      // block independence, required by Kafka's Java reader
  BOOST_TEST((flg & 0x10) == 0);      // no block checksum
  BOOST_TEST((flg & 0x04) == 0);      // no content checksum
  BOOST_TEST(((bd >> 4) & 7) == 4);   // 64 KiB maximum block size
}

BOOST_AUTO_TEST_CASE(zstd_streams_frames_that_lack_a_content_size) {
  Bytes plain = repetitive_bytes(500000);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  Bytes packed(ZSTD_compressBound(plain.size()) + 64);
  ZSTD_outBuffer o{packed.data(), packed.size(), 0};
  ZSTD_inBuffer in{plain.data(), plain.size(), 0};
  // Fed, then ended: the size is unknown when the frame header is written (as with zstd-jni).
  BOOST_REQUIRE(!ZSTD_isError(ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_continue)));
  BOOST_REQUIRE(ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end) == 0);
  ZSTD_freeCCtx(cctx);
  packed.resize(o.pos);
  BOOST_REQUIRE(ZSTD_getFrameContentSize(packed.data(), packed.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
  auto out = decompress(Compression::kZstd, packed, plain.size());
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(out.value() == plain);
}

BOOST_AUTO_TEST_CASE(zstd_bomb_of_1_gib_fails_fast_within_a_64_mib_budget) {
  Bytes bomb = zstd_bomb_1gib();
  long peak_before = peak_rss_mib();
  BOOST_TEST_MESSAGE("zstd bomb: " << bomb.size() << " bytes");
  BOOST_TEST(bomb.size() < 256 * 1024u);
  auto t0 = std::chrono::steady_clock::now();
  auto r = decompress(Compression::kZstd, bomb, 64 * kMiB);
  auto elapsed = std::chrono::steady_clock::now() - t0;
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((failure_of(r) == DecompressFailure::kOverBudget));
  // Only the budget's worth was ever produced (decoding all of it takes seconds more)...
  BOOST_TEST(std::chrono::duration_cast<std::chrono::seconds>(elapsed).count() < 10);
  // ...and the process never held anything near the gigabyte.
  BOOST_TEST(peak_rss_mib() - peak_before < 512);
}

BOOST_AUTO_TEST_CASE(gzip_bomb_of_1_gib_fails_fast_within_a_64_mib_budget) {
  Bytes bomb = gzip_bomb_1gib();
  long peak_before = peak_rss_mib();
  BOOST_TEST_MESSAGE("gzip bomb: " << bomb.size() << " bytes");
  auto t0 = std::chrono::steady_clock::now();
  auto r = decompress(Compression::kGzip, bomb, 64 * kMiB);
  auto elapsed = std::chrono::steady_clock::now() - t0;
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((failure_of(r) == DecompressFailure::kOverBudget));
  BOOST_TEST(std::chrono::duration_cast<std::chrono::seconds>(elapsed).count() < 10);
  BOOST_TEST(peak_rss_mib() - peak_before < 512);
}

BOOST_AUTO_TEST_CASE(zstd_frame_whose_window_exceeds_the_budget_is_over_budget) {
  // windowLog 27 (128 MiB) declared, tiny content, no content size: a 16 MiB budget must not let
  // zstd allocate a 128 MiB window.
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 27);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  Bytes plain = repetitive_bytes(1000);
  Bytes packed(ZSTD_compressBound(plain.size()) + 64);
  ZSTD_outBuffer o{packed.data(), packed.size(), 0};
  ZSTD_inBuffer in{plain.data(), plain.size(), 0};
  // Feed first, end later: zstd cannot shrink the window to the input size.
  BOOST_REQUIRE(!ZSTD_isError(ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_continue)));
  BOOST_REQUIRE(ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end) == 0);
  BOOST_REQUIRE((packed[4] & 0x20) == 0);  // not single-segment: a window descriptor follows
  BOOST_REQUIRE((packed[5] >> 3) == 27 - 10);  // window exponent: 2^27
  ZSTD_freeCCtx(cctx);
  packed.resize(o.pos);
  auto r = decompress(Compression::kZstd, packed, 16 * kMiB);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((failure_of(r) == DecompressFailure::kOverBudget));
  BOOST_TEST(decompress(Compression::kZstd, packed, 128 * kMiB).ok());
}

BOOST_AUTO_TEST_CASE(codec_ids_5_to_7_are_not_codecs) {
  BOOST_TEST(!compression_from_id(5).has_value());
  BOOST_TEST(!compression_from_id(7).has_value());
  BOOST_TEST((compression_from_id(4) == Compression::kZstd));
  BOOST_TEST(compression_name(Compression::kLz4) == "lz4");
}

BOOST_AUTO_TEST_SUITE_END()
