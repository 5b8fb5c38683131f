// DescribeLogDirs (key 35), v1-4: one log dir, the bridge's Iggy stream (bridge/log/log_dirs.h),
// with every partition's size from Iggy and the disk totals (v4) when Iggy tells them. Needs
// DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED, no log dirs).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge/log/partition_log.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/describe_log_dirs.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::PartitionLog& log, Request&& req) {
  auto body = req.decode<msg::DescribeLogDirsRequest>();
  if (!req.authorized_cluster(Op::kDescribe)) {
    msg::DescribeLogDirsResponse resp;
    resp.error_code = to_int16(ErrorCode::kClusterAuthorizationFailed);
    return req.respond.send(resp);
  }
  bridge::LogDirQuery query;
  if (body.topics) {
    query.emplace();
    for (auto& t : *body.topics) query->emplace_back(std::move(t.topic), std::move(t.partitions));
  }
  log.describe_log_dirs(std::move(query), req.header.api_version >= 4, [respond = req.respond](bridge::LogDirDescription d) {
    msg::DescribeLogDirsResponse resp;
    auto& dir = resp.results.emplace_back();
    dir.error_code = to_int16(d.error);
    dir.log_dir = d.log_dir;
    dir.total_bytes = d.total_bytes;
    dir.usable_bytes = d.usable_bytes;
    for (const auto& t : d.topics) {
      auto& rt = dir.topics.emplace_back();
      rt.name = t.name;
      for (const auto& p : t.partitions) {
        auto& rp = rt.partitions.emplace_back();
        rp.partition_index = p.partition;
        rp.partition_size = p.size_bytes;
        rp.offset_lag = 0;  // the leader
        rp.is_future_key = false;
      }
    }
    respond.send(resp);
  });
}

}  // namespace

HandlerSpec describe_log_dirs_handler() {
  return serve<msg::DescribeLogDirsRequest>(1, 4, [](const Services& s, Request&& req) {
    handle(s.log, std::move(req));
  });
}

}  // namespace kib::kafka
