// One buffer type for the whole project: ByteReader never reads past its bounds (it throws
// DecodeError instead), ByteWriter appends to a growable buffer. Kafka is big-endian, Iggy is
// little-endian; both byte orders are explicit at every call site.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kib {

using Bytes = std::vector<uint8_t>;
using ByteSpan = std::span<const uint8_t>;

// Bytes in a buffer someone else owns, kept alive by `owner` (a cached record batch, a rebuilt
// one, a request frame): what a response refers to instead of copying it.
struct SharedSpan {
  std::shared_ptr<const void> owner;
  ByteSpan bytes;
};

// An allocator that leaves the bytes of a resize (or sized construction) uninitialized: for a
// buffer a read fills right after sizing it (Iggy reply bodies), where zero-filling it first
// costs a pass over every byte.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using UninitializedBytes = std::vector<uint8_t, UninitializedAllocator<uint8_t>>;

// Thrown on truncated or malformed input. The message names what was being read.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <typename T>
T byteswap_if(T v, bool swap) {
  if (!swap) return v;
  using U = std::make_unsigned_t<T>;
  U u = static_cast<U>(v);
  if constexpr (sizeof(T) == 1) return v;
  else if constexpr (sizeof(T) == 2) u = __builtin_bswap16(u);
  else if constexpr (sizeof(T) == 4) u = __builtin_bswap32(u);
  else if constexpr (sizeof(T) == 8) u = __builtin_bswap64(u);
  return static_cast<T>(u);
}
constexpr bool kLittleHost = std::endian::native == std::endian::little;
}  // namespace detail

// Little-endian integers at a fixed position of a buffer the caller has already sized (frame
// headers read and patched in place); anything parsed field by field goes through ByteReader.
template <typename T>
T load_le(const uint8_t* p) {
  static_assert(std::is_integral_v<T>);
  T v;
  std::memcpy(&v, p, sizeof(T));
  return detail::byteswap_if(v, !detail::kLittleHost);
}
template <typename T>
void store_le(uint8_t* p, T v) {
  static_assert(std::is_integral_v<T>);
  v = detail::byteswap_if(v, !detail::kLittleHost);
  std::memcpy(p, &v, sizeof(T));
}

// Kafka unsigned varints written at `p`, which has room for the longest (5 and 10 bytes): the
// number of bytes written. For encoders that assemble a few fields in a local block and append
// it once.
template <typename U>
size_t put_unsigned_varint(uint8_t* p, U v) {
  static_assert(std::is_unsigned_v<U>);
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  p[n++] = static_cast<uint8_t>(v);
  return n;
}
inline size_t put_uvarint(uint8_t* p, uint32_t v) { return put_unsigned_varint(p, v); }
inline size_t put_uvarlong(uint8_t* p, uint64_t v) { return put_unsigned_varint(p, v); }

inline uint32_t zigzag_encode32(int32_t v) { return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31); }
inline int32_t zigzag_decode32(uint32_t v) { return static_cast<int32_t>((v >> 1) ^ (~(v & 1) + 1)); }
inline uint64_t zigzag_encode64(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t zigzag_decode64(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

class ByteReader {
 public:
  ByteReader() = default;
  explicit ByteReader(ByteSpan data) : data_(data) {}
  ByteReader(const uint8_t* p, size_t n) : data_(p, n) {}

  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }
  bool empty() const { return remaining() == 0; }
  ByteSpan rest() const { return data_.subspan(pos_); }

  template <typename T>
  T be(const char* what = "integer") { return read_int<T>(what, detail::kLittleHost); }
  template <typename T>
  T le(const char* what = "integer") { return read_int<T>(what, !detail::kLittleHost); }

  // Kafka unsigned varint (at most 5 bytes for 32 bits).
  // Record fields are one- or two-byte varints: read them inline, without a bounds check per
  // byte, when the longest varint fits in what is left; anything else takes the general path.
  uint32_t uvarint(const char* what = "uvarint") {
    uint32_t v;
    return short_varint(v) ? v : varint_general<uint32_t>(what);
  }
  uint64_t uvarlong(const char* what = "uvarlong") {
    uint64_t v;
    return short_varint(v) ? v : varint_general<uint64_t>(what);
  }
  int32_t varint(const char* what = "varint") { return zigzag_decode32(uvarint(what)); }
  int64_t varlong(const char* what = "varlong") { return zigzag_decode64(uvarlong(what)); }

  ByteSpan take(size_t n, const char* what = "bytes") {
    need(n, what);
    ByteSpan s = data_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::string_view take_string(size_t n, const char* what = "string") {
    ByteSpan s = take(n, what);
    return {reinterpret_cast<const char*>(s.data()), s.size()};
  }
  void skip(size_t n, const char* what = "bytes") { need(n, what); pos_ += n; }

  // What keeps the input alive, when it is shared (a request frame): decoders may then keep
  // views into it (SharedSpan) instead of copying. Null: the input is only borrowed.
  void set_owner(const std::shared_ptr<const void>* owner) { owner_ = owner; }
  const std::shared_ptr<const void>* owner() const { return owner_; }

  // Guard for array counts claimed by a peer: each element needs at least `min_element_size`
  // bytes, so a count the remaining input cannot hold is rejected before any allocation.
  void check_count(uint64_t count, size_t min_element_size, const char* what) const {
    if (min_element_size == 0) min_element_size = 1;
    if (count > remaining() / min_element_size)
      throw DecodeError(std::string(what) + ": count " + std::to_string(count) + " exceeds remaining " +
                        std::to_string(remaining()) + " bytes");
  }

 private:
  void need(size_t n, const char* what) const {
    if (n > remaining())
      throw DecodeError(std::string(what) + ": need " + std::to_string(n) + " bytes, " +
                        std::to_string(remaining()) + " left");
  }
  template <typename T>
  T read_int(const char* what, bool swap) {
    static_assert(std::is_integral_v<T> || std::is_floating_point_v<T>);
    need(sizeof(T), what);
    if constexpr (std::is_floating_point_v<T>) {
      using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
      U u;
      std::memcpy(&u, data_.data() + pos_, sizeof(U));
      pos_ += sizeof(U);
      u = detail::byteswap_if(u, swap);
      return std::bit_cast<T>(u);
    } else {
      T v;
      std::memcpy(&v, data_.data() + pos_, sizeof(T));
      pos_ += sizeof(T);
      return detail::byteswap_if(v, swap);
    }
  }

  // A one- or two-byte varint, read without a bounds check per byte, when the longest varint of
  // U fits in what is left; false (nothing read) otherwise.
  template <typename U>
  bool short_varint(U& out) {
    constexpr size_t kLongest = sizeof(U) == 4 ? 5 : 10;
    if (data_.size() - pos_ < kLongest) return false;
    const uint8_t* p = data_.data() + pos_;
    if (p[0] < 0x80) {
      out = p[0];
      ++pos_;
      return true;
    }
    if (p[1] >= 0x80) return false;
    out = static_cast<U>((p[0] & 0x7Fu) | (static_cast<U>(p[1]) << 7));
    pos_ += 2;
    return true;
  }
  // The byte-by-byte path: out of line, so the short path inlines.
  template <typename U>
  [[gnu::noinline]] U varint_general(const char* what) {
    constexpr int kBits = 8 * sizeof(U);
    constexpr int kLastShift = (kBits - 1) / 7 * 7;          // 28 for 32 bits, 63 for 64
    constexpr uint8_t kLastMask = static_cast<uint8_t>(0xFF << (kBits - kLastShift));  // bits past U
    U result = 0;
    for (int shift = 0; shift <= kLastShift; shift += 7) {
      uint8_t b = be<uint8_t>(what);
      if (shift == kLastShift && (b & kLastMask) != 0)
        throw DecodeError(std::string(what) + (kBits == 32 ? ": varint overflows 32 bits" : ": varlong overflows 64 bits"));
      result |= static_cast<U>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return result;
    }
    throw DecodeError(std::string(what) + (kBits == 32 ? ": varint too long" : ": varlong too long"));
  }

  ByteSpan data_;
  size_t pos_ = 0;
  const std::shared_ptr<const void>* owner_ = nullptr;
};

class ByteWriter {
 public:
  ByteWriter() = default;
  explicit ByteWriter(size_t reserve) { buf_.reserve(reserve); }

  template <typename T>
  void be(T v) { write_int(v, detail::kLittleHost); }
  template <typename T>
  void le(T v) { write_int(v, !detail::kLittleHost); }

  void uvarint(uint32_t v) { unsigned_varint(v); }
  void uvarlong(uint64_t v) { unsigned_varint(v); }
  void varint(int32_t v) { uvarint(zigzag_encode32(v)); }
  void varlong(int64_t v) { uvarlong(zigzag_encode64(v)); }

  void bytes(ByteSpan s) { buf_.insert(buf_.end(), s.begin(), s.end()); }
  void bytes(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  void string(std::string_view s) { bytes(s.data(), s.size()); }
  void zeros(size_t n) { buf_.insert(buf_.end(), n, 0); }

  // Appends bytes that `s.owner` keeps alive. A writer that collects shared spans (below) keeps
  // a reference to those of at least its threshold's size instead of copying them: the frame is
  // then written from several buffers (scatter-gather). Any other writer copies them.
  void shared(const SharedSpan& s) {
    if (!collect_shared_ || s.bytes.size() < collect_min_bytes_) return bytes(s.bytes);
    shared_.push_back({buf_.size(), s});
    shared_bytes_ += s.bytes.size();
  }
  struct SharedAt {
    size_t at = 0;  // the span follows buffer()[0, at)
    SharedSpan span;
  };
  // Shared spans of `min_bytes` or more are referenced from now on, smaller ones copied.
  void collect_shared(size_t min_bytes) {
    collect_shared_ = true;
    collect_min_bytes_ = min_bytes;
  }
  const std::vector<SharedAt>& shared_spans() const { return shared_; }
  std::vector<SharedAt> take_shared_spans() { shared_bytes_ = 0; return std::move(shared_); }
  // Bytes written: the buffer plus the shared spans it refers to.
  size_t total_size() const { return buf_.size() + shared_bytes_; }

  // The buffer alone; with shared spans (size() < total_size()) it is not the whole frame.
  size_t size() const { return buf_.size(); }
  uint8_t* data() { return buf_.data(); }
  const Bytes& buffer() const { return buf_; }
  Bytes take() {
    if (!shared_.empty()) throw std::logic_error("ByteWriter::take with shared spans: use take_shared_spans too");
    return std::move(buf_);
  }
  void reserve(size_t n) { buf_.reserve(n); }

  // Overwrite a previously written fixed-width field (length prefixes, CRCs).
  template <typename T>
  void patch_be(size_t at, T v) { patch(at, detail::byteswap_if(v, detail::kLittleHost)); }
  template <typename T>
  void patch_le(size_t at, T v) { patch(at, detail::byteswap_if(v, !detail::kLittleHost)); }

 private:
  template <typename U>
  void unsigned_varint(U v) {
    if (v < 0x80) return buf_.push_back(static_cast<uint8_t>(v));
    uint8_t encoded[10];
    bytes(encoded, put_unsigned_varint(encoded, v));
  }
  template <typename T>
  void write_int(T v, bool swap) {
    if constexpr (std::is_floating_point_v<T>) {
      using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
      write_int(std::bit_cast<U>(v), swap);
    } else {
      T s = detail::byteswap_if(v, swap);
      const auto* p = reinterpret_cast<const uint8_t*>(&s);
      buf_.insert(buf_.end(), p, p + sizeof(T));
    }
  }
  template <typename T>
  void patch(size_t at, T raw) {
    if (at + sizeof(T) > buf_.size()) throw std::out_of_range("ByteWriter::patch beyond end");
    std::memcpy(buf_.data() + at, &raw, sizeof(T));
  }

  Bytes buf_;
  std::vector<SharedAt> shared_;
  size_t shared_bytes_ = 0;
  bool collect_shared_ = false;
  size_t collect_min_bytes_ = 0;
};

}  // namespace kib
