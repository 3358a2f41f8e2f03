// Scorer: padded batches of whole sequences through the forward, log-softmax in fp32 at the scored positions; greedy
// generation one cached decode step a token where the model decodes.
#include "eval_tasks/scorer.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <sstream>

#include "eval_tasks/python_text.h"
#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {

Scorer::Scorer(ScoringModel model, const data::Tokenizer& tokenizer) : model_(std::move(model)), tokenizer_(tokenizer) {
  if (model_.max_length < 2) throw sdk::Error(fmt::format("scorer: max_length {} is below 2", model_.max_length));
  if (model_.batch_size < 1) throw sdk::Error(fmt::format("scorer: batch size {} is below 1", model_.batch_size));
}

std::vector<int64_t> Scorer::encode(const std::string& text) const {
  const std::vector<int> ids = tokenizer_.encode(text);
  return {ids.begin(), ids.end()};
}

int64_t Scorer::prefix_token() const {
  const int64_t id = tokenizer_.bos_id() >= 0 ? tokenizer_.bos_id() : tokenizer_.eos_id();
  if (id < 0) throw sdk::Error(fmt::format("tokenizer {} has neither BOS nor EOS to start a document with",
                                           tokenizer_.path().string()));
  return id;
}

TokenPair Scorer::encode_pair(const std::string& context, const std::string& continuation) const {
  if (context.empty()) return {{prefix_token()}, encode(continuation)};
  const std::string stripped = py_strip(context);  // rstrip(): the leading whitespace, then the stripped text
  const size_t kept = stripped.empty() ? 0 : context.find(stripped) + stripped.size();
  const std::string ctx = context.substr(0, kept);
  std::vector<int64_t> whole = encode(ctx + context.substr(kept) + continuation);
  std::vector<int64_t> head = encode(ctx);
  const size_t n = std::min(head.size(), whole.size());
  return {std::move(head), std::vector<int64_t>(whole.begin() + static_cast<std::ptrdiff_t>(n), whole.end())};
}

std::vector<TokenPair> Scorer::windows(const std::string& text) const {
  return rolling_windows(encode(text), prefix_token(), model_.max_length);
}

std::vector<LoglikelihoodResult> Scorer::loglikelihood(const std::vector<TokenPair>& pairs,
                                                       const std::function<void(size_t)>& progress) const {
  std::vector<std::vector<int64_t>> inputs(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    const TokenPair& p = pairs[i];
    if (p.continuation.empty()) throw sdk::Error(fmt::format("scorer: request {} has an empty continuation", i));
    if (static_cast<int64_t>(p.continuation.size()) > model_.max_length) {
      throw sdk::Error(fmt::format("scorer: a continuation of {} tokens is longer than the model's max_seq_len {}",
                                   p.continuation.size(), model_.max_length));
    }
    std::vector<int64_t> whole = p.context;
    whole.insert(whole.end(), p.continuation.begin(), p.continuation.end());
    const size_t keep = std::min(whole.size(), static_cast<size_t>(model_.max_length + 1));
    inputs[i].assign(whole.end() - static_cast<std::ptrdiff_t>(keep), whole.end() - 1);
  }
  std::vector<size_t> order(pairs.size());
  std::iota(order.begin(), order.end(), 0);
  const auto full = [&](size_t i) { return inputs[i].size() + 1; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (full(a) != full(b)) return full(a) > full(b);
    if (inputs[a] != inputs[b]) return inputs[a] < inputs[b];
    return pairs[a].continuation.back() < pairs[b].continuation.back();
  });
  std::vector<LoglikelihoodResult> out(pairs.size());
  at::NoGradGuard no_grad;
  const auto batch = static_cast<size_t>(model_.batch_size);
  for (size_t start = rank() * batch; start < order.size(); start += ranks() * batch) {
    const size_t end = std::min(order.size(), start + batch);
    const auto rows = static_cast<int64_t>(end - start);
    const auto width = static_cast<int64_t>(inputs[order[start]].size());  // the longest: sorted descending
    at::Tensor tokens = at::zeros({rows, width}, at::kLong);
    for (int64_t r = 0; r < rows; ++r) {
      const auto& in = inputs[order[start + r]];
      std::copy(in.begin(), in.end(), tokens[r].data_ptr<int64_t>());
    }
    const at::Tensor logits = model_.forward(tokens);
    for (int64_t r = 0; r < rows; ++r) {
      const size_t i = order[start + r];
      const auto& cont = pairs[i].continuation;
      const auto c = static_cast<int64_t>(cont.size());
      const auto len = static_cast<int64_t>(inputs[i].size());
      const at::Tensor logprobs = logits[r].narrow(0, len - c, c).to(at::kFloat).log_softmax(-1).cpu();
      const at::Tensor target = at::tensor(cont, at::kLong);
      const at::Tensor picked = logprobs.gather(1, target.unsqueeze(1)).squeeze(1).to(at::kDouble);
      out[i] = {picked.sum().item<double>(), logprobs.argmax(-1).equal(target)};
    }
    if (progress) progress(end);
  }
  if (ranks() > 1) gather(out, order);
  return out;
}

void Scorer::gather(std::vector<LoglikelihoodResult>& results, const std::vector<size_t>& order) const {
  at::Tensor mine = at::zeros({static_cast<int64_t>(results.size()), 2}, at::kDouble);
  auto put = mine.accessor<double, 2>();
  for (size_t i = 0; i < results.size(); ++i) {
    put[static_cast<int64_t>(i)][0] = results[i].loglikelihood;
    put[static_cast<int64_t>(i)][1] = results[i].greedy ? 1.0 : 0.0;
  }
  std::vector<at::Tensor> all = model_.ranks->all_gather(mine);
  const auto batch = static_cast<size_t>(model_.batch_size);
  for (size_t k = 0; k < order.size(); ++k) {
    const auto got = all[(k / batch) % ranks()].accessor<double, 2>();
    const auto i = static_cast<int64_t>(order[k]);
    results[order[k]] = {got[i][0], got[i][1] != 0.0};
  }
}

std::vector<int64_t> Scorer::generation_context(const std::string& context, int64_t max_gen_toks) const {
  if (max_gen_toks >= model_.max_length) {
    throw sdk::Error(fmt::format("max_gen_toks {} leaves no room for a context in the model's max_seq_len {}",
                                 max_gen_toks, model_.max_length));
  }
  std::vector<int64_t> tokens = context.empty() ? std::vector<int64_t>{prefix_token()} : encode(context);
  const auto room = static_cast<size_t>(model_.max_length - max_gen_toks);
  if (tokens.size() > room) tokens.erase(tokens.begin(), tokens.end() - static_cast<std::ptrdiff_t>(room));
  return tokens;
}

void Scorer::finish(Generation& g, const std::vector<std::string>& until) const {
  g.decoded = tokenizer_.decode(g.tokens);
  g.text = g.decoded;
  for (const std::string& stop : until) {
    if (!stop.empty()) g.text = g.text.substr(0, g.text.find(stop));
  }
}

std::function<at::Tensor(const std::vector<int64_t>&)> Scorer::generation_steps(const std::vector<int64_t>& context,
                                                                                int64_t max_gen_toks) const {
  if (model_.decoder) {
    auto step = model_.decoder(static_cast<int64_t>(context.size()) + max_gen_toks);
    return [step](const std::vector<int64_t>& fresh) { return step(at::tensor(fresh, at::kLong).unsqueeze(0))[0][-1]; };
  }
  return [this, sequence = std::vector<int64_t>()](const std::vector<int64_t>& fresh) mutable {
    sequence.insert(sequence.end(), fresh.begin(), fresh.end());
    return model_.forward(at::tensor(sequence, at::kLong).unsqueeze(0))[0][-1];
  };
}

Generation Scorer::generate_until(const std::string& context, const std::vector<std::string>& until,
                                  int64_t max_gen_toks) const {
  Generation g;
  g.context = generation_context(context, max_gen_toks);
  const int64_t vocab = tokenizer_.vocab_size();
  at::NoGradGuard no_grad;
  const auto step = generation_steps(g.context, max_gen_toks);
  std::vector<int64_t> fresh = g.context;
  for (int64_t n = 0; n < max_gen_toks; ++n) {
    const at::Tensor last = step(fresh);
    const int64_t next = last.narrow(0, 0, std::min(vocab, last.size(0))).argmax().item<int64_t>();
    if (next == tokenizer_.eos_id()) break;
    g.tokens.push_back(next);
    fresh = {next};
    const std::string text = tokenizer_.decode(g.tokens);
    if (std::any_of(until.begin(), until.end(),
                    [&](const std::string& stop) { return !stop.empty() && text.find(stop) != std::string::npos; })) {
      break;
    }
  }
  finish(g, until);
  return g;
}

std::vector<Generation> Scorer::generate_each(const std::vector<std::string>& contexts,
                                              const std::vector<std::string>& until, int64_t max_gen_toks,
                                              const std::function<void(size_t)>& progress) const {
  std::vector<Generation> out(contexts.size());
  std::string mine;  // this rank's generated ids: one line per request, in request order
  for (size_t r = rank(); r < contexts.size(); r += ranks()) {
    out[r] = generate_until(contexts[r], until, max_gen_toks);
    for (const int64_t id : out[r].tokens) mine += std::to_string(id) + " ";
    mine += "\n";
    if (progress) progress(r + 1);
  }
  if (ranks() == 1) return out;
  const std::vector<std::string> all = model_.ranks->all_gather_strings(mine);
  for (size_t member = 0; member < ranks(); ++member) {
    if (member == rank()) continue;
    std::istringstream lines(all[member]);
    std::string line;
    for (size_t r = member; r < contexts.size() && std::getline(lines, line); r += ranks()) {
      std::istringstream ids(line);
      out[r].context = generation_context(contexts[r], max_gen_toks);
      for (int64_t id = 0; ids >> id;) out[r].tokens.push_back(id);
      finish(out[r], until);
    }
  }
  return out;
}

}  // namespace kforge::eval_tasks
