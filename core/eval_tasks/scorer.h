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
  /// Shared-prefix scoring (the model's start_decoding, decode and fork_decoding), or empty: every loglikelihood
  /// request then runs whole through forward(). `shared_prefix(prefix, room)` decodes prefix, int64 [1, P] on the
  /// CPU, once and returns its continuation: int64 rows [N, T <= room] on the CPU, each decoded after its own copy of
  /// the prefix -> logits [N, T, V] of the rows' positions (those forward() gives prefix + row).
  std::function<std::function<at::Tensor(const at::Tensor&)>(const at::Tensor& prefix, int64_t room)> shared_prefix;
  /// forward() is collective over `ranks` (a training run's under FSDP or expert parallelism): every rank then runs
  /// as many forwards, in step, a rank with nothing left to score a one-token forward whose logits it drops. Needs
  /// forward() alone: no decoder nor shared_prefix.
  bool lockstep = false;
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

/// Pairs that loglikelihood() scores together.
struct ScoringUnit {
  std::vector<size_t> pairs;  ///< indices into the pairs, in lm-eval's order
  bool shared = false;        ///< one context, decoded once for all (ScoringModel::shared_prefix)
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
  /// tokens); the input is (context + continuation)[-(max_length + 1):][:-1]. With shared_prefix, the pairs of one
  /// context (two or more, of at least 2 tokens, none cut to max_length) are scored together instead: the context but
  /// its last token decoded once, then each continuation after it, batch_size rows at a time. `progress(done)` after
  /// each batch or context. Over several ranks, unit u of those (the same units as one process's) is scored by rank
  /// u mod size and the results are gathered (collective: every rank passes the same pairs).
  std::vector<LoglikelihoodResult> loglikelihood(const std::vector<TokenPair>& pairs,
                                                 const std::function<void(size_t)>& progress = nullptr) const;
  /// Greedy decoding (argmax over the tokenizer's ids) after the context's last max_length - max_gen_toks tokens,
  /// until EOS, a stop string in the decoded text, or max_gen_toks tokens; one decode step a token with a decoder.
  Generation generate_until(const std::string& context, const std::vector<std::string>& until,
                            int64_t max_gen_toks) const;
  /// generate_until() of each context; over several ranks, context r by rank r mod size and the generated tokens
  /// gathered (collective: every rank passes the same contexts). `progress(done)` after each of this rank's. In
  /// lockstep, the ranks agree after each token whether any is still generating.
  std::vector<Generation> generate_each(const std::vector<std::string>& contexts, const std::vector<std::string>& until,
                                        int64_t max_gen_toks, const std::function<void(size_t)>& progress) const;

 private:
  std::vector<int64_t> encode(const std::string& text) const;
  /// The context's last max_length - max_gen_toks tokens (the prefix token when it is empty).
  std::vector<int64_t> generation_context(const std::string& context, int64_t max_gen_toks) const;
  /// `g.tokens` decoded, and cut before each stop string.
  void finish(Generation& g, const std::vector<std::string>& until) const;
  using Step = std::function<at::Tensor(const std::vector<int64_t>&)>;
  /// One greedy token of `g`: the logits after `fresh`, their argmax appended to g.tokens (and made `fresh`) unless it
  /// is EOS. False when the generation is over (EOS, a stop string in the decoded text, max_gen_toks tokens).
  bool next_token(Generation& g, const Step& step, std::vector<int64_t>& fresh, const std::vector<std::string>& until,
                  int64_t max_gen_toks) const;
  /// generate_until() of `context` in lockstep; without a context, forwards only while another rank generates.
  Generation generate_in_step(const std::string* context, const std::vector<std::string>& until,
                              int64_t max_gen_toks) const;
  /// Lockstep: the forward of a rank with nothing to score.
  void idle_forward() const;
  /// The step of a greedy generation after `context`: the tokens appended since the last call -> the logits [V] of
  /// the last position (a decode step with a decoder, else a forward over the whole sequence so far).
  Step generation_steps(const std::vector<int64_t>& context, int64_t max_gen_toks) const;
  /// loglikelihood()'s units: the pairs scored together (one context's, or a batch of whole sequences), in order.
  std::vector<ScoringUnit> plan(const std::vector<TokenPair>& pairs, const std::vector<std::vector<int64_t>>& inputs,
                                const std::vector<size_t>& order) const;
  /// The results of a unit's pairs sharing their context, into `out`.
  void score_shared(const ScoringUnit& unit, const std::vector<TokenPair>& pairs,
                    std::vector<LoglikelihoodResult>& out) const;
  /// The results of a unit's pairs run whole (their `inputs`), into `out`.
  void score_whole(const ScoringUnit& unit, const std::vector<TokenPair>& pairs,
                   const std::vector<std::vector<int64_t>>& inputs, std::vector<LoglikelihoodResult>& out) const;
  /// Every rank's results of loglikelihood() into `results` (unit u from rank u mod size).
  void gather(std::vector<LoglikelihoodResult>& results, const std::vector<ScoringUnit>& units) const;
  size_t rank() const { return model_.ranks ? static_cast<size_t>(model_.ranks->rank()) : 0; }
  size_t ranks() const { return model_.ranks ? static_cast<size_t>(model_.ranks->size()) : 1; }
  bool lockstep() const { return model_.lockstep && ranks() > 1; }
  ScoringModel model_;
  const data::Tokenizer& tokenizer_;
};

}  // namespace kforge::eval_tasks
