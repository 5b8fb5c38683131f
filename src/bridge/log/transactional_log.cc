// PartitionLog's transactional side (partition_log.h, "transactions"): not built yet.
#include "bridge/errors.h"
#include "bridge/log/appender.h"
#include "bridge/log/partition_log.h"

namespace kib::bridge {

namespace {
Error not_yet() { return kafka_error(kafka::ErrorCode::kInvalidTxnState, "transactions are not supported yet"); }
}  // namespace

void PartitionLog::check_transactional(const std::string&, PartitionId, const std::vector<kafka::DecodedBatch>&,
                                       std::function<void(Status)> cb) {
  tasks_.post([cb] { cb(not_yet()); });
}
void PartitionLog::append_committed(const std::string&, PartitionId, std::vector<kafka::DecodedBatch>,
                                    std::shared_ptr<const void>, std::function<void(ProduceResult)> cb) {
  tasks_.post([cb] { cb(produce_error(not_yet())); });
}
void PartitionLog::producer_batches_since(const std::string&, PartitionId, KafkaOffset, ProducerId, ProducerEpoch,
                                          std::function<void(Result<std::vector<int32_t>>)> cb) {
  tasks_.post([cb] { cb(not_yet()); });
}
void PartitionLog::hold_stable(const std::string&, PartitionId, std::function<void(Result<KafkaOffset>)> held) {
  tasks_.post([held] { held(not_yet()); });
}
void PartitionLog::release_stable(const std::string&, PartitionId, KafkaOffset) {}

}  // namespace kib::bridge
