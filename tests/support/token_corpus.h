// A small tokenised corpus on disk, for tests that run kforge on real (if tiny) data.
#pragma once

#include <filesystem>

namespace kforge::test {

/// Writes `tokens` ids (i * 7) % vocab as one uint16 .npy shard into `dir` (created) and
/// returns `dir`, ready for [data] dataset_path.
std::filesystem::path write_token_corpus(const std::filesystem::path& dir, int vocab, int tokens = 4096);

}  // namespace kforge::test
