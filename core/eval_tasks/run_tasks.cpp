// run_tasks: requests per task, one batched scoring pass per task, per-document scores, metrics, groups, the table.
#include "eval_tasks/run_tasks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "eval_tasks/requests.h"
#include "eval_tasks/task_metrics.h"
#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {
namespace {

using nlohmann::json;

using Progress = std::function<void(const std::string&)>;

json stderr_json(const MetricValue& v) { return v.stderr_value ? json(*v.stderr_value) : json("N/A"); }

void report(const Progress& progress, const std::string& task, size_t done, size_t total) {
  if (progress) progress(fmt::format("{}: {}/{} requests", task, done, total));
}

/// Every loglikelihood request of the task (a rolling document: its windows) scored in one batched pass.
std::vector<DocScore> score_loglikelihoods(const TaskSpec& task, const std::vector<Request>& requests, size_t docs,
                                           const Scorer& scorer, std::vector<json>* samples,
                                           const Progress& progress) {
  const bool rolling = task.output_type == OutputType::LoglikelihoodRolling;
  std::vector<TokenPair> pairs;
  std::vector<size_t> owner;  // the request of each pair
  for (size_t r = 0; r < requests.size(); ++r) {
    std::vector<TokenPair> mine = rolling ? scorer.windows(requests[r].continuation)
                                          : std::vector{scorer.encode_pair(requests[r].context, requests[r].continuation)};
    for (TokenPair& pair : mine) {
      pairs.push_back(std::move(pair));
      owner.push_back(r);
    }
  }
  report(progress, task.name, 0, pairs.size());
  const size_t step = std::max<size_t>(1, pairs.size() / 10);
  size_t next_report = step;
  const auto results = scorer.loglikelihood(pairs, [&](size_t done) {
    if (done >= next_report || done == pairs.size()) {
      report(progress, task.name, done, pairs.size());
      next_report = done + step;
    }
  });
  std::vector<DocScore> scores(docs);
  for (size_t p = 0; p < pairs.size(); ++p) {
    const Request& req = requests[owner[p]];
    DocScore& s = scores[req.doc];
    if (rolling && !s.loglikelihoods.empty()) {
      s.loglikelihoods[0] += results[p].loglikelihood;
      s.greedy[0] = s.greedy[0] && results[p].greedy;
    } else {
      s.loglikelihoods.push_back(results[p].loglikelihood);
      s.greedy.push_back(results[p].greedy);
    }
    s.tokens += static_cast<int64_t>(pairs[p].continuation.size());
    if (samples) {
      samples->push_back({{"task", task.name},
                          {"doc_id", req.doc},
                          {"option", req.option},
                          {"context", req.context},
                          {"continuation", req.continuation},
                          {"context_tokens", pairs[p].context},
                          {"continuation_tokens", pairs[p].continuation},
                          {"loglikelihood", results[p].loglikelihood},
                          {"is_greedy", results[p].greedy}});
    }
  }
  return scores;
}

std::vector<DocScore> score_generations(const TaskSpec& task, const std::vector<Request>& requests,
                                        const Scorer& scorer, std::vector<json>* samples, const Progress& progress) {
  std::vector<std::string> contexts;
  for (const Request& request : requests) contexts.push_back(request.context);
  const size_t step = std::max<size_t>(1, requests.size() / 10);
  const std::vector<Generation> generations =
      scorer.generate_each(contexts, task.until, task.max_gen_toks, [&](size_t done) {
        if (done % step == 0 || done == requests.size()) report(progress, task.name, done, requests.size());
      });
  std::vector<DocScore> scores(requests.size());
  for (size_t r = 0; r < requests.size(); ++r) {
    const Generation& g = generations[r];
    scores[r].generated = g.text;
    if (samples) {
      samples->push_back({{"task", task.name},
                          {"doc_id", requests[r].doc},
                          {"context", requests[r].context},
                          {"context_tokens", g.context},
                          {"generated_tokens", g.tokens},
                          {"decoded", g.decoded},
                          {"generated", g.text},
                          {"answer", task.docs[requests[r].doc].answer}});
    }
  }
  return scores;
}

json task_config(const TaskSpec& task, int64_t num_fewshot) {
  return {{"task", task.name},
          {"group", task.group},
          {"output_type", output_type_name(task.output_type)},
          {"num_fewshot", num_fewshot},
          {"description", task.description},
          {"target_delimiter", task.target_delimiter},
          {"fewshot_delimiter", task.fewshot_delimiter},
          {"until", task.until},
          {"max_gen_toks", task.max_gen_toks},
          {"metric_list", task.metrics}};
}

}  // namespace

nlohmann::json run_tasks(const std::vector<TaskSpec>& tasks, const Scorer& scorer, const RunOptions& options,
                         std::vector<nlohmann::json>* samples, const Progress& progress) {
  json out = {{"results", json::object()},         {"groups", json::object()},   {"group_subtasks", json::object()},
              {"configs", json::object()},         {"versions", json::object()}, {"n-shot", json::object()},
              {"higher_is_better", json::object()}, {"n-samples", json::object()}};
  // group -> metric -> the subtasks' values and sizes
  std::map<std::string, std::map<std::string, std::pair<std::vector<MetricValue>, std::vector<int64_t>>>> groups;
  for (const TaskSpec& task : tasks) {
    const bool rolling = task.output_type == OutputType::LoglikelihoodRolling;
    const int64_t shots = rolling ? 0 : options.num_fewshot.value_or(task.num_fewshot);
    const std::vector<Request> requests = build_requests(task, shots, options.limit, options.seed);
    const size_t docs = options.limit == 0 ? task.docs.size() : std::min(options.limit, task.docs.size());
    const std::vector<DocScore> scores =
        task.output_type == OutputType::GenerateUntil
            ? score_generations(task, requests, scorer, samples, progress)
            : score_loglikelihoods(task, requests, docs, scorer, samples, progress);
    json result = {{"alias", task.name}};
    json better = json::object();
    for (const auto& [metric, value] : task_metrics(task, scores, options.bootstrap_iters)) {
      result[metric + ",none"] = value.value;
      result[metric + "_stderr,none"] = stderr_json(value);
      better[metric] = value.higher_is_better;
      if (!task.group.empty() && value.higher_is_better) {
        auto& [values, sizes] = groups[task.group][metric];
        values.push_back(value);
        sizes.push_back(static_cast<int64_t>(docs));
      }
    }
    out["results"][task.name] = result;
    out["configs"][task.name] = task_config(task, shots);
    out["versions"][task.name] = task.version;
    out["n-shot"][task.name] = shots;
    out["higher_is_better"][task.name] = better;
    out["n-samples"][task.name] = {{"original", task.docs.size()}, {"effective", docs}};
    if (!task.group.empty()) out["group_subtasks"][task.group].push_back(task.name);
  }
  for (const auto& [group, metrics] : groups) {
    json result = {{"alias", group}};
    for (const auto& [metric, values_sizes] : metrics) {
      const MetricValue v = pooled_mean(values_sizes.first, values_sizes.second);
      result[metric + ",none"] = v.value;
      result[metric + "_stderr,none"] = stderr_json(v);
    }
    out["results"][group] = result;
    out["groups"][group] = result;
  }
  return out;
}

std::vector<std::string> split_task_names(const std::string& list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    if (name.empty()) throw sdk::ConfigError(fmt::format("task list \"{}\" has an empty name", list));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    start = comma + 1;
  }
  return names;
}

std::string results_table(const nlohmann::json& results) {
  std::string table = "|Tasks|Version|n-shot|Metric|Value|Stderr|\n|---|---|---|---|---:|---:|\n";
  for (const auto& [name, metrics] : results.at("results").items()) {
    const bool group = results.at("groups").contains(name);
    for (const auto& [key, value] : metrics.items()) {
      if (key == "alias" || key.find("_stderr,") != std::string::npos) continue;
      const std::string metric = key.substr(0, key.find(','));
      const json& se = metrics.at(metric + "_stderr,none");
      table += fmt::format("|{}|{}|{}|{}|{:.4f}|{}|\n", name,
                           group ? "" : std::to_string(results.at("versions").at(name).get<int64_t>()),
                           group ? "" : std::to_string(results.at("n-shot").at(name).get<int64_t>()), metric,
                           value.get<double>(), se.is_number() ? fmt::format("{:.4f}", se.get<double>()) : "N/A");
    }
  }
  return table;
}

std::vector<std::pair<std::string, double>> flat_metrics(const nlohmann::json& results) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, metrics] : results.at("results").items()) {
    for (const auto& [key, value] : metrics.items()) {
      if (key == "alias" || key.find("_stderr,") != std::string::npos) continue;
      out.emplace_back(fmt::format("eval/{}/{}", name, key.substr(0, key.find(','))), value.get<double>());
    }
  }
  return out;
}

}  // namespace kforge::eval_tasks
