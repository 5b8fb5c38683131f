// Test support for TLS: a throw-away PKI made in-process with OpenSSL's API (a CA, server and
// client certificates, written as PEM into a temporary directory for TlsContext::load), and a
// non-blocking OpenSSL client on a loopback socket, pumped by the test's thread like LoopClient.
#pragma once

#include <boost/test/unit_test.hpp>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "config/config.h"
#include "net/tls.h"

namespace kib::test {

using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;
using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

// A certificate and its key, in memory and as PEM files.
struct Issued {
  std::shared_ptr<X509> cert;
  std::shared_ptr<EVP_PKEY> key;
  std::string cert_file;
  std::string key_file;
};

// Subject entries in the order they are encoded (the RFC 2253 form lists them last first).
using Subject = std::vector<std::pair<std::string, std::string>>;

class TestPki {
 public:
  TestPki() {
    char tmpl[] = "/tmp/kib-tls-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
  }
  ~TestPki() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  const std::string& dir() const { return dir_; }

  // A self-signed CA.
  Issued ca(const std::string& name) { return make(name, {{"CN", name}}, nullptr, true, false, ""); }
  // A server certificate for localhost / 127.0.0.1.
  Issued server(const std::string& name, const Issued& ca, const std::string& key_password = "") {
    return make(name, {{"CN", "localhost"}, {"O", name}}, &ca, false, true, key_password);
  }
  Issued client(const std::string& name, const Subject& subject, const Issued& ca) {
    return make(name, subject, &ca, false, false, "");
  }

  // A file of its own: several CAs, a chain, a corrupt file.
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    BOOST_REQUIRE(f);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    return path;
  }

 private:
  Issued make(const std::string& name, const Subject& subject, const Issued* ca, bool is_ca, bool server,
              const std::string& key_password) {
    EVP_PKEY* raw_key = EVP_EC_gen("P-256");
    BOOST_REQUIRE(raw_key);
    std::shared_ptr<EVP_PKEY> key(raw_key, EVP_PKEY_free);
    std::shared_ptr<X509> cert(X509_new(), X509_free);
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), ++serial_);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400L * 30);
    X509_set_pubkey(cert.get(), key.get());
    X509_NAME* n = X509_get_subject_name(cert.get());
    for (const auto& [k, v] : subject)
      BOOST_REQUIRE(X509_NAME_add_entry_by_txt(n, k.c_str(), MBSTRING_UTF8,
                                               reinterpret_cast<const unsigned char*>(v.c_str()), -1, -1, 0) == 1);
    X509_set_issuer_name(cert.get(), ca ? X509_get_subject_name(ca->cert.get()) : n);
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, ca ? ca->cert.get() : cert.get(), cert.get(), nullptr, nullptr, 0);
    auto ext = [&](int nid, const char* value) {
      X509_EXTENSION* e = X509V3_EXT_conf_nid(nullptr, &v3, nid, value);
      BOOST_REQUIRE(e);
      X509_add_ext(cert.get(), e, -1);
      X509_EXTENSION_free(e);
    };
    ext(NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
    ext(NID_key_usage, is_ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
    if (!is_ca) ext(NID_ext_key_usage, server ? "serverAuth" : "clientAuth");
    if (server) ext(NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
    BOOST_REQUIRE(X509_sign(cert.get(), ca ? ca->key.get() : key.get(), EVP_sha256()) > 0);

    Issued out{cert, key, dir_ + "/" + name + ".crt", dir_ + "/" + name + ".key"};
    BIO* b = BIO_new_file(out.cert_file.c_str(), "wb");
    PEM_write_bio_X509(b, cert.get());
    if (ca && !is_ca) PEM_write_bio_X509(b, ca->cert.get());  // the chain after the leaf
    BIO_free(b);
    b = BIO_new_file(out.key_file.c_str(), "wb");
    if (key_password.empty()) PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    else
      PEM_write_bio_PrivateKey(b, key.get(), EVP_aes_256_cbc(), reinterpret_cast<const unsigned char*>(key_password.data()),
                               static_cast<int>(key_password.size()), nullptr, nullptr);
    BIO_free(b);
    return out;
  }

  std::string dir_;
  long serial_ = 0;
};

// The [tls] section for a server certificate, `ca` verifying clients (when given).
inline config::TlsConfig tls_config(const Issued& server, const Issued* ca = nullptr,
                                    config::TlsConfig::ClientAuth auth = config::TlsConfig::ClientAuth::kNone) {
  config::TlsConfig c;
  c.certificate_file = server.cert_file;
  c.key_file = server.key_file;
  if (ca) c.ca_file = ca->cert_file;
  c.client_auth = auth;
  return c;
}

// The context of one listener (by default an SSL listener at index 0).
inline std::shared_ptr<const net::TlsContext> load_tls(const config::TlsConfig& c, const net::TlsListener& l = {}) {
  auto ctx = net::TlsContext::load(c, l);
  BOOST_REQUIRE_MESSAGE(ctx.ok(), (ctx.ok() ? std::string() : ctx.error().message));
  return *ctx;
}

// The contexts of several listeners, from one reading of the files.
inline std::vector<std::shared_ptr<const net::TlsContext>> load_tls_all(const config::TlsConfig& c,
                                                                        const std::vector<net::TlsListener>& l) {
  auto ctx = net::TlsContext::load_all(c, l);
  BOOST_REQUIRE_MESSAGE(ctx.ok(), (ctx.ok() ? std::string() : ctx.error().message));
  return *ctx;
}

struct TlsClientOptions {
  std::string ca_file;    // verify the server against it (empty: do not verify)
  std::string cert_file;  // present this client certificate
  std::string key_file;
  int min_version = 0;  // TLS1_2_VERSION, TLS1_3_VERSION; 0 = OpenSSL's default
  int max_version = 0;
  SSL_SESSION* resume = nullptr;  // a session of an earlier connection to resume
  bool no_ticket = false;         // TLS 1.2: ask for a session id the server caches, not a ticket
};

// A TLS client on a non-blocking loopback socket; io() advances the handshake, writes what the
// socket takes and reads what has arrived (unless reading is paused).
class TlsLoopClient {
 public:
  TlsLoopClient(uint16_t port, const TlsClientOptions& o) {
    // OpenSSL writes to the socket without MSG_NOSIGNAL: an alert it sends to a server that has
    // already reset the connection must fail the write, not end the test process (the bridge
    // ignores SIGPIPE too).
    std::signal(SIGPIPE, SIG_IGN);
    ctx_ = SSL_CTX_new(TLS_client_method());
    BOOST_REQUIRE(ctx_);
    if (o.min_version) SSL_CTX_set_min_proto_version(ctx_, o.min_version);
    if (o.max_version) SSL_CTX_set_max_proto_version(ctx_, o.max_version);
    if (o.no_ticket) SSL_CTX_set_options(ctx_, SSL_OP_NO_TICKET);
    if (!o.ca_file.empty()) {
      BOOST_REQUIRE(SSL_CTX_load_verify_locations(ctx_, o.ca_file.c_str(), nullptr) == 1);
      SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    }
    if (!o.cert_file.empty()) {
      BOOST_REQUIRE(SSL_CTX_use_certificate_chain_file(ctx_, o.cert_file.c_str()) == 1);
      BOOST_REQUIRE(SSL_CTX_use_PrivateKey_file(ctx_, o.key_file.c_str(), SSL_FILETYPE_PEM) == 1);
    }
    SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    BOOST_REQUIRE(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set_tlsext_host_name(ssl_, "localhost");
    SSL_set1_host(ssl_, "localhost");
    if (o.resume) SSL_set_session(ssl_, o.resume);
    SSL_set_connect_state(ssl_);
  }
  ~TlsLoopClient() {
    // A client that goes away cleanly (close_notify); OpenSSL would otherwise mark its session
    // as not resumable.
    if (connected_ && !closed_) SSL_shutdown(ssl_);
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    ::close(fd_);
  }
  TlsLoopClient(const TlsLoopClient&) = delete;
  TlsLoopClient& operator=(const TlsLoopClient&) = delete;

  void send(const Bytes& b) {
    out_.insert(out_.end(), b.begin(), b.end());
    io();
  }
  void io() {
    if (closed_) return;
    ERR_clear_error();
    if (!connected_) {
      int rc = SSL_connect(ssl_);
      if (rc == 1) {
        connected_ = true;
      } else {
        int e = SSL_get_error(ssl_, rc);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return fail(e);
        return;
      }
    }
    while (!out_.empty()) {
      size_t n = 0;
      int rc = SSL_write_ex(ssl_, out_.data(), out_.size(), &n);
      if (rc == 1) {
        out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(n));
        continue;
      }
      int e = SSL_get_error(ssl_, rc);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) break;
      return fail(e);
    }
    while (reading) {
      uint8_t buf[65536];
      size_t n = 0;
      int rc = SSL_read_ex(ssl_, buf, sizeof buf, &n);
      if (rc == 1) {
        in_.insert(in_.end(), buf, buf + n);
        continue;
      }
      int e = SSL_get_error(ssl_, rc);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) break;
      if (e == SSL_ERROR_ZERO_RETURN) {
        close_notify = true;
        closed_ = true;
        break;
      }
      return fail(e);
    }
  }
  void read_frames() {
    io();
    size_t at = 0;
    while (in_.size() - at >= 4) {
      uint32_t len = (uint32_t(in_[at]) << 24) | (uint32_t(in_[at + 1]) << 16) | (uint32_t(in_[at + 2]) << 8) | in_[at + 3];
      if (in_.size() - at - 4 < len) break;
      frames.emplace_back(in_.begin() + static_cast<std::ptrdiff_t>(at + 4),
                          in_.begin() + static_cast<std::ptrdiff_t>(at + 4 + len));
      at += 4 + len;
    }
    in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(at));
  }
  bool peer_closed() {
    io();
    return closed_;
  }
  bool connected() const { return connected_; }
  // Bytes straight onto the socket, past the TLS layer (a partial record, garbage).
  void send_bypassing_tls(const Bytes& b) { BOOST_REQUIRE(::send(fd_, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size())); }
  // The server's certificate's subject (its O names which certificate it was).
  std::string server_subject() const {
    X509* c = SSL_get0_peer_certificate(ssl_);
    if (!c) return "";
    char buf[512];
    X509_NAME_oneline(X509_get_subject_name(c), buf, sizeof buf);
    return buf;
  }
  std::string version() const { return SSL_get_version(ssl_); }
  bool resumed() const { return SSL_session_reused(ssl_) == 1; }
  // The session to resume later (TLS 1.3: from a ticket the server sent after the handshake).
  std::shared_ptr<SSL_SESSION> session() const { return {SSL_get1_session(ssl_), SSL_SESSION_free}; }
  const std::string& error() const { return error_; }

  std::vector<Bytes> frames;
  bool reading = true;        // false: leave what arrives in the socket (a peer that does not read)
  bool close_notify = false;  // the server closed with close_notify

 private:
  void fail(int e) {
    closed_ = true;
    char buf[256] = "";
    unsigned long err = ERR_get_error();
    if (err) ERR_error_string_n(err, buf, sizeof buf);
    error_ = "SSL error " + std::to_string(e) + ": " + buf;
    ERR_clear_error();
  }

  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  std::string error_;
  Bytes out_, in_;
};

// The first bytes a TLS client sends (its ClientHello), made without a server.
inline Bytes client_hello() {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  BIO* rb = BIO_new(BIO_s_mem());
  BIO* wb = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl, rb, wb);
  SSL_set_connect_state(ssl);
  SSL_do_handshake(ssl);
  Bytes out(BIO_ctrl_pending(wb));
  BIO_read(wb, out.data(), static_cast<int>(out.size()));
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  return out;
}

}  // namespace kib::test
