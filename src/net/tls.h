// TLS for the SSL and SASL_SSL listeners (docs/security.md "TLS"): OpenSSL on memory BIOs, so
// the handshake and every record are driven by the loop's reads and writes and nothing blocks.
//
// TlsContext is what [tls] says, loaded and checked (certificate, key, CA, protocols, ciphers,
// client authentication, principal mapping rules), for one listener: every SSL and SASL_SSL
// listener has a context of its own, with its own session cache, ticket keys and session id
// context, so that a session one listener established never resumes on another (a SASL_SSL
// session made without a client certificate must not pass for one on an SSL listener whose
// client_auth is "required"). A connection takes its listener's context current when it is
// accepted and keeps it, so a SIGHUP reload (new contexts) leaves established connections as
// they were. TlsSession is one connection's TLS state: ciphertext from the socket
// goes in with feed(), plaintext comes out of read(); plaintext goes in with write(), ciphertext
// for the socket comes out of take_output().
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"
#include "config/config.h"
#include "net/tls_peer.h"
#include "security/ssl_principal_mapper.h"

namespace kib::net {

// A TLS listener as its context knows it.
struct TlsListener {
  uint32_t index = 0;  // its place in [kafka] listeners (Connection::listener())
  std::string name;    // "SSL://0.0.0.0:9093"
  // SSL: the handshake authenticates the connection and [tls] client_auth applies. SASL_SSL:
  // SASL authenticates it and no client certificate is asked for, as Kafka applies its
  // broker-wide ssl.client.auth to SSL listeners only (KIP-684).
  bool authenticates = true;
};

// The SSL and SASL_SSL listeners among `listeners` ([kafka] listeners), with their indices.
std::vector<TlsListener> tls_listeners(const std::vector<config::ListenerConfig>& listeners);

class TlsContext {
 public:
  // Reads and checks everything [tls] names, once, and makes a context for each of
  // `listeners`; an error names the key and the file. Blocking (reads files, may decrypt the
  // key): call it before the loop runs or off the loop.
  static Result<std::vector<std::shared_ptr<const TlsContext>>> load_all(const config::TlsConfig& cfg,
                                                                         const std::vector<TlsListener>& listeners);
  // The context of one listener (by default an SSL listener at index 0).
  static Result<std::shared_ptr<const TlsContext>> load(const config::TlsConfig& cfg, const TlsListener& listener = {});
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* native() const { return ctx_; }
  const TlsListener& listener() const { return listener_; }
  // Every handshake must establish a verified client certificate, a resumed one included: an
  // SSL listener with client_auth = "required".
  bool requires_certificate() const { return requires_certificate_; }
  const security::SslPrincipalMapper& mapper() const { return *mapper_; }
  // The server certificate's subject and expiry, for the log ("CN=kafka.example.com, valid
  // until 2027-01-01 00:00:00 UTC").
  const std::string& summary() const { return summary_; }
  // The server certificate's notAfter, seconds since the epoch (for /metrics).
  int64_t not_after() const { return not_after_; }

 private:
  TlsContext(SSL_CTX* ctx, TlsListener listener, std::shared_ptr<const security::SslPrincipalMapper> mapper)
      : ctx_(ctx), listener_(std::move(listener)), mapper_(std::move(mapper)) {}
  SSL_CTX* ctx_;
  TlsListener listener_;
  bool requires_certificate_ = false;
  std::shared_ptr<const security::SslPrincipalMapper> mapper_;  // the same for every listener's
  std::string summary_;
  int64_t not_after_ = 0;
};

class TlsSession {
 public:
  // Whether a client certificate is asked for is the context's (its listener's) to say.
  explicit TlsSession(std::shared_ptr<const TlsContext> ctx);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  enum class Status {
    kOk,         // handshake: done; read: plaintext returned
    kWantInput,  // needs more ciphertext from the peer
    kClosed,     // the peer sent close_notify
    kFailed      // a TLS error: failure() and error() say which; the connection must close
  };

  // Ciphertext read from the socket.
  void feed(const uint8_t* p, size_t n);
  // Advances the handshake with what was fed; kOk once it is complete (peer() is then set). A
  // handshake OpenSSL completed is still refused (kFailed) when its context requires a
  // certificate and none verified, or no principal mapping rule applies to the certificate.
  Status handshake();
  // Decrypts into out[0..cap); *n is the number of bytes when kOk.
  Status read(uint8_t* out, size_t cap, size_t* n);
  // Encrypts; the records are then in take_output(). False (failure() set) on a TLS error.
  bool write(const uint8_t* p, size_t n);
  // Queues close_notify (after a completed handshake; no-op otherwise).
  void shutdown();
  // Ciphertext to send: handshake messages, records, alerts, close_notify.
  Bytes take_output();
  bool has_output() const;

  bool established() const { return established_; }
  // The handshake resumed an earlier session (a ticket or a cached session id).
  bool resumed() const;
  // Fed ciphertext that can be decrypted without more input (a whole record is buffered, or
  // plaintext of one is left).
  bool input_ready() const;
  // Some bytes of a record have arrived, not all of it (the deadline of a partial frame applies).
  bool partial_record() const;
  // Ciphertext fed and not yet decrypted (what the connection holds beyond its plaintext).
  size_t buffered() const;

  const TlsPeer& peer() const { return peer_; }
  TlsFailure failure() const { return failure_; }
  const std::string& error() const { return error_; }

 private:
  Status fail(int ssl_error, bool in_handshake);
  bool finish_handshake();
  // Fails a handshake OpenSSL completed; false.
  bool refuse(TlsFailure why, std::string error);

  std::shared_ptr<const TlsContext> ctx_;
  SSL* ssl_ = nullptr;
  BIO* rbio_ = nullptr;  // owned by ssl_
  BIO* wbio_ = nullptr;  // owned by ssl_
  bool established_ = false;
  bool starved_ = false;  // the last operation wanted input and nothing was fed since
  TlsPeer peer_;
  TlsFailure failure_ = TlsFailure::kOther;
  std::string error_;
};

}  // namespace kib::net
