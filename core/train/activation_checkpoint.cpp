// Activation checkpointing: the recomputing autograd node and the block and module runners.
#include "train/activation_checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <algorithm>
#include <mutex>

#include "kforge/sdk/error.h"
#include "parallel/precision.h"

namespace kforge::train {
namespace {

using Unit = ActivationCheckpointing::Unit;
using torch::autograd::variable_list;

// The default generators a unit computing on `device` may draw from: the CPU's, and a CUDA device's own.
std::vector<at::Generator> generators(const c10::Device& device) {
  std::vector<at::Generator> out{at::detail::getDefaultCPUGenerator()};
  if (device.is_cuda()) out.push_back(at::globalContext().defaultGenerator(device));
  return out;
}

std::vector<at::Tensor> generator_states(const c10::Device& device) {
  std::vector<at::Tensor> states;
  for (at::Generator& gen : generators(device)) {
    std::lock_guard<std::mutex> lock(gen.mutex());
    states.push_back(gen.get_state());
  }
  return states;
}

void set_generator_states(const c10::Device& device, const std::vector<at::Tensor>& states) {
  std::vector<at::Generator> gens = generators(device);
  for (size_t i = 0; i < gens.size(); ++i) {
    std::lock_guard<std::mutex> lock(gens[i].mutex());
    gens[i].set_state(states[i]);
  }
}

using TensorValues = std::vector<std::pair<size_t, at::Tensor>>;  // (index in Unit::tensors, value)

TensorValues copy_tensors(const Unit& unit, const std::vector<size_t>& indices) {
  at::NoGradGuard no_grad;
  TensorValues out;
  for (const size_t i : indices) out.emplace_back(i, unit.tensors[i].detach().clone());
  return out;
}

void write_tensors(const Unit& unit, const TensorValues& values) {
  at::NoGradGuard no_grad;
  for (const auto& [i, value] : values) unit.tensors[i].detach().copy_(value);
}

// While alive: the model's side outputs are appended to `sides`; when recomputing, its capture is silent.
class UnitScope {
 public:
  UnitScope(sdk::Model& model, std::vector<at::Tensor>& sides, bool recomputing) : model_(model) {
    model.set_side_output_sink([&sides](const at::Tensor& value) { sides.push_back(value); });
    model.set_recomputing(recomputing);
  }
  ~UnitScope() {
    model_.set_side_output_sink(nullptr);
    model_.set_recomputing(false);
  }
  UnitScope(const UnitScope&) = delete;
  UnitScope& operator=(const UnitScope&) = delete;

 private:
  sdk::Model& model_;
};

// The side outputs that can carry a gradient (floating point), each once.
std::vector<at::Tensor> differentiable(const std::vector<at::Tensor>& sides, const Unit& unit) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& s : sides) {
    if (!s.defined() || !at::isFloatingType(s.scalar_type())) continue;
    if (std::any_of(out.begin(), out.end(), [&](const at::Tensor& o) { return o.is_same(s); })) continue;
    if (s.is_view()) {
      throw sdk::Error(
          fmt::format("activation checkpointing: a side output of '{}' (Model::block_side_output) is a "
                      "view of another tensor; declare a tensor of its own (e.g. its .clone())",
                      unit.name));
    }
    out.push_back(s);
  }
  return out;
}

// What one forward of a unit kept, and its recomputation in the backward.
class Recompute final : public torch::autograd::Node {
 public:
  Recompute(sdk::Model& model, const Unit& unit, sdk::Model::BlockFn fn, const at::Tensor& input,
            std::vector<at::Tensor> params, TensorValues before, std::vector<at::Tensor> generator_state,
            std::optional<at::ScalarType> autocast, int64_t& recomputations)
      : model_(model),
        unit_(unit),
        fn_(std::move(fn)),
        input_(input.detach()),
        input_version_(input._version()),
        input_requires_grad_(input.requires_grad()),
        params_(std::move(params)),
        before_(std::move(before)),
        generator_state_(std::move(generator_state)),
        autocast_(autocast),
        recomputations_(recomputations) {}

  std::string name() const override { return "kforge::ActivationCheckpoint"; }
  void release_variables() override {
    fn_ = nullptr;
    input_ = at::Tensor();
    before_.clear();
    generator_state_.clear();
  }

  variable_list apply(variable_list&& grads) override {
    if (!fn_) {
      throw sdk::Error(
          fmt::format("activation checkpointing: the backward of '{}' ran twice; its recomputation "
                      "keeps nothing for a second one (retain_graph is not supported with [train] "
                      "activation_checkpointing)",
                      unit_.name));
    }
    if (input_._version() != input_version_) {
      throw sdk::Error(
          fmt::format("activation checkpointing: the input of '{}' was changed in place after its "
                      "forward; its recomputation needs it as it was",
                      unit_.name));
    }
    ++recomputations_;
    at::Tensor x = input_.detach().requires_grad_(input_requires_grad_);
    at::Tensor out;
    std::vector<at::Tensor> sides;
    {
      const Replay replay(*this);
      const at::AutoGradMode grad_mode(true);
      const parallel::AutocastGuard autocast(autocast_);
      const UnitScope scope(model_, sides, /*recomputing=*/true);
      // A view, as the forward's input was no leaf: autocast caches the casts of leaves, which would sum the
      // gradients of the input's uses in the low-precision dtype.
      out = fn_(x.view_as(x));
    }
    sides = differentiable(sides, unit_);
    if (sides.size() + 1 != grads.size()) {
      throw sdk::Error(
          fmt::format("activation checkpointing: '{}' declared {} side outputs in its forward and {} in "
                      "its recomputation; it must compute the same again",
                      unit_.name, grads.size() - 1, sides.size()));
    }
    variable_list roots, root_grads;
    for (size_t k = 0; k < grads.size(); ++k) {
      const at::Tensor& root = k == 0 ? out : sides[k - 1];
      if (grads[k].defined() && root.requires_grad()) {
        roots.push_back(root);
        root_grads.push_back(grads[k]);
      }
    }
    variable_list inputs;
    if (input_requires_grad_) inputs.push_back(x);
    inputs.insert(inputs.end(), params_.begin(), params_.end());
    variable_list result(1 + params_.size());
    if (roots.empty() || inputs.empty()) return result;
    const variable_list got = torch::autograd::grad(roots, inputs, root_grads, /*retain_graph=*/false,
                                                    /*create_graph=*/false, /*allow_unused=*/true);
    std::copy(got.begin(), got.end(), result.begin() + (input_requires_grad_ ? 0 : 1));
    return result;
  }

 private:
  // While alive: the generators and the tensors the forward changed in place hold what they held
  // before it; restored to what they hold now when it ends (so the recomputation changes nothing twice).
  class Replay {
   public:
    explicit Replay(const Recompute& node)
        : node_(node),
          generator_now_(generator_states(node.input_.device())),
          now_(copy_tensors(node.unit_, indices(node.before_))) {
      set_generator_states(node.input_.device(), node.generator_state_);
      write_tensors(node.unit_, node.before_);
    }
    ~Replay() {
      write_tensors(node_.unit_, now_);
      set_generator_states(node_.input_.device(), generator_now_);
    }
    Replay(const Replay&) = delete;
    Replay& operator=(const Replay&) = delete;

   private:
    static std::vector<size_t> indices(const TensorValues& values) {
      std::vector<size_t> out;
      for (const auto& v : values) out.push_back(v.first);
      return out;
    }
    const Recompute& node_;
    std::vector<at::Tensor> generator_now_;
    TensorValues now_;
  };

  sdk::Model& model_;
  const Unit& unit_;
  sdk::Model::BlockFn fn_;
  at::Tensor input_;
  uint32_t input_version_;
  bool input_requires_grad_;
  std::vector<at::Tensor> params_;  ///< the unit's parameters that required a gradient in the forward
  TensorValues before_;             ///< the tensors the forward changed in place, as they were before it
  std::vector<at::Tensor> generator_state_;  ///< generators(input's device) before the forward
  std::optional<at::ScalarType> autocast_;
  int64_t& recomputations_;
};

// The unit's parameters (named by `params`, else those under its name) and buffers under its name.
Unit make_unit(const sdk::Model& model, const std::string& name, const std::vector<std::string>& params) {
  Unit unit{name, {}, {}, 0, std::nullopt};
  const std::string prefix = name + ".";
  auto under = [&](const std::string& key) { return key.compare(0, prefix.size(), prefix) == 0; };
  for (const auto& item : model.named_parameters(/*recurse=*/true)) {
    const bool listed = std::find(params.begin(), params.end(), item.key()) != params.end();
    if (params.empty() ? under(item.key()) : listed) {
      unit.names.push_back(item.key());
      unit.tensors.push_back(item.value());
    }
  }
  unit.num_params = unit.tensors.size();
  for (const auto& item : model.named_buffers(/*recurse=*/true)) {
    if (under(item.key())) {
      unit.names.push_back(item.key());
      unit.tensors.push_back(item.value());
    }
  }
  return unit;
}

}  // namespace

CheckpointMode checkpoint_mode(const std::string& value) {
  if (value == "full") return CheckpointMode::full;
  if (value == "selective") return CheckpointMode::selective;
  if (value == "none") return CheckpointMode::none;
  throw sdk::ConfigError("[train] activation_checkpointing = \"" + value +
                         "\": allowed values are none, full, selective");
}

ActivationCheckpointing::ActivationCheckpointing(sdk::Model& model, CheckpointMode mode) : model_(model), mode_(mode) {
  const std::vector<sdk::ModelBlock> blocks = model.blocks();
  if (mode == CheckpointMode::full) {
    if (blocks.empty()) {
      throw sdk::ConfigError(
          "[train] activation_checkpointing = \"full\": the model lists no blocks (Model::blocks) "
          "to recompute; set \"none\"");
    }
    for (const sdk::ModelBlock& block : blocks) blocks_.push_back(make_unit(model, block.name, block.params));
    wrapped_ = model.block_runner();
    model.set_block_runner([this](size_t index, const at::Tensor& input, const sdk::Model::BlockFn& block) {
      if (index >= blocks_.size()) {
        throw sdk::Error(fmt::format("activation checkpointing: the model ran block {}, but blocks() lists {}", index,
                                     blocks_.size()));
      }
      const sdk::Model::BlockFn checkpointed = [this, index, &block](const at::Tensor& x) {
        return run(blocks_[index], x, block);
      };
      return wrapped_ ? wrapped_(index, input, checkpointed) : checkpointed(input);
    });
  } else if (mode == CheckpointMode::selective) {
    for (size_t b = 0; b < blocks.size(); ++b) {
      for (const std::string& module : blocks[b].checkpointable) {
        modules_.emplace(std::make_pair(b, module), make_unit(model, blocks[b].name + "." + module, {}));
      }
    }
    if (modules_.empty()) {
      throw sdk::ConfigError(
          "[train] activation_checkpointing = \"selective\": the model declares no checkpointable "
          "modules (ModelBlock::checkpointable); set \"full\" to recompute whole blocks, or \"none\"");
    }
    model.set_module_runner(
        [this](size_t block, const std::string& module, const at::Tensor& input, const sdk::Model::BlockFn& fn) {
          const auto it = modules_.find({block, module});
          if (it == modules_.end()) {
            throw sdk::Error(
                fmt::format("activation checkpointing: the model ran module '{}' of block {} through "
                            "run_module(), but that block's ModelBlock::checkpointable does not list it",
                            module, block));
          }
          return run(it->second, input, fn);
        });
  }
}

ActivationCheckpointing::~ActivationCheckpointing() {
  if (mode_ == CheckpointMode::full) model_.set_block_runner(wrapped_);
  if (mode_ == CheckpointMode::selective) model_.set_module_runner(nullptr);
}

at::Tensor ActivationCheckpointing::run(Unit& unit, const at::Tensor& input, const sdk::Model::BlockFn& fn) {
  std::vector<at::Tensor> params;
  for (size_t i = 0; i < unit.num_params; ++i) {
    if (unit.tensors[i].requires_grad()) params.push_back(unit.tensors[i]);
  }
  if (!at::GradMode::is_enabled() || (!input.requires_grad() && params.empty())) return fn(input);

  std::vector<int64_t> versions;
  for (const at::Tensor& t : unit.tensors) versions.push_back(t._version());
  std::vector<size_t> watched = unit.mutated.value_or(std::vector<size_t>{});
  if (!unit.mutated) {
    for (size_t i = 0; i < unit.tensors.size(); ++i) watched.push_back(i);
  }
  TensorValues before = copy_tensors(unit, watched);
  std::vector<at::Tensor> generator_state = generator_states(input.device());
  const std::optional<at::ScalarType> autocast = parallel::active_autocast();
  at::Tensor out;
  std::vector<at::Tensor> sides;
  {
    const at::NoGradGuard no_grad;
    const UnitScope scope(model_, sides, /*recomputing=*/false);
    out = fn(input);
  }
  std::vector<size_t> changed;
  for (size_t i = 0; i < unit.tensors.size(); ++i) {
    if (unit.tensors[i]._version() != versions[i]) changed.push_back(i);
  }
  if (!unit.mutated) unit.mutated = changed;
  for (const size_t i : changed) {
    if (std::find(unit.mutated->begin(), unit.mutated->end(), i) == unit.mutated->end()) {
      throw sdk::Error(
          fmt::format("activation checkpointing: the forward of '{}' changed '{}' in place, which its "
                      "first forward did not; a recomputed unit must change the same tensors each time",
                      unit.name, unit.names[i]));
    }
  }
  before.erase(std::remove_if(
                   before.begin(), before.end(),
                   [&](const auto& v) { return std::find(changed.begin(), changed.end(), v.first) == changed.end(); }),
               before.end());
  sides = differentiable(sides, unit);
  if (out.is_same(input) || out.is_view()) out = out.clone();  // the node's output must be a tensor of its own

  std::shared_ptr<Recompute> node(new Recompute(model_, unit, fn, input, params, std::move(before),
                                                std::move(generator_state), autocast, recomputations_),
                                  torch::autograd::deleteNode);
  torch::autograd::edge_list edges{torch::autograd::impl::gradient_edge(input)};
  if (!input.requires_grad()) edges.front() = torch::autograd::Edge();
  for (const at::Tensor& p : params) edges.push_back(torch::autograd::impl::gradient_edge(p));
  node->set_next_edges(std::move(edges));
  torch::autograd::set_history(out, node);
  for (at::Tensor& side : sides) torch::autograd::set_history(side, node);
  return out;
}

}  // namespace kforge::train
