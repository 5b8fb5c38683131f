#include "net/tls.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>
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

std::vector<TlsListener> tls_listeners(const std::vector<config::ListenerConfig>& listeners) {
  std::vector<TlsListener> out;
  for (size_t i = 0; i < listeners.size(); ++i)
    if (config::uses_tls(listeners[i].protocol))
      out.push_back({static_cast<uint32_t>(i), listeners[i].str(), listeners[i].protocol == config::SecurityProtocol::kSsl});
  return out;
}

namespace {

using CtxPtr = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;

// A context with [tls]'s protocols, options and ciphers, and no certificate yet.
Result<CtxPtr> new_context(const config::TlsConfig& cfg) {
  CtxPtr ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!ctx) return invalid("[tls]: cannot create an OpenSSL context: " + openssl_error());
  SSL_CTX* c = ctx.get();
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
  return ctx;
}

// Reads the certificate chain, its key and the CAs [tls] names into `c`.
Status load_files(SSL_CTX* c, const config::TlsConfig& cfg) {
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
  return ok_status();
}

// Gives `to` the certificate chain, key, CA store and CA names of `from`: shared (reference
// counted), not read again.
Status share_credentials(SSL_CTX* from, SSL_CTX* to) {
  STACK_OF(X509)* chain = nullptr;
  SSL_CTX_get0_chain_certs(from, &chain);
  if (SSL_CTX_use_certificate(to, SSL_CTX_get0_certificate(from)) != 1 || SSL_CTX_set1_chain(to, chain) != 1 ||
      SSL_CTX_use_PrivateKey(to, SSL_CTX_get0_privatekey(from)) != 1)
    return invalid("[tls]: cannot give a listener the server certificate: " + openssl_error());
  SSL_CTX_set1_cert_store(to, SSL_CTX_get_cert_store(from));
  if (STACK_OF(X509_NAME)* names = SSL_CTX_get_client_CA_list(from); names && sk_X509_NAME_num(names) > 0) {
    STACK_OF(X509_NAME)* copy = SSL_dup_CA_list(names);
    if (!copy) return invalid("[tls]: cannot give a listener the CA names: " + openssl_error());
    SSL_CTX_set_client_CA_list(to, copy);
  }
  return ok_status();
}

// What a listener's context asks of the client, and the session id context that ties its
// sessions to it.
Status apply_listener(SSL_CTX* c, const config::TlsConfig& cfg, const TlsListener& l) {
  auto client_auth = l.authenticates ? cfg.client_auth : config::TlsConfig::ClientAuth::kNone;
  switch (client_auth) {
    case config::TlsConfig::ClientAuth::kNone: SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr); break;
    case config::TlsConfig::ClientAuth::kRequested: SSL_CTX_set_verify(c, SSL_VERIFY_PEER, nullptr); break;
    case config::TlsConfig::ClientAuth::kRequired:
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  // OpenSSL resumes a session (from its cache or a ticket) only where the session id context
  // is the one the session was made in, and treats any other as a cache miss: a full handshake
  // follows, in which client_auth applies (ssl_get_prev_session). Each listener's context
  // already has its own cache and ticket keys; its own session id context, naming the listener
  // and what it asks of the client, holds even should a session be offered to it from
  // elsewhere. It also must be set for resumption to work at all where peer verification is
  // on. (At most SSL_MAX_SID_CTX_LENGTH bytes: a SHA-256 of the description.)
  std::string what = "kafka-iggy-bridge listener " + std::to_string(l.index) + " " + l.name + " " +
                     (l.authenticates ? "client_auth=" + std::string(config::client_auth_name(client_auth)) : "sasl");
  unsigned char sid[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(what.data(), what.size(), sid, &len, EVP_sha256(), nullptr) != 1 || len > SSL_MAX_SID_CTX_LENGTH ||
      SSL_CTX_set_session_id_context(c, sid, len) != 1)
    return invalid("[tls]: cannot set the session id context of listener " + l.name + ": " + openssl_error());
  return ok_status();
}

}  // namespace

Result<std::vector<std::shared_ptr<const TlsContext>>> TlsContext::load_all(const config::TlsConfig& cfg,
                                                                            const std::vector<TlsListener>& listeners) {
  ERR_clear_error();
  auto parsed = security::SslPrincipalMapper::parse(cfg.principal_mapping_rules);
  if (!parsed) return invalid("[tls] principal_mapping_rules: " + parsed.error().message);
  auto mapper = std::make_shared<const security::SslPrincipalMapper>(std::move(*parsed));
  if (cfg.certificate_file.empty()) return invalid("[tls] certificate_file: required by the SSL and SASL_SSL listeners");
  if (cfg.key_file.empty()) return invalid("[tls] key_file: required by the SSL and SASL_SSL listeners");

  // The files are read once, into a context of their own; every listener's context takes the
  // certificate, key and CAs from it. So all listeners serve the same certificate even if a
  // renewal overwrites the files while they are read, and an encrypted key is decrypted once.
  auto files = new_context(cfg);
  if (!files) return files.error();
  if (auto st = load_files(files->get(), cfg); !st) return st.error();
  std::string summary;
  int64_t not_after = 0;
  if (X509* leaf = SSL_CTX_get0_certificate(files->get())) {
    int days = 0, secs = 0;
    ASN1_TIME* epoch = ASN1_TIME_set(nullptr, 0);
    if (epoch && ASN1_TIME_diff(&days, &secs, epoch, X509_get0_notAfter(leaf)) == 1)
      not_after = int64_t{days} * 86400 + secs;
    ASN1_TIME_free(epoch);
    summary = security::rfc2253_name(X509_get_subject_name(leaf)) + ", valid until " + utc(not_after);
  }

  std::vector<std::shared_ptr<const TlsContext>> out;
  for (const TlsListener& l : listeners) {
    auto made = new_context(cfg);
    if (!made) return made.error();
    if (auto st = share_credentials(files->get(), made->get()); !st) return st.error();
    if (auto st = apply_listener(made->get(), cfg, l); !st) return st.error();
    std::shared_ptr<TlsContext> ctx(new TlsContext(made->release(), l, mapper));
    ctx->requires_certificate_ = l.authenticates && cfg.client_auth == config::TlsConfig::ClientAuth::kRequired;
    ctx->summary_ = summary;
    ctx->not_after_ = not_after;
    out.push_back(std::move(ctx));
  }
  ERR_clear_error();
  return out;
}

Result<std::shared_ptr<const TlsContext>> TlsContext::load(const config::TlsConfig& cfg, const TlsListener& listener) {
  auto all = load_all(cfg, {listener});
  if (!all) return all.error();
  return std::move(all->front());
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

// ---- TlsSession ----

TlsSession::TlsSession(std::shared_ptr<const TlsContext> ctx) : ctx_(std::move(ctx)) {
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

bool TlsSession::refuse(TlsFailure why, std::string error) {
  failure_ = why;
  error_ = std::move(error);
  // What OpenSSL queued on completing the handshake (its last flight, a TLS 1.3 session
  // ticket) is dropped: a refused client gets no session to come back with, only the close.
  // Not shut down, the session is also dropped from the context's cache when it is freed.
  (void)BIO_reset(wbio_);
  return false;
}

bool TlsSession::finish_handshake() {
  peer_.version = SSL_get_version(ssl_);
  peer_.cipher = SSL_get_cipher_name(ssl_);
  X509* cert = SSL_get0_peer_certificate(ssl_);
  // Only a verified certificate names a principal (client_auth none never asks for one).
  bool verified = cert && SSL_get_verify_result(ssl_) == X509_V_OK;
  // OpenSSL checks client_auth = "required" in a full handshake only: a resumed one takes the
  // client certificate (or its absence) from the session it resumes, asking for none. Each
  // listener's own context keeps another listener's sessions from resuming here; this holds
  // even if one did.
  if (!verified && ctx_->requires_certificate())
    return refuse(TlsFailure::kNoClientCertificate,
                  std::string(resumed() ? "resumed a session" : "completed a handshake") +
                      " without a verified client certificate on a listener whose client_auth is \"required\"");
  if (verified) {
    peer_.subject = security::rfc2253_name(X509_get_subject_name(cert));
    auto name = ctx_->mapper().name_of(*peer_.subject);
    if (!name) return refuse(TlsFailure::kPrincipalMapping, "no principal for the client certificate: " + name.error().message);
    peer_.principal = security::KafkaPrincipal::user(std::move(*name));
  } else {
    peer_.principal = security::KafkaPrincipal::anonymous();
  }
  established_ = true;
  return true;
}

bool TlsSession::resumed() const { return ssl_ && SSL_session_reused(ssl_) == 1; }

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
