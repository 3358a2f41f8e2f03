// What a config may hold: file size, nesting depth and the magnitude of its numbers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kforge::config {

/// Largest config file read. A real config is a few KB (a mixture of 10,000 datasets, about 1 MB). The bound
/// keeps a hostile file from exhausting memory and caps its load at about half a second: the TOML parser
/// alone reads 6-10 MB/s (benchmarks/config_load.sh).
inline constexpr size_t kMaxConfigBytes = size_t{2} << 20;

/// Deepest nesting of tables, arrays and dotted-key parts. A kforge config nests a few levels
/// ([[train.freeze_schedule.specs]] is 5); the TOML parser and the conversion recurse once per level.
inline constexpr int kMaxConfigDepth = 32;

/// Largest magnitude of any Int or Float key without a tighter bound of its own: it fits an int, and a
/// product of two such numbers or a conversion to milliseconds fits an int64.
inline constexpr double kMaxConfigNumber = 2147483647.0;

/// Largest [train] num_threads: Linux's largest CPU count (CONFIG_NR_CPUS). LibTorch starts that many threads, and
/// a million of them hang the run in thread creation until the address space runs out.
inline constexpr double kMaxThreads = 8192;

/// Largest [data] prefetch_factor: with num_workers <= kMaxThreads and a batch size <= kMaxConfigNumber, the samples
/// an image-text run reads ahead (their product) fit an int64.
inline constexpr double kMaxPrefetchFactor = 1024;

/// Largest timeout in seconds (one year): converted to milliseconds or to alarm()'s unsigned, it fits.
inline constexpr double kMaxTimeoutSec = 365.0 * 24 * 3600;

}  // namespace kforge::config
