// Each adapter (built by make_adapter from tests/oracles/vision_adapters.py's cases: every type, each
// activation, ragged and divisible grids, a window wider than the grid) against the independent
// window-by-window python3-torch reference: output and the gradients of the input and every parameter.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "adapter_factory.h"
#include "hf_tensors.h"
#include "plugins/vision/vision_oracle.h"

namespace kforge::test {
namespace {

TEST(AdapterOracle, OutputsAndGradientsMatchTorch) {
  const auto dir = vision_oracle_dir("vision_adapters.py");
  ASSERT_FALSE(dir.empty());
  const auto cases = nlohmann::json::parse(std::ifstream(dir / "cases.json"));
  ASSERT_EQ(cases.size(), 9u);
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    vision::AdapterOptions o;
    o.type = c.at("type");
    o.in_dim = c.at("in_dim");
    o.out_dim = c.at("out_dim");
    o.hidden_dim = c.value("hidden_dim", 0);
    o.activation = c.value("activation", "gelu");
    o.pool_window = c.value("pool_window", 2);
    o.pool_heads = c.value("pool_heads", 16);
    const auto adapter = vision::make_adapter(o);
    auto tensors = read_tensors(dir / (name + ".safetensors"));
    std::map<std::string, at::Tensor> params;
    for (const auto& [key, t] : tensors)
      if (key.rfind("param/", 0) == 0) params[key.substr(6)] = t;
    EXPECT_TRUE(vision::load_hf_tensors(*adapter, params, name).empty()) << "parameter names are KempnerForge's";

    const at::Tensor x = tensors.at("x").clone().requires_grad_(true);
    const at::Tensor out = adapter->forward(x);
    EXPECT_EQ(out.size(1), adapter->output_num_tokens(x.size(1)));
    expect_close(out, tensors.at("output"), "output");
    (out * tensors.at("cotangent")).sum().backward();
    expect_close(x.grad(), tensors.at("grad/x"), "grad/x");
    for (const auto& p : adapter->named_parameters())
      expect_close(p.value().grad(), tensors.at("grad/" + p.key()), p.key());
  }
}

}  // namespace
}  // namespace kforge::test
