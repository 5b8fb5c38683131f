// A byte string held in one or more pieces, each kept alive by its own owner. A Kafka `records`
// field is one: a Fetch response's records refer to the cached batches and the rebuilt ones
// without copying them into one buffer, and the response frame is written from those pieces
// (ByteWriter::shared, net::OutFrame).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "common/bytes.h"

namespace kib {

class ChunkedBytes {
 public:
  ChunkedBytes() = default;
  ChunkedBytes(Bytes b) { append(std::move(b)); }  // NOLINT: implicit, a records field set from bytes
  explicit ChunkedBytes(SharedSpan s) { append(std::move(s)); }

  // Appends bytes it then owns (no copy: the buffer moves into a shared one).
  void append(Bytes b) {
    if (b.empty()) return;
    auto owned = std::make_shared<const Bytes>(std::move(b));
    ByteSpan view(*owned);
    append(SharedSpan{std::move(owned), view});
  }
  // Appends bytes `s.owner` keeps alive, without copying them.
  void append(SharedSpan s) {
    if (s.bytes.empty()) return;
    size_ += s.bytes.size();
    chunks_.push_back(std::move(s));
    flat_.reset();
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::vector<SharedSpan>& chunks() const { return chunks_; }

  // All the bytes as one span: the only piece itself, or a copy of the pieces made at the first
  // call (decoders and tests; the write path goes piece by piece).
  ByteSpan span() const {
    if (chunks_.empty()) return {};
    if (chunks_.size() == 1) return chunks_.front().bytes;
    if (!flat_) {
      auto flat = std::make_shared<Bytes>();
      flat->reserve(size_);
      for (const auto& c : chunks_) flat->insert(flat->end(), c.bytes.begin(), c.bytes.end());
      flat_ = std::move(flat);
    }
    return *flat_;
  }
  operator ByteSpan() const { return span(); }  // NOLINT: reads like the Bytes it replaced
  Bytes to_bytes() const {
    ByteSpan s = span();
    return Bytes(s.begin(), s.end());
  }

  // Writes every piece to `w` (by reference where `w` collects shared spans).
  void write_to(ByteWriter& w) const {
    for (const auto& c : chunks_) w.shared(c);
  }

  friend bool operator==(const ChunkedBytes& a, const ChunkedBytes& b) {
    if (a.size_ != b.size_) return false;
    ByteSpan x = a.span(), y = b.span();
    return std::equal(x.begin(), x.end(), y.begin());
  }

 private:
  std::vector<SharedSpan> chunks_;
  size_t size_ = 0;
  mutable std::shared_ptr<const Bytes> flat_;
};

}  // namespace kib
