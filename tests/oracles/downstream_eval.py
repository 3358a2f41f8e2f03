#!/usr/bin/env python3
"""Independent reference for `kforge eval --tasks`: lm-eval-harness 0.4's requests and metrics, written from its
definitions, over the model `kforge convert --to hf` exported (run by hf_llama.py's float64 forward).

Usage:
  downstream_eval.py HF_DIR TASK_DIR TASKS SAMPLES.jsonl PREFIX_TOKEN EOS VOCAB SEED BOOTSTRAP_ITERS OUT.json

TASKS is "a,b"; SAMPLES.jsonl is kforge's --log-samples (the token ids it scored: there is no tokenizer here, so the
oracle takes the tokens from it, checks the rolling windows it cut, and recomputes everything else). Writes OUT.json:
  requests       [{task, doc_id, option, context, continuation}] built from the task files (few-shot examples drawn by
                 random.Random(SEED).sample, one generator per task, as lm-eval's ContextSampler);
  loglikelihood  per loglikelihood sample line: sum of log_softmax over (context + continuation)[-(L+1):][:-1];
  greedy         alongside: every continuation token is the argmax;
  windows        per rolling document: the disjoint windows get_rolling_token_windows(tokens, PREFIX_TOKEN, L, 1) cuts;
  generated      per generate_until sample line: greedy tokens (argmax below VOCAB) after its context, as many as
                 kforge generated (+1 when it stopped early: EOS is expected there, or a stop string ended it);
  metrics_kforge_lls / metrics_oracle_lls  {task: {"acc,none": ..., "acc_stderr,none": ...}} from kforge's logged
                 log-likelihoods and generations / from the oracle's;
  ll_bound       {task: max |ll| of its requests}, to derive the metrics' tolerances from the log-likelihoods';
  metrics_groups {group: size-weighted mean and pooled stderr of its tasks' mean metrics (kforge's lls)}.
L is config.json's max_position_embeddings.
"""
import json
import math
import os
import random
import re
import sys
import tomllib

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_llama import Config, forward, load_weights  # noqa: E402


def load_task(task_dir, name):
    with open(os.path.join(task_dir, name, "task.toml"), "rb") as f:
        t = tomllib.load(f)
    t.setdefault("num_fewshot", 0)
    t.setdefault("description", "")
    t.setdefault("fewshot_delimiter", "\n\n")
    t.setdefault("target_delimiter", " ")
    t.setdefault("until", [])
    t.setdefault("max_gen_toks", 256)
    defaults = {"multiple_choice": ["acc", "acc_norm"], "loglikelihood": ["perplexity", "acc"],
                "loglikelihood_rolling": ["word_perplexity", "byte_perplexity", "bits_per_byte", "token_perplexity"],
                "generate_until": ["exact_match"]}
    t["metrics"] = t.get("metrics") or defaults[t["output_type"]]

    def read(file):
        with open(os.path.join(task_dir, name, file)) as f:
            return [json.loads(line) for line in f if line.strip()]
    t["docs"] = read(t["eval_docs"])
    t["fewshot"] = read(t["fewshot_docs"]) if "fewshot_docs" in t else None
    return t


def example(t, doc):
    td, kind = t["target_delimiter"], t["output_type"]
    if kind == "multiple_choice":
        if "queries" in doc:
            return doc["queries"][doc["gold"]] + td + doc["continuation"]
        return doc["query"] + td + doc["choices"][doc["gold"]]
    if kind == "loglikelihood":
        return doc["query"] + td + doc["continuation"]
    return doc["query"] + td + doc["answer"]


def build_requests(t, seed):
    rnd = random.Random(seed)
    pool = t["fewshot"] if t["fewshot"] is not None else t["docs"]
    k, out = t["num_fewshot"], []
    for d, doc in enumerate(t["docs"]):
        if t["output_type"] == "loglikelihood_rolling":
            out.append({"task": t["name"], "doc_id": d, "option": 0, "context": "", "continuation": doc["text"]})
            continue
        prefix = t["description"]
        if k > 0:
            drawn = rnd.sample(pool, k if t["fewshot"] is not None else k + 1)
            for ex in [x for x in drawn if x != doc][:k]:
                prefix += example(t, ex) + t["fewshot_delimiter"]
        if t["output_type"] == "generate_until":
            out.append({"task": t["name"], "doc_id": d, "option": 0, "context": prefix + doc["query"],
                        "continuation": ""})
        elif "queries" in doc:
            for o, q in enumerate(doc["queries"]):
                out.append({"task": t["name"], "doc_id": d, "option": o, "context": prefix + q,
                            "continuation": t["target_delimiter"] + doc["continuation"]})
        else:
            for o, c in enumerate(doc.get("choices", [doc.get("continuation")])):
                out.append({"task": t["name"], "doc_id": d, "option": o, "context": prefix + doc["query"],
                            "continuation": t["target_delimiter"] + c})
    return out


def rolling_windows(tokens, prefix, max_len):
    """lm-eval's get_rolling_token_windows(context_len=1) and make_disjoint_window."""
    pred_len, predicted, windows = max_len, 0, []
    first = min(max_len, len(tokens))
    windows.append(([prefix] + tokens[: first - 1], tokens[:first]))
    predicted += first
    while predicted < len(tokens):
        n = min(len(tokens) - predicted, pred_len)
        end = predicted + n
        windows.append((tokens[end - max_len - 1: end - 1], tokens[end - n: end]))
        predicted += n
    return [{"context": a[: len(a) - (len(b) - 1)], "continuation": b} for a, b in windows]


def mean(arr):
    return sum(arr) / len(arr)


def sample_stddev(arr):
    mu = mean(arr)
    return math.sqrt(sum([(x - mu) ** 2 for x in arr]) / (len(arr) - 1))


def mean_stderr(arr):
    return sample_stddev(arr) / math.sqrt(len(arr)) if len(arr) > 1 else "N/A"


def perplexity(items):
    return math.exp(-mean(items))


def bootstrap_stderr(f, xs, iters):
    chunk = min(1000, iters)
    if chunk == 0 or len(xs) < 2:
        return "N/A"
    res = []
    for i in range(iters // chunk):
        rnd = random.Random()
        rnd.seed(i)
        res.extend(f(rnd.choices(xs, k=len(xs))) for _ in range(chunk))
    return sample_stddev(res)


def weighted_mean(items):
    a, b = zip(*items)
    return sum(a) / sum(b)


def metrics(t, lls_by_doc, gens_by_doc, tokens_by_doc, iters):
    items = {}
    for d in sorted(set(lls_by_doc) | set(gens_by_doc)):
        doc = t["docs"][d]
        kind = t["output_type"]
        if kind == "multiple_choice":
            lls = lls_by_doc[d]
            options = doc["queries"] if "queries" in doc else doc["choices"]
            norm = [ll / float(len(c)) for ll, c in zip(lls, options)]
            items.setdefault("acc", []).append(1.0 if max(range(len(lls)), key=lambda i: (lls[i], -i)) == doc["gold"]
                                               else 0.0)
            items.setdefault("acc_norm", []).append(
                1.0 if max(range(len(norm)), key=lambda i: (norm[i], -i)) == doc["gold"] else 0.0)
        elif kind == "loglikelihood":
            ll, greedy = lls_by_doc[d][0]
            items.setdefault("perplexity", []).append(ll)
            items.setdefault("acc", []).append(1.0 if greedy else 0.0)
        elif kind == "loglikelihood_rolling":
            ll = sum(lls_by_doc[d])
            page = doc.get("page", doc["text"])  # lm-eval's wikitext counts on the page as read
            words, nbytes = len(re.split(r"\s+", page)), len(page.encode("utf-8"))
            items.setdefault("word_perplexity", []).append((ll, words))
            items.setdefault("byte_perplexity", []).append((ll, nbytes))
            items.setdefault("bits_per_byte", []).append((ll, nbytes))
            items.setdefault("token_perplexity", []).append((ll, tokens_by_doc[d]))
        else:
            items.setdefault("exact_match", []).append(1.0 if gens_by_doc[d].strip() == doc["answer"].strip() else 0.0)
    out = {}
    for m in t["metrics"]:
        xs = items[m]
        if m == "perplexity":
            value, se = perplexity(xs), bootstrap_stderr(perplexity, xs, iters)
        elif m == "bits_per_byte":
            value, se = -weighted_mean(xs) / math.log(2), "N/A"
        elif m in ("word_perplexity", "byte_perplexity", "token_perplexity"):
            value, se = math.exp(-weighted_mean(xs)), "N/A"
        else:
            value, se = mean(xs), mean_stderr(xs)
        out[f"{m},none"], out[f"{m}_stderr,none"] = value, se
    return out


def main(argv):
    hf_dir, task_dir, names, samples_path, prefix, eos, vocab, seed, iters, out_path = argv
    prefix, eos, vocab, seed, iters = int(prefix), int(eos), int(vocab), int(seed), int(iters)
    cfg = Config(os.path.join(hf_dir, "config.json"))
    max_len = cfg["max_position_embeddings"]
    weights = load_weights(hf_dir)

    def logprobs(tokens):
        with torch.no_grad():
            return torch.log_softmax(forward(cfg, weights, torch.tensor([tokens])), -1)[0]

    tasks = {n: load_task(task_dir, n) for n in names.split(",")}
    with open(samples_path) as f:
        samples = [json.loads(line) for line in f if line.strip()]
    out = {"requests": [], "loglikelihood": [], "greedy": [], "windows": [], "generated": [],
           "metrics_kforge_lls": {}, "metrics_oracle_lls": {}, "ll_bound": {}}
    for name, t in tasks.items():
        out["requests"] += build_requests(t, seed)
        mine = [s for s in samples if s["task"] == name]
        theirs, ours, gens, ours_gens, tokens = {}, {}, {}, {}, {}
        bound = 0.0
        rolling_docs = {}
        for s in mine:
            d = s["doc_id"]
            if t["output_type"] == "generate_until":
                ctx, n = s["context_tokens"], len(s["generated_tokens"])
                seq, generated = list(ctx), []
                for _ in range(min(n + 1, t["max_gen_toks"])):
                    nxt = int(torch.argmax(logprobs(seq)[-1][:vocab]))
                    generated.append(nxt)
                    seq.append(nxt)
                    if nxt == eos:
                        break
                out["generated"].append(generated)
                gens[d] = s["generated"]
                continue
            whole = s["context_tokens"] + s["continuation_tokens"]
            inp = whole[-(max_len + 1):][:-1]
            cont = s["continuation_tokens"]
            lp = logprobs(inp)[len(inp) - len(cont):]
            ll = float(lp[torch.arange(len(cont)), torch.tensor(cont)].sum())
            greedy = bool((lp.argmax(-1) == torch.tensor(cont)).all())
            out["loglikelihood"].append(ll)
            out["greedy"].append(greedy)
            bound = max(bound, abs(ll))
            if t["output_type"] == "loglikelihood":
                theirs[d], ours[d] = [(s["loglikelihood"], s["is_greedy"])], [(ll, greedy)]
            else:
                theirs.setdefault(d, []).append(s["loglikelihood"])
                ours.setdefault(d, []).append(ll)
            if t["output_type"] == "loglikelihood_rolling":
                rolling_docs.setdefault(d, []).extend(cont)
                tokens[d] = tokens.get(d, 0) + len(cont)
        for d in sorted(rolling_docs):
            out["windows"].append(rolling_windows(rolling_docs[d], prefix, max_len))
        out["metrics_kforge_lls"][name] = metrics(t, theirs, gens, tokens, iters)
        out["metrics_oracle_lls"][name] = metrics(t, ours, gens, tokens, iters)
        out["ll_bound"][name] = bound
    groups = {}
    for name, t in tasks.items():
        if t.get("group"):
            groups.setdefault(t["group"], []).append(name)
    out["metrics_groups"] = {}
    for group, members in groups.items():
        res = {}
        for m in ("acc", "acc_norm", "exact_match"):  # each over the tasks that report it
            having = [n for n in members if f"{m},none" in out["metrics_kforge_lls"][n]]
            if not having:
                continue
            sizes = [len(tasks[n]["docs"]) for n in having]
            vals = [out["metrics_kforge_lls"][n][f"{m},none"] for n in having]
            ses = [out["metrics_kforge_lls"][n][f"{m}_stderr,none"] for n in having]
            res[f"{m},none"] = sum([v * n for v, n in zip(vals, sizes)]) / sum(sizes)
            if "N/A" in ses:
                res[f"{m}_stderr,none"] = "N/A"
            else:  # lm-eval's pooled_sample_stderr
                var = sum([(n - 1) * se**2 * n for n, se in zip(sizes, ses)]) / (sum(sizes) - len(sizes))
                res[f"{m}_stderr,none"] = math.sqrt(var / sum(sizes))
        out["metrics_groups"][group] = res
    with open(out_path, "w") as f:
        json.dump(out, f)
    print(f"ok: {len(out['loglikelihood'])} loglikelihood requests, {len(out['generated'])} generations")


if __name__ == "__main__":
    main(sys.argv[1:])
