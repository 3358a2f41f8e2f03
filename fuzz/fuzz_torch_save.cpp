// Fuzz target: a torch.save file (train_state.pt, or one tensor of a .distcp file) as `kforge convert --from dcp`
// reads it (core/interop/torch_save: LibTorch's zip reader, the restricted pickle reader, tensors out of storages).
// Input: the file's bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "interop/torch_save.h"
#include "kforge/sdk/error.h"

namespace {

// Every tensor the value or, one and two dicts down, its entries describe (a refused one is an sdk::Error).
void take_tensors(const kforge::interop::TorchSaved& saved, const kforge::interop::PickleValue& value, int depth) {
  using Kind = kforge::interop::PickleValue::Kind;
  if (value.kind == Kind::object) {
    try {
      saved.tensor(value, "fuzz");
    } catch (const kforge::sdk::Error&) {
    }
  }
  if (value.kind != Kind::dict || depth == 2) return;
  for (size_t i = 1; i < value.items.size(); i += 2) take_tensors(saved, *value.items[i], depth + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const kforge::interop::TorchSaved saved(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    take_tensors(saved, saved.root(), 0);
  } catch (const kforge::sdk::Error&) {
    // A refused file is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
