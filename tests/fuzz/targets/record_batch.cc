// A Produce partition's `records` (one or more v2 batches, any codec; CRCs fixed up, see
// batch_input.h) through decode_record_batches with a bounded decompression budget. A decoded
// batch must hold what its header claims, stay within the budget, and re-encode (same codec and
// attributes) to a batch that decodes to the same records.
#include <optional>
#include <vector>

#include "fuzz/targets/batch_input.h"
#include "fuzz/targets/fuzz_targets.h"

namespace kib::fuzz {
namespace {

using namespace kib::kafka;

void check_reencoding(const DecodedBatch& batch) {
  const RecordBatchHeader& h = batch.header;
  BatchSettings s;
  s.base_offset = h.base_offset;
  s.partition_leader_epoch = h.partition_leader_epoch;
  s.compression = h.compression();
  s.timestamp_type = h.timestamp_type();
  s.log_append_time = h.max_timestamp;
  s.transactional = h.is_transactional();
  s.control = h.is_control();
  s.producer_id = h.producer_id;
  s.producer_epoch = h.producer_epoch;
  s.base_sequence = h.base_sequence;
  std::vector<RecordToEncode> records;
  records.reserve(batch.records.size());
  for (const Record& r : batch.records) records.push_back({batch.timestamp_of(r), r.key, r.value, r.headers});

  ByteWriter out;
  size_t n = encode_record_batch(out, s, records);
  if (records.empty()) {
    FUZZ_CHECK(n == 0 && out.size() == 0, "an empty batch was encoded");
    return;
  }
  FUZZ_CHECK(n == out.size(), "encode_record_batch returned the wrong size");
  DecompressionBudget budget{batch.decompressed_bytes() + (1u << 16)};
  auto again = decode_record_batches(out.buffer(), budget);
  FUZZ_CHECK(again.ok(), "the re-encoding of a decoded batch does not decode");
  FUZZ_CHECK(again->size() == 1, "the re-encoding is not one batch");
  const DecodedBatch& b = again->front();
  constexpr int16_t kEncoded = BatchAttributes::kCompressionMask | BatchAttributes::kLogAppendTime |
                               BatchAttributes::kTransactional | BatchAttributes::kControl;
  FUZZ_CHECK(b.header.attributes == (h.attributes & kEncoded), "attributes changed");
  FUZZ_CHECK(b.header.producer_id == h.producer_id && b.header.base_sequence == h.base_sequence &&
                 b.header.producer_epoch == h.producer_epoch && b.header.base_offset == h.base_offset,
             "producer fields changed");
  FUZZ_CHECK(b.records.size() == batch.records.size(), "record count changed");
  for (size_t i = 0; i < b.records.size(); ++i) {
    const Record& x = batch.records[i];
    const Record& y = b.records[i];
    FUZZ_CHECK(batch.timestamp_of(x) == b.timestamp_of(y), "a timestamp changed");
    FUZZ_CHECK(same(x.key, y.key) && same(x.value, y.value), "a key or value changed");
    FUZZ_CHECK(x.headers.size() == y.headers.size(), "a header count changed");
    for (size_t k = 0; k < x.headers.size(); ++k) {
      FUZZ_CHECK(x.headers[k].key == y.headers[k].key && same(x.headers[k].value, y.headers[k].value),
                 "a header changed");
    }
  }
}

}  // namespace

int fuzz_record_batch(const uint8_t* data, size_t size) {
  const Bytes input = with_valid_crcs(data, size);
  DecompressionBudget budget{kFuzzDecompressionBudget};
  auto batches = decode_record_batches(input, budget);
  if (!batches.ok()) {
    (void)record_error(batches.error());
    return 0;
  }
  size_t decompressed = 0;
  size_t wire = 0;
  for (const DecodedBatch& b : *batches) {
    FUZZ_CHECK(b.header.magic == kRecordBatchMagic, "a batch of another magic decoded");
    FUZZ_CHECK(b.records.size() == static_cast<size_t>(b.header.record_count), "record count is not the header's");
    for (size_t i = 0; i < b.records.size(); ++i)
      FUZZ_CHECK(b.records[i].offset_delta == static_cast<int32_t>(i), "offset delta is not the record's index");
    FUZZ_CHECK(b.wire.size() == kRecordBatchLogOverhead + static_cast<size_t>(b.header.batch_length),
               "wire view is not the batch");
    decompressed += b.decompressed_bytes();
    wire += b.wire.size();
  }
  FUZZ_CHECK(wire == input.size(), "decoded batches do not cover the input");
  FUZZ_CHECK(decompressed <= kFuzzDecompressionBudget, "decompressed past the budget");
  for (const DecodedBatch& b : *batches) check_reencoding(b);
  return 0;
}

}  // namespace kib::fuzz
