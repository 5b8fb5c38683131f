#include "http/http_client.h"

#include <algorithm>
#include <cctype>

#include "net/blocking_socket.h"

namespace kib::http {
namespace {

constexpr size_t kMaxResponseBytes = 64u << 20;

Error transport(std::string msg) { return Error{ErrorDomain::kTransport, 0, std::move(msg)}; }
Error protocol(std::string msg) { return Error{ErrorDomain::kProtocol, 0, std::move(msg)}; }

}  // namespace

Result<Response> parse_response(const std::string& raw) {
  size_t head_end = raw.find("\r\n\r\n");
  size_t body_at = head_end + 4;
  if (head_end == std::string::npos) {
    head_end = raw.find("\n\n");
    body_at = head_end + 2;
  }
  if (head_end == std::string::npos) return protocol("incomplete HTTP response head");
  std::string head = raw.substr(0, head_end);
  size_t eol = head.find('\n');
  std::string status_line = head.substr(0, eol);
  if (!status_line.empty() && status_line.back() == '\r') status_line.pop_back();
  // "HTTP/1.1 200 OK"
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12 || status_line[8] != ' ' ||
      !std::isdigit(static_cast<unsigned char>(status_line[9])) || !std::isdigit(static_cast<unsigned char>(status_line[10])) ||
      !std::isdigit(static_cast<unsigned char>(status_line[11])))
    return protocol("malformed HTTP status line \"" + status_line + "\"");
  Response r;
  r.status = std::stoi(status_line.substr(9, 3));
  r.content_type.clear();
  long long content_length = -1;
  size_t pos = eol == std::string::npos ? head.size() : eol + 1;
  while (pos < head.size()) {
    size_t next = head.find('\n', pos);
    std::string line = head.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    pos = next == std::string::npos ? head.size() : next + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t colon = line.find(':');
    if (colon == std::string::npos) return protocol("malformed HTTP header line");
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    size_t v = line.find_first_not_of(" \t", colon + 1);
    std::string value = v == std::string::npos ? "" : line.substr(v);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
    if (name == "content-type") r.content_type = value;
    else if (name == "content-length") {
      if (value.empty() || value.size() > 18 || value.find_first_not_of("0123456789") != std::string::npos)
        return protocol("malformed Content-Length");
      content_length = std::stoll(value);
    } else r.headers.emplace_back(name, value);
  }
  r.body = raw.substr(std::min(body_at, raw.size()));
  if (content_length >= 0) {
    if (r.body.size() < static_cast<size_t>(content_length))
      return protocol("HTTP response body shorter than its Content-Length");
    r.body.resize(static_cast<size_t>(content_length));
  }
  return r;
}

Result<Response> get(const config::HostPort& addr, const std::string& path, std::chrono::milliseconds timeout,
                     const std::vector<std::pair<std::string, std::string>>& headers) {
  auto s = net::BlockingSocket::connect(addr, timeout);
  if (!s) return transport("http://" + s.error().message);
  const std::string where = "http://" + s->where() + path;
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: " + s->where() +
                        "\r\nUser-Agent: kafka-iggy-bridge\r\nAccept: */*\r\nConnection: close\r\n";
  for (const auto& [k, v] : headers) request += k + ": " + v + "\r\n";
  request += "\r\n";
  if (auto sent = s->send_all(request.data(), request.size()); !sent) return transport("http://" + sent.error().message);
  std::string raw;
  char buf[16384];
  for (;;) {
    auto n = s->receive_some(buf, sizeof buf);
    if (!n) return transport("http://" + n.error().message);
    if (*n == 0) break;
    raw.append(buf, *n);
    if (raw.size() > kMaxResponseBytes) return protocol(where + ": response larger than 64 MiB");
  }
  auto r = parse_response(raw);
  if (!r) return protocol(where + ": " + r.error().message);
  return r;
}

}  // namespace kib::http
