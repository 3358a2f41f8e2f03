// Model decoding for the scorer: each probed once on a one-position state, a refusal leaving the function empty.
#include "eval_tasks/model_decoding.h"

#include <memory>

#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {

decltype(ScoringModel::decoder) cached_decoder(sdk::Model& model, at::Device device) {
  try {
    model.start_decoding(1, 1);
  } catch (const sdk::Error&) {
    return nullptr;
  }
  return [&model, device](int64_t max_len) {
    std::shared_ptr<sdk::Model::DecodeState> state = model.start_decoding(1, max_len);
    return [&model, device, state](const at::Tensor& tokens) { return model.decode(tokens.to(device), *state); };
  };
}

decltype(ScoringModel::shared_prefix) shared_prefix(sdk::Model& model, at::Device device) {
  try {
    model.fork_decoding(*model.start_decoding(1, 1), 2);
  } catch (const sdk::Error&) {
    return nullptr;
  }
  return [&model, device](const at::Tensor& prefix, int64_t room) {
    std::shared_ptr<sdk::Model::DecodeState> state = model.start_decoding(1, prefix.size(1) + room);
    model.decode(prefix.to(device), *state);
    return [&model, device, state](const at::Tensor& rows) {
      const std::unique_ptr<sdk::Model::DecodeState> copies = model.fork_decoding(*state, rows.size(0));
      return model.decode(rows.to(device), *copies);
    };
  };
}

}  // namespace kforge::eval_tasks
