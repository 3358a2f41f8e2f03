// The common [optimizer] values and value refusals (see optimizer_config.h).
#include "optimizer_config.h"

#include <charconv>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::builtin::optimizers {

CommonHyper read_common_hyper(const sdk::ConfigView& cfg, const std::string& optimizer) {
  const std::vector<double> betas = cfg.get_float_list("betas");
  std::string text;
  for (const double b : betas) text += (text.empty() ? "" : ", ") + toml_number(b);
  text = "[" + text + "]";
  require_value(betas.size() == 2, optimizer, "betas", text, "must be two numbers (beta1, beta2)");
  for (const double b : betas) require_value(b >= 0 && b < 1, optimizer, "betas", text, "each beta must be in [0, 1)");
  CommonHyper h;
  h.lr = cfg.get_float("lr");
  h.weight_decay = cfg.get_float("weight_decay");
  h.beta1 = betas[0];
  h.beta2 = betas[1];
  h.eps = cfg.get_float("eps");
  h.decay_embeddings = cfg.get_bool("decay_embeddings");
  return h;
}

void require_value(bool ok, const std::string& optimizer, const std::string& key, const std::string& value,
                   const std::string& allowed) {
  if (ok) return;
  throw sdk::ConfigError("[optimizer] " + key + " = " + value + ": " + allowed + " (read by optimizer '" + optimizer +
                         "')");
}

std::string toml_number(double value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof(buffer), value).ptr;  // shortest round trip
  std::string text(buffer, end);
  if (text.find_first_of(".ein") == std::string::npos) text += ".0";  // 0 -> 0.0, but not 1e-08 or inf
  return text;
}

}  // namespace kforge::builtin::optimizers
