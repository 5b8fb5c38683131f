// One codec's compressed stream. The first byte picks the codec (bits 0-1: gzip, snappy, lz4,
// zstd) and the budget (bits 2-4: 2^(10+2n) bytes, 1 KiB to 16 MiB); the rest is the stream.
// decompress() must refuse or return at most the budget, and classify every failure. Bit 7 set
// also compresses the rest and requires decompress(compress(x)) == x.
#include <algorithm>

#include "kafka/records/compression.h"
#include "fuzz/targets/fuzz_targets.h"

namespace kib::fuzz {

int fuzz_decompress(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  using kafka::Compression;
  constexpr Compression kCodecs[] = {Compression::kGzip, Compression::kSnappy, Compression::kLz4, Compression::kZstd};
  const Compression codec = kCodecs[data[0] & 0x03];
  const size_t budget = size_t{1} << (10 + 2 * ((data[0] >> 2) & 0x07));
  const ByteSpan input(data + 1, size - 1);

  auto out = kafka::decompress(codec, input, budget);
  if (out.ok()) {
    FUZZ_CHECK(out->size() <= budget, "decompressed past max_output");
  } else {
    FUZZ_CHECK(out.error().domain == ErrorDomain::kProtocol, "a decompress failure outside kProtocol");
    auto why = static_cast<kafka::DecompressFailure>(out.error().code);
    FUZZ_CHECK(why == kafka::DecompressFailure::kCorrupt || why == kafka::DecompressFailure::kOverBudget,
               "a decompress failure of no known kind");
  }

  if (data[0] & 0x80) {
    Bytes packed = kafka::compress(codec, input);
    auto back = kafka::decompress(codec, packed, input.size());
    FUZZ_CHECK(back.ok(), "what compress() wrote does not decompress");
    FUZZ_CHECK(std::equal(back->begin(), back->end(), input.begin(), input.end()), "compress round trip changed the bytes");
  }
  return 0;
}

}  // namespace kib::fuzz
