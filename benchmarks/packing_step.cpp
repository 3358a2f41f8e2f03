// Packed against unpacked ([data] pack_sequences): the cost of a training step's forward + backward of the
// built-in transformer with document-masked attention, against the same shape with plain causal attention,
// for each attention kernel; and of the attention kernels alone. A measurement, not a test (benchmarks/README.md).
//
//   build/tests/plugins/models/bench_packing [--batch B] [--seq S] [--dim D] [--layers L] [--heads H] [--vocab V]
//   [--steps N]
//
// Rows are packed with documents of a fixed mean length (geometric lengths, seeded); "1 doc" is a packed row
// of one document: the cost of the document machinery when it masks nothing.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "attention.h"
#include "documents.h"
#include "flash_attention.h"
#include "model_config.h"
#include "transformer.h"

namespace {

using kforge::builtin::models::ModelConfig;
using kforge::builtin::models::Transformer;

struct Options {
  int64_t batch = 4, seq = 512, dim = 256, layers = 4, heads = 4, vocab = 8000, steps = 6;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const int64_t value = std::atoll(argv[i + 1]);
    if (key == "--batch")
      o.batch = value;
    else if (key == "--seq")
      o.seq = value;
    else if (key == "--dim")
      o.dim = value;
    else if (key == "--layers")
      o.layers = value;
    else if (key == "--heads")
      o.heads = value;
    else if (key == "--vocab")
      o.vocab = value;
    else if (key == "--steps")
      o.steps = value;
    else
      throw std::runtime_error("unknown option " + key);
  }
  return o;
}

// Document ids of `batch` rows of `seq` tokens whose documents have geometric lengths of mean `mean_length`.
at::Tensor packed_ids(int64_t batch, int64_t seq, int64_t mean_length) {
  at::Tensor ids = at::zeros({batch, seq}, at::kLong);
  const at::Tensor ends = at::rand({batch, seq}).lt(1.0 / static_cast<double>(mean_length));
  ids.narrow(1, 1, seq - 1).copy_(ends.narrow(1, 0, seq - 1).to(at::kLong).cumsum(1));
  return ids;
}

// Median seconds of `steps` runs of `body` after one warm-up run.
double median_seconds(int64_t steps, const std::function<void()>& body) {
  body();
  std::vector<double> times;
  for (int64_t i = 0; i < steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  at::manual_seed(0);
  const std::vector<std::pair<std::string, at::Tensor>> layouts = {
      {"1 doc", at::zeros({o.batch, o.seq}, at::kLong)},
      {fmt::format("docs ~{}", o.seq / 2), packed_ids(o.batch, o.seq, o.seq / 2)},
      {"docs ~128", packed_ids(o.batch, o.seq, 128)},
      {"docs ~32", packed_ids(o.batch, o.seq, 32)},
  };
  fmt::print("batch {} x seq {}, dim {}, {} layers, {} heads, vocab {}, fp32, {} threads; median of {} steps\n",
             o.batch, o.seq, o.dim, o.layers, o.heads, o.vocab, at::get_num_threads(), o.steps);
  for (const auto& [name, ids] : layouts) {
    fmt::print("  {:<10} {} documents in all\n", name, (ids.select(1, o.seq - 1) + 1).sum().item<int64_t>());
  }

  // The attention kernels alone: forward + backward of (B, H, S, hd) q/k/v.
  fmt::print("\nattention kernel, forward + backward (ms; packed / unpacked)\n");
  const int64_t hd = o.dim / o.heads;
  const at::Tensor q = at::randn({o.batch, o.heads, o.seq, hd}).requires_grad_();
  const at::Tensor k = at::randn({o.batch, o.heads, o.seq, hd}).requires_grad_();
  const at::Tensor v = at::randn({o.batch, o.heads, o.seq, hd}).requires_grad_();
  using Kernel = std::function<at::Tensor(const at::Tensor&)>;  // doc starts -> output
  const std::vector<std::pair<std::string, Kernel>> kernels = {
      {"flash", [&](const at::Tensor& s) { return kforge::builtin::models::flash_attention(q, k, v, {}, s); }},
      {"math fused", [&](const at::Tensor& s) { return kforge::builtin::models::causal_attention(q, k, v, true, s); }},
      {"math composite",
       [&](const at::Tensor& s) { return kforge::builtin::models::causal_attention(q, k, v, false, s); }},
  };
  for (const auto& [kernel, attend] : kernels) {
    const auto time = [&](const at::Tensor& starts) {
      return median_seconds(o.steps, [&] { attend(starts).sum().backward(); });
    };
    const double plain = time(at::Tensor());
    std::string line = fmt::format("  {:<15} unpacked {:7.2f}", kernel, plain * 1e3);
    for (const auto& [name, ids] : layouts) {
      const double packed = time(kforge::builtin::models::document_starts(ids));
      line += fmt::format(" | {} {:7.2f} ({:.2f}x)", name, packed * 1e3, packed / plain);
    }
    fmt::print("{}\n", line);
  }

  // The whole model: forward, cross-entropy, backward (the optimizer step is the same either way).
  fmt::print("\ntraining step forward + backward (ms; packed / unpacked)\n");
  for (const auto& [backend, fused] :
       std::vector<std::pair<std::string, bool>>{{"flash", true}, {"math", true}, {"math", false}}) {
    ModelConfig c;
    c.dim = o.dim;
    c.n_layers = o.layers;
    c.n_heads = c.n_kv_heads = o.heads;
    c.vocab_size = o.vocab;
    c.max_seq_len = o.seq;
    c.sdpa_backend = backend;
    c.fused_kernels = fused;
    Transformer model(c);
    const at::Tensor tokens = at::randint(0, o.vocab, {o.batch, o.seq}, at::kLong);
    const at::Tensor labels = at::randint(0, o.vocab, {o.batch, o.seq}, at::kLong);
    const auto time = [&](const at::Tensor& ids) {
      model.set_documents(ids);
      return median_seconds(o.steps, [&] {
        model.zero_grad();
        at::cross_entropy_loss(model.forward(tokens).reshape({-1, o.vocab}), labels.reshape({-1})).backward();
      });
    };
    const double plain = time(at::Tensor());
    const std::string kernel = backend == "flash" ? "flash" : fused ? "math fused" : "math composite";
    std::string line = fmt::format("  {:<15} unpacked {:7.1f}", kernel, plain * 1e3);
    for (const auto& [name, ids] : layouts) {
      const double packed = time(ids);
      line += fmt::format(" | {} {:7.1f} ({:.2f}x)", name, packed * 1e3, packed / plain);
    }
    fmt::print("{}\n", line);
  }
  return 0;
}
