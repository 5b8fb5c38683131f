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
  // carry the index and protocol). An SSL or SASL_SSL listener needs set_tls_context() first.
  Result<uint16_t> listen(const config::ListenerConfig& listener, size_t index);
  // The TLS context of the SSL and SASL_SSL listeners, for the connections they accept from
  // now on (at start, and again on SIGHUP).
  void set_tls_context(std::shared_ptr<const net::TlsContext> ctx);
  // Listens as the first listener (tests).
  Result<uint16_t> listen(const config::HostPort& addr) { return tcp_.listen(addr, 0); }
  void shutdown(uint64_t deadline_ms, std::function<void()> done) { tcp_.shutdown(deadline_ms, std::move(done)); }
  net::TcpServer& tcp() { return tcp_; }

 private:
  void on_frame(const std::shared_ptr<net::Connection>& conn, uint64_t seq, Bytes frame);
  std::shared_ptr<Session> new_session(const net::Connection& conn) const;

  const Services& services_;
  net::TcpServer tcp_;
  std::shared_ptr<const net::TlsContext> tls_;
};

}  // namespace kib::kafka
