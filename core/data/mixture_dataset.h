// MixtureDataset: the sources of a data mixture as one index space (source 0's windows, then source 1's, ...).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kforge/sdk/dataset.h"

namespace kforge::data {

class MixtureDataset final : public sdk::Dataset {
 public:
  struct Source {
    std::string name;
    std::unique_ptr<sdk::Dataset> data;
  };

  /// Throws sdk::Error when a source holds no window (naming it and what it opened).
  explicit MixtureDataset(std::vector<Source> sources);

  int64_t size() const override { return offsets_.back(); }
  /// Window `index` of the concatenation: source s's window index - offset(s).
  at::Tensor window(int64_t index) const override;
  std::string describe() const override;

  size_t sources() const { return sources_.size(); }
  const std::string& name(size_t source) const { return sources_[source].name; }
  int64_t source_size(size_t source) const { return offsets_[source + 1] - offsets_[source]; }
  /// The concatenated index of the source's first window.
  int64_t offset(size_t source) const { return offsets_[source]; }
  /// The source holding concatenated index `index`.
  size_t source_of(int64_t index) const;

 private:
  std::vector<Source> sources_;
  std::vector<int64_t> offsets_;  ///< sources() + 1 cumulative sizes, from 0
};

}  // namespace kforge::data
