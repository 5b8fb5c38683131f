// One partition's held tail (docs/transactions.md, "Real offsets at produce time"): while a
// transaction with records in the partition is undecided, every append to the partition takes
// its offsets here when it arrives and reaches Iggy in offset order once it and everything before
// it are decided; an aborted batch reaches Iggy as placeholders (docs/mapping.md, "Aborted
// records"), so the offsets answered after it stay true.
//
// A model without I/O: the partition log feeds it arrivals, decisions, Iggy's acknowledgements
// and, at startup, the stored rows, and asks what to append next. Loop thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "bridge/mapping/record_mapping.h"
#include "common/ids.h"

namespace kib::bridge {

// Which transaction a held batch belongs to, as the coordinator numbers them (a transactional id
// keeps its producer id and epoch across transactions at transaction version 1, so neither can
// tell two of its transactions apart). 0: a plain batch, decided when it arrives.
using HeldTxn = uint64_t;
inline constexpr HeldTxn kPlainBatch = 0;

enum class HeldOutcome : uint8_t { kUndecided, kCommitted, kAborted };

struct HeldBatch {
  KafkaOffset base;
  int32_t count = 0;   // offsets it takes (its records)
  uint64_t bytes = 0;  // counted against the partition's bound
  HeldTxn txn = kPlainBatch;
  AbortedRecordMarker producer;  // whose it is; its placeholders name it once aborted
  HeldOutcome outcome = HeldOutcome::kUndecided;
  bool in_flight = false;  // handed to the appender, not acknowledged yet
  bool stored = true;      // has a row in the store (not a range filled at startup, not a lost batch)

  KafkaOffset end() const { return base + count; }
  bool decided() const { return outcome != HeldOutcome::kUndecided; }
};

// What restore() found in the stored rows.
struct HeldRestore {
  std::vector<KafkaOffset> already_appended;  // rows below Iggy's high watermark: delete them
  size_t filled_ranges = 0;                   // ranges without a row, now placeholders of producer -1
  int64_t largest_gap = 0;                    // offsets of the largest such range (a purged partition shows here)
};

class HeldTail {
 public:
  // Whether appends to the partition take the held path: from begin() until the tail is empty.
  bool holding() const { return begun_; }
  // The hold starts with the partition's append queue empty, so Iggy's high watermark is exact.
  void begin(KafkaOffset high_watermark);
  // The offset the next batch gets.
  KafkaOffset next_offset() const { return next_; }
  uint64_t held_bytes() const { return bytes_; }
  // Whether a batch of `bytes` keeps the tail within `max_bytes` (the first batch always fits,
  // so a single large batch is never refused for the bound alone).
  bool fits(uint64_t bytes, uint64_t max_bytes) const { return batches_.empty() || bytes_ + bytes <= max_bytes; }

  // Takes the next `count` offsets for a batch of `txn` (kPlainBatch: decided already); its base.
  KafkaOffset take(int32_t count, uint64_t bytes, HeldTxn txn, AbortedRecordMarker producer);
  // A transaction ended: its batches are decided. How many it had here.
  size_t decide(HeldTxn txn, bool committed);
  // The batch at `base` was not stored (its row failed): its offsets become placeholders of
  // producer -1, so the offsets answered after it stay true. False when no such batch.
  bool lose(KafkaOffset base);

  // Cuts the first batch after `count` offsets when it is longer and not in flight (a long
  // aborted range is appended in several sends); the rest follows it, with the same outcome and
  // producer and no row of its own.
  void split_front(int32_t count);
  // The batch to append now: the first one, when decided and not in flight (it is then marked in
  // flight). nullopt when none.
  std::optional<HeldBatch> next_ready();
  // Iggy acknowledged the first batch: it leaves the tail, and the hold ends with the last one.
  void appended(KafkaOffset base);
  // The append of the first batch failed: it is ready again.
  void append_failed(KafkaOffset base);
  // Iggy's high watermark is `iggy_end` where the first batch should start: a native producer
  // appended meanwhile. Every held batch moves up by the difference (the offsets their producers
  // were answered are off by it: kib_transaction_offset_shifts_total). The shift, 0 when none.
  int64_t shift_to(KafkaOffset iggy_end);

  // Startup: the stored rows of the partition (any order) and Iggy's high watermark. Rows below it
  // reached Iggy before their deletion was stored; a range between Iggy's end and the first row,
  // or between two rows, had its offsets taken but no row written (nothing was answered for it):
  // it becomes placeholders of producer -1.
  HeldRestore restore(std::vector<HeldBatch> rows, KafkaOffset high_watermark);

  const std::deque<HeldBatch>& batches() const { return batches_; }

 private:
  HeldBatch* find(KafkaOffset base);
  void end_if_empty();

  bool begun_ = false;
  KafkaOffset next_;
  uint64_t bytes_ = 0;
  std::deque<HeldBatch> batches_;  // offset order, contiguous from the first
};

// The producer a filler placeholder names: no producer.
inline constexpr AbortedRecordMarker kNoProducer{-1, -1};

}  // namespace kib::bridge
