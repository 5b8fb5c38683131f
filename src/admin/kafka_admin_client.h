// A blocking Kafka client for the command line (`topics`, `groups`, `offsets`): one connection
// to the bridge's Kafka listener, requests encoded with the generated codecs at the highest
// version both this binary and the bridge serve (learned from ApiVersions at connect). The
// admin subcommands read and change the running bridge the way kafka-consumer-groups does, so
// the bridge's own validation, durability and in-memory state apply. Never on the event loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "common/bytes.h"
#include "common/result.h"
#include "config/config.h"
#include "kafka/protocol/generated/api_keys.h"
#include "net/blocking_socket.h"

namespace kib::admin {

class KafkaAdminClient {
 public:
  // Connects and negotiates versions. Errors are kTransport (nothing answers) or kProtocol.
  static Result<KafkaAdminClient> connect(const config::HostPort& bootstrap,
                                          std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

  // Sends `request` and decodes the answer as `Resp` (Req::kApiKey must be Resp's key), at the
  // highest version both sides serve up to `max_version` (a caller that fills a request the way
  // older versions read it caps it there: OffsetCommit/OffsetFetch v10 name topics by id only).
  template <typename Resp, typename Req>
  Result<Resp> call(const Req& request, int16_t max_version = Req::kMaxVersion) {
    static_assert(Req::kApiKey == Resp::kApiKey);
    auto version = negotiate(Req::kApiKey, Req::kMinVersion, max_version);
    if (!version) return version.error();
    ByteWriter body;
    request.encode(body, *version);
    auto frame = round_trip(Req::kApiKey, *version, body.take());
    if (!frame) return frame.error();
    try {
      ByteReader r(ByteSpan(*frame).subspan(body_offset_));
      Resp resp;
      resp.decode(r, *version);
      return resp;
    } catch (const DecodeError& e) {
      return Error{ErrorDomain::kProtocol, 0,
                   socket_.where() + ": malformed " + kafka::msg::api_name(Req::kApiKey) + " response: " + e.what()};
    }
  }

  // The version `call` uses for this API, or an error naming the API the bridge does not serve.
  Result<int16_t> negotiate(int16_t api_key, int16_t min_version, int16_t max_version) const;
  const std::string& where() const { return socket_.where(); }

 private:
  explicit KafkaAdminClient(net::BlockingSocket s) : socket_(std::move(s)) {}
  // Sends one request frame and returns the response frame; body_offset_ is where its body
  // starts (after the response header).
  Result<Bytes> round_trip(int16_t api_key, int16_t version, const Bytes& body);

  net::BlockingSocket socket_;
  std::map<int16_t, std::pair<int16_t, int16_t>> served_;  // api key -> (min, max)
  int32_t next_correlation_id_ = 1;
  size_t body_offset_ = 0;
};

}  // namespace kib::admin
