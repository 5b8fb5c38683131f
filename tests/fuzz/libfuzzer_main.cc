// libFuzzer entry point of one target, chosen at compile time: -DFUZZ_ENTRY=fuzz_<name>.
#include <cstdio>
#include <cstdlib>

#include "fuzz/targets/fuzz_targets.h"

namespace kib::fuzz {
[[noreturn]] void fail(const char* where, const char* what) {
  std::fprintf(stderr, "fuzz check failed at %s: %s\n", where, what);
  std::abort();
}
}  // namespace kib::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return kib::fuzz::FUZZ_ENTRY(data, size); }
