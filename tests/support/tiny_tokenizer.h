// A tiny SentencePiece tokenizer for tests that train, generate, convert or extract with text.
#pragma once

#include <filesystem>

namespace kforge::test {

/// A 60-piece SentencePiece model (ids < the TrainFixture's vocab of 64) trained on random lowercase
/// words (seeded), written under `dir`; returns the .model path.
std::filesystem::path tiny_tokenizer(const std::filesystem::path& dir);

}  // namespace kforge::test
