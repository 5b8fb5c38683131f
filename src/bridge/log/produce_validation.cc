#include "bridge/log/produce_validation.h"

#include <string>

#include "bridge/errors.h"

namespace kib::bridge {

using kafka::ErrorCode;

Status validate_produce_batches(std::span<const kafka::DecodedBatch> batches, int32_t max_message_bytes,
                                bool transactional) {
  if (batches.size() != 1)
    return kafka_error(ErrorCode::kInvalidRecord, "produce v3+ must carry exactly one record batch per partition, got " +
                                                      std::to_string(batches.size()));
  const kafka::DecodedBatch& b = batches.front();
  if (b.header.record_count <= 0 || b.records.empty())
    return kafka_error(ErrorCode::kInvalidRecord, "record batch has no records");
  if (b.header.is_control())
    return kafka_error(ErrorCode::kInvalidRecord, "clients may not write control batches");
  if (b.header.is_transactional() && !transactional)
    return kafka_error(ErrorCode::kInvalidTxnState, "a transactional batch outside the transaction coordinator");
  if (b.header.is_transactional() && b.header.producer_id < 0)
    return kafka_error(ErrorCode::kInvalidRecord, "transactional batch without a producer id");
  if (b.header.producer_id >= 0 && b.header.base_sequence < 0)
    return kafka_error(ErrorCode::kInvalidRecord, "idempotent batch (producer id " +
                                                      std::to_string(b.header.producer_id) + ") without a base sequence");
  if (max_message_bytes >= 0 && b.wire.size() > static_cast<size_t>(max_message_bytes))
    return kafka_error(ErrorCode::kMessageTooLarge, "record batch is " + std::to_string(b.wire.size()) +
                                                        " bytes, above the topic's max.message.bytes " +
                                                        std::to_string(max_message_bytes));
  return ok_status();
}

std::optional<ProduceResult> refuse_keyless_records(std::span<const kafka::DecodedBatch> batches,
                                                    const std::string& topic, int32_t partition) {
  ProduceResult r;
  int32_t index = 0;  // Kafka numbers the records of the request's batches together (recordIndex)
  for (const kafka::DecodedBatch& b : batches)
    for (const kafka::Record& rec : b.records) {
      if (!rec.key)
        r.record_errors.push_back({index, "Compacted topic cannot accept message without key in topic partition " +
                                              topic + "-" + std::to_string(partition)});
      ++index;
    }
  if (r.record_errors.empty()) return std::nullopt;
  r.error = ErrorCode::kInvalidRecord;
  // LogValidator.processRecordErrors: errors.subList(0, min(size, 3)) as Java's List.toString
  // prints ProduceResponse.RecordError.toString.
  std::string shown;
  for (size_t i = 0; i < r.record_errors.size() && i < 3; ++i) {
    if (i) shown += ", ";
    shown += "RecordError(batchIndex=" + std::to_string(r.record_errors[i].batch_index) + ", message='" +
             r.record_errors[i].message + "')";
  }
  r.message = "One or more records have been rejected due to " + std::to_string(r.record_errors.size()) +
              " record errors in total, and only showing the first three errors at most: [" + shown + "]";
  return r;
}

}  // namespace kib::bridge
