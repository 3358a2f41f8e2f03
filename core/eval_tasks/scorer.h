// Scorer: lm-eval-harness's model requests (loglikelihood, rolling windows, greedy generation) over a forward function.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/tokenizer.h"
#include "dist/group.h"
#include "eval_tasks/token_windows.h"

namespace kforge::eval_tasks {

struct ScoringModel {
  /// int64 token ids [B, T] on the CPU -> logits [B, T, V] (any device and float dtype); causal, so right padding
  /// leaves the positions before it unchanged. Called without gradients, the model in eval mode.
  std::function<at::Tensor(const at::Tensor&)> forward;
  int64_t max_length = 0;  ///< tokens one forward takes (the model's max_seq_len)
  int64_t batch_size = 1;  ///< rows per forward
  /// The processes sharing the requests (`kforge eval` under `kforge launch`): each scores its share and every one
  /// gets every result, bit for bit what one process scoring them all gets. nullptr: this process alone.
  const dist::Group* ranks = nullptr;
  /// Cached decoding (the model's start_decoding/decode), or empty: generation then recomputes the whole sequence
  /// each step. `decoder(max_len)` starts one row of at most max_len positions and returns its step: int64 tokens
  /// [1, T] on the CPU appended -> logits [1, T, V] of those positions (those forward() gives the whole sequence).
  std::function<std::function<at::Tensor(const at::Tensor&)>(int64_t max_len)> decoder;
};

struct LoglikelihoodResult {
  double loglikelihood = 0;  ///< sum of the continuation tokens' log-probabilities
  bool greedy = false;       ///< every continuation token is its position's argmax
};

struct Generation {
  std::vector<int64_t> context;  ///< the context's tokens the model saw (left-truncated)
  std::vector<int64_t> tokens;   ///< generated, without EOS
  std::string decoded;           ///< tokens decoded
  std::string text;              ///< decoded, cut before the first occurrence of each stop string
};

class Scorer {
 public:
  Scorer(ScoringModel model, const data::Tokenizer& tokenizer);

  /// lm-eval's _encode_pair: trailing whitespace of the context moves to the continuation; the continuation's tokens
  /// are those of encode(context + continuation) after encode(context)'s count. An empty context is the prefix token.
  TokenPair encode_pair(const std::string& context, const std::string& continuation) const;
  /// The disjoint windows of `text` (rolling_windows of its tokens, after the prefix token, at max_length).
  std::vector<TokenPair> windows(const std::string& text) const;
  /// BOS, else EOS: what lm-eval conditions an empty context on.
  int64_t prefix_token() const;

  /// Each pair's result, batched batch_size at a time longest first (lm-eval's order: by length descending, then by
  /// tokens); the input is (context + continuation)[-(max_length + 1):][:-1]. `progress(done)` after each batch.
  /// Over several ranks, batch b (the same batches as one process's) is scored by rank b mod size and the results are
  /// gathered (collective: every rank passes the same pairs).
  std::vector<LoglikelihoodResult> loglikelihood(const std::vector<TokenPair>& pairs,
                                                 const std::function<void(size_t)>& progress = nullptr) const;
  /// Greedy decoding (argmax over the tokenizer's ids) after the context's last max_length - max_gen_toks tokens,
  /// until EOS, a stop string in the decoded text, or max_gen_toks tokens; one decode step a token with a decoder.
  Generation generate_until(const std::string& context, const std::vector<std::string>& until,
                            int64_t max_gen_toks) const;
  /// generate_until() of each context; over several ranks, context r by rank r mod size and the generated tokens
  /// gathered (collective: every rank passes the same contexts). `progress(done)` after each of this rank's.
  std::vector<Generation> generate_each(const std::vector<std::string>& contexts, const std::vector<std::string>& until,
                                        int64_t max_gen_toks, const std::function<void(size_t)>& progress) const;

 private:
  std::vector<int64_t> encode(const std::string& text) const;
  /// The context's last max_length - max_gen_toks tokens (the prefix token when it is empty).
  std::vector<int64_t> generation_context(const std::string& context, int64_t max_gen_toks) const;
  /// `g.tokens` decoded, and cut before each stop string.
  void finish(Generation& g, const std::vector<std::string>& until) const;
  /// The step of a greedy generation after `context`: the tokens appended since the last call -> the logits [V] of
  /// the last position (a decode step with a decoder, else a forward over the whole sequence so far).
  std::function<at::Tensor(const std::vector<int64_t>&)> generation_steps(const std::vector<int64_t>& context,
                                                                          int64_t max_gen_toks) const;
  /// Every rank's results of loglikelihood() into `results` (batch b of the sorted `order` from rank b mod size).
  void gather(std::vector<LoglikelihoodResult>& results, const std::vector<size_t>& order) const;
  size_t rank() const { return model_.ranks ? static_cast<size_t>(model_.ranks->rank()) : 0; }
  size_t ranks() const { return model_.ranks ? static_cast<size_t>(model_.ranks->size()) : 1; }
  ScoringModel model_;
  const data::Tokenizer& tokenizer_;
};

}  // namespace kforge::eval_tasks
