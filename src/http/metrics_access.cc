#include "http/metrics_access.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/text.h"

namespace kib::http {
namespace {

constexpr const char* kKey = "[http] metrics_bearer_token_file";

Error token_error(const std::string& path, const std::string& why) {
  return Error{ErrorDomain::kInvalid, 0, fmt::format("{} {}: {}", kKey, esc(path), why)};
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Whether the process runs with group `gid` (its effective group or a supplementary one).
bool in_group(gid_t gid) {
  if (gid == getegid()) return true;
  int n = getgroups(0, nullptr);
  if (n <= 0) return false;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  n = getgroups(n, groups.data());
  return n > 0 && std::find(groups.begin(), groups.begin() + n, gid) != groups.begin() + n;
}

using Digest = std::array<unsigned char, 32>;

Digest sha256(std::string_view s) {
  Digest d{};
  unsigned int len = 0;
  EVP_Digest(s.data(), s.size(), d.data(), &len, EVP_sha256(), nullptr);
  return d;
}

}  // namespace

Result<std::string> read_bearer_token_file(const std::string& path, std::string* warning) {
  // O_NONBLOCK: a FIFO named by mistake must not hang the loop (SIGHUP reads the file on it);
  // it is then refused as not a regular file.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return token_error(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return token_error(path, std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return token_error(path, "not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxBearerTokenFileBytes) {
    ::close(fd);
    return token_error(path, fmt::format("larger than {} bytes: not a token", kMaxBearerTokenFileBytes));
  }
  std::string text;
  char buf[1024];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return token_error(path, std::strerror(e));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxBearerTokenFileBytes) {
      ::close(fd);
      return token_error(path, fmt::format("larger than {} bytes: not a token", kMaxBearerTokenFileBytes));
    }
  }
  ::close(fd);
  size_t b = 0, e = text.size();
  while (b < e && is_space(text[b])) ++b;
  while (e > b && is_space(text[e - 1])) --e;
  std::string token = text.substr(b, e - b);
  if (token.empty()) return token_error(path, "empty (the file must hold the token /metrics asks for)");
  for (char c : token)
    if (c < 0x21 || c > 0x7e)
      return token_error(path, "the token must be printable ASCII without spaces (it is sent as is in an "
                               "Authorization header)");
  if (warning) {
    warning->clear();
    // The bridge's own group may read it (the packaged configuration file is root:kafka-iggy-bridge
    // 0640 the same way); anyone else who can read it can read /metrics.
    if (st.st_mode & S_IROTH)
      *warning = fmt::format("{} {} is readable by others (mode {:04o}): any user of this host can read /metrics "
                             "with it; chmod o-r it",
                             kKey, esc(path), st.st_mode & 07777);
    else if ((st.st_mode & S_IRGRP) && !in_group(st.st_gid))
      *warning = fmt::format("{} {} is readable by group {}, which the bridge does not run as (mode {:04o}): its "
                             "members can read /metrics with it; chmod g-r it or give it the bridge's group",
                             kKey, esc(path), st.st_gid, st.st_mode & 07777);
  }
  return token;
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost") return true;
  std::string h(host);
  in_addr a4{};
  if (inet_pton(AF_INET, h.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  if (inet_pton(AF_INET6, h.c_str(), &a6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&a6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
  }
  return false;
}

metrics::ClientNames metrics_client_names(const config::HttpConfig& http, bool token_required) {
  using M = config::HttpConfig::MetricsLabels;
  switch (http.metrics_labels) {
    case M::kFull: return metrics::ClientNames::kShown;
    case M::kRedacted: return metrics::ClientNames::kRedacted;
    case M::kAuto: break;
  }
  if (token_required) return metrics::ClientNames::kShown;
  auto addr = config::parse_host_port(http.listen);
  return addr && is_loopback_host(addr->host) ? metrics::ClientNames::kShown : metrics::ClientNames::kRedacted;
}

Result<MetricsAccess> load_metrics_access(const config::HttpConfig& http, std::string* warning) {
  MetricsAccess a;
  if (warning) warning->clear();
  if (!http.metrics_bearer_token_file.empty()) {
    auto token = read_bearer_token_file(http.metrics_bearer_token_file, warning);
    if (!token) return token.error();
    a.bearer_token = std::move(*token);
  }
  a.names = metrics_client_names(http, !a.bearer_token.empty());
  return a;
}

Bearer check_bearer(const std::string* authorization, std::string_view token) {
  if (!authorization) return Bearer::kMissing;
  std::string_view v = *authorization;
  // credentials = auth-scheme 1*SP token68 (RFC 9110 11.4); the scheme is case-insensitive.
  constexpr std::string_view kScheme = "bearer";
  if (v.size() <= kScheme.size() || v[kScheme.size()] != ' ' ||
      !std::equal(kScheme.begin(), kScheme.end(), v.begin(),
                  [](char a, char b) { return a == (b >= 'A' && b <= 'Z' ? b - 'A' + 'a' : b); }))
    return Bearer::kOtherScheme;
  v.remove_prefix(kScheme.size());
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  if (token.empty()) return Bearer::kWrongToken;  // an empty credential guards nothing
  const Digest presented = sha256(v), expected = sha256(token);
  if (CRYPTO_memcmp(presented.data(), expected.data(), presented.size()) != 0) return Bearer::kWrongToken;
  return Bearer::kAccepted;
}

std::string_view describe(Bearer b) {
  switch (b) {
    case Bearer::kAccepted: return "accepted";
    case Bearer::kMissing: return "no Authorization header";
    case Bearer::kOtherScheme: return "not a Bearer credential";
    case Bearer::kWrongToken: return "wrong bearer token";
  }
  return "?";
}

}  // namespace kib::http
