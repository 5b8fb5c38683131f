// The fuzz targets' entry points. Each fuzz_<name>() takes one input, runs it through a decoder
// (and re-encodes what decoded, where the code has an encoder) and checks the properties the
// code promises. The same functions are built twice: with clang++ and -fsanitize=fuzzer for
// libFuzzer (tests/fuzz/libfuzzer_main.cc, `make fuzz`), and with g++ into the unit tests, which
// replay every seed and regression input (tests/unit/fuzz_regressions_test.cc, `make test`).
//
// An input that the code rightly refuses returns 0. A broken property calls fail(), which
// aborts under libFuzzer (a crash libFuzzer saves) and throws in the replay test. An exception
// other than the ones a target expects escapes on purpose: it would escape in the bridge too.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace kib::fuzz {

// Defined by the binary: libfuzzer_main.cc aborts, the replay test throws FuzzFailure.
[[noreturn]] void fail(const char* where, const char* what);

#define FUZZ_STR2(x) #x
#define FUZZ_STR(x) FUZZ_STR2(x)
#define FUZZ_CHECK(cond, what)                                               \
  do {                                                                       \
    if (!(cond)) ::kib::fuzz::fail(__FILE__ ":" FUZZ_STR(__LINE__), what); \
  } while (0)

int fuzz_kafka_request(const uint8_t* data, size_t size);     // request header + body, every served API/version
int fuzz_record_batch(const uint8_t* data, size_t size);      // Produce `records`: v2 batches, every codec
int fuzz_decompress(const uint8_t* data, size_t size);        // one codec's stream, and compress round trip
int fuzz_produce_mapping(const uint8_t* data, size_t size);   // batch -> Iggy messages -> Kafka records
int fuzz_iggy_reply(const uint8_t* data, size_t size);        // every Iggy reply decoder
int fuzz_iggy_message(const uint8_t* data, size_t size);      // polled messages -> Kafka records
int fuzz_user_headers(const uint8_t* data, size_t size);      // Iggy user-header TLV
int fuzz_http_request(const uint8_t* data, size_t size);      // /metrics server's request parser
int fuzz_config_toml(const uint8_t* data, size_t size);       // the TOML config file
int fuzz_sasl_scram(const uint8_t* data, size_t size);        // SCRAM client-first NUL client-final, and an exchange
int fuzz_sasl_plain(const uint8_t* data, size_t size);        // a SASL/PLAIN token
int fuzz_connection_pipeline(const uint8_t* data, size_t size);  // one client's bytes to the TCP server, its bounds

struct Target {
  const char* name;  // directory name under tests/fuzz/{seeds,regressions}/
  int (*fn)(const uint8_t*, size_t);
};
std::span<const Target> targets();

// {api key, lowest, highest version} that fuzz_kafka_request decodes; the replay test checks
// it against the handler registry.
std::span<const std::array<int16_t, 3>> fuzz_served_versions();

}  // namespace kib::fuzz
