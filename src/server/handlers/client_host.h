// The client host a group member is described with, as Kafka reports it: InetAddress.toString(),
// "/127.0.0.1". JoinGroup and ConsumerGroupHeartbeat record it for DescribeGroups and
// ConsumerGroupDescribe.
#pragma once

#include <string>

#include "server/context/request.h"

namespace kib::kafka {

inline std::string client_host(const Request& req) {
  if (!req.conn) return "";
  const std::string& peer = req.conn->peer();
  auto colon = peer.rfind(':');
  return "/" + (colon == std::string::npos ? peer : peer.substr(0, colon));
}

}  // namespace kib::kafka
