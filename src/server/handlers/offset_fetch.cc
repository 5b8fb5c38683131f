// OffsetFetch (key 9), v1-10: committed offsets from CommittedOffsets' cache; one group (v1-7)
// or several (v8+); a null topic list means every partition the group committed. With
// require_stable (v7+, KIP-447: read_committed consumers) a partition an open transaction has an
// offset pending for gets UNSTABLE_OFFSET_COMMIT, which the consumer retries until the
// transaction ends (Kafka's GroupMetadataManager.getOffsets). v9+ names the member asking, checked
// against a consumer group's (KIP-848) member epochs. v10 names topics by id, both ways: an id the
// catalog does not know is answered UNKNOWN_TOPIC_ID on each partition asked, and an all-topics
// answer leaves out topics the catalog no longer knows (they have no id to be named by).
//
// Authorization (KafkaApis.handleOffsetFetchRequestFromCoordinator): each group needs DESCRIBE
// (GROUP_AUTHORIZATION_FAILED, nothing else); a named topic the principal may not DESCRIBE is
// answered TOPIC_AUTHORIZATION_FAILED per partition, and left out of an all-topics answer.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/transactions/transaction_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/fanout.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/offset_fetch.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

// The group's offsets, grouped by topic in request order (or name order when fetching all);
// topics the principal may not DESCRIBE are answered TOPIC_AUTHORIZATION_FAILED after the others
// when named, left out when fetching all. What the answer holds is added to `budget`
// (server/handlers/fanout.h).
template <typename TopicOut, typename Topics>
std::vector<TopicOut> fetch_group(const bridge::CommittedOffsets& offsets, const bridge::TransactionCoordinator* pending,
                                  bridge::Authorizer& authorizer, const Request& req, const std::string& group_id,
                                  const std::optional<Topics>& topics, AnswerBudget& budget) {
  std::vector<bridge::FetchedOffset> fetched;
  std::vector<TopicOut> denied;
  if (topics) {
    // A partition named twice is answered once (Kafka repeats it; clients keep one entry per
    // partition either way), so a response cannot repeat a 4 KiB metadata string 250,000 times.
    std::vector<bridge::TopicPartitionIndex> tps;
    std::set<std::pair<std::string_view, int32_t>> seen;
    std::map<std::string_view, size_t> denied_at;  // a denied topic named twice is answered once too
    for (const auto& t : *topics) {
      if (!req.authorized(Op::kDescribe, Res::kTopic, t.name)) {
        auto [at, fresh] = denied_at.try_emplace(t.name, denied.size());
        if (fresh) denied.emplace_back().name = t.name;
        auto& d = denied[at->second];
        for (int32_t p : t.partition_indexes) {
          if (!seen.insert({t.name, p}).second) continue;
          if (!budget.add(sizeof(typename decltype(d.partitions)::value_type))) return {};
          auto& dp = d.partitions.emplace_back();
          dp.partition_index = p;
          dp.committed_offset = -1;
          dp.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
        }
        continue;
      }
      for (int32_t p : t.partition_indexes)
        if (seen.insert({t.name, p}).second) tps.push_back({t.name, p});
    }
    fetched = offsets.fetch_offsets(group_id, &tps);
  } else {
    fetched = offsets.fetch_offsets(group_id, nullptr);
    if (authorizer.enabled()) {
      std::string last;  // a copy: erase_if moves the elements it keeps
      bool may = true;
      std::erase_if(fetched, [&](const bridge::FetchedOffset& f) {
        if (last.empty() || f.topic != last) {
          last = f.topic;
          may = req.authorized(Op::kDescribe, Res::kTopic, f.topic, bridge::Audit::kFilter);
        }
        return !may;
      });
    }
  }
  for (const auto& f : fetched)
    if (!budget.add(sizeof(typename decltype(TopicOut{}.partitions)::value_type) + f.metadata.size() + f.topic.size()))
      return {};
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
  for (auto& d : denied) out.push_back(std::move(d));
  return out;
}

using FetchTopics = std::optional<std::vector<msg::OffsetFetchRequest::OffsetFetchRequestTopics>>;
using AnswerTopics = std::vector<msg::OffsetFetchResponse::OffsetFetchResponseTopics>;

// v10: names the topics asked by id (so fetch_group can read them by name) and takes out those
// the catalog does not know, returned answered UNKNOWN_TOPIC_ID (a partition named twice once).
AnswerTopics resolve_topic_ids(const bridge::TopicCatalog& catalog, FetchTopics& topics, AnswerBudget& budget) {
  AnswerTopics unknown;
  if (!topics) return unknown;
  std::set<std::pair<msg::Uuid, int32_t>> seen;
  std::erase_if(*topics, [&](msg::OffsetFetchRequest::OffsetFetchRequestTopics& t) {
    if (const bridge::TopicMetadata* m = catalog.find(t.topic_id)) {
      t.name = m->name;
      return false;
    }
    auto it = std::find_if(unknown.begin(), unknown.end(), [&](const auto& u) { return u.topic_id == t.topic_id; });
    if (it == unknown.end()) {
      it = unknown.emplace(unknown.end());
      it->topic_id = t.topic_id;
    }
    for (int32_t p : t.partition_indexes) {
      if (!seen.insert({t.topic_id, p}).second) continue;
      if (!budget.add(sizeof(msg::OffsetFetchResponse::OffsetFetchResponsePartitions))) break;
      auto& up = it->partitions.emplace_back();
      up.partition_index = p;
      up.committed_offset = -1;
      up.error_code = to_int16(ErrorCode::kUnknownTopicId);
    }
    return true;
  });
  return unknown;
}

// v10: every topic of the answer named by its id; one the catalog no longer knows is left out.
void name_by_id(const bridge::TopicCatalog& catalog, AnswerTopics& topics) {
  std::erase_if(topics, [&](msg::OffsetFetchResponse::OffsetFetchResponseTopics& t) {
    const bridge::TopicMetadata* m = catalog.find(t.name);
    if (m) t.topic_id = m->topic_id;
    return m == nullptr;
  });
}

void handle(const bridge::CommittedOffsets& offsets, const bridge::GroupCoordinator& groups,
            const bridge::TransactionCoordinator& txns, const bridge::TopicCatalog& catalog,
            bridge::Authorizer& authorizer, uint64_t max_response_bytes, Request&& req) {
  auto body = req.decode<msg::OffsetFetchRequest>();
  const int16_t v = req.header.api_version;
  const bridge::TransactionCoordinator* pending = body.require_stable ? &txns : nullptr;
  msg::OffsetFetchResponse resp;
  AnswerBudget budget(max_response_bytes);
  if (v <= 7) {
    using Topic = msg::OffsetFetchResponse::OffsetFetchResponseTopic;
    // v1 has no top-level error: a denied group reads as an empty answer there, as on Kafka.
    if (!req.authorized(Op::kDescribe, Res::kGroup, body.group_id))
      resp.error_code = to_int16(ErrorCode::kGroupAuthorizationFailed);
    else
      resp.topics = fetch_group<Topic>(offsets, pending, authorizer, req, body.group_id, body.topics, budget);
  } else {
    // A group named twice is answered once, for the same reason.
    std::set<std::string_view> groups_seen;
    for (auto& g : body.groups) {
      if (!groups_seen.insert(g.group_id).second) continue;
      auto& rg = resp.groups.emplace_back();
      rg.group_id = g.group_id;
      if (!req.authorized(Op::kDescribe, Res::kGroup, g.group_id)) {
        rg.error_code = to_int16(ErrorCode::kGroupAuthorizationFailed);
        continue;
      }
      if (!budget.add(sizeof rg + g.group_id.size())) break;
      // v9+: a consumer group member fetches with its member id and epoch (Kafka's
      // ConsumerGroup.validateOffsetFetch: UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH).
      if (v >= 9)
        if (auto err = groups.validate_offset_fetch(g.group_id, g.member_id.value_or(""), g.member_epoch)) {
          rg.error_code = to_int16(*err);
          continue;
        }
      AnswerTopics unknown;
      if (v >= 10) unknown = resolve_topic_ids(catalog, g.topics, budget);
      rg.topics = fetch_group<msg::OffsetFetchResponse::OffsetFetchResponseTopics>(offsets, pending, authorizer, req,
                                                                                   g.group_id, g.topics, budget);
      if (budget.over()) break;
      if (v >= 10) {
        name_by_id(catalog, rg.topics);
        std::move(unknown.begin(), unknown.end(), std::back_inserter(rg.topics));
      }
    }
  }
  if (budget.over()) return refuse_oversized_answer(req.respond, "OffsetFetch", budget);
  req.respond.send(resp);
}

}  // namespace

HandlerSpec offset_fetch_handler() {
  return serve<msg::OffsetFetchRequest>(1, 10, [](const Services& s, Request&& req) {
    handle(s.offsets, s.groups, s.transactions, s.catalog, s.authorizer, s.config.limits.max_response_bytes,
           std::move(req));
  });
}

}  // namespace kib::kafka
