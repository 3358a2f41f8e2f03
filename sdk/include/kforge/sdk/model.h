// Model: a decoder the host trains; it also describes how it decomposes, for later sharding.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kforge/sdk/context_parallel.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/expert_parallel.h"
#include "kforge/sdk/tensor_parallel.h"

namespace kforge::sdk {

/// One unit the host may shard, activation-checkpoint or give to a pipeline stage.
struct ModelBlock {
  std::string name;                 ///< module path, e.g. "layers.0"
  std::vector<std::string> params;  ///< fully-qualified names of the parameters it owns
  /// Sub-modules (paths under `name`, e.g. "attention") that forward() runs through run_module(): what
  /// [train] activation_checkpointing = "selective" recomputes. Their parameters are those under "<name>.<module>.".
  std::vector<std::string> checkpointable = {};
};

class Model : public torch::nn::Module {
 public:
  /// One block's (or checkpointable module's) computation, input -> output. The host may keep it and call it
  /// again during the backward (activation checkpointing), after forward() returned: it must hold what it reads
  /// by value (or as members), use no tensor requiring a gradient other than its input and the unit's own
  /// parameters, and compute the same again (the host replays the CPU generator and a CUDA unit's device
  /// generator, autocast, and the unit's parameters and buffers the first call changed in place).
  using BlockFn = std::function<torch::Tensor(const torch::Tensor&)>;
  /// Runs block `index` (of blocks()) on `input`: the host's seam around every block, e.g. FSDP
  /// gathers the block's parameters first and again for its backward.
  using BlockRunner = std::function<torch::Tensor(size_t index, const torch::Tensor& input, const BlockFn& block)>;
  /// Runs module `module` (of blocks()[block].checkpointable) of block `block` on `input`.
  using ModuleRunner = std::function<torch::Tensor(size_t block, const std::string& module, const torch::Tensor& input,
                                                   const BlockFn& fn)>;
  /// Receives a block's side output (see block_side_output).
  using SideOutputSink = std::function<void(const torch::Tensor& value)>;

  /// What a model keeps between decode() calls (e.g. a KV cache); opaque to the host.
  struct DecodeState {
    virtual ~DecodeState() = default;
  };

  /// tokens: int64 [batch, seq] -> logits [batch, seq, vocab]. Under tensor parallelism (BuildContext::tensor_parallel)
  /// this rank's vocabulary slice of them: columns [r*vocab/tp, (r+1)*vocab/tp), which the loss reads as such.
  virtual torch::Tensor forward(const torch::Tensor& tokens) = 0;
  /// Blocks in forward order. Parameters in no block (embedding, final norm, head) form the root.
  virtual std::vector<ModelBlock> blocks() const = 0;
  /// The root parameters forward() uses before the first block (e.g. the token embedding); the others are used after
  /// the last. Pipeline parallelism (models declaring KFORGE_CAP_PIPELINE) trains them on the first stage, the others
  /// on the last.
  virtual std::vector<std::string> embedding_params() const { return {}; }
  /// Training FLOPs per token (forward + backward) at this sequence length, for MFU.
  virtual double flops_per_token(int64_t seq_len) const = 0;
  /// Parameter count by the config formula (KempnerForge's num_params_estimate).
  virtual int64_t num_params_estimate() const = 0;
  /// Extra terms added to the objective after the last forward (e.g. MoE aux losses).
  virtual std::vector<std::pair<std::string, torch::Tensor>> auxiliary_losses() { return {}; }
  /// Called by the loop before each optimizer step's forward passes: `step` optimizer steps are
  /// done out of `max_steps` (for step-dependent behaviour such as router bias schedules).
  virtual void set_step(int64_t step, int64_t max_steps) {
    (void)step;
    (void)max_steps;
  }
  /// Under expert parallelism (BuildContext::expert_parallel), the parameters this rank holds a part of (its
  /// experts); every other parameter is the same on all ranks of the group.
  virtual std::vector<ExpertShard> expert_shards() const { return {}; }
  /// Under tensor parallelism (BuildContext::tensor_parallel), the parameters of which this rank holds a slice; every
  /// other parameter is the same on all ranks of the group.
  virtual std::vector<TensorShard> tensor_shards() const { return {}; }
  /// Model-specific metrics of the last step (e.g. "moe/expert_balance"), logged with train/*.
  virtual std::vector<std::pair<std::string, double>> step_metrics() { return {}; }
  /// Packed sequences ([data] pack_sequences; models declaring KFORGE_CAP_DOCUMENT_MASK): doc_ids, int64
  /// [batch, seq] and non-decreasing along each row, are the documents of the next forward()'s tokens;
  /// attention then stays within a document and positions restart at each. The host sets them before every
  /// training and evaluation forward; an undefined tensor restores plain causal attention.
  virtual void set_documents(const torch::Tensor& doc_ids) {
    if (doc_ids.defined()) {
      throw Error("model " + name() + " does not take document ids ([data] pack_sequences needs a model that does)");
    }
  }

  /// Context parallelism ([distributed] cp > 1): the host calls it once, before the first forward, with its group
  /// (valid as long as the model). From then on forward() receives this rank's positions of every sequence,
  /// sdk::context_positions(cp.rank(), cp.size(), S) of S = cp.size() * tokens.size(1), and set_documents() their
  /// document ids; the model attends over the whole sequence (e.g. ring attention over cp.pass_on()), rotates by the
  /// tokens' positions in it and returns the logits of its own positions. A model that cannot refuses.
  virtual void set_context_parallel(const ContextParallel& cp) {
    (void)cp;
    throw Error("model " + name() + " does not take context parallelism ([distributed] cp > 1 needs a model that "
                "attends over a sequence split over ranks); set cp = 1");
  }

  /// A joint-decoder vision-language model's text stack (models declaring KFORGE_CAP_EMBEDDING_PREFIX): prefix,
  /// floating [batch, P, dim], are embeddings (e.g. an adapter's image tokens) placed before those of tokens, int64
  /// [batch, S]; one causal stack runs over the P + S positions, positions counted from the prefix's first ->
  /// logits [batch, S, vocab] of the token positions only. Gradients reach prefix. Document ids are refused.
  /// prefix_padding, int64 [batch] (undefined: zeros): the first prefix_padding[b] prefix positions of row b are
  /// padding: no other position attends to them, and positions count from the first one after them, so the row's
  /// other outputs are those of the row without its padding.
  virtual torch::Tensor forward_prefixed(const torch::Tensor& prefix, const torch::Tensor& tokens,
                                         const torch::Tensor& prefix_padding = {}) {
    (void)prefix;
    (void)tokens;
    (void)prefix_padding;
    throw Error("model " + name() +
                " does not take embedding prefixes (a joint-decoder vision-language model needs one)");
  }

  /// Longest sequence the model accepts (positions), or 0 when it has no limit.
  virtual int64_t max_seq_len() const { return 0; }
  /// A fresh, empty decoding state for `batch` rows and at most `max_len` positions in total.
  virtual std::unique_ptr<DecodeState> start_decoding(int64_t batch, int64_t max_len) {
    (void)batch;
    (void)max_len;
    throw Error("model " + name() + " does not support cached decoding");
  }
  /// tokens: int64 [batch, T], appended at the state's position -> logits [batch, T, vocab]
  /// (the same as forward() over the whole sequence so far, for those T positions).
  virtual torch::Tensor decode(const torch::Tensor& tokens, DecodeState& state) {
    (void)tokens;
    (void)state;
    throw Error("model " + name() + " does not support cached decoding");
  }
  /// A new state of batch * copies rows: row b * copies + j holds what row b of `state` holds (the positions decoded
  /// so far, and room for as many more), so decode() continues each copy on its own; `state` is unchanged. The host
  /// scores several continuations of one context this way (kforge eval's shared-prefix scoring). A model that cannot
  /// refuses; the host then runs each continuation with its context through forward().
  virtual std::unique_ptr<DecodeState> fork_decoding(const DecodeState& state, int64_t copies) {
    (void)state;
    (void)copies;
    throw Error("model " + name() + " does not fork decoding states");
  }
  /// decode() with embeddings before the tokens (models declaring KFORGE_CAP_EMBEDDING_PREFIX): prefix [batch, P,
  /// dim], then tokens [batch, T], appended at the state's position -> logits [batch, T, vocab] of the token positions
  /// (the same as forward_prefixed() over the whole sequence so far, for those T positions).
  virtual torch::Tensor decode_prefixed(const torch::Tensor& prefix, const torch::Tensor& tokens, DecodeState& state) {
    (void)prefix;
    (void)tokens;
    (void)state;
    throw Error("model " + name() +
                " does not take embedding prefixes (a joint-decoder vision-language model needs one)");
  }

  /// Set by the host (an empty runner restores the default, which calls the block directly).
  void set_block_runner(BlockRunner runner) { block_runner_ = std::move(runner); }
  /// The runner installed now (empty: the default), for a host seam that wraps another.
  const BlockRunner& block_runner() const { return block_runner_; }
  /// Set by the host (an empty runner restores the default, which calls the module directly).
  void set_module_runner(ModuleRunner runner) { module_runner_ = std::move(runner); }
  /// Set by the host around a block or module it may recompute: receives what block_side_output() declares.
  void set_side_output_sink(SideOutputSink sink) { side_output_sink_ = std::move(sink); }
  /// Set by the host while it re-runs a block or module for activation checkpointing: capture() delivers
  /// nothing then (the first run delivered the values).
  void set_recomputing(bool recomputing) { recomputing_ = recomputing; }

  /// Receives captured tensors (kforge extract): the point's name, e.g. "layers.3.attn_out", and its value.
  using CaptureSink = std::function<void(const std::string& point, const torch::Tensor& value)>;
  /// Set by the host: deliver the values of `points` (hook points of the component's metadata, {layer}
  /// expanded) to `sink` during forward(); an empty sink stops capturing.
  void set_capture(std::vector<std::string> points, CaptureSink sink) {
    capture_points_ = sink ? std::move(points) : std::vector<std::string>{};
    capture_sink_ = std::move(sink);
  }

 protected:
  /// forward() must run each of blocks() through this, in order, with only that block's
  /// parameters used inside `block`. Under pipeline parallelism (KFORGE_CAP_PIPELINE) the host's runner may return
  /// another tensor than the block's output (a previous stage's) and may throw to end forward() after a block: the
  /// model must then hold no state half-changed.
  torch::Tensor run_block(size_t index, const torch::Tensor& input, const BlockFn& block) {
    return block_runner_ ? block_runner_(index, input, block) : block(input);
  }
  /// Inside block `block`'s function: runs its sub-module `module` (declared in ModelBlock::checkpointable)
  /// through the host's module seam.
  torch::Tensor run_module(size_t block, const std::string& module, const torch::Tensor& input, const BlockFn& fn) {
    return module_runner_ ? module_runner_(block, module, input, fn) : fn(input);
  }
  /// Inside a block's (or module's) function: declares `value`, computed there and kept by the model for use
  /// after it (e.g. an MoE layer's aux loss, added to the objective). When the host recomputes the unit in the
  /// backward it makes `value` an output of the recomputation, so gradients still reach the unit through it.
  void block_side_output(const torch::Tensor& value) const {
    if (side_output_sink_) side_output_sink_(value);
  }
  /// Whether any point is wanted (a cheap test before a model builds point names in its forward).
  bool capture_active() const { return static_cast<bool>(capture_sink_); }
  /// Whether `point` is wanted (lets a model skip work nobody asked for, e.g. attention probabilities).
  bool capturing(const std::string& point) const {
    for (const std::string& p : capture_points_) {
      if (p == point) return true;
    }
    return false;
  }
  /// Hands `value` (detached) to the sink when `point` is wanted.
  void capture(const std::string& point, const torch::Tensor& value) const {
    if (capture_sink_ && !recomputing_ && capturing(point)) capture_sink_(point, value.detach());
  }

 private:
  BlockRunner block_runner_;
  ModuleRunner module_runner_;
  SideOutputSink side_output_sink_;
  bool recomputing_ = false;
  std::vector<std::string> capture_points_;
  CaptureSink capture_sink_;
};

}  // namespace kforge::sdk
