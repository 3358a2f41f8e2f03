// MixtureDataset: concatenated index space over the mixture's sources.
#include "data/mixture_dataset.h"

#include <fmt/format.h>

#include <algorithm>

#include "kforge/sdk/error.h"

namespace kforge::data {

MixtureDataset::MixtureDataset(std::vector<Source> sources) : sources_(std::move(sources)), offsets_{0} {
  for (const Source& s : sources_) {
    if (s.data->size() < 1) {
      throw sdk::Error(
          fmt::format("[[data.datasets]] source '{}' holds no whole sample window ({}); add data or "
                      "lower train.seq_len",
                      s.name, s.data->describe()));
    }
    offsets_.push_back(offsets_.back() + s.data->size());
  }
}

size_t MixtureDataset::source_of(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw sdk::Error(fmt::format("mixture window {} is out of range [0, {})", index, size()));
  }
  return static_cast<size_t>(std::upper_bound(offsets_.begin(), offsets_.end(), index) - offsets_.begin() - 1);
}

at::Tensor MixtureDataset::window(int64_t index) const {
  const size_t s = source_of(index);
  return sources_[s].data->window(index - offsets_[s]);
}

std::string MixtureDataset::describe() const {
  std::string out = fmt::format("mixture of {} sources", sources_.size());
  for (const Source& s : sources_) out += fmt::format("; '{}': {}", s.name, s.data->describe());
  return out;
}

}  // namespace kforge::data
