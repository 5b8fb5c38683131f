// OffsetFetch (key 9), v1-9: committed offsets from CommittedOffsets' cache; one group (v1-7)
// or several (v8+); a null topic list means every partition the group committed. With
// require_stable (v7+, KIP-447: read_committed consumers) a partition an open transaction has an
// offset pending for gets UNSTABLE_OFFSET_COMMIT, which the consumer retries until the
// transaction ends (Kafka's GroupMetadataManager.getOffsets).
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "bridge/groups/committed_offsets.h"
#include "bridge/transactions/transaction_coordinator.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/offset_fetch.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

// The group's offsets, grouped by topic in request order (or name order when fetching all).
template <typename TopicOut, typename Topics>
std::vector<TopicOut> fetch_group(const bridge::CommittedOffsets& offsets, const bridge::TransactionCoordinator* pending,
                                  const std::string& group_id, const std::optional<Topics>& topics) {
  std::vector<bridge::FetchedOffset> fetched;
  if (topics) {
    // A partition named twice is answered once (Kafka repeats it; clients keep one entry per
    // partition either way), so a response cannot repeat a 4 KiB metadata string 250,000 times.
    std::vector<bridge::TopicPartitionIndex> tps;
    std::set<std::pair<std::string_view, int32_t>> seen;
    for (const auto& t : *topics)
      for (int32_t p : t.partition_indexes)
        if (seen.insert({t.name, p}).second) tps.push_back({t.name, p});
    fetched = offsets.fetch_offsets(group_id, &tps);
  } else {
    fetched = offsets.fetch_offsets(group_id, nullptr);
  }
  std::vector<TopicOut> out;
  for (auto& f : fetched) {
    if (out.empty() || out.back().name != f.topic) out.emplace_back().name = f.topic;
    auto& p = out.back().partitions.emplace_back();
    p.partition_index = f.partition;
    p.committed_offset = f.offset;
    p.committed_leader_epoch = f.leader_epoch;
    p.metadata = std::move(f.metadata);
    p.error_code = to_int16(f.error);
    if (pending && pending->has_pending_offset(group_id, f.topic, f.partition)) {
      p.committed_offset = -1;
      p.committed_leader_epoch = -1;
      p.metadata = "";
      p.error_code = to_int16(ErrorCode::kUnstableOffsetCommit);
    }
  }
  return out;
}

void handle(const bridge::CommittedOffsets& offsets, const bridge::TransactionCoordinator& txns, Request&& req) {
  auto body = req.decode<msg::OffsetFetchRequest>();
  const int16_t v = req.header.api_version;
  const bridge::TransactionCoordinator* pending = body.require_stable ? &txns : nullptr;
  msg::OffsetFetchResponse resp;
  if (v <= 7) {
    using Topic = msg::OffsetFetchResponse::OffsetFetchResponseTopic;
    resp.topics = fetch_group<Topic>(offsets, pending, body.group_id, body.topics);
  } else {
    // A group named twice is answered once, for the same reason.
    std::set<std::string_view> groups_seen;
    for (const auto& g : body.groups) {
      if (!groups_seen.insert(g.group_id).second) continue;
      auto& rg = resp.groups.emplace_back();
      rg.group_id = g.group_id;
      rg.topics = fetch_group<msg::OffsetFetchResponse::OffsetFetchResponseTopics>(offsets, pending, g.group_id, g.topics);
    }
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec offset_fetch_handler() {
  return serve<msg::OffsetFetchRequest>(1, 9, [](const Services& s, Request&& req) {
    handle(s.offsets, s.transactions, std::move(req));
  });
}

}  // namespace kib::kafka
