// Strings that came from clients, made safe for where they go next:
//
// - escape(): for logs and terminal output. Control characters (C0, DEL, the C1 controls a
//   terminal may act on), Unicode bidirectional overrides and invalid UTF-8 become \xNN (one
//   per byte), so a client id cannot move the cursor, recolour a terminal, forge a log line with
//   a newline or hide text. Escaping is idempotent (the output has nothing left to escape), so
//   a message that quotes an already escaped field may be escaped again as a whole. Longer than
//   `max_bytes`, the input is cut (at a character boundary) and "…(N bytes)" says how long it was.
// - truncate_message(): for error messages sent back to clients (Kafka STRING fields hold at
//   most 32767 bytes; an encoder refuses more): at most `max_bytes`, cut at a UTF-8 character
//   boundary, "…(N bytes)" appended when cut.
// - utf8_prefix(): the longest prefix of at most `max_bytes` that does not split a UTF-8
//   sequence, for identifiers built from client input (e.g. a member id from a client id).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace kib {

// Error messages sent to Kafka clients.
inline constexpr size_t kMaxErrorMessageBytes = 1024;
// One client-supplied field in a log line.
inline constexpr size_t kMaxLogFieldBytes = 256;

std::string_view utf8_prefix(std::string_view s, size_t max_bytes);
std::string truncate_message(std::string_view s, size_t max_bytes = kMaxErrorMessageBytes);
std::string escape(std::string_view s, size_t max_bytes = kMaxLogFieldBytes);
// Appends escape(s, max_bytes) to `out`.
void escape_to(std::string& out, std::string_view s, size_t max_bytes = kMaxLogFieldBytes);

// For log calls: spdlog::info("client={}", esc(client_id)) formats the escaped text only when
// the line is actually written.
struct Escaped {
  std::string_view text;
  size_t max_bytes = kMaxLogFieldBytes;
};
inline Escaped esc(std::string_view s, size_t max_bytes = kMaxLogFieldBytes) { return {s, max_bytes}; }

}  // namespace kib

template <>
struct fmt::formatter<kib::Escaped> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const kib::Escaped& e, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(kib::escape(e.text, e.max_bytes), ctx);
  }
};
