// Checked lookups into an optimizer StateDict (see state_entries.h).
#include "state_entries.h"

#include <ATen/ATen.h>

#include <sstream>

#include "kforge/sdk/error.h"

namespace kforge::builtin::optimizers {
namespace {

const at::Tensor& find_entry(const sdk::StateDict& state, const std::string& key) {
  const auto it = state.find(key);
  if (it == state.end() || !it->second.defined()) {
    throw sdk::Error("optimizer state: missing entry '" + key + "' (" + std::to_string(state.size()) +
                     " entries given)");
  }
  return it->second;
}

std::string shape_text(const at::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

}  // namespace

const at::Tensor& require_entry(const sdk::StateDict& state, const std::string& key, const at::Tensor& like) {
  const at::Tensor& t = find_entry(state, key);
  if (!t.sizes().equals(like.sizes())) {
    throw sdk::Error("optimizer state: entry '" + key + "' has shape " + shape_text(t) + ", the parameter needs " +
                     shape_text(like));
  }
  return t;
}

int64_t require_step(const sdk::StateDict& state, const std::string& key) {
  const at::Tensor& t = find_entry(state, key);
  if (t.numel() != 1) {
    throw sdk::Error("optimizer state: entry '" + key + "' has shape " + shape_text(t) +
                     ", a step counter is a scalar");
  }
  const double value = t.item<double>();
  if (!(value >= 0) || value != static_cast<double>(static_cast<int64_t>(value))) {
    throw sdk::Error("optimizer state: entry '" + key + "' = " + std::to_string(value) + " is not a step count");
  }
  return static_cast<int64_t>(value);
}

}  // namespace kforge::builtin::optimizers
