// Turns frames from the TCP server into Kafka requests: parses the request header, enforces
// the served version ranges, and hands the request to its handler.
#pragma once

#include <memory>

#include "kafka/request.h"
#include "kafka/services.h"
#include "net/tcp_server.h"

namespace kib::kafka {

class KafkaServer {
 public:
  KafkaServer(const Services& services, uv_loop_t* loop, net::ServerLimits limits);
  // Listens on `listener`, entry `index` of config.kafka.listeners (its connections' sessions
  // carry the index and protocol).
  Result<uint16_t> listen(const config::ListenerConfig& listener, size_t index) {
    return tcp_.listen(listener.address, static_cast<uint32_t>(index),
                       listener.protocol != config::SecurityProtocol::kPlaintext);
  }
  // Listens as the first listener (tests).
  Result<uint16_t> listen(const config::HostPort& addr) { return tcp_.listen(addr, 0); }
  void shutdown(uint64_t deadline_ms, std::function<void()> done) { tcp_.shutdown(deadline_ms, std::move(done)); }
  net::TcpServer& tcp() { return tcp_; }

 private:
  void on_frame(const std::shared_ptr<net::Connection>& conn, uint64_t seq, Bytes frame);
  std::shared_ptr<Session> new_session(const net::Connection& conn) const;

  const Services& services_;
  net::TcpServer tcp_;
};

}  // namespace kib::kafka
