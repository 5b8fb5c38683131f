#include "kafka/records/compression.h"

#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

namespace kib::kafka {
namespace {

constexpr uint8_t kXerialMagic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0x00};
constexpr size_t kXerialHeaderSize = 16;      // magic, BE int32 version, BE int32 compatible version
constexpr size_t kXerialBlockSize = 32 * 1024;  // the Java client's (xerial's default) block size
constexpr int kZstdLevel = 3;                  // Kafka's default compression.zstd.level
// Windows up to 8 MiB (zstd levels <= 19 streaming without a content size) are always accepted;
// above that the window may be as large as the budget, and never beyond zstd's default limit.
constexpr int kZstdMinWindowLog = 23;
constexpr int kZstdMaxWindowLog = 27;  // zstd's own default limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT)
constexpr size_t kMinGrowth = 64 * 1024;
// First output reserve: 4x the input, within these bounds; the buffer doubles from there as
// decoded bytes arrive.
constexpr size_t kMinFirstReserve = 4096;
constexpr size_t kMaxFirstReserve = 1 << 20;

Error failure(DecompressFailure kind, std::string message) {
  return Error{ErrorDomain::kProtocol, static_cast<uint32_t>(kind), std::move(message)};
}
Error over_budget(Compression c, size_t max_output) {
  return failure(DecompressFailure::kOverBudget, std::string(compression_name(c)) +
                                                     " output exceeds the decompression budget of " +
                                                     std::to_string(max_output) + " bytes");
}
Error corrupt(Compression c, std::string_view what) {
  return failure(DecompressFailure::kCorrupt, std::string(compression_name(c)) + ": " + std::string(what));
}

// Output buffer that never grows past max_output + 1 bytes: codecs may write one byte more than
// allowed, which is how "over budget" is detected without trusting any length claimed by input.
// It grows only as decoded bytes fill it (doubling, from a first reserve of at most
// kMaxFirstReserve), so what it zero-fills and holds stays within about twice what the codec
// really produced, whatever a frame header claims. peak() is the most it reserved, which the
// caller charges to its budget whether decoding succeeds or not.
class BoundedOutput {
 public:
  BoundedOutput(size_t max_output, size_t size_hint)
      : max_(max_output), limit_(max_output == SIZE_MAX ? SIZE_MAX : max_output + 1) {
    grow_to(std::min(std::clamp(size_hint, kMinFirstReserve, kMaxFirstReserve), limit_));
  }

  bool exceeded() const { return used_ > max_; }
  size_t used() const { return used_; }
  size_t peak() const { return peak_; }

  // Free space after the written bytes; empty once the limit is reached.
  std::span<uint8_t> space() {
    if (used_ == buf_.size()) {
      if (buf_.size() >= limit_) return {};
      grow_to(std::min(limit_, std::max(buf_.size() * 2, buf_.size() + kMinGrowth)));
    }
    return {buf_.data() + used_, buf_.size() - used_};
  }
  // Exactly n writable bytes, or nullptr when they would pass max_output. Only for lengths
  // already proven real (a validated snappy block), never for a claimed one.
  uint8_t* take(size_t n) {
    if (n > max_ - used_) return nullptr;
    if (used_ + n > buf_.size()) grow_to(std::min(limit_, std::max(used_ + n, buf_.size() * 2)));
    uint8_t* p = buf_.data() + used_;
    used_ += n;
    return p;
  }
  void commit(size_t n) { used_ += n; }
  Bytes finish() {
    buf_.resize(used_);
    // The output lives as long as its batch is queued for Iggy: do not keep the (up to 4x)
    // over-estimate with it. Measured: 8 partitions of 1 MB zstd requests held 153 MiB of peak
    // RSS that way; copying the bytes once costs far less than decompressing them.
    if (buf_.capacity() - used_ > used_ / 4) buf_.shrink_to_fit();
    return std::move(buf_);
  }

 private:
  void grow_to(size_t n) {
    buf_.reserve(n);  // exact: keeps the allocation within the limit
    buf_.resize(n);
    peak_ = std::max(peak_, buf_.capacity());
  }

  size_t max_;
  size_t limit_;
  size_t used_ = 0;
  size_t peak_ = 0;
  Bytes buf_;
};

// The first reserve: a guess from the input's size, never from what the input claims.
size_t hint_for(ByteSpan input, size_t max_output) {
  size_t guess = input.size() > SIZE_MAX / 4 ? SIZE_MAX : input.size() * 4;
  return std::min(guess, max_output);
}

// ---- gzip -------------------------------------------------------------------------------------

Bytes gzip_compress(ByteSpan input) {
  // A batch is at most 2 GiB (batchLength is an int32), so zlib's 32-bit counters suffice.
  if (input.size() > INT32_MAX) throw std::length_error("gzip: input larger than 2 GiB");
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip: deflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, deflateEnd);
  Bytes out(deflateBound(&zs, static_cast<uLong>(input.size())));
  zs.next_in = const_cast<Bytef*>(input.data());
  zs.avail_in = static_cast<uInt>(input.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("gzip: deflate did not finish");
  out.resize(zs.total_out);
  return out;
}

Result<Unit> gzip_decompress(ByteSpan input, BoundedOutput& out, size_t max_output) {
  constexpr auto c = Compression::kGzip;
  if (input.size() > UINT_MAX) return corrupt(c, "input larger than 4 GiB");
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("gzip: inflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  zs.next_in = const_cast<Bytef*>(input.data());
  zs.avail_in = static_cast<uInt>(input.size());
  for (;;) {
    std::span<uint8_t> space = out.space();
    if (space.empty()) return over_budget(c, max_output);
    zs.next_out = space.data();
    zs.avail_out = static_cast<uInt>(std::min<size_t>(space.size(), UINT_MAX));
    uInt offered = zs.avail_out;
    int rc = inflate(&zs, Z_NO_FLUSH);
    out.commit(offered - zs.avail_out);
    if (out.exceeded()) return over_budget(c, max_output);
    if (rc == Z_STREAM_END) {
      // Another member follows: continue with it. Anything else after a member is ignored, as
      // Java's GZIPInputStream does.
      if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) return corrupt(c, "truncated stream");
    return corrupt(c, zs.msg ? zs.msg : "invalid stream");
  }
  return Unit{};
}

// ---- snappy (xerial framing) --------------------------------------------------------------------

Bytes snappy_compress(ByteSpan input) {
  size_t bound = kXerialHeaderSize;
  for (size_t at = 0; at < input.size(); at += kXerialBlockSize)
    bound += 4 + snappy::MaxCompressedLength(std::min(kXerialBlockSize, input.size() - at));
  ByteWriter w(bound);
  w.bytes(kXerialMagic, sizeof kXerialMagic);
  w.be<int32_t>(1);  // version
  w.be<int32_t>(1);  // compatible version
  Bytes block(snappy::MaxCompressedLength(std::min(kXerialBlockSize, input.size())));
  for (size_t at = 0; at < input.size(); at += kXerialBlockSize) {
    size_t n = std::min(kXerialBlockSize, input.size() - at);
    size_t len = 0;
    snappy::RawCompress(reinterpret_cast<const char*>(input.data() + at), n, reinterpret_cast<char*>(block.data()),
                        &len);
    w.be<int32_t>(static_cast<int32_t>(len));
    w.bytes(block.data(), len);
  }
  return w.take();
}

bool starts_with_xerial_magic(ByteSpan s) {
  return s.size() >= kXerialHeaderSize && std::memcmp(s.data(), kXerialMagic, sizeof kXerialMagic) == 0;
}

// One raw snappy block appended to `out`. The length its varint claims is checked against the
// budget, then proven by a validating pass (which writes nothing) before any output is reserved
// for it: a 5-byte block claiming 4 GiB costs nothing.
Result<Unit> snappy_raw_into(ByteSpan block, BoundedOutput& out, size_t max_output) {
  constexpr auto c = Compression::kSnappy;
  const char* p = reinterpret_cast<const char*>(block.data());
  size_t n = 0;
  if (!snappy::GetUncompressedLength(p, block.size(), &n)) return corrupt(c, "invalid block length");
  if (n > max_output - out.used()) return over_budget(c, max_output);
  if (!snappy::IsValidCompressedBuffer(p, block.size())) return corrupt(c, "invalid block");
  uint8_t* dst = out.take(n);
  if (dst == nullptr) return over_budget(c, max_output);
  if (!snappy::RawUncompress(p, block.size(), reinterpret_cast<char*>(dst))) return corrupt(c, "invalid block");
  return Unit{};
}

Result<Unit> snappy_decompress(ByteSpan input, BoundedOutput& out, size_t max_output) {
  constexpr auto c = Compression::kSnappy;
  if (!starts_with_xerial_magic(input)) return snappy_raw_into(input, out, max_output);
  ByteReader in(input);
  while (!in.empty()) {
    // xerial's reader also accepts concatenated streams, each with its own header. A block
    // length is a non-negative int32, so it can never start with the magic's 0x82.
    if (starts_with_xerial_magic(in.rest())) {
      in.skip(kXerialHeaderSize);
      continue;
    }
    if (in.remaining() < 4) return corrupt(c, "truncated xerial block length");
    int32_t len = in.be<int32_t>();
    if (len < 0 || static_cast<size_t>(len) > in.remaining())
      return corrupt(c, "xerial block length " + std::to_string(len) + " exceeds the " +
                            std::to_string(in.remaining()) + " bytes left");
    if (len == 0) continue;
    auto r = snappy_raw_into(in.take(static_cast<size_t>(len)), out, max_output);
    if (!r) return r.error();
  }
  return Unit{};
}

// ---- lz4 frame ----------------------------------------------------------------------------------

Bytes lz4_compress(ByteSpan input) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof prefs);
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
  Bytes out(LZ4F_compressFrameBound(input.size(), &prefs));
  size_t n = LZ4F_compressFrame(out.data(), out.size(), input.data(), input.size(), &prefs);
  if (LZ4F_isError(n)) throw std::runtime_error(std::string("lz4: ") + LZ4F_getErrorName(n));
  out.resize(n);
  return out;
}

Result<Unit> lz4_decompress(ByteSpan input, BoundedOutput& out, size_t max_output) {
  constexpr auto c = Compression::kLz4;
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
    throw std::runtime_error("lz4: cannot create a decompression context");
  std::unique_ptr<LZ4F_dctx, LZ4F_errorCode_t (*)(LZ4F_dctx*)> guard(dctx, LZ4F_freeDecompressionContext);
  const uint8_t* src = input.data();
  size_t left = input.size();
  for (;;) {
    std::span<uint8_t> space = out.space();
    if (space.empty()) return over_budget(c, max_output);
    size_t dst_n = space.size();
    size_t src_n = left;
    size_t rc = LZ4F_decompress(dctx, space.data(), &dst_n, src, &src_n, nullptr);
    if (LZ4F_isError(rc)) return corrupt(c, LZ4F_getErrorName(rc));
    src += src_n;
    left -= src_n;
    out.commit(dst_n);
    if (out.exceeded()) return over_budget(c, max_output);
    if (rc == 0) {  // a frame ended; another may follow
      if (left == 0) break;
      continue;
    }
    if (src_n == 0 && dst_n == 0) return corrupt(c, "truncated frame");
  }
  return Unit{};
}

// ---- zstd ---------------------------------------------------------------------------------------

Bytes zstd_compress(ByteSpan input) {
  Bytes out(ZSTD_compressBound(input.size()));
  size_t n = ZSTD_compress(out.data(), out.size(), input.data(), input.size(), kZstdLevel);
  if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

int window_log_for(size_t max_output) {
  int log = 0;
  while (log < kZstdMaxWindowLog && (size_t{1} << log) < max_output) ++log;
  return std::clamp(log, kZstdMinWindowLog, kZstdMaxWindowLog);
}

Result<Unit> zstd_decompress(ByteSpan input, BoundedOutput& out, size_t max_output) {
  constexpr auto c = Compression::kZstd;
  // One context per thread, reset for every input: a fresh context per batch allocated and
  // freed its window buffer (MBs) every time, and glibc kept the freed blocks resident (8
  // partitions of 1 MB zstd requests: 266 MiB peak RSS; reused: see the closing note).
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!dctx) throw std::runtime_error("zstd: cannot create a decompression context");
  ZSTD_DCtx_reset(dctx.get(), ZSTD_reset_session_and_parameters);
  ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, window_log_for(max_output));

  ZSTD_inBuffer in{input.data(), input.size(), 0};
  for (;;) {
    std::span<uint8_t> space = out.space();
    if (space.empty()) return over_budget(c, max_output);
    ZSTD_outBuffer o{space.data(), space.size(), 0};
    size_t in_before = in.pos;
    size_t rc = ZSTD_decompressStream(dctx.get(), &o, &in);
    if (ZSTD_isError(rc)) {
      if (ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge)
        return failure(DecompressFailure::kOverBudget,
                       "zstd: frame window exceeds the decompression budget of " + std::to_string(max_output) +
                           " bytes");
      return corrupt(c, ZSTD_getErrorName(rc));
    }
    out.commit(o.pos);
    if (out.exceeded()) return over_budget(c, max_output);
    if (rc == 0 && in.pos == in.size) break;  // last frame complete and flushed
    bool output_full = o.pos == o.size;
    if (!output_full && in.pos == in.size) return corrupt(c, "truncated frame");
    if (o.pos == 0 && in.pos == in_before) return corrupt(c, "no progress decoding frame");
  }
  return Unit{};
}

}  // namespace

std::optional<Compression> compression_from_id(int id) {
  if (id < 0 || id > 4) return std::nullopt;
  return static_cast<Compression>(id);
}

std::string_view compression_name(Compression c) {
  switch (c) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kSnappy: return "snappy";
    case Compression::kLz4: return "lz4";
    case Compression::kZstd: return "zstd";
  }
  return "unknown";
}

Bytes compress(Compression codec, ByteSpan input) {
  switch (codec) {
    case Compression::kNone: return Bytes(input.begin(), input.end());
    case Compression::kGzip: return gzip_compress(input);
    case Compression::kSnappy: return snappy_compress(input);
    case Compression::kLz4: return lz4_compress(input);
    case Compression::kZstd: return zstd_compress(input);
  }
  throw std::invalid_argument("compress: unknown codec");
}

Result<Bytes> decompress(Compression codec, ByteSpan input, size_t max_output, size_t* reserved) {
  if (reserved) *reserved = 0;
  size_t hint = hint_for(input, max_output);
  switch (codec) {
    case Compression::kNone:
      if (input.size() > max_output) return over_budget(codec, max_output);
      if (reserved) *reserved = input.size();
      return Bytes(input.begin(), input.end());
    case Compression::kSnappy:
      // A raw block reserves exactly its proven length; xerial blocks are small.
      if (!starts_with_xerial_magic(input)) hint = 0;
      break;
    case Compression::kZstd: {
      // A content size the frame claims may only lower the first reserve (a small frame that
      // says so exactly); never raise it: the claim is unverified until the bytes decode.
      unsigned long long claimed = ZSTD_getFrameContentSize(input.data(), input.size());
      if (claimed != ZSTD_CONTENTSIZE_UNKNOWN && claimed != ZSTD_CONTENTSIZE_ERROR && claimed < hint)
        hint = static_cast<size_t>(claimed);
      break;
    }
    case Compression::kGzip:
    case Compression::kLz4:
      break;
    default:
      return failure(DecompressFailure::kCorrupt, "decompress: unknown codec");
  }
  BoundedOutput out(max_output, hint);
  Result<Unit> r = Unit{};
  switch (codec) {
    case Compression::kGzip: r = gzip_decompress(input, out, max_output); break;
    case Compression::kSnappy: r = snappy_decompress(input, out, max_output); break;
    case Compression::kLz4: r = lz4_decompress(input, out, max_output); break;
    case Compression::kZstd: r = zstd_decompress(input, out, max_output); break;
    case Compression::kNone: break;
  }
  if (reserved) *reserved = out.peak();
  if (!r) return r.error();
  return out.finish();
}

}  // namespace kib::kafka
