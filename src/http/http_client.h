// A blocking HTTP/1.1 GET for the command line (`kafka-iggy-bridge status`): never used on
// the event loop.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "http/http_server.h"

namespace kib::http {

// GETs `path` from `addr` ("0.0.0.0" and "::" mean this host's loopback) and reads the whole
// response. Any HTTP status is a value; only transport and framing problems are errors
// (ErrorDomain::kTransport / kProtocol). `timeout` bounds connect and each read. `headers` are
// sent as given (e.g. Authorization), after the request's own.
Result<Response> get(const config::HostPort& addr, const std::string& path,
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(3000),
                     const std::vector<std::pair<std::string, std::string>>& headers = {});

// Parses a raw HTTP/1.x response (status line, headers, body up to Content-Length or the
// end of `raw`). Exposed for tests.
Result<Response> parse_response(const std::string& raw);

}  // namespace kib::http
