// Who may read /metrics and what its labels name: [http] metrics_bearer_token_file and
// metrics_labels (docs/operations.md "Metrics and health").
//
// Group ids and topic names are what ListGroups and Metadata hide from a principal that may not
// describe them. /metrics must not hand them to whoever can open a connection to the HTTP port,
// so by default ("auto") its labels name them only where the listener is a loopback address or
// a bearer token is asked for; elsewhere the families carrying them are summed over those labels.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"
#include "config/config.h"
#include "metrics/metrics.h"

namespace kib::http {

struct MetricsAccess {
  std::string bearer_token;  // what "Authorization: Bearer" must carry; "" = nothing is asked
  metrics::ClientNames names = metrics::ClientNames::kShown;
};

// A token file larger than this is a mistake (a certificate, a log), not a token.
inline constexpr size_t kMaxBearerTokenFileBytes = 4096;

// The token in [http] metrics_bearer_token_file: the file's content without the whitespace
// around it (a trailing newline is usual). Errors name the key and the file: it cannot be read,
// is not a regular file, is larger than kMaxBearerTokenFileBytes, is empty, or holds a character
// other than printable ASCII without spaces (what an Authorization header carries as is).
// `warning`, when given, is set when others than the bridge's own user and groups may read the
// file (the token would then guard nothing against them).
Result<std::string> read_bearer_token_file(const std::string& path, std::string* warning = nullptr);

// 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104, and "localhost" (which the listener binds as
// 127.0.0.1). The wildcards 0.0.0.0 and :: are not: they take connections from everywhere.
bool is_loopback_host(std::string_view host);

// What [http] metrics_labels means for `http`'s listener: "auto" shows the names when the
// listener is a loopback address or a token is required, and leaves them out otherwise.
metrics::ClientNames metrics_client_names(const config::HttpConfig& http, bool token_required);

// Both, the token file read (errors and `warning` as read_bearer_token_file's).
Result<MetricsAccess> load_metrics_access(const config::HttpConfig& http, std::string* warning = nullptr);

// What an Authorization header value (null: the request had none) is worth against `token`.
// The credential is compared in constant time: both sides are hashed (SHA-256) and the digests
// compared with CRYPTO_memcmp, so neither the position of the first wrong byte nor the token's
// length shows in the answer's timing. An empty `token` accepts nothing.
enum class Bearer { kAccepted, kMissing, kOtherScheme, kWrongToken };
Bearer check_bearer(const std::string* authorization, std::string_view token);
std::string_view describe(Bearer b);  // for the log: "no Authorization header", ...

}  // namespace kib::http
