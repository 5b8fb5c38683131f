// Turns frames from the TCP server into Kafka requests: parses the request header, enforces
// the served version ranges, and hands the request to its handler.
#pragma once

#include <memory>

#include "kafka/services.h"
#include "net/tcp_server.h"

namespace kib::kafka {

class KafkaServer {
 public:
  KafkaServer(const Services& services, uv_loop_t* loop, net::ServerLimits limits);
  Result<uint16_t> listen(const config::HostPort& addr) { return tcp_.listen(addr); }
  void shutdown(uint64_t deadline_ms, std::function<void()> done) { tcp_.shutdown(deadline_ms, std::move(done)); }
  net::TcpServer& tcp() { return tcp_; }

 private:
  void on_frame(const std::shared_ptr<net::Connection>& conn, uint64_t seq, Bytes frame);

  const Services& services_;
  net::TcpServer tcp_;
};

}  // namespace kib::kafka
