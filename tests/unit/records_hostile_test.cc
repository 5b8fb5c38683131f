// Hostile record batches: lengths a frame claims must not become memory before real bytes back
// them, decoded records are charged at what they cost in memory (not at their wire size), and
// client-chosen timestamps cannot overflow. Allocations are measured with a counting global
// operator new (every std::vector the decoders grow goes through it), so the assertions are
// about bytes, never about time.
#include <boost/test/unit_test.hpp>

#include <lz4frame.h>
#include <zstd.h>

#include <cstdlib>
#include <limits>
#include <new>
#include <string>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "kafka/records/compression.h"
#include "kafka/records/record_batch.h"

namespace {

// While g_counting is set on a thread: the largest single allocation that thread made and the
// sum of its allocations (per thread, so other threads' allocations never blur a measurement).
thread_local bool g_counting = false;
thread_local size_t g_largest = 0;
thread_local size_t g_total = 0;

void* counted_alloc(size_t n) {
  if (g_counting) {
    g_total += n;
    if (n > g_largest) g_largest = n;
  }
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): otherwise the runtime's
// operator new(nothrow) allocates and the free() above releases, which ASan reports as a mismatch.
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

using namespace kib;
using namespace kib::kafka;

namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;

struct AllocProbe {
  AllocProbe() {
    g_largest = 0;
    g_total = 0;
    g_counting = true;
  }
  ~AllocProbe() { g_counting = false; }
  size_t largest() const { return g_largest; }
  size_t total() const { return g_total; }
};

DecompressFailure failure_of(const Result<Bytes>& r) { return static_cast<DecompressFailure>(r.error().code); }

void put_le(ByteWriter& w, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) w.be<uint8_t>(static_cast<uint8_t>(v >> (8 * i)));
}

// A zstd frame whose header claims `claimed` bytes of content (8-byte Frame_Content_Size, a
// 1 MiB window, not single-segment) followed by one raw block of `content` bytes, marked last
// when `last` (then the frame ends short of its claim) and otherwise truncated after it.
Bytes zstd_frame_claiming(uint64_t claimed, size_t content, bool last) {
  ByteWriter w;
  put_le(w, ZSTD_MAGICNUMBER, 4);
  w.be<uint8_t>(0xC0);              // FCS_Field_Size 3 (8 bytes), no single segment, no checksum
  w.be<uint8_t>((20 - 10) << 3);    // window descriptor: 2^20
  put_le(w, claimed, 8);
  uint32_t block = (last ? 1u : 0u) | (0u << 1) | (static_cast<uint32_t>(content) << 3);  // raw block
  put_le(w, block, 3);
  for (size_t i = 0; i < content; ++i) w.be<uint8_t>(static_cast<uint8_t>('a' + i % 26));
  return w.take();
}

// A raw snappy block: varint uncompressed length, then one literal of `literal` bytes.
void snappy_raw_claiming(ByteWriter& w, uint32_t claimed, size_t literal) {
  w.uvarint(claimed);
  w.be<uint8_t>(static_cast<uint8_t>((literal - 1) << 2));  // literal tag, length <= 60
  for (size_t i = 0; i < literal; ++i) w.be<uint8_t>('x');
}

// An LZ4 frame (written by lz4 itself, so its header checksum is right) whose header claims
// `claimed` bytes of content and 4 MiB blocks, holding one block of 100 bytes and no end mark.
Bytes lz4_frame_claiming(uint64_t claimed) {
  LZ4F_cctx* cctx = nullptr;
  BOOST_REQUIRE(!LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)));
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentSize = claimed;
  Bytes plain(100, 'q');
  Bytes out(LZ4F_compressBound(plain.size(), &prefs) + LZ4F_HEADER_SIZE_MAX);
  size_t n = LZ4F_compressBegin(cctx, out.data(), out.size(), &prefs);
  BOOST_REQUIRE(!LZ4F_isError(n));
  size_t m = LZ4F_compressUpdate(cctx, out.data() + n, out.size() - n, plain.data(), plain.size(), nullptr);
  BOOST_REQUIRE(!LZ4F_isError(m));
  size_t f = LZ4F_flush(cctx, out.data() + n + m, out.size() - n - m, nullptr);
  BOOST_REQUIRE(!LZ4F_isError(f));
  LZ4F_freeCompressionContext(cctx);
  out.resize(n + m + f);
  return out;
}

// A v2 batch around `records` with the given header fields, CRC sealed.
Bytes batch_of(ByteSpan records, int32_t count, int16_t attributes = 0, int64_t base_timestamp = 1000) {
  ByteWriter w;
  w.be<int64_t>(0);
  w.be<int32_t>(static_cast<int32_t>(kRecordBatchHeaderSize - kRecordBatchLogOverhead + records.size()));
  w.be<int32_t>(-1);
  w.be<int8_t>(kRecordBatchMagic);
  w.be<uint32_t>(0);
  w.be<int16_t>(attributes);
  w.be<int32_t>(count - 1);
  w.be<int64_t>(base_timestamp);
  w.be<int64_t>(base_timestamp);
  w.be<int64_t>(-1);
  w.be<int16_t>(-1);
  w.be<int32_t>(-1);
  w.be<int32_t>(count);
  w.bytes(records);
  Bytes b = w.take();
  uint32_t crc = crc32c(b.data() + 21, b.size() - 21);
  for (int i = 0; i < 4; ++i) b[17 + static_cast<size_t>(i)] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  return b;
}

// The smallest record: null key, null value, no headers (7 bytes for offsetDelta < 64).
void minimal_record(ByteWriter& w, int32_t offset_delta, int64_t timestamp_delta = 0, int32_t headers = 0) {
  ByteWriter body;
  body.be<int8_t>(0);
  body.varlong(timestamp_delta);
  body.varint(offset_delta);
  body.varint(-1);
  body.varint(-1);
  body.varint(headers);
  for (int32_t k = 0; k < headers; ++k) {
    body.varint(0);   // empty key
    body.varint(-1);  // null value
  }
  w.varint(static_cast<int32_t>(body.size()));
  w.bytes(body.buffer());
}

Bytes minimal_records(int32_t n) {
  ByteWriter w(static_cast<size_t>(n) * 9);
  for (int32_t i = 0; i < n; ++i) minimal_record(w, i);
  return w.take();
}

RecordError error_of(const Result<std::vector<DecodedBatch>>& r) { return record_error(r.error()); }

}  // namespace

BOOST_AUTO_TEST_SUITE(records_hostile)

// ---- claimed sizes ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(zstd_frame_claiming_256_mib_with_10_bytes_fails_without_reserving_the_claim) {
  for (bool last : {true, false}) {
    Bytes frame = zstd_frame_claiming(256 * kMiB, 10, last);
    size_t reserved = 0;
    AllocProbe probe;
    auto r = decompress(Compression::kZstd, frame, 256 * kMiB, &reserved);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST((failure_of(r) == DecompressFailure::kCorrupt));
    BOOST_TEST_MESSAGE("zstd claim, last=" << last << ": largest allocation " << probe.largest() << ", reserved "
                                           << reserved);
    BOOST_TEST(probe.largest() < 64 * kKiB);
    BOOST_TEST(probe.total() < 256 * kKiB);
    BOOST_TEST(reserved < 64 * kKiB);
  }
}

BOOST_AUTO_TEST_CASE(snappy_raw_block_claiming_200_mib_within_the_budget_fails_without_reserving_it) {
  ByteWriter w;
  snappy_raw_claiming(w, 200 * kMiB, 10);
  size_t reserved = 0;
  AllocProbe probe;
  auto r = decompress(Compression::kSnappy, w.buffer(), 256 * kMiB, &reserved);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((failure_of(r) == DecompressFailure::kCorrupt));
  BOOST_TEST(probe.largest() < 64 * kKiB);
  BOOST_TEST(reserved < 64 * kKiB);
}

BOOST_AUTO_TEST_CASE(snappy_xerial_block_claiming_200_mib_fails_without_reserving_it) {
  ByteWriter block;
  snappy_raw_claiming(block, 200 * kMiB, 10);
  ByteWriter w;
  const uint8_t magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0x00};
  w.bytes(magic, sizeof magic);
  w.be<int32_t>(1);
  w.be<int32_t>(1);
  w.be<int32_t>(static_cast<int32_t>(block.size()));
  w.bytes(block.buffer());
  AllocProbe probe;
  auto r = decompress(Compression::kSnappy, w.buffer(), 256 * kMiB);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((failure_of(r) == DecompressFailure::kCorrupt));
  BOOST_TEST(probe.largest() < 64 * kKiB);
}

BOOST_AUTO_TEST_CASE(a_real_snappy_block_still_decodes_to_exactly_its_length) {
  Bytes plain(3 * kMiB, 'z');
  Bytes packed = compress(Compression::kSnappy, plain);
  auto r = decompress(Compression::kSnappy, packed, 256 * kMiB);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST((*r == plain));
}

BOOST_AUTO_TEST_CASE(lz4_frame_claiming_256_mib_and_truncated_fails_with_bounded_allocation) {
  Bytes frame = lz4_frame_claiming(256 * kMiB);
  AllocProbe probe;
  auto r = decompress(Compression::kLz4, frame, 256 * kMiB);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((failure_of(r) == DecompressFailure::kCorrupt));
  BOOST_TEST(probe.largest() < 64 * kKiB);
}

BOOST_AUTO_TEST_CASE(truncated_gzip_fails_with_bounded_allocation) {
  Bytes packed = compress(Compression::kGzip, Bytes(8 * kMiB, 0));
  Bytes cut(packed.begin(), packed.begin() + 40);
  AllocProbe probe;
  auto r = decompress(Compression::kGzip, cut, 256 * kMiB);
  BOOST_REQUIRE(!r.ok());
  // 40 bytes of deflated zeros really are ~40 KB: the buffer follows them, not the 8 MiB the
  // trailer would have said.
  BOOST_TEST(probe.largest() < 256 * kKiB);
}

BOOST_AUTO_TEST_CASE(a_real_zstd_frame_with_a_content_size_still_decodes) {
  Bytes plain(5 * kMiB + 17, 'k');
  Bytes packed = compress(Compression::kZstd, plain);
  BOOST_REQUIRE(ZSTD_getFrameContentSize(packed.data(), packed.size()) == plain.size());
  size_t reserved = 0;
  auto r = decompress(Compression::kZstd, packed, 256 * kMiB, &reserved);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST((*r == plain));
  BOOST_TEST(reserved >= plain.size());
  BOOST_TEST(reserved < 3 * plain.size());
}

BOOST_AUTO_TEST_CASE(a_failed_decompression_costs_the_request_budget_what_it_reserved) {
  // Over budget: the attempt decoded (and held) the budget's worth before failing.
  Bytes plain(4 * kMiB, 0);
  ByteWriter records;
  ByteWriter body;
  body.be<int8_t>(0);
  body.varlong(0);
  body.varint(0);
  body.varint(-1);
  body.varint(static_cast<int32_t>(plain.size()));
  body.bytes(plain);
  body.varint(0);
  records.varint(static_cast<int32_t>(body.size()));
  records.bytes(body.buffer());
  Bytes packed = compress(Compression::kGzip, records.buffer());
  Bytes batch = batch_of(packed, 1, static_cast<int16_t>(Compression::kGzip));
  DecompressionBudget budget{1 * kMiB};
  auto r = decode_record_batches(batch, budget);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kTooLarge));
  BOOST_TEST(budget.remaining == 0u);
  // So the next partition of the same request cannot spend it again.
  auto again = decode_record_batches(batch, budget);
  BOOST_REQUIRE(!again.ok());
  BOOST_TEST((error_of(again) == RecordError::kTooLarge));
}

// ---- decoded size, not wire size -----------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_million_minimal_records_in_a_small_zstd_frame_are_refused_before_allocating_their_structs) {
  Bytes plain = minimal_records(1'000'000);
  Bytes packed = compress(Compression::kZstd, plain);
  BOOST_TEST_MESSAGE("1M minimal records: " << plain.size() << " bytes, " << packed.size() << " as zstd");
  BOOST_REQUIRE(packed.size() < 2 * kMiB);
  Bytes batch = batch_of(packed, 1'000'000, static_cast<int16_t>(Compression::kZstd));
  DecompressionBudget budget{64 * kMiB};
  AllocProbe probe;
  auto r = decode_record_batches(batch, budget);
  const size_t largest = probe.largest();
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kTooLarge));
  BOOST_TEST_MESSAGE("largest allocation " << largest << " bytes: " << r.error().message);
  // The decompressed bytes (~9 MB, doubling to 16 MiB) were real; 88 MB of Record structs
  // never were.
  BOOST_TEST(largest <= 16 * kMiB + 1);
}

BOOST_AUTO_TEST_CASE(a_million_minimal_uncompressed_records_are_charged_88_bytes_each) {
  Bytes plain = minimal_records(1'000'000);
  Bytes batch = batch_of(plain, 1'000'000);
  {
    DecompressionBudget budget{16 * kMiB};
    AllocProbe probe;
    auto r = decode_record_batches(batch, budget);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST((error_of(r) == RecordError::kTooLarge));
    BOOST_TEST(probe.largest() < 1 * kMiB);
  }
  DecompressionBudget budget{256 * kMiB};
  auto r = decode_record_batches(batch, budget);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(256 * kMiB - budget.remaining >= 1'000'000 * sizeof(Record));
  BOOST_TEST(r->front().memory_bytes() >= 1'000'000 * sizeof(Record));
}

BOOST_AUTO_TEST_CASE(a_record_with_a_million_minimal_headers_is_charged_per_header_struct) {
  ByteWriter records;
  minimal_record(records, 0, 0, 1'000'000);  // 2 bytes a header on the wire, 40 decoded
  Bytes batch = batch_of(records.buffer(), 1);
  DecompressionBudget budget{16 * kMiB};
  AllocProbe probe;
  auto r = decode_record_batches(batch, budget);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((error_of(r) == RecordError::kTooLarge));
  BOOST_TEST(probe.largest() <= 16 * kMiB);

  DecompressionBudget enough{256 * kMiB};
  auto ok = decode_record_batches(batch, enough);
  BOOST_REQUIRE(ok.ok());
  BOOST_TEST(ok->front().records.front().headers.size() == 1'000'000u);
}

// ---- overflow ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(timestamp_delta_overflowing_the_base_timestamp_wraps_as_a_java_long) {
  // Kafka adds baseTimestamp + timestampDelta as Java longs and its validator then refuses the
  // wrapped time (INVALID_TIMESTAMP, checked in records_timestamp_wrap and test_bad_produce.py).
  // Before, the C++ sum was signed overflow: undefined behaviour (UBSan aborted the ASan tier).
  struct Case {
    int64_t base;
    int64_t delta;
  };
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (Case c : {Case{kMax - 5, 10}, Case{kMin + 5, -10}, Case{kMax, kMax}, Case{-1, kMin}}) {
    ByteWriter records;
    minimal_record(records, 0, c.delta);
    Bytes batch = batch_of(records.buffer(), 1, 0, c.base);
    DecompressionBudget budget{64 * kMiB};
    auto r = decode_record_batches(batch, budget);
    BOOST_TEST_CONTEXT("base " << c.base << " delta " << c.delta) {
      BOOST_REQUIRE(r.ok());
      const int64_t wrapped = static_cast<int64_t>(static_cast<uint64_t>(c.base) + static_cast<uint64_t>(c.delta));
      BOOST_TEST(r->front().timestamp_of(r->front().records.front()) == wrapped);
    }
  }
  // The largest sums that fit decode to themselves.
  ByteWriter records;
  minimal_record(records, 0, 5);
  Bytes batch = batch_of(records.buffer(), 1, 0, kMax - 5);
  DecompressionBudget budget{64 * kMiB};
  auto r = decode_record_batches(batch, budget);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->front().timestamp_of(r->front().records.front()) == kMax);
}

BOOST_AUTO_TEST_CASE(encoding_timestamps_far_apart_wraps_the_delta_as_readers_add_it_back) {
  // Timestamps read back from Iggy are whatever a native client stored. Before, the encoder's
  // record.timestamp - baseTimestamp overflowed (UBSan aborts the ASan tier; release wrapped).
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  RecordToEncode recs[] = {{kMin + 1, std::nullopt, std::nullopt, {}}, {kMax, std::nullopt, std::nullopt, {}}};
  ByteWriter w;
  encode_record_batch(w, BatchSettings{}, recs);
  // The second record's delta is kMax - (kMin + 1) mod 2^64 = -2: what Java's
  // baseTimestamp + timestampDelta turns back into kMax.
  ByteReader all(w.buffer());
  all.skip(kRecordBatchHeaderSize);
  for (int i = 0; i < 2; ++i) {
    ByteReader rec(all.take(static_cast<size_t>(all.varint())));
    rec.be<int8_t>();
    int64_t delta = rec.varlong();
    BOOST_TEST(delta == (i == 0 ? 0 : -2));
    BOOST_TEST(static_cast<int64_t>(static_cast<uint64_t>(kMin + 1) + static_cast<uint64_t>(delta)) == recs[i].timestamp);
  }
}

BOOST_AUTO_TEST_CASE(offsets_of_a_client_base_offset_near_the_top_wrap_instead_of_overflowing) {
  DecodedBatch b;
  b.header.base_offset = std::numeric_limits<int64_t>::max();
  b.header.last_offset_delta = 3;
  Record r;
  r.offset_delta = 2;
  BOOST_TEST(b.offset_of(r) == std::numeric_limits<int64_t>::min() + 1);
  BOOST_TEST(b.header.last_offset() == std::numeric_limits<int64_t>::min() + 2);
}

BOOST_AUTO_TEST_SUITE_END()
