// Turns frames from the TCP server into Kafka requests: parses the request header, enforces
// the served version ranges, and hands the request to its handler.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "server/context/request.h"
#include "server/context/services.h"
#include "net/tcp_server.h"

namespace kib::kafka {

struct HandlerSpec;

class KafkaServer {
 public:
  KafkaServer(const Services& services, uv_loop_t* loop, net::ServerLimits limits);
  // Listens on `listener`, entry `index` of config.kafka.listeners (its connections' sessions
  // carry the index and protocol). An SSL or SASL_SSL listener needs its context from
  // set_tls_contexts() first.
  Result<uint16_t> listen(const config::ListenerConfig& listener, size_t index);
  // The TLS contexts of the SSL and SASL_SSL listeners, one made for each
  // (net::TlsContext::load_all), for the connections they accept from now on (at start, and
  // again on SIGHUP). An error names a context no listening TLS listener takes; the others are
  // installed all the same.
  Status set_tls_contexts(const std::vector<std::shared_ptr<const net::TlsContext>>& contexts);
  // Listens as the first listener (tests).
  Result<uint16_t> listen(const config::HostPort& addr) { return tcp_.listen(addr, 0); }
  void shutdown(uint64_t deadline_ms, std::function<void()> done) { tcp_.shutdown(deadline_ms, std::move(done)); }
  net::TcpServer& tcp() { return tcp_; }
  const net::TcpServer& tcp() const { return tcp_; }

 private:
  void on_frame(const std::shared_ptr<net::Connection>& conn, uint64_t seq, Bytes frame);
  void on_raw_sasl_token(const std::shared_ptr<net::Connection>& conn, uint64_t seq, Bytes frame, Session& session);
  void dispatch(const std::shared_ptr<net::Connection>& conn, uint64_t seq, const HandlerSpec& spec,
                RequestHeaderInfo info, Bytes frame, size_t body_offset, Session* session);
  std::shared_ptr<Session> new_session(const net::Connection& conn) const;

  const Services& services_;
  net::TcpServer tcp_;
  std::map<uint32_t, std::shared_ptr<const net::TlsContext>> tls_;  // by listener index
  std::set<uint32_t> tls_listening_;                                 // the TLS listeners listen() opened
};

}  // namespace kib::kafka
