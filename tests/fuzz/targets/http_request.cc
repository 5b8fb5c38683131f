// The operations endpoint's HTTP/1.x request parser (src/http/http_server.cc), fed the bytes of
// one connection with the default 8 KiB head limit; a complete request is routed to handlers of
// the real paths and its response serialized, and the bridge's own HTTP client must read that
// response back. http_client's response parser also gets the raw input.
#include "http/http_client.h"
#include "http/http_server.h"
#include "fuzz/targets/fuzz_targets.h"

namespace kib::fuzz {

int fuzz_http_request(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t limit = http::HttpLimits{}.max_request_bytes;
  http::ParseResult r = http::parse_request(in, limit);
  if (r.status == http::ParseStatus::kComplete) {
    FUZZ_CHECK(!r.request.method.empty() && !r.request.path.empty(), "a complete request without method or path");
    FUZZ_CHECK(r.request.target.size() <= limit, "a request target over the head limit");
    http::Handlers handlers;
    handlers["/healthz"] = [](const http::Request&) { return http::Response{200, "text/plain", "ok", {}}; };
    handlers["/metrics"] = [](const http::Request& q) { return http::Response{200, "text/plain", q.query, {}}; };
    http::Response resp = http::route(handlers, r.request);
    std::string wire = http::serialize(resp, r.request.method == "HEAD");
    FUZZ_CHECK(wire.rfind("HTTP/1.1 ", 0) == 0, "a response that does not start with a status line");
    // A HEAD response keeps GET's Content-Length without the body: only the requester knows.
    if (r.request.method != "HEAD") {
      auto parsed = http::parse_response(wire);
      FUZZ_CHECK(parsed.ok(), "the client cannot parse the server's response");
      FUZZ_CHECK(parsed->status == resp.status && parsed->body == resp.body, "the client reads another status or body");
    }
  } else if (r.status != http::ParseStatus::kIncomplete) {
    FUZZ_CHECK(!r.error.empty(), "a refused request without a reason");
  }
  (void)http::parse_response(std::string(in));
  return 0;
}

}  // namespace kib::fuzz
