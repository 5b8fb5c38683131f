// CRC32C (Castagnoli), as Kafka record batches use it. SSE4.2 instruction when the CPU has
// it, a table-driven fallback otherwise; both give identical results (tested).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kib {

uint32_t crc32c(const uint8_t* data, size_t n, uint32_t crc = 0);
uint32_t crc32c_portable(const uint8_t* data, size_t n, uint32_t crc = 0);
bool crc32c_has_hardware();

}  // namespace kib
