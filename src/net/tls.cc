#include "net/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "security/x500_name.h"

namespace kib::net {
namespace {

Error invalid(std::string msg) { return Error{ErrorDomain::kInvalid, 0, std::move(msg)}; }

// The first error OpenSSL queued (the root cause), and the queue emptied.
std::string openssl_error() {
  unsigned long e = ERR_get_error();
  std::string out;
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out = buf;
  }
  ERR_clear_error();
  return out.empty() ? "unknown OpenSSL error" : out;
}

// A file that cannot be opened at all says why in the errno's words, not OpenSSL's.
Status readable(const char* key, const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return invalid(std::string("[tls] ") + key + " " + path + ": cannot open: " + std::strerror(errno));
  std::fclose(f);
  return ok_status();
}

int tls_version(const std::string& name) { return name == "TLSv1.3" ? TLS1_3_VERSION : TLS1_2_VERSION; }

int password_callback(char* buf, int size, int, void* userdata) {
  const auto* password = static_cast<const std::string*>(userdata);
  if (!password || password->empty() || static_cast<int>(password->size()) > size) return 0;
  std::memcpy(buf, password->data(), password->size());
  return static_cast<int>(password->size());
}

std::string utc(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

TlsFailure classify(unsigned long err) {
  if (ERR_GET_LIB(err) != ERR_LIB_SSL) return TlsFailure::kOther;
  int reason = ERR_GET_REASON(err);
  switch (reason) {
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_HTTP_REQUEST:
    case SSL_R_HTTPS_PROXY_REQUEST:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_UNKNOWN_PROTOCOL:
    case SSL_R_UNEXPECTED_RECORD:
    case SSL_R_RECORD_LENGTH_MISMATCH:
    case SSL_R_LENGTH_TOO_SHORT:
    case SSL_R_ENCRYPTED_LENGTH_TOO_LONG:
    case SSL_R_UNEXPECTED_MESSAGE: return TlsFailure::kNotTls;
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_VERSION_TOO_LOW:
    case SSL_R_VERSION_TOO_HIGH:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION: return TlsFailure::kProtocolVersion;
    case SSL_R_NO_SHARED_CIPHER:
    case SSL_R_NO_SHARED_GROUPS:
    case SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM: return TlsFailure::kNoSharedCipher;
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE: return TlsFailure::kNoClientCertificate;
    case SSL_R_CERTIFICATE_VERIFY_FAILED: return TlsFailure::kClientCertificateRejected;
    default: break;
  }
  // An alert the peer sent (SSL_AD_REASON_OFFSET + the alert's number).
  if (reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256) return TlsFailure::kPeerAlert;
  return TlsFailure::kOther;
}

}  // namespace

const char* tls_failure_name(TlsFailure f) {
  switch (f) {
    case TlsFailure::kNotTls: return "not_tls";
    case TlsFailure::kProtocolVersion: return "protocol_version";
    case TlsFailure::kNoSharedCipher: return "no_shared_cipher";
    case TlsFailure::kNoClientCertificate: return "no_client_certificate";
    case TlsFailure::kClientCertificateRejected: return "client_certificate_rejected";
    case TlsFailure::kPeerAlert: return "peer_alert";
    case TlsFailure::kPeerClosed: return "peer_closed";
    case TlsFailure::kTimeout: return "timeout";
    case TlsFailure::kPrincipalMapping: return "principal_mapping";
    case TlsFailure::kOther:
    case TlsFailure::kCount: break;
  }
  return "other";
}

// ---- TlsContext ----

Result<std::shared_ptr<const TlsContext>> TlsContext::load(const config::TlsConfig& cfg) {
  ERR_clear_error();
  auto mapper = security::SslPrincipalMapper::parse(cfg.principal_mapping_rules);
  if (!mapper) return invalid("[tls] principal_mapping_rules: " + mapper.error().message);
  if (cfg.certificate_file.empty()) return invalid("[tls] certificate_file: required by the SSL and SASL_SSL listeners");
  if (cfg.key_file.empty()) return invalid("[tls] key_file: required by the SSL and SASL_SSL listeners");

  SSL_CTX* raw = SSL_CTX_new(TLS_server_method());
  if (!raw) return invalid("[tls]: cannot create an OpenSSL context: " + openssl_error());
  std::shared_ptr<TlsContext> ctx(new TlsContext(raw, std::move(*mapper)));
  SSL_CTX* c = ctx->ctx_;

  int lo = TLS1_3_VERSION, hi = TLS1_2_VERSION;
  for (const auto& p : cfg.protocols) {
    lo = std::min(lo, tls_version(p));
    hi = std::max(hi, tls_version(p));
  }
  if (cfg.protocols.empty()) lo = TLS1_2_VERSION, hi = TLS1_3_VERSION;
  SSL_CTX_set_min_proto_version(c, lo);
  SSL_CTX_set_max_proto_version(c, hi);
  // Client-initiated renegotiation would let a peer make the bridge do handshakes at will;
  // Kafka (Java) refuses it too.
  SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION);
  // An idle connection gives its record buffers back (10,000 idle TLS connections).
  SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS);

  if (!cfg.cipher_list.empty() && SSL_CTX_set_cipher_list(c, cfg.cipher_list.c_str()) != 1)
    return invalid("[tls] cipher_list \"" + cfg.cipher_list + "\": no TLS 1.2 cipher matches: " + openssl_error());
  if (!cfg.ciphersuites.empty() && SSL_CTX_set_ciphersuites(c, cfg.ciphersuites.c_str()) != 1)
    return invalid("[tls] ciphersuites \"" + cfg.ciphersuites + "\": not a list of TLS 1.3 suites: " + openssl_error());

  if (auto st = readable("certificate_file", cfg.certificate_file); !st) return st.error();
  if (SSL_CTX_use_certificate_chain_file(c, cfg.certificate_file.c_str()) != 1)
    return invalid("[tls] certificate_file " + cfg.certificate_file + ": not a PEM certificate chain: " + openssl_error());

  if (auto st = readable("key_file", cfg.key_file); !st) return st.error();
  BIO* kb = BIO_new_file(cfg.key_file.c_str(), "rb");
  if (!kb) return invalid("[tls] key_file " + cfg.key_file + ": cannot open: " + openssl_error());
  EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, password_callback, const_cast<std::string*>(&cfg.key_password));
  BIO_free(kb);
  if (!key)
    return invalid("[tls] key_file " + cfg.key_file + ": no PEM private key could be read" +
                   (cfg.key_password.empty() ? " (is it encrypted? then set key_password)" : " (wrong key_password?)") +
                   ": " + openssl_error());
  int used = SSL_CTX_use_PrivateKey(c, key);
  EVP_PKEY_free(key);
  if (used != 1)
    return invalid("[tls] key_file " + cfg.key_file + " is not the key of certificate_file " + cfg.certificate_file +
                   ": " + openssl_error());
  if (SSL_CTX_check_private_key(c) != 1)
    return invalid("[tls] key_file " + cfg.key_file + " is not the key of certificate_file " + cfg.certificate_file + ": " +
                   openssl_error());

  if (!cfg.ca_file.empty()) {
    if (auto st = readable("ca_file", cfg.ca_file); !st) return st.error();
    if (SSL_CTX_load_verify_locations(c, cfg.ca_file.c_str(), nullptr) != 1)
      return invalid("[tls] ca_file " + cfg.ca_file + ": not a PEM file of CA certificates: " + openssl_error());
    // The CAs are named to the client in the CertificateRequest, so that a client with
    // several certificates picks one these CAs signed (as Java's key manager does).
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(cfg.ca_file.c_str());
    if (!names) return invalid("[tls] ca_file " + cfg.ca_file + ": no CA certificate in it: " + openssl_error());
    SSL_CTX_set_client_CA_list(c, names);
  }
  switch (cfg.client_auth) {
    case config::TlsConfig::ClientAuth::kNone: SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr); break;
    case config::TlsConfig::ClientAuth::kRequested: SSL_CTX_set_verify(c, SSL_VERIFY_PEER, nullptr); break;
    case config::TlsConfig::ClientAuth::kRequired:
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  // Sessions resumed with a ticket keep their client certificate; OpenSSL refuses to resume
  // (failing the handshake) when peer verification is on and no session id context is set.
  static constexpr unsigned char kSessionContext[] = "kafka-iggy-bridge";
  SSL_CTX_set_session_id_context(c, kSessionContext, sizeof kSessionContext - 1);

  if (X509* leaf = SSL_CTX_get0_certificate(c)) {
    int days = 0, secs = 0;
    ASN1_TIME* epoch = ASN1_TIME_set(nullptr, 0);
    if (epoch && ASN1_TIME_diff(&days, &secs, epoch, X509_get0_notAfter(leaf)) == 1)
      ctx->not_after_ = int64_t{days} * 86400 + secs;
    ASN1_TIME_free(epoch);
    ctx->summary_ = security::rfc2253_name(X509_get_subject_name(leaf)) + ", valid until " + utc(ctx->not_after_);
  }
  ERR_clear_error();
  return std::shared_ptr<const TlsContext>(std::move(ctx));
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

// ---- TlsSession ----

TlsSession::TlsSession(std::shared_ptr<const TlsContext> ctx, bool client_auth) : ctx_(std::move(ctx)) {
  ssl_ = SSL_new(ctx_->native());
  rbio_ = BIO_new(BIO_s_mem());
  wbio_ = BIO_new(BIO_s_mem());
  if (!ssl_ || !rbio_ || !wbio_) {
    // Out of memory: handshake() reports it and the connection closes.
    BIO_free(rbio_);
    BIO_free(wbio_);
    SSL_free(ssl_);
    ssl_ = nullptr;
    rbio_ = wbio_ = nullptr;
    return;
  }
  // An empty read BIO means "wait for more", not end of file.
  BIO_set_mem_eof_return(rbio_, -1);
  SSL_set_bio(ssl_, rbio_, wbio_);
  if (!client_auth) SSL_set_verify(ssl_, SSL_VERIFY_NONE, nullptr);
  SSL_set_accept_state(ssl_);
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

void TlsSession::feed(const uint8_t* p, size_t n) {
  if (!ssl_ || n == 0) return;
  BIO_write(rbio_, p, static_cast<int>(n));
  starved_ = false;
}

TlsSession::Status TlsSession::fail(int ssl_error, bool in_handshake) {
  if (ssl_error == SSL_ERROR_SSL) {
    unsigned long e = ERR_peek_error();
    failure_ = classify(e);
    error_ = openssl_error();
  } else {
    failure_ = TlsFailure::kOther;
    error_ = "OpenSSL error " + std::to_string(ssl_error) + " (" + openssl_error() + ")";
  }
  if (!in_handshake && failure_ != TlsFailure::kPeerAlert) failure_ = TlsFailure::kOther;
  return Status::kFailed;
}

bool TlsSession::finish_handshake() {
  established_ = true;
  peer_.version = SSL_get_version(ssl_);
  peer_.cipher = SSL_get_cipher_name(ssl_);
  X509* cert = SSL_get0_peer_certificate(ssl_);
  // Only a verified certificate names a principal (client_auth none never asks for one).
  if (cert && SSL_get_verify_result(ssl_) == X509_V_OK) {
    peer_.subject = security::rfc2253_name(X509_get_subject_name(cert));
    auto name = ctx_->mapper().name_of(*peer_.subject);
    if (!name) {
      failure_ = TlsFailure::kPrincipalMapping;
      error_ = "no principal for the client certificate: " + name.error().message;
      return false;
    }
    peer_.principal = security::KafkaPrincipal::user(std::move(*name));
  } else {
    peer_.principal = security::KafkaPrincipal::anonymous();
  }
  return true;
}

TlsSession::Status TlsSession::handshake() {
  if (!ssl_) {
    error_ = "out of memory creating the TLS session";
    return Status::kFailed;
  }
  if (established_) return Status::kOk;
  ERR_clear_error();
  int rc = SSL_do_handshake(ssl_);
  if (rc == 1) return finish_handshake() ? Status::kOk : Status::kFailed;
  int e = SSL_get_error(ssl_, rc);
  if (e == SSL_ERROR_WANT_READ) {
    starved_ = true;
    return Status::kWantInput;
  }
  if (e == SSL_ERROR_WANT_WRITE) return Status::kWantInput;  // memory BIOs never fill
  if (e == SSL_ERROR_ZERO_RETURN) {
    failure_ = TlsFailure::kPeerClosed;
    error_ = "close_notify during the handshake";
    return Status::kFailed;
  }
  return fail(e, true);
}

TlsSession::Status TlsSession::read(uint8_t* out, size_t cap, size_t* n) {
  *n = 0;
  ERR_clear_error();
  int rc = SSL_read_ex(ssl_, out, cap, n);
  if (rc == 1) return Status::kOk;
  int e = SSL_get_error(ssl_, rc);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
    starved_ = true;
    return Status::kWantInput;
  }
  if (e == SSL_ERROR_ZERO_RETURN) return Status::kClosed;
  return fail(e, false);
}

bool TlsSession::write(const uint8_t* p, size_t n) {
  ERR_clear_error();
  size_t written = 0;
  int rc = SSL_write_ex(ssl_, p, n, &written);
  if (rc == 1 && written == n) return true;
  fail(SSL_get_error(ssl_, rc), false);
  return false;
}

void TlsSession::shutdown() {
  if (!ssl_ || !established_) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);
  ERR_clear_error();
}

Bytes TlsSession::take_output() {
  Bytes out;
  if (!wbio_) return out;
  size_t n = BIO_ctrl_pending(wbio_);
  if (n == 0) return out;
  out.resize(n);
  int got = BIO_read(wbio_, out.data(), static_cast<int>(n));
  out.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return out;
}

bool TlsSession::has_output() const { return wbio_ && BIO_ctrl_pending(wbio_) > 0; }

bool TlsSession::input_ready() const {
  if (!ssl_) return false;
  if (SSL_pending(ssl_) > 0) return true;
  return !starved_ && (BIO_ctrl_pending(rbio_) > 0 || SSL_has_pending(ssl_));
}

bool TlsSession::partial_record() const {
  return ssl_ && starved_ && (BIO_ctrl_pending(rbio_) > 0 || SSL_has_pending(ssl_));
}

size_t TlsSession::buffered() const { return rbio_ ? BIO_ctrl_pending(rbio_) : 0; }

}  // namespace kib::net
