// What the TCP server needs to know of TLS without OpenSSL's headers (net/tls.h has the rest):
// why a handshake failed, and what a completed one established.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "security/principal.h"

namespace kib::net {

class TlsContext;
class TlsSession;

// Why a handshake failed: the label of kib_tls_handshake_failures_total{reason}.
enum class TlsFailure : uint8_t {
  kNotTls,                     // the first bytes were not a TLS ClientHello (a plaintext client?)
  kProtocolVersion,            // no TLS version in common ([tls] protocols)
  kNoSharedCipher,             // no cipher suite in common
  kNoClientCertificate,        // client_auth = "required" and the client sent none
  kClientCertificateRejected,  // the client's certificate did not verify against ca_file
  kPeerAlert,                  // the client aborted (it did not trust the bridge's certificate?)
  kPeerClosed,                 // the client closed the connection mid-handshake
  kTimeout,                    // not done within [limits] authentication_timeout_ms
  kPrincipalMapping,           // no principal_mapping_rules rule applies to the certificate's subject
  kOther,
  kCount
};
inline constexpr size_t kTlsFailureCount = static_cast<size_t>(TlsFailure::kCount);
const char* tls_failure_name(TlsFailure f);  // "not_tls"

// What the handshake established.
struct TlsPeer {
  std::string version;  // "TLSv1.3"
  std::string cipher;   // "TLS_AES_256_GCM_SHA384"
  // The client certificate's subject as Java's X500Principal.getName() writes it; nothing when
  // the client sent no certificate.
  std::optional<std::string> subject;
  // The subject through principal_mapping_rules, User:ANONYMOUS without a certificate (Kafka's
  // DefaultKafkaPrincipalBuilder for SSL).
  security::KafkaPrincipal principal;
};

}  // namespace kib::net
