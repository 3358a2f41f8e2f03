// split_stages: blocks over pipeline virtual stages.
#include "parallel/stage_split.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kforge/sdk/error.h"

namespace kforge::parallel {

std::string StageSplit::describe() const {
  std::string out;
  for (int v = 0; v < stages(); ++v) {
    out += fmt::format("{}{}-{}", v == 0 ? "" : " | ", begin(v), end(v) - 1);
  }
  return out;
}

StageSplit split_stages(int64_t blocks, int stages, const std::vector<int64_t>& given) {
  StageSplit split{{0}};
  if (!given.empty()) {
    int64_t total = 0;
    bool positive = true;
    for (const int64_t n : given) {
      total += n;
      positive = positive && n > 0;
    }
    if (static_cast<int64_t>(given.size()) != stages || total != blocks || !positive) {
      throw sdk::ConfigError(fmt::format(
          "[distributed] pp_layer_split = [{}]: it needs {} positive entries (pp x the schedule's chunks per rank) "
          "adding up to the model's {} blocks",
          fmt::join(given, ", "), stages, blocks));
    }
    for (const int64_t n : given) split.first.push_back(split.first.back() + n);
    return split;
  }
  if (blocks < stages) {
    throw sdk::ConfigError(fmt::format(
        "[distributed] pp (x the schedule's chunks per rank) = {} pipeline stages, but the model has only {} blocks: "
        "every stage needs at least one; lower pp or virtual_stages",
        stages, blocks));
  }
  for (int v = 0; v < stages; ++v) split.first.push_back(split.first.back() + blocks / stages + (v < blocks % stages));
  return split;
}

}  // namespace kforge::parallel
