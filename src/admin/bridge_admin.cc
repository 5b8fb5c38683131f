#include "admin/bridge_admin.h"

#include <algorithm>

#include "bridge/groups/consumer_protocol.h"
#include "kafka/protocol/generated/describe_groups.h"
#include "kafka/protocol/generated/list_groups.h"
#include "kafka/protocol/generated/list_offsets.h"
#include "kafka/protocol/generated/metadata.h"
#include "kafka/protocol/generated/offset_commit.h"
#include "kafka/protocol/generated/offset_fetch.h"
#include "state/topic_store.h"

namespace kib::admin {
namespace {

using kafka::ErrorCode;
namespace msg = kafka::msg;

ErrorCode code(int16_t c) { return static_cast<ErrorCode>(c); }

Error kafka_error(const std::string& where, const std::string& what, int16_t c) {
  return Error{ErrorDomain::kProtocol, static_cast<uint32_t>(static_cast<uint16_t>(c)),
               where + ": " + what + ": " + describe_error(code(c))};
}

}  // namespace

std::string describe_error(ErrorCode e) {
  return std::string(kafka::error_name(e)) + " (" + std::to_string(kafka::to_int16(e)) + ")";
}

Result<BridgeAdmin> BridgeAdmin::connect(const config::HostPort& bootstrap) {
  auto client = KafkaAdminClient::connect(bootstrap);
  if (!client)
    return Error{client.error().domain, client.error().code,
                 "kafka-iggy-bridge is not answering Kafka requests at " + bootstrap.str() + ": " + client.error().message};
  return BridgeAdmin(std::move(*client));
}

Result<std::vector<TopicSummary>> BridgeAdmin::topics(const std::vector<std::string>& names) {
  msg::MetadataRequest req;
  req.allow_auto_topic_creation = false;
  if (names.empty()) {
    req.topics = std::nullopt;  // every topic
  } else {
    req.topics.emplace();
    for (const auto& n : names) req.topics->push_back({{}, n});
  }
  auto resp = client_.call<msg::MetadataResponse>(req);
  if (!resp) return resp.error();
  std::vector<TopicSummary> out;
  for (const auto& t : resp->topics) {
    TopicSummary s;
    s.name = t.name.value_or("");
    s.topic_id = state::uuid_to_kafka_base64(t.topic_id);
    s.partitions = static_cast<int32_t>(t.partitions.size());
    s.error = code(t.error_code);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

Result<std::map<TopicPartition, OffsetRange>> BridgeAdmin::offset_ranges(const std::vector<TopicPartition>& partitions) {
  std::map<TopicPartition, OffsetRange> out;
  if (partitions.empty()) return out;
  for (int64_t which : {int64_t{-2}, int64_t{-1}}) {  // earliest, then latest
    msg::ListOffsetsRequest req;
    req.replica_id = -1;
    std::map<std::string, std::vector<int32_t>> by_topic;
    for (const auto& [t, p] : partitions) by_topic[t].push_back(p);
    for (const auto& [t, ps] : by_topic) {
      msg::ListOffsetsRequest::ListOffsetsTopic lt;
      lt.name = t;
      for (int32_t p : ps) {
        msg::ListOffsetsRequest::ListOffsetsPartition lp;
        lp.partition_index = p;
        lp.timestamp = which;
        lt.partitions.push_back(lp);
      }
      req.topics.push_back(std::move(lt));
    }
    auto resp = client_.call<msg::ListOffsetsResponse>(req);
    if (!resp) return resp.error();
    for (const auto& t : resp->topics) {
      for (const auto& p : t.partitions) {
        OffsetRange& r = out[{t.name, p.partition_index}];
        if (p.error_code != 0) r.error = code(p.error_code);
        else (which == -2 ? r.start : r.end) = p.offset;
      }
    }
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> BridgeAdmin::list_groups() {
  auto resp = client_.call<msg::ListGroupsResponse>(msg::ListGroupsRequest{});
  if (!resp) return resp.error();
  if (resp->error_code != 0) return kafka_error(where(), "ListGroups", resp->error_code);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& g : resp->groups) out.emplace_back(g.group_id, g.group_state);
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<GroupSummary>> BridgeAdmin::describe_groups(const std::vector<std::string>& group_ids) {
  std::vector<GroupSummary> out;
  if (group_ids.empty()) return out;
  msg::DescribeGroupsRequest req;
  req.groups = group_ids;
  auto resp = client_.call<msg::DescribeGroupsResponse>(req);
  if (!resp) return resp.error();
  for (const auto& g : resp->groups) {
    GroupSummary s;
    s.group_id = g.group_id;
    s.state = g.group_state;
    s.protocol_type = g.protocol_type;
    s.protocol = g.protocol_data;
    s.error = code(g.error_code);
    if (s.error == ErrorCode::kGroupIdNotFound) {  // v6+; earlier versions answer state Dead
      s.error = ErrorCode::kNone;
      s.state = "Dead";
    }
    for (const auto& m : g.members) {
      MemberSummary ms;
      ms.member_id = m.member_id;
      ms.group_instance_id = m.group_instance_id;
      ms.client_id = m.client_id;
      ms.client_host = m.client_host;
      if (g.protocol_type == bridge::kConsumerProtocolType) {
        if (auto parts = bridge::assigned_partitions(m.member_assignment))
          for (const auto& [topic, ps] : *parts)
            for (int32_t p : ps) ms.assignment.emplace_back(topic, p);
      }
      std::sort(ms.assignment.begin(), ms.assignment.end());
      s.members.push_back(std::move(ms));
    }
    out.push_back(std::move(s));
  }
  return out;
}

// OffsetFetch and OffsetCommit name topics here: v9 at most (v10 names them by id).
constexpr int16_t kOffsetsByNameMaxVersion = 9;

Result<std::vector<CommittedOffset>> BridgeAdmin::committed_offsets(const std::string& group_id) {
  auto v = client_.negotiate(msg::OffsetFetchRequest::kApiKey, 1, kOffsetsByNameMaxVersion);
  if (!v) return v.error();
  msg::OffsetFetchRequest req;
  if (*v >= 8) {
    msg::OffsetFetchRequest::OffsetFetchRequestGroup g;
    g.group_id = group_id;
    g.topics = std::nullopt;  // every committed partition
    req.groups.push_back(std::move(g));
  } else {
    req.group_id = group_id;
    req.topics = std::nullopt;
  }
  auto resp = client_.call<msg::OffsetFetchResponse>(req, kOffsetsByNameMaxVersion);
  if (!resp) return resp.error();
  std::vector<CommittedOffset> out;
  auto add = [&](const std::string& topic, int32_t p, int64_t offset, const std::optional<std::string>& meta,
                 int16_t err) -> Status {
    if (err != 0) return kafka_error(where(), "OffsetFetch " + topic + "-" + std::to_string(p), err);
    if (offset >= 0) out.push_back({topic, p, offset, meta.value_or("")});
    return ok_status();
  };
  if (*v >= 8) {
    for (const auto& g : resp->groups) {
      if (g.error_code != 0) return kafka_error(where(), "OffsetFetch of group " + g.group_id, g.error_code);
      for (const auto& t : g.topics)
        for (const auto& p : t.partitions)
          if (auto st = add(t.name, p.partition_index, p.committed_offset, p.metadata, p.error_code); !st) return st.error();
    }
  } else {
    if (resp->error_code != 0) return kafka_error(where(), "OffsetFetch of group " + group_id, resp->error_code);
    for (const auto& t : resp->topics)
      for (const auto& p : t.partitions)
        if (auto st = add(t.name, p.partition_index, p.committed_offset, p.metadata, p.error_code); !st) return st.error();
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition); });
  return out;
}

Result<std::vector<ErrorCode>> BridgeAdmin::commit_offsets(const std::string& group_id,
                                                          const std::vector<OffsetToCommit>& offsets) {
  msg::OffsetCommitRequest req;
  req.group_id = group_id;
  req.generation_id_or_member_epoch = -1;
  req.member_id = "";
  std::map<std::string, size_t> topic_at;
  for (const auto& o : offsets) {
    auto [it, fresh] = topic_at.emplace(o.topic, req.topics.size());
    if (fresh) req.topics.emplace_back().name = o.topic;
    msg::OffsetCommitRequest::OffsetCommitRequestPartition p;
    p.partition_index = o.partition;
    p.committed_offset = o.offset;
    p.committed_metadata = o.metadata.value_or("");
    req.topics[it->second].partitions.push_back(p);
  }
  auto resp = client_.call<msg::OffsetCommitResponse>(req, kOffsetsByNameMaxVersion);
  if (!resp) return resp.error();
  std::map<TopicPartition, ErrorCode> by_partition;
  for (const auto& t : resp->topics)
    for (const auto& p : t.partitions) by_partition[{t.name, p.partition_index}] = code(p.error_code);
  std::vector<ErrorCode> out;
  for (const auto& o : offsets) {
    auto it = by_partition.find({o.topic, o.partition});
    out.push_back(it == by_partition.end() ? ErrorCode::kUnknownServerError : it->second);
  }
  return out;
}

}  // namespace kib::admin
