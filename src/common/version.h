#pragma once

namespace kib {

inline constexpr const char* kBridgeVersion = "0.1.0";
// The Iggy server this bridge is built and tested against (apache/iggy commit cc269ef70ef2).
inline constexpr const char* kTestedIggyServer = "0.9.0-edge.5 (apache/iggy cc269ef70ef2, wire protocol 0.11)";

}  // namespace kib
