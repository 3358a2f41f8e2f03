#!/usr/bin/env bash
# CPU throughput benchmark: kforge against a PyTorch-eager trainer of the same model, run twice: with glibc
# malloc as it comes (plain) and with the malloc tunables that stop its per-step page faults and give its heap huge
# pages (tuned: a fair peer).
#
#   bash benchmarks/run_cpu_benchmark.sh [--steps N] [--threads T] [--batch B] [--shapes "debug small"]
#                                        [--precision fp32|bf16] [--activation-checkpointing none|full]
#                                        [--peers "plain tuned"] [--kforge PATH] [--profile] [--gemm-census]
#                                        [--rounds R] [--isa native|avx2]
#
# For each shape (benchmarks/configs/bench_<shape>.toml) it writes random uint16 tokens, runs
# `kforge run` and benchmarks/peer_trainer.py (Debian's python3-torch 1.13: the same LibTorch and
# BLAS) with the same model, batch, seq, threads, precision (fp32, or bf16 autocast with fp32
# weights in both), activation checkpointing (none, or full: every block recomputed), AdamW, clipping and CE,
# the peer once plain and once with GLIBC_TUNABLES=$PEER_TUNABLES (--peers tuned: only the fair one), drops the
# first 2 warm-up steps and prints tokens/s, step time median and p10-p90, achieved GFLOP/s (6N + 12*L*D*S
# per token), MFU against the fp32 FMA peak measured here (benchmarks/fma_peak.cpp) and the share
# of the fp32 GEMM rate measured here, peak RSS, start-up time (process creation to the first step) and
# kforge/peer ratios against both peers. Shapes: debug, small, gpt2small (GPT-2 small class, seq 1024: about
# 30 s a step on 2 cores, so pass --steps 4 or 5 and --shapes gpt2small). It names the CPU and
# the widest vector ISA it has (AVX2 / AVX-512 / AVX-512-BF16 / AMX): results hold for that family only.
# --gemm-census runs every trainer under benchmarks/gemm_census.cpp (LD_PRELOAD: times each sgemm_/dnnl_sgemm call,
# untraced) and prints each one's fp32 GEMM wall time and rate per step, the time that is not GEMM, and how much faster
# than the peer a trainer with those GEMMs and nothing else could be.
# --rounds R runs every trainer R times, alternating (round 1: kforge, the peers; round 2: again ...), prints each
# round's tables and then each shape's kforge/peer ratios by round and their median: on a shared machine a burst of
# someone else's load slows one run, and the median over alternated rounds is the ratio it leaves standing.
# --isa avx2 runs everything (both trainers, the GEMM and FMA peaks) on this CPU's AVX2 code paths
# (benchmarks/isa_cap.sh): an AVX-512 machine's measure of what an AVX2-only CPU runs.
# Nothing here is a test: it reports, it does not pass or fail. 3-8 minutes on 2 cores (idle vs shared).
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=8             # measured steps = STEPS - 2 warm-up
THREADS=$(nproc)
BATCH=4
SHAPES="debug small"
KFORGE=""
PROFILE=0
CENSUS=0
PRECISION=fp32
AC=none
PEERS="plain tuned"
ROUNDS=1
ISA=native
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --batch) BATCH="$2"; shift 2 ;;
    --shapes) SHAPES="$2"; shift 2 ;;
    --kforge) KFORGE="$2"; shift 2 ;;
    --profile) PROFILE=1; shift ;;
    --gemm-census) CENSUS=1; shift ;;
    --precision) PRECISION="$2"; shift 2 ;;
    --activation-checkpointing) AC="$2"; shift 2 ;;
    --peers) PEERS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --isa) ISA="$2"; shift 2 ;;
    -h|--help) sed -n 2,30p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if (( STEPS < 4 )); then echo "--steps must be >= 4 (2 warm-up steps are dropped)" >&2; exit 2; fi
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "--rounds must be a positive whole number, not '$ROUNDS'" >&2; exit 2; }
[[ "$AC" == none || "$AC" == full ]] || { echo "--activation-checkpointing must be none or full, not '$AC'" >&2; exit 2; }
for peer in $PEERS; do
  [[ "$peer" == plain || "$peer" == tuned ]] || { echo "--peers takes plain and/or tuned, not '$peer'" >&2; exit 2; }
done
[[ -n "$PEERS" ]] || { echo "--peers needs plain, tuned or both" >&2; exit 2; }
source benchmarks/isa_cap.sh
cap_isa "$ISA"

PY=/usr/bin/python3   # Debian's python3-torch, not a pyenv python on PATH
"$PY" -c 'import torch, numpy' 2>/dev/null || { echo "need Debian's python3-torch and python3-numpy at $PY" >&2; exit 2; }

if [[ -z "$KFORGE" ]]; then
  for candidate in build/bin/kforge build-bench/bin/kforge; do
    [[ -x "$candidate" ]] && { KFORGE="$candidate"; break; }
  done
fi
if [[ -z "$KFORGE" ]]; then
  echo "building kforge into build-bench/ (Release)" >&2
  cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DKFORGE_BUILD_TESTS=OFF >/dev/null
  cmake --build build-bench -j"$(nproc)" --target kforge kforge_builtin_plugins >/dev/null
  KFORGE=build-bench/bin/kforge
fi

# Same threads for both: LibTorch intra-op pool (train.num_threads / torch.set_num_threads) and OpenMP.
export OMP_NUM_THREADS="$THREADS"
WORK=benchmarks/.work
rm -rf "$WORK"
mkdir -p "$WORK"

# The widest vector ISA of this CPU, from the kernel's flags: kernels and the results differ by family.
cpu_isa() {
  local flags
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  if [[ "$flags" == *" amx_bf16 "* ]]; then echo "AMX (+ AVX-512-BF16)"
  elif [[ "$flags" == *" avx512_bf16 "* ]]; then echo "AVX-512-BF16"
  elif [[ "$flags" == *" avx512f "* ]]; then echo "AVX-512 (no bf16 instructions)"
  elif [[ "$flags" == *" avx2 "* ]]; then echo "AVX2 only (no AVX-512)"
  else echo "no AVX2"
  fi
}
# The tuned peer's allocator: glibc keeps freed big blocks (no mmap per tensor, no trimming), as tcmalloc would,
# and backs its heap with transparent huge pages, as the kforge front-end asks for kforge (launch/heap_huge_pages.h).
PEER_TUNABLES="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776:glibc.malloc.hugetlb=1"

echo "== machine: $(lscpu | sed -n 's/^Model name:[[:space:]]*//p') (cpu family $(lscpu | sed -n 's/^CPU family:[[:space:]]*//p'), model $(lscpu | sed -n 's/^Model:[[:space:]]*//p')), $(nproc) cores usable, threads=$THREADS"
echo "== ISA: $(cpu_isa)$(isa_cap_note "$ISA")"
echo "== tuned peer: GLIBC_TUNABLES=$PEER_TUNABLES"
echo "== kforge: $KFORGE ($(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ', dirty tree'))"
# The peer gets the OpenBLAS kernels kforge gets: where OpenBLAS does not know this CPU model and falls back to
# kernels without AVX2, the kforge front-end names this CPU's in OPENBLAS_CORETYPE (launch/openblas_kernels.h);
# exported here, every process below (the GEMM peak included) runs them.
blas_of_kforge() {
  "$KFORGE" check-env --json --no-gemm 2>/dev/null | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["blas"][sys.argv[1]])' "$1"
}
if [[ -z "${OPENBLAS_CORETYPE:-}" ]]; then
  kernels="$(blas_of_kforge OPENBLAS_CORETYPE)"
  [[ -n "$kernels" ]] && export OPENBLAS_CORETYPE="$kernels"
fi
echo "== BLAS: $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3), OpenBLAS's $(blas_of_kforge openblas_kernels) kernels for both (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
echo "== load average before: $(cut -d" " -f1-3 /proc/loadavg) (other processes on these cores skew every number)"

# The MFU denominator: best of 5 fp32 1024^3 GEMMs on $THREADS threads (kforge's measure_cpu_gemm_tflops),
# measured before and after the runs; the higher one is used (a busy machine only lowers it).
measure_peak() {
"$PY" - "$THREADS" > "$1" <<'EOF'
import json, sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
n = 1024
a, b = torch.rand(n, n), torch.rand(n, n)
c = a @ b
best = 0.0
for _ in range(5):
    t0 = time.perf_counter(); torch.mm(a, b, out=c); dt = time.perf_counter() - t0
    best = max(best, 2 * n ** 3 / dt / 1e9)
json.dump({"peak_gflops": best}, sys.stdout)
EOF
}
measure_peak "$WORK/peak_before.json"
# The physical fp32 FMA peak: independent FMAs on every thread (benchmarks/fma_peak.cpp, -march=native).
cap_flags=(); [[ "$ISA" == avx2 ]] && cap_flags=(-mno-avx512f)  # its 256-bit FMAs only
g++ -O2 -march=native "${cap_flags[@]}" -std=c++17 -pthread benchmarks/fma_peak.cpp -o "$WORK/fma_peak"
"$WORK/fma_peak" "$THREADS" > "$WORK/fma_peak.json"
echo "== measured fp32 FMA peak: $("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["fma_peak_gflops"])' "$WORK/fma_peak.json") GFLOP/s on $THREADS threads"
echo "== measured fp32 GEMM peak (before): $("$PY" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["peak_gflops"])' "$WORK/peak_before.json") GFLOP/s"
if (( CENSUS )); then
  g++ -O2 -shared -fPIC -std=c++17 benchmarks/gemm_census.cpp -o "$WORK/libgemm_census.so" -ldl
  echo "== GEMM census: every trainer runs with LD_PRELOAD=$WORK/libgemm_census.so"
fi
# census NAME: sets CENSUS_ENV to the environment that times NAME's GEMMs into $OUT/census_NAME.jsonl (empty without
# --gemm-census).
census() {
  CENSUS_ENV=()
  (( CENSUS )) && CENSUS_ENV=("LD_PRELOAD=$PWD/$WORK/libgemm_census.so" "GEMM_CENSUS_OUT=$PWD/$OUT/census_$1.jsonl")
  return 0
}

for shape in $SHAPES; do
  cfg="benchmarks/configs/bench_${shape}.toml"
  data="$WORK/data_${shape}"
  mkdir -p "$data"
  vocab=$("$PY" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["model"]["vocab_size"])' "$cfg")
  seq=$("$PY" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["train"]["seq_len"])' "$cfg")
  ntok=$(( (STEPS + 2) * BATCH * (seq + 1) * 2 ))
  "$PY" benchmarks/random_tokens.py "$vocab" "$ntok" "$data/tokens.npy"
done

# Each round's runs and their records in $WORK/round<r>.
for round in $(seq 1 "$ROUNDS"); do
OUT="$WORK/round$round"
mkdir -p "$OUT"
(( ROUNDS > 1 )) && echo "== round $round of $ROUNDS" >&2
for shape in $SHAPES; do
  cfg="benchmarks/configs/bench_${shape}.toml"
  data="$WORK/data_${shape}"
  seq=$("$PY" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["train"]["seq_len"])' "$cfg")

  echo "== [$shape] kforge: $STEPS steps, batch $BATCH x seq $seq" >&2
  census "kforge_$shape"
  env "${CENSUS_ENV[@]}" "$KFORGE" run "$cfg" --train.max_steps="$STEPS" --train.batch_size="$BATCH" \
    --train.num_threads="$THREADS" --data.dataset_path="$data" --checkpoint.dir="$OUT/ckpt_${shape}" \
    --metrics.run_dir="$OUT/kforge_${shape}" \
    --metrics.log_interval=1 --metrics.backends='["jsonl"]' --train.mixed_precision="$PRECISION" \
    --train.activation_checkpointing="\"$AC\"" > "$OUT/kforge_${shape}.log" 2>&1 \
    || { echo "kforge failed on $shape; see $OUT/kforge_${shape}.log" >&2; tail -20 "$OUT/kforge_${shape}.log" >&2; exit 1; }
  rm -rf "$OUT/ckpt_${shape}"  # its final checkpoint: not needed for the numbers

  peer_cfg="$WORK/peer_${shape}.toml"
  sed -e "s/^batch_size = .*/batch_size = $BATCH/" -e "s/^mixed_precision = .*/mixed_precision = \"$PRECISION\"/" \
    "$cfg" > "$peer_cfg"
  prof=(); (( PROFILE )) && prof=(--profile)
  for peer in $PEERS; do
    echo "== [$shape] $peer peer (PyTorch eager $("$PY" -c 'import torch; print(torch.__version__)')): $STEPS steps" >&2
    tunables=(); [[ "$peer" == tuned ]] && tunables=(GLIBC_TUNABLES="$PEER_TUNABLES")
    out="$OUT/peer_${peer}_${shape}"
    census "peer_${peer}_$shape"
    env "${tunables[@]}" "${CENSUS_ENV[@]}" "$PY" benchmarks/peer_trainer.py "$peer_cfg" --data "$data/tokens.npy" \
      --steps "$STEPS" --threads "$THREADS" --out "$out.json" --activation-checkpointing "$AC" "${prof[@]}" > "$out.profile.txt" 2> "$out.log" \
      || { echo "$peer peer failed on $shape; see $out.log" >&2; tail -20 "$out.log" >&2; exit 1; }
  done
done
done

echo "== load average after: $(cut -d" " -f1-3 /proc/loadavg)"
measure_peak "$WORK/peak_after.json"
echo "== measured fp32 GEMM peak (after): $("$PY" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["peak_gflops"])' "$WORK/peak_after.json") GFLOP/s"
"$PY" - "$WORK" "$BATCH" "$PRECISION" "$AC" "$PEERS" "$CENSUS" "$STEPS" "$ROUNDS" $SHAPES <<'EOF'
import json, os, statistics, sys
base, batch, precision, ac, peer_names, census, steps, rounds, shapes = (
    sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5].split(), sys.argv[6] == "1",
    int(sys.argv[7]), int(sys.argv[8]), sys.argv[9:])
peak = max(json.load(open(f"{base}/peak_{w}.json"))["peak_gflops"] for w in ("before", "after"))
fma_peak = json.load(open(f"{base}/fma_peak.json"))["fma_peak_gflops"]
WARMUP = 2

def pct(xs, q):
    xs = sorted(xs); k = (len(xs) - 1) * q; f = int(k); c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)

def summarize(times, tokens, fpt, rss, startup):
    t = times[WARMUP:]
    med = statistics.median(t)
    tok_s = tokens * len(t) / sum(t)
    return {"tok_s": tok_s, "med": med, "p10": pct(t, 0.1), "p90": pct(t, 0.9),
            "gflops": fpt * tok_s / 1e9, "mfu": 100 * fpt * tok_s / 1e9 / fma_peak,
            "of_gemm": 100 * fpt * tok_s / 1e9 / peak, "rss": rss, "startup": startup, "first": times[0],
            "mean_all": sum(times) / len(times),
            "n": len(t)}

ratios = {}  # (shape, peer) -> kforge/peer tok/s by round

def report(work, title):
    print(title)
    rows = []
    for shape in shapes:
        lines = [json.loads(l) for l in open(f"{work}/kforge_{shape}/metrics.jsonl")]
        startup = next(r["time/startup_sec"] for r in lines if "time/startup_sec" in r)
        recs = [r for r in lines if "train/step_time_sec" in r]
        recs.sort(key=lambda r: r["step"])
        peers = {name: json.load(open(f"{work}/peer_{name}_{shape}.json")) for name in peer_names}
        first = peers[peer_names[0]]
        fpt, tokens = first["flops_per_token"], first["tokens_per_step"]
        k = summarize([r["train/step_time_sec"] for r in recs], tokens, fpt,
                      max(r["memory/peak_rss_gb"] for r in recs), startup)
        k["loss"] = recs[-1]["train/loss"]
        runs = {"kforge": k}
        for name, peer in peers.items():
            runs[f"pytorch-eager {name}"] = summarize(peer["step_times"], tokens, fpt, peer["peak_rss_gb"],
                                                      peer["startup_sec"])
            runs[f"pytorch-eager {name}"]["loss"] = peer["losses"][-1]
        rows.append((shape, first["params"], tokens // batch, fpt, runs))

    print(f"\n{precision}, activation checkpointing {ac}, batch {batch}, {rows[0][4]['kforge']['n']} measured steps "
          f"(first {WARMUP} dropped), MFU vs the measured fp32 FMA peak {fma_peak:.1f} GFLOP/s; 'of GEMM' vs the measured "
          f"1024^3 GEMM {peak:.1f}; start-up: process creation to the first step\n")
    hdr = ("| shape | params | seq | trainer | tok/s | step median (s) | p10-p90 (s) | GFLOP/s | MFU | of GEMM | peak RSS (GB) "
           "| start-up (s) | first step (s) | last loss |")
    print(hdr); print("|" + "---|" * 14)
    for shape, n, seq, fpt, runs in rows:
        for name, r in runs.items():
            print(f"| {shape} | {n/1e6:.1f}M | {seq} | {name} | {r['tok_s']:.0f} | {r['med']:.3f} | {r['p10']:.3f}-{r['p90']:.3f} | "
                  f"{r['gflops']:.1f} | {r['mfu']:.1f}% | {r['of_gemm']:.1f}% | {r['rss']:.2f} | {r['startup']:.2f} | "
                  f"{r['first']:.2f} | {r['loss']:.3f} |")
    print()
    print("| shape | " + " | ".join(f"kforge/{p} peer tok/s | kforge/{p} peer peak RSS" for p in peer_names) + " |")
    print("|---|" + "---|---|" * len(peer_names))
    for shape, n, seq, fpt, runs in rows:
        k = runs["kforge"]
        cells = []
        for p in peer_names:
            peer = runs[f"pytorch-eager {p}"]
            cells += [f"{k['tok_s'] / peer['tok_s']:.2f}x", f"{k['rss'] / peer['rss']:.2f}x"]
        print(f"| {shape} | " + " | ".join(cells) + " |")

    if census:
        # Per step, over all the steps (warm-up included, as the census cannot tell steps apart): each size's calls,
        # wall seconds while one of its GEMMs ran (side-by-side calls on several threads counted once) and GFLOP/s over
        # those seconds; 'any GEMM': wall seconds while any ran; 'not GEMM': the mean step less that.
        def census_of(name):
            sizes = {"projection-sized": [0.0, 0.0], "smaller": [0.0, 0.0]}  # calls, GFLOP per step
            busy = {"all": 0.0, "projection-sized": 0.0, "smaller": 0.0}
            path = f"{work}/census_{name}.jsonl"  # absent when the process made no fp32 GEMM call
            for line in open(path) if os.path.exists(path) else []:
                g = json.loads(line)
                if "busy_s" in g:
                    busy = g["busy_s"]
                    continue
                macs = g["m"] * g["n"] * g["k"]
                row = sizes["projection-sized" if macs >= 1 << 26 else "smaller"]
                row[0] += g["calls"] / steps; row[1] += 2 * macs * g["calls"] / steps / 1e9
            return sizes, {key: seconds / steps for key, seconds in busy.items()}
        print(f"\nGEMM census (benchmarks/gemm_census.cpp; fp32 sgemm_/dnnl_sgemm only: bf16 GEMMs are not counted), per "
              f"step over all {steps} steps: calls, wall seconds and GFLOP/s of the projection-sized (>= 2^26 "
              f"multiply-adds) and the smaller GEMMs; 'any GEMM': wall seconds while one ran; 'not GEMM': the mean step "
              f"less that; 'GEMM-only bound': the peer's mean step over this trainer's 'any GEMM', the most a trainer "
              f"with these GEMMs and nothing else could be faster than that peer\n")
        print("| shape | trainer | step mean (s) | projection GEMMs: calls, s, GFLOP/s | smaller GEMMs: calls, s, GFLOP/s "
              "| any GEMM (s) | not GEMM (s) | " + " | ".join(f"GEMM-only bound vs {p} peer" for p in peer_names) + " |")
        print("|---|---|---|---|---|---|---|" + "---|" * len(peer_names))
        for shape, n, seq, fpt, runs in rows:
            for name in ["kforge"] + [f"peer_{p}" for p in peer_names]:
                run = runs["kforge" if name == "kforge" else f"pytorch-eager {name[5:]}"]
                sizes, busy = census_of(f"{name}_{shape}")
                cells = [f"{calls:.0f}, {busy[size]:.3f}, {gflop / busy[size] if busy[size] else 0:.0f}"
                         for size, (calls, gflop) in sizes.items()]
                bounds = [f"{runs[f'pytorch-eager {p}']['mean_all'] / busy['all']:.2f}x" if busy["all"] else "-"
                          for p in peer_names]
                print(f"| {shape} | {name.replace('_', ' ')} | {run['mean_all']:.3f} | {cells[0]} | {cells[1]} | "
                      f"{busy['all']:.3f} | {run['mean_all'] - busy['all']:.3f} | " + " | ".join(bounds) + " |")
    for shape, n, seq, fpt, runs in rows:
        for p in peer_names:
            ratios.setdefault((shape, p), []).append(runs["kforge"]["tok_s"] / runs[f"pytorch-eager {p}"]["tok_s"])

for r in range(1, rounds + 1):
    report(f"{base}/round{r}", f"\n## round {r} of {rounds}" if rounds > 1 else "")
if rounds > 1:
    print(f"\nkforge/peer tok/s by round (alternated) and the median over the {rounds} rounds\n")
    print("| shape | peer | " + " | ".join(f"round {r}" for r in range(1, rounds + 1)) + " | median |")
    print("|---|---|" + "---|" * (rounds + 1))
    for (shape, p), values in ratios.items():
        print(f"| {shape} | {p} | " + " | ".join(f"{v:.2f}x" for v in values) + f" | **{statistics.median(values):.2f}x** |")
EOF
