#include "admin/kafka_admin_client.h"

#include <algorithm>

#include "common/version.h"
#include "kafka/protocol/generated/api_versions.h"
#include "kafka/protocol/generated/request_header.h"
#include "kafka/protocol/generated/response_header.h"

namespace kib::admin {
namespace {

// Responses larger than this are refused before anything is allocated for them.
constexpr uint32_t kMaxResponseBytes = 256u << 20;
constexpr int16_t kApiVersionsVersion = 3;

Error protocol(std::string msg) { return Error{ErrorDomain::kProtocol, 0, std::move(msg)}; }

}  // namespace

Result<KafkaAdminClient> KafkaAdminClient::connect(const config::HostPort& bootstrap, std::chrono::milliseconds timeout) {
  auto s = net::BlockingSocket::connect(bootstrap, timeout);
  if (!s) return s.error();
  KafkaAdminClient c(std::move(*s));
  kafka::msg::ApiVersionsRequest req;
  req.client_software_name = "kafka-iggy-bridge-cli";
  req.client_software_version = kBridgeVersion;
  ByteWriter body;
  req.encode(body, kApiVersionsVersion);
  auto frame = c.round_trip(kafka::msg::ApiVersionsRequest::kApiKey, kApiVersionsVersion, body.take());
  if (!frame) return frame.error();
  kafka::msg::ApiVersionsResponse resp;
  try {
    ByteReader r(ByteSpan(*frame).subspan(c.body_offset_));
    resp.decode(r, kApiVersionsVersion);
  } catch (const DecodeError& e) {
    return protocol(c.where() + ": malformed ApiVersions response: " + e.what());
  }
  if (resp.error_code != 0)
    return protocol(c.where() + ": ApiVersions answered error " + std::to_string(resp.error_code));
  for (const auto& k : resp.api_keys) c.served_[k.api_key] = {k.min_version, k.max_version};
  return c;
}

Result<int16_t> KafkaAdminClient::negotiate(int16_t api_key, int16_t min_version, int16_t max_version) const {
  auto it = served_.find(api_key);
  if (it != served_.end()) {
    int16_t lo = std::max(min_version, it->second.first), hi = std::min(max_version, it->second.second);
    if (lo <= hi) return hi;
  }
  return protocol(where() + " does not serve " + kafka::msg::api_name(api_key) + " (api key " +
                  std::to_string(api_key) + ") in versions " + std::to_string(min_version) + "-" +
                  std::to_string(max_version) + " this program speaks");
}

Result<Bytes> KafkaAdminClient::round_trip(int16_t api_key, int16_t version, const Bytes& body) {
  kafka::msg::RequestHeader h;
  h.request_api_key = api_key;
  h.request_api_version = version;
  h.correlation_id = next_correlation_id_++;
  h.client_id = "kafka-iggy-bridge-cli";
  ByteWriter w;
  w.be<uint32_t>(0);  // length, patched below
  h.encode(w, kafka::msg::request_header_version(api_key, version));
  w.bytes(body.data(), body.size());
  w.patch_be<uint32_t>(0, static_cast<uint32_t>(w.size() - 4));
  Bytes frame = w.take();
  if (auto st = socket_.send_all(frame.data(), frame.size()); !st) return st.error();

  uint8_t prefix[4];
  if (auto st = socket_.receive_exact(prefix, 4); !st) return st.error();
  const uint32_t len = (uint32_t{prefix[0]} << 24) | (uint32_t{prefix[1]} << 16) | (uint32_t{prefix[2]} << 8) | prefix[3];
  if (len > kMaxResponseBytes)
    return protocol(where() + ": response of " + std::to_string(len) + " bytes exceeds the 256 MiB limit");
  Bytes response(len);
  if (auto st = socket_.receive_exact(response.data(), len); !st) return st.error();
  try {
    ByteReader r{ByteSpan(response)};
    kafka::msg::ResponseHeader rh;
    rh.decode(r, kafka::msg::response_header_version(api_key, version));
    if (rh.correlation_id != h.correlation_id)
      return protocol(where() + ": response correlation id " + std::to_string(rh.correlation_id) + ", expected " +
                      std::to_string(h.correlation_id));
    body_offset_ = response.size() - r.remaining();
  } catch (const DecodeError& e) {
    return protocol(where() + ": malformed response header: " + e.what());
  }
  return response;
}

}  // namespace kib::admin
