// require_llama_layout: the model component's KFORGE_CAP_LLAMA_LAYOUT capability, or a refusal naming it.
#include "interop/llama_layout.h"

#include <fmt/format.h>

#include "kforge/sdk/abi.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/kinds.h"

namespace kforge::interop {

void require_llama_layout(const plugins::Registry& registry, const config::JobConfig& job) {
  const std::string model_type = job.view("model").get_string("model_type");
  const uint32_t capabilities = registry.get(sdk::kind::model, model_type, "[model] model_type").meta.capabilities;
  if ((capabilities & KFORGE_CAP_LLAMA_LAYOUT) == 0) {
    throw sdk::ConfigError(
        fmt::format("[model] model_type = \"{}\": that model does not declare the llama_layout capability (kforge "
                    "list-plugins -v shows which do), so its parameters have no Hugging Face Llama/Mixtral counterpart",
                    model_type));
  }
}

}  // namespace kforge::interop
