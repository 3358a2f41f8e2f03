// Scorer: padded batches of whole sequences through the forward, or a context decoded once and its continuations
// after copies of it; log-softmax in fp32 at the scored positions; greedy generation one cached decode step a token
// where the model decodes.
#include "eval_tasks/scorer.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>

#include "eval_tasks/python_text.h"
#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {

Scorer::Scorer(ScoringModel model, const data::Tokenizer& tokenizer) : model_(std::move(model)), tokenizer_(tokenizer) {
  if (model_.max_length < 2) throw sdk::Error(fmt::format("scorer: max_length {} is below 2", model_.max_length));
  if (model_.batch_size < 1) throw sdk::Error(fmt::format("scorer: batch size {} is below 1", model_.batch_size));
  if (model_.lockstep && (model_.decoder || model_.shared_prefix)) {
    throw sdk::Error("scorer: ranks in lockstep score through forward() alone (no cached decoding, no shared prefix)");
  }
}

void Scorer::idle_forward() const { model_.forward(at::zeros({1, 1}, at::kLong)); }

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

namespace {

/// The result of continuation `cont` from the logits [c, V] of the positions that predict its tokens.
LoglikelihoodResult score_positions(const at::Tensor& logits, const std::vector<int64_t>& cont) {
  const at::Tensor logprobs = logits.to(at::kFloat).log_softmax(-1).cpu();
  const at::Tensor target = at::tensor(cont, at::kLong);
  const at::Tensor picked = logprobs.gather(1, target.unsqueeze(1)).squeeze(1).to(at::kDouble);
  return {picked.sum().item<double>(), logprobs.argmax(-1).equal(target)};
}

/// Rows of equal width (the first row's, the longest), right-padded with zeros: int64 [rows, width] on the CPU.
at::Tensor padded_rows(const std::vector<std::vector<int64_t>>& rows, int64_t width) {
  at::Tensor tokens = at::zeros({static_cast<int64_t>(rows.size()), width}, at::kLong);
  for (size_t r = 0; r < rows.size(); ++r) {
    std::copy(rows[r].begin(), rows[r].end(), tokens[static_cast<int64_t>(r)].data_ptr<int64_t>());
  }
  return tokens;
}

}  // namespace

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
  const std::vector<ScoringUnit> units = plan(pairs, inputs, order);
  std::vector<size_t> done(units.size());  // requests in units [0, u]
  for (size_t u = 0, sum = 0; u < units.size(); ++u) done[u] = sum += units[u].pairs.size();
  std::vector<LoglikelihoodResult> out(pairs.size());
  at::NoGradGuard no_grad;
  const size_t rounds = (units.size() + ranks() - 1) / ranks();
  for (size_t u = rank(); u < (lockstep() ? rounds * ranks() : units.size()); u += ranks()) {
    if (u >= units.size()) {
      idle_forward();
      continue;
    }
    if (units[u].shared) {
      score_shared(units[u], pairs, out);
    } else {
      score_whole(units[u], pairs, inputs, out);
    }
    if (progress) progress(done[u]);
  }
  if (ranks() > 1) gather(out, units);
  return out;
}

std::vector<ScoringUnit> Scorer::plan(const std::vector<TokenPair>& pairs,
                                      const std::vector<std::vector<int64_t>>& inputs,
                                      const std::vector<size_t>& order) const {
  std::vector<ScoringUnit> units;
  std::vector<size_t> whole;  // the pairs run whole, in order
  if (model_.shared_prefix) {
    // A context's pairs, where none was cut (its input is the whole context and continuation but the last token).
    std::map<std::vector<int64_t>, std::vector<size_t>> by_context;
    std::vector<const std::vector<int64_t>*> contexts;  // in order of first appearance
    for (const size_t i : order) {
      const TokenPair& p = pairs[i];
      if (p.context.size() < 2 || inputs[i].size() + 1 != p.context.size() + p.continuation.size()) continue;
      auto [it, fresh] = by_context.try_emplace(p.context);
      if (fresh) contexts.push_back(&it->first);
      it->second.push_back(i);
    }
    std::vector<bool> shared(pairs.size(), false);
    for (const auto* context : contexts) {
      const std::vector<size_t>& members = by_context.at(*context);
      if (members.size() < 2) continue;
      units.push_back({members, true});
      for (const size_t i : members) shared[i] = true;
    }
    for (const size_t i : order) {
      if (!shared[i]) whole.push_back(i);
    }
  } else {
    whole = order;
  }
  const auto batch = static_cast<size_t>(model_.batch_size);
  for (size_t start = 0; start < whole.size(); start += batch) {
    const auto first = whole.begin() + static_cast<std::ptrdiff_t>(start);
    units.push_back({{first, first + static_cast<std::ptrdiff_t>(std::min(batch, whole.size() - start))}, false});
  }
  return units;
}

void Scorer::score_shared(const ScoringUnit& unit, const std::vector<TokenPair>& pairs,
                          std::vector<LoglikelihoodResult>& out) const {
  // The prefix is the context but its last token; each row is that token and the continuation but its last, so
  // row position k predicts continuation token k.
  const std::vector<int64_t>& context = pairs[unit.pairs.front()].context;
  size_t room = 0;
  for (const size_t i : unit.pairs) room = std::max(room, pairs[i].continuation.size());
  const auto step = model_.shared_prefix(
      at::tensor(std::vector<int64_t>(context.begin(), context.end() - 1), at::kLong).unsqueeze(0),
      static_cast<int64_t>(room));
  const auto batch = static_cast<size_t>(model_.batch_size);
  for (size_t start = 0; start < unit.pairs.size(); start += batch) {
    const size_t end = std::min(unit.pairs.size(), start + batch);
    std::vector<std::vector<int64_t>> rows;
    size_t width = 0;
    for (size_t k = start; k < end; ++k) {
      const std::vector<int64_t>& cont = pairs[unit.pairs[k]].continuation;
      rows.push_back({context.back()});
      rows.back().insert(rows.back().end(), cont.begin(), cont.end() - 1);
      width = std::max(width, rows.back().size());
    }
    const at::Tensor logits = step(padded_rows(rows, static_cast<int64_t>(width)));
    for (size_t k = start; k < end; ++k) {
      const std::vector<int64_t>& cont = pairs[unit.pairs[k]].continuation;
      out[unit.pairs[k]] =
          score_positions(logits[static_cast<int64_t>(k - start)].narrow(0, 0, static_cast<int64_t>(cont.size())), cont);
    }
  }
}

void Scorer::score_whole(const ScoringUnit& unit, const std::vector<TokenPair>& pairs,
                         const std::vector<std::vector<int64_t>>& inputs, std::vector<LoglikelihoodResult>& out) const {
  std::vector<std::vector<int64_t>> rows;
  for (const size_t i : unit.pairs) rows.push_back(inputs[i]);
  const at::Tensor logits = model_.forward(padded_rows(rows, static_cast<int64_t>(rows.front().size())));
  for (size_t r = 0; r < unit.pairs.size(); ++r) {
    const size_t i = unit.pairs[r];
    const auto c = static_cast<int64_t>(pairs[i].continuation.size());
    const auto len = static_cast<int64_t>(inputs[i].size());
    out[i] = score_positions(logits[static_cast<int64_t>(r)].narrow(0, len - c, c), pairs[i].continuation);
  }
}

void Scorer::gather(std::vector<LoglikelihoodResult>& results, const std::vector<ScoringUnit>& units) const {
  at::Tensor mine = at::zeros({static_cast<int64_t>(results.size()), 2}, at::kDouble);
  auto put = mine.accessor<double, 2>();
  for (size_t i = 0; i < results.size(); ++i) {
    put[static_cast<int64_t>(i)][0] = results[i].loglikelihood;
    put[static_cast<int64_t>(i)][1] = results[i].greedy ? 1.0 : 0.0;
  }
  std::vector<at::Tensor> all = model_.ranks->all_gather(mine);
  for (size_t u = 0; u < units.size(); ++u) {
    const auto got = all[u % ranks()].accessor<double, 2>();
    for (const size_t i : units[u].pairs) {
      results[i] = {got[static_cast<int64_t>(i)][0], got[static_cast<int64_t>(i)][1] != 0.0};
    }
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

Scorer::Step Scorer::generation_steps(const std::vector<int64_t>& context, int64_t max_gen_toks) const {
  if (model_.decoder) {
    auto step = model_.decoder(static_cast<int64_t>(context.size()) + max_gen_toks);
    return [step](const std::vector<int64_t>& fresh) { return step(at::tensor(fresh, at::kLong).unsqueeze(0))[0][-1]; };
  }
  return [this, sequence = std::vector<int64_t>()](const std::vector<int64_t>& fresh) mutable {
    sequence.insert(sequence.end(), fresh.begin(), fresh.end());
    return model_.forward(at::tensor(sequence, at::kLong).unsqueeze(0))[0][-1];
  };
}

bool Scorer::next_token(Generation& g, const Step& step, std::vector<int64_t>& fresh,
                        const std::vector<std::string>& until, int64_t max_gen_toks) const {
  const at::Tensor last = step(fresh);
  const int64_t next = last.narrow(0, 0, std::min<int64_t>(tokenizer_.vocab_size(), last.size(0))).argmax().item<int64_t>();
  if (next == tokenizer_.eos_id()) return false;
  g.tokens.push_back(next);
  fresh = {next};
  const std::string text = tokenizer_.decode(g.tokens);
  return static_cast<int64_t>(g.tokens.size()) < max_gen_toks &&
         std::none_of(until.begin(), until.end(),
                      [&](const std::string& stop) { return !stop.empty() && text.find(stop) != std::string::npos; });
}

Generation Scorer::generate_until(const std::string& context, const std::vector<std::string>& until,
                                  int64_t max_gen_toks) const {
  Generation g;
  g.context = generation_context(context, max_gen_toks);
  at::NoGradGuard no_grad;
  const Step step = generation_steps(g.context, max_gen_toks);
  std::vector<int64_t> fresh = g.context;
  for (bool going = max_gen_toks > 0; going;) going = next_token(g, step, fresh, until, max_gen_toks);
  finish(g, until);
  return g;
}

Generation Scorer::generate_in_step(const std::string* context, const std::vector<std::string>& until,
                                    int64_t max_gen_toks) const {
  Generation g;
  Step step;
  std::vector<int64_t> fresh;
  if (context) {
    g.context = generation_context(*context, max_gen_toks);
    step = generation_steps(g.context, max_gen_toks);
    fresh = g.context;
  }
  at::NoGradGuard no_grad;
  bool going = context && max_gen_toks > 0;
  for (;;) {
    at::Tensor any = at::full({1}, going ? 1.0 : 0.0, at::kDouble);
    model_.ranks->all_reduce(any, dist::Reduce::Max);
    if (any.item<double>() == 0.0) break;
    if (going) {
      going = next_token(g, step, fresh, until, max_gen_toks);
    } else {
      idle_forward();
    }
  }
  if (context) finish(g, until);
  return g;
}

std::vector<Generation> Scorer::generate_each(const std::vector<std::string>& contexts,
                                              const std::vector<std::string>& until, int64_t max_gen_toks,
                                              const std::function<void(size_t)>& progress) const {
  std::vector<Generation> out(contexts.size());
  std::string mine;  // this rank's generated ids: one line per request, in request order
  const size_t rounds = (contexts.size() + ranks() - 1) / ranks();
  for (size_t r = rank(); r < (lockstep() ? rounds * ranks() : contexts.size()); r += ranks()) {
    if (r >= contexts.size()) {
      generate_in_step(nullptr, until, max_gen_toks);
      continue;
    }
    out[r] = lockstep() ? generate_in_step(&contexts[r], until, max_gen_toks)
                             : generate_until(contexts[r], until, max_gen_toks);
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
