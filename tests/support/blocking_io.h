// Blocking whole-buffer socket I/O for tests that talk to an in-process server from a helper
// thread. False when the peer closed or the call failed.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace kib::test {

inline bool write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

inline bool read_all(int fd, uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t k = ::read(fd, p, n);
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

}  // namespace kib::test
