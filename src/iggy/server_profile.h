// Every fact about the Iggy server that differs between the builds the bridge supports lives
// here, decided once per login from the Register reply (server_protocol_version and
// server_version). Nothing else in the client compares versions.
//
// Supported (docs/iggy-client.md, "Supported servers"):
//   * protocol 0.11.x (packed 0.11.0 = 11264), the only minor this client speaks;
//   * server 0.9.0-edge.N (N <= 5, apache/iggy cc269ef70ef2 and before): the "edge" generation —
//     a successful send may answer with an empty body, durability is the `enforce_fsync` topic
//     option;
//   * server 0.9.0 (the release, iggy_binary_protocol 0.11.0) and later 0.9.x: the "release"
//     generation — an empty send reply means the server classified the request as a duplicate
//     (nothing was appended for it), durability is the `durability` topic option
//     (`persisted` / `replicated`) and an unknown option key is refused with 4041.
// Any other protocol minor (0.12 of the 0.11.1-edge crates, or the legacy ≤ 0.8 framing) is
// refused at login with a message naming both versions (connection.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kib::iggy {

enum class ServerGeneration : uint8_t {
  kUnknown,  // not logged in yet
  kEdge,     // 0.9.0-edge.N
  kRelease,  // 0.9.0 and later 0.9.x
};
const char* server_generation_name(ServerGeneration g);

struct ServerProfile {
  uint32_t protocol = 0;   // packed major<<20 | minor<<10 | patch, as the Register reply says
  std::string version;     // the server's own version string, e.g. "0.9.0-edge.5"
  ServerGeneration generation = ServerGeneration::kUnknown;

  // A successful SendMessages reply with no body: true = the request was a duplicate (nothing
  // appended for it), so it must never be acknowledged as a write.
  bool empty_send_reply_is_duplicate() const { return generation != ServerGeneration::kEdge; }
  // Topic durability is the `durability` string option (else the `enforce_fsync` bool).
  bool durability_option() const { return generation != ServerGeneration::kEdge; }
};

// "0.11.0" from a packed version.
std::string format_protocol_version(uint32_t packed);
inline constexpr uint32_t pack_protocol_version(uint32_t major, uint32_t minor, uint32_t patch) {
  return (major << 20) | (minor << 10) | patch;
}

// The profile of a server that accepted the Register, or an error text naming both versions when
// the bridge cannot talk to it (another protocol minor).
struct ProfileResult {
  ServerProfile profile;
  std::string refusal;  // empty = supported
};
ProfileResult profile_from_login(uint32_t server_protocol, std::string_view server_version);

// What the bridge supports, for messages and docs: "protocol 0.11 (Iggy server 0.9.0-edge.5 and 0.9.0)".
std::string supported_servers_text();

}  // namespace kib::iggy
