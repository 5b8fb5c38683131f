// One Kafka client connection to an in-process KafkaServer on loopback, for handler tests: it
// frames generated request messages, and runs the server's loop while it waits for an answer.
// Boost.Test assertions: include it from a test file only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "common/bytes.h"
#include "kafka/protocol/generated/request_header.h"
#include "kafka/protocol/generated/response_header.h"
#include "support/blocking_io.h"

namespace kib::test {

class KafkaTestClient {
 public:
  KafkaTestClient(uv_loop_t& loop, uint16_t port, std::string client_id)
      : loop_(loop), client_id_(std::move(client_id)) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  KafkaTestClient(const KafkaTestClient&) = delete;
  KafkaTestClient& operator=(const KafkaTestClient&) = delete;
  ~KafkaTestClient() { close(); }

  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  // Sends one request; returns its correlation id.
  template <typename Req>
  int32_t send(const Req& body, int16_t version) {
    ByteWriter w;
    kafka::msg::RequestHeader h;
    h.request_api_key = Req::kApiKey;
    h.request_api_version = version;
    h.correlation_id = next_correlation_++;
    h.client_id = client_id_;
    h.encode(w, kafka::msg::request_header_version(h.request_api_key, version));
    body.encode(w, version);
    Bytes frame = w.take();
    uint32_t len = htonl(static_cast<uint32_t>(frame.size()));
    BOOST_REQUIRE(write_all(fd, reinterpret_cast<uint8_t*>(&len), 4));
    BOOST_REQUIRE(write_all(fd, frame.data(), frame.size()));
    return h.correlation_id;
  }

  bool readable(int wait_ms) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, wait_ms) > 0;
  }

  // Runs the loop until an answer arrives (or `timeout_ms` passes: nullopt). `correlation_id`, when
  // given, is what the response header must carry.
  template <typename Resp>
  std::optional<Resp> receive(int16_t version, int timeout_ms = 5000,
                              std::optional<int32_t> correlation_id = std::nullopt) {
    for (int waited = 0; waited < timeout_ms; waited += 2) {
      uv_run(&loop_, UV_RUN_NOWAIT);
      if (!readable(2)) continue;
      uint8_t prefix[4];
      BOOST_REQUIRE(read_all(fd, prefix, 4));
      uint32_t n = (uint32_t{prefix[0]} << 24) | (uint32_t{prefix[1]} << 16) | (uint32_t{prefix[2]} << 8) | prefix[3];
      Bytes response(n);
      BOOST_REQUIRE(read_all(fd, response.data(), n));
      ByteReader r(response);
      kafka::msg::ResponseHeader h;
      h.decode(r, kafka::msg::response_header_version(Resp::kApiKey, version));
      if (correlation_id) BOOST_TEST(h.correlation_id == *correlation_id);
      Resp body;
      body.decode(r, version);
      BOOST_TEST(r.empty());
      return body;
    }
    return std::nullopt;
  }

  // One request and its answer (the answer must come within 5 s and carry the request's
  // correlation id).
  template <typename Resp, typename Req>
  Resp call(const Req& body, int16_t version) {
    const int32_t id = send(body, version);
    auto r = receive<Resp>(version, 5000, id);
    BOOST_REQUIRE_MESSAGE(r, "no answer within 5 s");
    return *r;
  }

  int fd = -1;

 private:
  uv_loop_t& loop_;
  std::string client_id_;
  int32_t next_correlation_ = 1;
};

}  // namespace kib::test
