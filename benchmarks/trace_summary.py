#!/usr/bin/python3
"""Where a step's time goes, from a kforge trace ([profiling] enable: Chrome-trace JSON of every ATen op and scope).

    /usr/bin/python3 benchmarks/trace_summary.py TRACE.json [--steps N] [--top K]

Self time per op name (an op's time without the ops nested in it on the same thread), summed over the trace's
threads, as ms per step and as a share of the traced wall time; then the share spent in GEMMs (aten::mm, bmm,
addmm, baddbmm and kforge's own projections; the
bf16-without-bf16-hardware ones include their casts). Reports, never asserts.
"""
import argparse
import collections
import json

GEMMS = {"aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm", "kforge::onednn_linear",
         "kforge::onednn_linear_backward", "kforge::bf16_linear", "kforge::bf16_linear_backward"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--steps", type=int, default=1, help="steps the trace covers")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    events = [e for e in json.load(open(args.trace))["traceEvents"] if e.get("ph") == "X"]
    wall = (max(e["ts"] + e["dur"] for e in events) - min(e["ts"] for e in events)) / 1e3  # ms
    self_ms = collections.Counter()
    calls = collections.Counter()
    by_thread = collections.defaultdict(list)
    for e in events:
        by_thread[e["tid"]].append(e)
    for thread_events in by_thread.values():
        thread_events.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []  # [event, time of its children]
        for e in thread_events + [None]:
            while stack and (e is None or e["ts"] >= stack[-1][0]["ts"] + stack[-1][0]["dur"]):
                done, children = stack.pop()
                self_ms[done["name"]] += (done["dur"] - children) / 1e3
                if stack:
                    stack[-1][1] += done["dur"]
            if e is not None:
                calls[e["name"]] += 1
                stack.append([e, 0.0])
    per_step = wall / args.steps
    print(f"traced wall time {wall:.0f} ms over {args.steps} step(s): {per_step:.0f} ms per step")
    print(f"{'op (self time)':70s} {'calls':>7s} {'ms/step':>9s} {'share':>7s}")
    for name, ms in self_ms.most_common(args.top):
        print(f"{name[:70]:70s} {calls[name] // args.steps:7d} {ms / args.steps:9.1f} {100 * ms / wall:6.1f}%")
    gemm = sum(ms for name, ms in self_ms.items() if name in GEMMS)
    print(f"GEMMs ({', '.join(sorted(GEMMS))}): {gemm / args.steps:.0f} ms per step, {100 * gemm / wall:.1f}% of the "
          f"traced wall time")


if __name__ == "__main__":
    main()
