// The OpenSSL primitives SASL uses: hashes, HMAC, PBKDF2 (RFC 5802's Hi), the RNG, a
// constant-time comparison, strict base64 (RFC 4648, padded, no whitespace: what SCRAM
// messages carry). A failure inside OpenSSL (out of memory) throws std::runtime_error; callers
// run inside a guard (common/guard.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/bytes.h"

namespace kib::security {

enum class Digest { kSha256, kSha512 };
size_t digest_size(Digest d);  // 32 or 64

Bytes hash(Digest d, ByteSpan data);
Bytes hmac(Digest d, ByteSpan key, ByteSpan data);
// PBKDF2-HMAC (RFC 8018) with one output block's length: RFC 5802's Hi(str, salt, i).
Bytes pbkdf2(Digest d, ByteSpan password, ByteSpan salt, int32_t iterations);
// From OpenSSL's CSPRNG (RAND_bytes).
Bytes random_bytes(size_t n);
// CRYPTO_memcmp; false when the sizes differ (the sizes are not secret).
bool constant_time_equal(ByteSpan a, ByteSpan b);
// Overwrites `b` (OPENSSL_cleanse) and empties it: salted passwords, keys and passwords do not
// linger in freed memory.
void wipe(Bytes& b);
void wipe(std::string& s);

std::string base64_encode(ByteSpan data);
// Strict: only A-Z a-z 0-9 + /, a length that is a multiple of 4, '=' padding only at the end,
// and the unused bits of the last symbol zero (one encoding per byte string).
std::optional<Bytes> base64_decode(std::string_view text);

inline ByteSpan as_bytes(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
inline std::string_view as_text(ByteSpan b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

}  // namespace kib::security
