// Files torch.save writes (a zip of data.pkl and one record per storage), read without running their pickle.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "interop/pickle_reader.h"

namespace kforge::interop {

/// A torch.save file: its pickle, read by the restricted reader, and its storages by record key.
class TorchSaved {
 public:
  /// Reads the zip in `bytes` (LibTorch's PyTorchStreamReader) and its data.pkl. The pickle may name torch's
  /// tensor rebuild function and storage classes, collections.OrderedDict, and the NumPy classes a random state holds
  /// (np.random.get_state(), kept as data); any other global is refused naming it. Throws sdk::Error naming `origin`.
  TorchSaved(std::string_view bytes, std::string origin);

  const PickleValue& root() const { return *doc_.root; }

  /// The tensor `value` (torch._utils._rebuild_tensor_v2 of a storage) describes, copied out of its storage; throws
  /// sdk::Error naming `what` when `value` is not a tensor or its view lies outside its storage.
  at::Tensor tensor(const PickleValue& value, const std::string& what) const;

 private:
  std::string origin_;
  PickleDocument doc_;
  std::map<std::string, std::string> records_;  ///< storage key -> bytes
};

}  // namespace kforge::interop
