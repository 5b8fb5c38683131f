#include "iggy/server_profile.h"

#include <fmt/format.h>

#include "common/text.h"
#include "iggy/protocol.h"

namespace kib::iggy {

const char* server_generation_name(ServerGeneration g) {
  switch (g) {
    case ServerGeneration::kUnknown: return "unknown";
    case ServerGeneration::kEdge: return "edge";
    case ServerGeneration::kRelease: return "release";
  }
  return "unknown";
}

std::string format_protocol_version(uint32_t packed) {
  return fmt::format("{}.{}.{}", (packed >> 20) & 1023u, (packed >> 10) & 1023u, packed & 1023u);
}

std::string supported_servers_text() {
  return fmt::format("protocol {}.{}.x (Iggy server 0.9.0-edge.5 and 0.9.0)", (wire::kProtocolVersion >> 20) & 1023u,
                     (wire::kProtocolVersion >> 10) & 1023u);
}

ProfileResult profile_from_login(uint32_t server_protocol, std::string_view server_version) {
  ProfileResult out;
  out.profile.protocol = server_protocol;
  out.profile.version = escape(server_version, 64);
  // The gate the server itself applies (iggy_binary_protocol::version): same major.minor.
  if ((server_protocol >> 10) != (wire::kProtocolVersion >> 10)) {
    out.refusal = fmt::format("Iggy server {} speaks protocol {}; this bridge speaks {} and supports {}",
                              out.profile.version, format_protocol_version(server_protocol),
                              format_protocol_version(wire::kProtocolVersion), supported_servers_text());
    return out;
  }
  out.profile.generation = server_version.starts_with("0.9.0-edge.") ? ServerGeneration::kEdge : ServerGeneration::kRelease;
  return out;
}

}  // namespace kib::iggy
