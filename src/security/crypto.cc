#include "security/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace kib::security {
namespace {

const EVP_MD* md(Digest d) { return d == Digest::kSha256 ? EVP_sha256() : EVP_sha512(); }

[[noreturn]] void fail(const char* what) { throw std::runtime_error(std::string("OpenSSL: ") + what + " failed"); }

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int symbol(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

size_t digest_size(Digest d) { return d == Digest::kSha256 ? 32 : 64; }

Bytes hash(Digest d, ByteSpan data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int n = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &n, md(d), nullptr) != 1) fail("EVP_Digest");
  out.resize(n);
  return out;
}

Bytes hmac(Digest d, ByteSpan key, ByteSpan data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int n = 0;
  // HMAC() with a null key pointer would use a static buffer; an empty key is a valid key.
  static const uint8_t kEmpty = 0;
  if (!HMAC(md(d), key.empty() ? &kEmpty : key.data(), static_cast<int>(key.size()), data.data(), data.size(),
            out.data(), &n))
    fail("HMAC");
  out.resize(n);
  return out;
}

Bytes pbkdf2(Digest d, ByteSpan password, ByteSpan salt, int32_t iterations) {
  if (iterations < 1) throw std::invalid_argument("PBKDF2 needs at least one iteration");
  Bytes out(digest_size(d));
  static const uint8_t kEmpty = 0;
  if (PKCS5_PBKDF2_HMAC(reinterpret_cast<const char*>(password.empty() ? &kEmpty : password.data()),
                        static_cast<int>(password.size()), salt.empty() ? &kEmpty : salt.data(),
                        static_cast<int>(salt.size()), iterations, md(d), static_cast<int>(out.size()),
                        out.data()) != 1)
    fail("PKCS5_PBKDF2_HMAC");
  return out;
}

Bytes random_bytes(size_t n) {
  Bytes out(n);
  if (n > 0 && RAND_bytes(out.data(), static_cast<int>(n)) != 1) fail("RAND_bytes");
  return out;
}

bool constant_time_equal(ByteSpan a, ByteSpan b) {
  if (a.size() != b.size()) return false;
  return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

void wipe(Bytes& b) {
  if (!b.empty()) OPENSSL_cleanse(b.data(), b.size());
  b.clear();
}

void wipe(std::string& s) {
  if (!s.empty()) OPENSSL_cleanse(s.data(), s.size());
  s.clear();
}

std::string base64_encode(ByteSpan data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t v = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8) | data[i + 2];
    for (int s : {18, 12, 6, 0}) out += kAlphabet[(v >> s) & 63];
  }
  if (size_t rest = data.size() - i; rest > 0) {
    uint32_t v = uint32_t{data[i]} << 16;
    if (rest == 2) v |= uint32_t{data[i + 1]} << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<Bytes> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  Bytes out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    std::array<int, 4> v{};
    size_t pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=') {
        // Padding: only in the last quantum's last two positions, and nothing after it.
        if (!last || k < 2) return std::nullopt;
        ++pad;
        v[k] = 0;
        continue;
      }
      if (pad > 0) return std::nullopt;
      v[k] = symbol(c);
      if (v[k] < 0) return std::nullopt;
    }
    uint32_t bits = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out.push_back(static_cast<uint8_t>(bits >> 16));
    if (pad == 2) {
      if ((bits & 0xFFFF) != 0) return std::nullopt;  // non-canonical trailing bits
    } else {
      out.push_back(static_cast<uint8_t>(bits >> 8));
      if (pad == 1) {
        if ((bits & 0xFF) != 0) return std::nullopt;
      } else {
        out.push_back(static_cast<uint8_t>(bits));
      }
    }
  }
  return out;
}

}  // namespace kib::security
