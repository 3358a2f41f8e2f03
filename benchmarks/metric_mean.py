# Mean of a metric over a run's steps after the first two (its warm-up), from its metrics.jsonl; "nan" when absent.
#   python3 benchmarks/metric_mean.py METRICS_JSONL KEY [DIGITS]
import json
import sys

path, key = sys.argv[1], sys.argv[2]
digits = int(sys.argv[3]) if len(sys.argv) > 3 else 3
values = [r[key] for r in map(json.loads, open(path)) if r.get("step", 0) > 2 and key in r]
print(f"{sum(values) / len(values):.{digits}f}" if values else "nan")
