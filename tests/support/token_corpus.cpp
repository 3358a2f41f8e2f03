// write_token_corpus: a cyclic uint16 token shard.
#include "support/token_corpus.h"

#include <vector>

#include "data/npy_writer.h"

namespace kforge::test {

std::filesystem::path write_token_corpus(const std::filesystem::path& dir, int vocab, int tokens) {
  std::filesystem::create_directories(dir);
  std::vector<int> ids(static_cast<size_t>(tokens));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>((i * 7) % static_cast<size_t>(vocab));
  data::write_npy_tokens(dir / "shard_0.npy", data::TokenDtype::uint16, ids);
  return dir;
}

}  // namespace kforge::test
