// CRC-32C (Castagnoli) and TFRecord's masked form of it, for TensorBoard event files.
#pragma once

#include <cstdint>
#include <string_view>

namespace kforge::builtin::metrics {

/// CRC-32C of `data` (reflected polynomial 0x82F63B78): crc32c("123456789") == 0xE3069283.
uint32_t crc32c(std::string_view data);

/// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8, of crc32c(data).
uint32_t masked_crc32c(std::string_view data);

}  // namespace kforge::builtin::metrics
