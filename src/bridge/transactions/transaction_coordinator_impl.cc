// Skeleton: the coordinator's state machine lands next; until then every transactional request
// is refused as before (INVALID_REQUEST / INVALID_TXN_STATE).
#include "bridge/transactions/transaction_coordinator_impl.h"

#include "bridge/log/appender.h"
#include "bridge/errors.h"
#include "uvx/tasks.h"

namespace kib::bridge {
namespace {

using kafka::ErrorCode;

class Coordinator final : public PersistentTransactionCoordinator {
 public:
  explicit Coordinator(TransactionServices s) : s_(std::move(s)), tasks_(s_.loop) {}

  Status load() override { return ok_status(); }
  void recover(std::function<void()> done) override { tasks_.post(std::move(done)); }
  void stop() override {}

  void init_producer(const std::string&, int32_t, std::optional<std::pair<ProducerId, ProducerEpoch>>,
                     std::function<void(TxnInitResult)> done) override {
    tasks_.post([done] { done(TxnInitResult{ErrorCode::kInvalidRequest, "transactions are not supported yet"}); });
  }
  void add_partitions(const std::string&, ProducerId, ProducerEpoch, std::vector<TxnTopicPartition> partitions,
                      std::function<void(std::vector<ErrorCode>)> done) override {
    tasks_.post([done, n = partitions.size()] { done(std::vector<ErrorCode>(n, ErrorCode::kInvalidTxnState)); });
  }
  void add_offsets(const std::string&, ProducerId, ProducerEpoch, const std::string&,
                   std::function<void(ErrorCode)> done) override {
    tasks_.post([done] { done(ErrorCode::kInvalidTxnState); });
  }
  void txn_offset_commit(const std::string&, const std::string&, ProducerId, ProducerEpoch, const TxnGroupMember&,
                         std::vector<TxnOffset> offsets, std::function<void(std::vector<ErrorCode>)> done) override {
    tasks_.post([done, n = offsets.size()] { done(std::vector<ErrorCode>(n, ErrorCode::kInvalidTxnState)); });
  }
  void end_txn(const std::string&, ProducerId, ProducerEpoch, bool, std::function<void(ErrorCode)> done) override {
    tasks_.post([done] { done(ErrorCode::kInvalidTxnState); });
  }
  void produce(const std::string&, PartitionId, std::vector<kafka::DecodedBatch>,
               std::function<void(ProduceResult)> done) override {
    tasks_.post([done] { done(produce_error(ErrorCode::kInvalidTxnState, "transactions are not supported yet")); });
  }
  bool has_pending_offset(const std::string&, const std::string&, int32_t) const override { return false; }
  std::optional<TransactionDescription> describe(const std::string&) const override { return std::nullopt; }
  std::vector<TransactionListing> list() const override { return {}; }
  std::vector<OpenTransactionOnPartition> open_on_partition(const std::string&, PartitionId) const override {
    return {};
  }

 private:
  TransactionServices s_;
  uv::Tasks tasks_;
};

}  // namespace

std::unique_ptr<PersistentTransactionCoordinator> make_transaction_coordinator(TransactionServices services) {
  return std::make_unique<Coordinator>(std::move(services));
}

}  // namespace kib::bridge
