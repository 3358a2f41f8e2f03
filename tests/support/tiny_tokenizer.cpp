// A tiny SentencePiece tokenizer for tests (see tiny_tokenizer.h).
#include "support/tiny_tokenizer.h"

#include <fstream>
#include <random>

#include "data/tokenizer.h"

namespace kforge::test {

std::filesystem::path tiny_tokenizer(const std::filesystem::path& dir) {
  std::mt19937 rng(1);
  std::ofstream corpus(dir / "corpus.txt");
  for (int line = 0; line < 400; ++line) {
    for (int w = 0; w < 8; ++w) {
      const int len = 2 + static_cast<int>(rng() % 5);
      for (int c = 0; c < len; ++c) corpus << static_cast<char>('a' + rng() % 26);
      corpus << ' ';
    }
    corpus << '\n';
  }
  corpus.close();
  data::TokenizerTrainOptions options;
  options.inputs = {dir / "corpus.txt"};
  options.model_prefix = dir / "tok";
  options.vocab_size = 60;
  return data::train_tokenizer(options);
}

}  // namespace kforge::test
