// Packed against unpacked ([data] pack_sequences): the cost of a training step's forward + backward of the
// built-in transformer with document-masked attention, against the same shape with plain causal attention,
// for each attention kernel; and of the attention kernels alone. A measurement, not a test (benchmarks/README.md).
//
//   build/tests/plugins/models/bench_packing [--batch B] [--seq S] [--dim D] [--layers L] [--heads H]
//                                            [--vocab V] [--steps N] [--threads T]
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
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "transformer/attention.h"
#include "transformer/document_starts.h"
#include "transformer/flash_attention.h"
#include "transformer/model_config.h"
#include "transformer/transformer.h"

namespace {

using kforge::builtin::models::ModelConfig;
using kforge::builtin::models::Transformer;

struct Options {
  int64_t batch = 4, seq = 512, dim = 256, layers = 4, heads = 4, vocab = 8000, steps = 6;
  int64_t threads = 0;  ///< 0: LibTorch's default
};

Options parse(int argc, char** argv) {
  Options o;
  const std::map<std::string, int64_t*> fields = {
      {"--batch", &o.batch}, {"--seq", &o.seq},     {"--dim", &o.dim},     {"--layers", &o.layers},
      {"--heads", &o.heads}, {"--vocab", &o.vocab}, {"--steps", &o.steps}, {"--threads", &o.threads}};
  for (int i = 1; i + 1 < argc; i += 2) {
    const auto field = fields.find(argv[i]);
    if (field == fields.end()) throw std::runtime_error(std::string("unknown option ") + argv[i]);
    *field->second = std::atoll(argv[i + 1]);
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

using Layouts = std::vector<std::pair<std::string, at::Tensor>>;  ///< name, document ids

double seconds(const std::function<void()>& body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Median seconds of run(l) for l = -1 (unpacked) and each layout index, after one warm-up round; the layouts
// take turns within each of the `steps` rounds, so a change of machine load hits them alike.
std::vector<double> median_seconds(int64_t steps, size_t layouts, const std::function<void(int)>& run) {
  std::vector<std::vector<double>> times(layouts + 1);
  for (int64_t round = -1; round < steps; ++round) {
    for (size_t l = 0; l <= layouts; ++l) {
      const double t = seconds([&] { run(static_cast<int>(l) - 1); });
      if (round >= 0) times[l].push_back(t);
    }
  }
  std::vector<double> out;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    out.push_back(t[t.size() / 2]);
  }
  return out;
}

// "name unpacked T | layout T (packed / unpacked) | ...", times in ms.
std::string timing_line(const std::string& name, const std::vector<double>& t, const Layouts& layouts) {
  std::string line = fmt::format("  {:<15} unpacked {:8.2f}", name, t[0] * 1e3);
  for (size_t l = 0; l < layouts.size(); ++l) {
    line += fmt::format(" | {} {:8.2f} ({:.2f}x)", layouts[l].first, t[l + 1] * 1e3, t[l + 1] / t[0]);
  }
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.threads > 0) at::set_num_threads(static_cast<int>(o.threads));
  at::manual_seed(0);
  const Layouts layouts = {
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
  std::vector<at::Tensor> starts;
  for (const auto& layout : layouts) starts.push_back(kforge::builtin::models::document_starts(layout.second));
  for (const auto& [kernel, attend] : kernels) {
    const std::vector<double> t = median_seconds(
        o.steps, layouts.size(), [&](int l) { attend(l < 0 ? at::Tensor() : starts[l]).sum().backward(); });
    fmt::print("{}\n", timing_line(kernel, t, layouts));
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
    const std::vector<double> t = median_seconds(o.steps, layouts.size(), [&](int l) {
      model.set_documents(l < 0 ? at::Tensor() : layouts[l].second);
      model.zero_grad();
      at::cross_entropy_loss(model.forward(tokens).reshape({-1, o.vocab}), labels.reshape({-1})).backward();
    });
    fmt::print("{}\n", timing_line(backend == "flash" ? "flash" : fused ? "math fused" : "math composite", t, layouts));
  }
  return 0;
}
