// TLS for the SSL and SASL_SSL listeners (docs/security.md "TLS"): OpenSSL on memory BIOs, so
// the handshake and every record are driven by the loop's reads and writes and nothing blocks.
//
// TlsContext is what [tls] says, loaded and checked (certificate, key, CA, protocols, ciphers,
// client authentication, principal mapping rules); a connection takes the context current when
// it is accepted and keeps it, so a SIGHUP reload (a new context) leaves established
// connections as they were. TlsSession is one connection's TLS state: ciphertext from the socket
// goes in with feed(), plaintext comes out of read(); plaintext goes in with write(), ciphertext
// for the socket comes out of take_output().
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/bytes.h"
#include "common/result.h"
#include "config/config.h"
#include "net/tls_peer.h"
#include "security/ssl_principal_mapper.h"

namespace kib::net {

class TlsContext {
 public:
  // Reads and checks everything [tls] names; an error names the key and the file. Blocking
  // (reads files, may decrypt the key): call it before the loop runs or off the loop.
  static Result<std::shared_ptr<const TlsContext>> load(const config::TlsConfig& cfg);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* native() const { return ctx_; }
  const security::SslPrincipalMapper& mapper() const { return mapper_; }
  // The server certificate's subject and expiry, for the log ("CN=kafka.example.com, valid
  // until 2027-01-01 00:00:00 UTC").
  const std::string& summary() const { return summary_; }
  // The server certificate's notAfter, seconds since the epoch (for /metrics).
  int64_t not_after() const { return not_after_; }

 private:
  TlsContext(SSL_CTX* ctx, security::SslPrincipalMapper mapper) : ctx_(ctx), mapper_(std::move(mapper)) {}
  SSL_CTX* ctx_;
  security::SslPrincipalMapper mapper_;
  std::string summary_;
  int64_t not_after_ = 0;
};

class TlsSession {
 public:
  // `client_auth`: whether the context's client_auth applies; false asks the client for no
  // certificate (a SASL_SSL listener: Kafka's broker-wide ssl.client.auth is for SSL listeners
  // only, KIP-684).
  explicit TlsSession(std::shared_ptr<const TlsContext> ctx, bool client_auth = true);
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
  // Advances the handshake with what was fed; kOk once it is complete (peer() is then set).
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
