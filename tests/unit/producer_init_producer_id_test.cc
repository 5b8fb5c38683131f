// InitProducerId through the real KafkaServer on a loopback port: frames in, frames out.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "bridge/producers/producer_registry_impl.h"
#include "handler_services_support.h"
#include "server/handlers/registry.h"
#include "server/kafka_server.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/api_keys.h"
#include "kafka/protocol/generated/init_producer_id.h"
#include "kafka/protocol/generated/request_header.h"
#include "kafka/protocol/generated/response_header.h"
#include "state/state_store.h"
#include "support/blocking_io.h"

using namespace kib;
using namespace kib::kafka;

namespace {

std::filesystem::path golden_dir() {
  for (std::filesystem::path p : {std::filesystem::path("tests/golden"),
                                  std::filesystem::path(__FILE__).parent_path().parent_path() / "golden"})
    if (std::filesystem::exists(p)) return p;
  return "tests/golden";
}

Bytes read_golden(const std::string& name) {
  std::ifstream in(golden_dir() / name, std::ios::binary);
  BOOST_TEST_REQUIRE(in.good(), "cannot open golden file " << name);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

Bytes request_frame(int16_t version, const msg::InitProducerIdRequest& body, int32_t correlation_id = 7) {
  ByteWriter w;
  msg::RequestHeader h;
  h.request_api_key = msg::InitProducerIdRequest::kApiKey;
  h.request_api_version = version;
  h.correlation_id = correlation_id;
  h.client_id = "producer-test";
  h.encode(w, msg::request_header_version(h.request_api_key, version));
  body.encode(w, version);
  return w.take();
}

using kib::test::read_all;
using kib::test::write_all;

// An idle bridge (tests/unit/handler_services_support.h) serving InitProducerId.
struct Server : test::IdleKafkaServer {
  // Sends one request frame from a client thread and returns the decoded response.
  msg::InitProducerIdResponse round_trip(const Bytes& frame, int16_t version) {
    Bytes response;
    std::atomic<bool> finished{false};
    uv_async_t wake;  // the client thread wakes the loop when it is done
    uv_async_init(&loop, &wake, [](uv_async_t*) {});
    std::thread client([&] {
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(port);
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        uint32_t len = htonl(static_cast<uint32_t>(frame.size()));
        uint8_t prefix[4];
        if (write_all(fd, reinterpret_cast<uint8_t*>(&len), 4) && write_all(fd, frame.data(), frame.size()) &&
            read_all(fd, prefix, 4)) {
          uint32_t n = (uint32_t{prefix[0]} << 24) | (uint32_t{prefix[1]} << 16) | (uint32_t{prefix[2]} << 8) |
                       prefix[3];
          response.resize(n);
          if (!read_all(fd, response.data(), n)) response.clear();
        }
      }
      ::close(fd);
      finished = true;
      uv_async_send(&wake);
    });
    // The loop is run here; the client thread only touches the socket.
    while (!finished) uv_run(&loop, UV_RUN_ONCE);
    client.join();
    uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
    uv_run(&loop, UV_RUN_NOWAIT);
    BOOST_REQUIRE(!response.empty());
    ByteReader r(response);
    msg::ResponseHeader h;
    h.decode(r, msg::response_header_version(msg::InitProducerIdRequest::kApiKey, version));
    msg::InitProducerIdResponse body;
    body.decode(r, version);
    BOOST_TEST(r.empty());
    return body;
  }
};

int16_t code(ErrorCode c) { return to_int16(c); }

}  // namespace

BOOST_AUTO_TEST_SUITE(init_producer_id_handler)

BOOST_AUTO_TEST_CASE(init_producer_id_is_served_at_versions_0_to_4) {
  const HandlerSpec* spec = find_handler(msg::InitProducerIdRequest::kApiKey);
  BOOST_REQUIRE(spec);
  BOOST_TEST(spec->min_version == 0);
  BOOST_TEST(spec->max_version == 4);
  BOOST_TEST(spec->advertised_min == 0);  // librdkafka's idempotence check needs v0
}

BOOST_AUTO_TEST_CASE(java_idempotent_producer_frame_gets_a_fresh_producer_id_with_epoch_zero) {
  Server s;
  auto first = s.round_trip(read_golden("java-producer-init_producer_id-v4.bin"), 4);
  BOOST_TEST(first.error_code == 0);
  BOOST_TEST(first.throttle_time_ms == 0);
  BOOST_TEST(first.producer_id >= 0);
  BOOST_TEST(first.producer_epoch == 0);
  auto second = s.round_trip(read_golden("java-producer-init_producer_id-v4.bin"), 4);
  BOOST_TEST(second.producer_id > first.producer_id);
}

BOOST_AUTO_TEST_CASE(every_served_version_answers_in_its_own_layout) {
  Server s;
  int64_t last = -1;
  for (int16_t v = 0; v <= 4; ++v) {
    msg::InitProducerIdRequest req;
    req.transactional_id = std::nullopt;
    req.transaction_timeout_ms = 60000;
    auto resp = s.round_trip(request_frame(v, req), v);
    BOOST_TEST(resp.error_code == 0);
    BOOST_TEST(resp.producer_id > last);
    last = resp.producer_id;
  }
}

BOOST_AUTO_TEST_CASE(a_known_id_and_epoch_from_a_kip360_client_gets_a_new_id_like_kafka) {
  Server s;
  msg::InitProducerIdRequest req;
  req.transactional_id = std::nullopt;
  auto first = s.round_trip(request_frame(4, req), 4);
  req.producer_id = first.producer_id;
  req.producer_epoch = 3;
  auto bumped = s.round_trip(request_frame(4, req), 4);
  BOOST_TEST(bumped.error_code == 0);
  BOOST_TEST(bumped.producer_id > first.producer_id);
  BOOST_TEST(bumped.producer_epoch == 0);
}

BOOST_AUTO_TEST_CASE(producer_id_without_epoch_is_an_invalid_request_like_kafka) {
  Server s;
  msg::InitProducerIdRequest req;
  req.transactional_id = std::nullopt;
  req.producer_id = 5;
  req.producer_epoch = -1;
  auto resp = s.round_trip(request_frame(3, req), 3);
  BOOST_TEST(resp.error_code == code(ErrorCode::kInvalidRequest));
  BOOST_TEST(resp.producer_id == -1);
}

// With a transactional id the transaction coordinator answers (docs/transactions.md): a producer
// id at epoch 0 the first time, the same id at the next epoch every time after (fencing the
// previous incarnation), INVALID_REQUEST for an empty id and INVALID_TRANSACTION_TIMEOUT above
// [transactions] max_timeout_ms, as Kafka answers.
BOOST_AUTO_TEST_CASE(a_transactional_id_gets_its_producer_and_every_call_bumps_the_epoch) {
  Server s;
  msg::InitProducerIdRequest req;
  req.transactional_id = "payments-tx";
  req.transaction_timeout_ms = 60000;
  auto first = s.round_trip(request_frame(4, req), 4);
  BOOST_TEST(first.error_code == 0);
  BOOST_TEST(first.producer_id >= 0);
  BOOST_TEST(first.producer_epoch == 0);
  auto second = s.round_trip(request_frame(4, req), 4);
  BOOST_TEST(second.error_code == 0);
  BOOST_TEST(second.producer_id == first.producer_id);
  BOOST_TEST(second.producer_epoch == 1);

  req.transactional_id = "";
  auto empty = s.round_trip(request_frame(4, req), 4);
  BOOST_TEST(empty.error_code == code(ErrorCode::kInvalidRequest));
  BOOST_TEST(empty.producer_id == -1);

  req.transactional_id = "too-slow";
  req.transaction_timeout_ms = 900001;  // the default max_timeout_ms is 900000, Kafka's too
  auto too_long = s.round_trip(request_frame(4, req), 4);
  BOOST_TEST(too_long.error_code == code(ErrorCode::kInvalidTransactionTimeout));
  BOOST_TEST(too_long.producer_id == -1);
  BOOST_TEST(too_long.producer_epoch == -1);
}

BOOST_AUTO_TEST_SUITE_END()
