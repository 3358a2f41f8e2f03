// Token id scans over a mapped shard: its largest id, and where the first id at or above a bound sits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kforge::builtin::data {

/// Id `i` of the little-endian ids of `itemsize` (2 or 4) bytes at `tokens`.
int64_t token_at(const unsigned char* tokens, int64_t i, size_t itemsize);

/// The largest of the `n` little-endian ids of `itemsize` (2 or 4) bytes at byte `offset` of file `path`; -1
/// when n == 0. Read with pread in 4 MiB chunks: a pass through a fresh mapping faults in every page (about
/// 4x slower, measured) and leaves the whole file in the process's resident set. Throws sdk::Error naming
/// the file when a read fails or the file ends early.
int64_t max_token_id_in_file(const std::string& path, uint64_t offset, int64_t n, size_t itemsize);

/// The position of the first of those ids that is >= `bound`; -1 when there is none.
int64_t first_token_at_least(const unsigned char* tokens, int64_t n, size_t itemsize, int64_t bound);

}  // namespace kforge::builtin::data
