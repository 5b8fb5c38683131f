#include "bridge/log/held_tail.h"

#include <algorithm>

namespace kib::bridge {

void HeldTail::begin(KafkaOffset high_watermark) {
  begun_ = true;
  next_ = high_watermark;
}

KafkaOffset HeldTail::take(int32_t count, uint64_t bytes, HeldTxn txn, AbortedRecordMarker producer) {
  HeldBatch b;
  b.base = next_;
  b.count = count;
  b.bytes = bytes;
  b.txn = txn;
  b.producer = producer;
  b.outcome = txn == kPlainBatch ? HeldOutcome::kCommitted : HeldOutcome::kUndecided;
  next_ = b.end();
  bytes_ += bytes;
  batches_.push_back(b);
  return b.base;
}

size_t HeldTail::decide(HeldTxn txn, bool committed) {
  size_t n = 0;
  for (HeldBatch& b : batches_)
    if (b.txn == txn && txn != kPlainBatch && !b.decided()) {
      b.outcome = committed ? HeldOutcome::kCommitted : HeldOutcome::kAborted;
      ++n;
    }
  return n;
}

HeldBatch* HeldTail::find(KafkaOffset base) {
  auto it = std::find_if(batches_.begin(), batches_.end(), [&](const HeldBatch& b) { return b.base == base; });
  return it == batches_.end() ? nullptr : &*it;
}

bool HeldTail::lose(KafkaOffset base) {
  HeldBatch* b = find(base);
  if (!b || b->in_flight) return false;
  b->outcome = HeldOutcome::kAborted;
  b->producer = kNoProducer;
  b->txn = kPlainBatch;
  b->stored = false;
  return true;
}

void HeldTail::split_front(int32_t count) {
  if (batches_.empty() || count <= 0) return;
  HeldBatch& front = batches_.front();
  if (front.in_flight || front.count <= count) return;
  HeldBatch rest = front;
  rest.base = front.base + count;
  rest.count = front.count - count;
  rest.bytes = 0;
  rest.stored = false;
  front.count = count;
  batches_.insert(batches_.begin() + 1, rest);
}

std::optional<HeldBatch> HeldTail::next_ready() {
  if (batches_.empty()) return std::nullopt;
  HeldBatch& front = batches_.front();
  if (!front.decided() || front.in_flight) return std::nullopt;
  front.in_flight = true;
  return front;
}

void HeldTail::appended(KafkaOffset base) {
  if (batches_.empty() || batches_.front().base != base) return;
  bytes_ -= std::min(bytes_, batches_.front().bytes);
  batches_.pop_front();
  end_if_empty();
}

void HeldTail::append_failed(KafkaOffset base) {
  if (!batches_.empty() && batches_.front().base == base) batches_.front().in_flight = false;
}

int64_t HeldTail::shift_to(KafkaOffset iggy_end) {
  if (batches_.empty() || iggy_end <= batches_.front().base) return 0;
  const int64_t by = iggy_end - batches_.front().base;
  for (HeldBatch& b : batches_) b.base = b.base + by;
  next_ = next_ + by;
  return by;
}

void HeldTail::end_if_empty() {
  if (!batches_.empty()) return;
  begun_ = false;
  bytes_ = 0;
}

HeldRestore HeldTail::restore(std::vector<HeldBatch> rows, KafkaOffset high_watermark) {
  HeldRestore out;
  std::sort(rows.begin(), rows.end(), [](const HeldBatch& a, const HeldBatch& b) { return a.base < b.base; });
  batches_.clear();
  bytes_ = 0;
  begun_ = false;
  KafkaOffset at = high_watermark;
  for (HeldBatch& r : rows) {
    r.in_flight = false;
    if (r.end() <= high_watermark) {
      out.already_appended.push_back(r.base);
      continue;
    }
    if (r.base > at) {  // offsets taken, row never written
      HeldBatch filler;
      filler.base = at;
      filler.count = static_cast<int32_t>(r.base - at);
      filler.producer = kNoProducer;
      filler.outcome = HeldOutcome::kAborted;
      filler.stored = false;
      batches_.push_back(filler);
      ++out.filled_ranges;
      out.largest_gap = std::max<int64_t>(out.largest_gap, r.base - at);
    } else if (r.base < at) {
      // Straddles Iggy's end: one send is all or nothing, so only a native append can have moved
      // Iggy's end into it. It is appended whole after that end (the offsets move, as shift_to).
      r.base = at;
    }
    at = r.end();
    bytes_ += r.bytes;
    batches_.push_back(r);
  }
  if (!batches_.empty()) {
    begun_ = true;
    next_ = batches_.back().end();
  }
  return out;
}

}  // namespace kib::bridge
