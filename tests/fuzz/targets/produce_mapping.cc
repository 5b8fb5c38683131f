// The Produce path from a partition's `records` to the Iggy messages the bridge sends: decode
// (CRCs fixed up, see batch_input.h), then map_batch_to_iggy for every batch. A mapped batch
// must give one message per record, within Iggy's limits, and every message must read back
// through map_iggy_to_record (the Fetch path) as the record it came from: key, value, headers
// in order, and timestamp (-1, "none", reads back as the server's append time).
#include <algorithm>
#include <optional>

#include "bridge/errors.h"
#include "bridge/mapping/record_mapping.h"
#include "iggy/user_headers.h"
#include "fuzz/targets/batch_input.h"
#include "fuzz/targets/fuzz_targets.h"

namespace kib::fuzz {
namespace {

using namespace kib::kafka;

constexpr uint64_t kServerTimeUs = 1'800'000'000'000'000ull;

void check_batch(const DecodedBatch& batch) {
  auto mapped = bridge::map_batch_to_iggy(batch);
  if (!mapped.ok()) {
    FUZZ_CHECK(mapped.error().domain == ErrorDomain::kKafka && mapped.error().code != 0,
               "a mapping error that is not a non-zero Kafka error code");
    return;
  }
  FUZZ_CHECK(mapped->messages.size() == batch.records.size(), "not one message per record");
  for (size_t i = 0; i < batch.records.size(); ++i) {
    const Record& rec = batch.records[i];
    const iggy::OutgoingMessage& m = mapped->messages[i];
    FUZZ_CHECK(!m.payload.empty(), "an empty Iggy payload (Iggy refuses those)");
    FUZZ_CHECK(m.user_headers.size() <= iggy::kMaxUserHeadersBytes, "a user-header block over Iggy's limit");
    FUZZ_CHECK(iggy::parse_user_headers(m.user_headers).ok(), "the bridge wrote a user-header block it cannot parse");

    iggy::MessageView view;
    view.offset = i;
    view.timestamp_us = kServerTimeUs;
    view.origin_timestamp_us = m.origin_timestamp_us;
    view.payload = m.payload;
    view.user_headers = m.user_headers;
    auto back = bridge::map_iggy_to_record(view);
    FUZZ_CHECK(back.ok(), "a mapped record does not read back");
    const int64_t ts = batch.timestamp_of(rec);
    const int64_t expect_ts = ts == -1 ? static_cast<int64_t>(kServerTimeUs / 1000) : ts;
    FUZZ_CHECK(back->timestamp_ms == expect_ts, "the timestamp does not read back");
    FUZZ_CHECK(same(back->key, rec.key), "the key does not read back");
    FUZZ_CHECK(same(back->value, rec.value), "the value does not read back");
    FUZZ_CHECK(back->headers.size() == rec.headers.size(), "the header count does not read back");
    for (size_t k = 0; k < rec.headers.size(); ++k) {
      FUZZ_CHECK(back->headers[k].key == rec.headers[k].key, "a header name does not read back");
      FUZZ_CHECK(same(back->headers[k].value, rec.headers[k].value), "a header value does not read back");
    }
  }
}

}  // namespace

int fuzz_produce_mapping(const uint8_t* data, size_t size) {
  const Bytes input = with_valid_crcs(data, size);
  DecompressionBudget budget{kFuzzDecompressionBudget};
  auto batches = decode_record_batches(input, budget);
  if (!batches.ok()) return 0;
  for (const DecodedBatch& b : *batches) check_batch(b);
  return 0;
}

}  // namespace kib::fuzz
