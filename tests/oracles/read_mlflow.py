"""Reads an MLflow file store (what `mlflow ui --backend-store-uri DIR` reads) independently of kforge,
with python3-yaml, checking the layout MLflow's FileStore expects.

  read_mlflow.py STORE

Prints one JSON object: "experiments" ({id: name}) and "runs", each with its meta.yaml fields
("status" the name: RUNNING, SCHEDULED, FINISHED, FAILED, KILLED), "params" and "tags" ({key: value},
keys with '/' from nested files) and "metrics" ({key: [[timestamp_ms, value, step], ...]} in file order,
NaN as null). Exits 1 with "FILE: fault" on stderr at the first fault: a meta.yaml field missing or of
the wrong type, a run id that is not its directory's name, a metric line that is not
"<int timestamp> <float value> <int step>".
"""
import json
import math
import os
import sys

import yaml

STATUS = {1: "RUNNING", 2: "SCHEDULED", 3: "FINISHED", 4: "FAILED", 5: "KILLED"}
EXPERIMENT_FIELDS = {"artifact_location": str, "creation_time": int, "experiment_id": str,
                     "last_update_time": int, "lifecycle_stage": str, "name": str}
RUN_FIELDS = {"artifact_uri": str, "end_time": (int, type(None)), "entry_point_name": str, "experiment_id": str,
              "lifecycle_stage": str, "run_id": str, "run_name": str, "run_uuid": str, "source_name": str,
              "source_type": int, "source_version": str, "start_time": int, "status": int, "tags": list,
              "user_id": str}


class Fault(Exception):
    pass


def read_meta(path, fields):
    with open(path) as f:
        meta = yaml.safe_load(f)
    if not isinstance(meta, dict):
        raise Fault(f"{path}: not a YAML mapping")
    for key, kind in fields.items():
        if key not in meta:
            raise Fault(f"{path}: no '{key}'")
        if not isinstance(meta[key], kind):
            raise Fault(f"{path}: '{key}' is {meta[key]!r}, not {kind}")
    return meta


def files_under(root):
    """{relative path with '/': text} of every file under root."""
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path) as f:
                out[os.path.relpath(path, root).replace(os.sep, "/")] = (path, f.read())
    return out


def metric_lines(path, text):
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split(" ")
        if len(parts) != 3:
            raise Fault(f"{path}:{n}: {line!r} is not 'timestamp value step'")
        try:
            value = float(parts[1])
            rows.append([int(parts[0]), None if math.isnan(value) else value, int(parts[2])])
        except ValueError:
            raise Fault(f"{path}:{n}: {line!r} is not 'timestamp value step'")
    return rows


def read_run(experiment_id, run_dir):
    meta = read_meta(os.path.join(run_dir, "meta.yaml"), RUN_FIELDS)
    name = os.path.basename(run_dir)
    if meta["run_id"] != name or meta["run_uuid"] != name:
        raise Fault(f"{run_dir}: run_id {meta['run_id']!r} / run_uuid {meta['run_uuid']!r} is not the directory name")
    if meta["experiment_id"] != experiment_id:
        raise Fault(f"{run_dir}: experiment_id {meta['experiment_id']!r} is not {experiment_id!r}")
    if meta["status"] not in STATUS:
        raise Fault(f"{run_dir}: status {meta['status']} is not one of {sorted(STATUS)}")
    run = {k: meta[k] for k in ("run_id", "experiment_id", "run_name", "start_time", "end_time", "user_id",
                                "lifecycle_stage", "artifact_uri")}
    run["status"] = STATUS[meta["status"]]
    run["params"] = {k: v for k, (_, v) in files_under(os.path.join(run_dir, "params")).items()}
    run["tags"] = {k: v for k, (_, v) in files_under(os.path.join(run_dir, "tags")).items()}
    run["metrics"] = {k: metric_lines(p, v) for k, (p, v) in files_under(os.path.join(run_dir, "metrics")).items()}
    return run


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    store = sys.argv[1]
    experiments, runs = {}, []
    try:
        for exp in sorted(os.listdir(store)):
            exp_dir = os.path.join(store, exp)
            if exp.startswith(".") or not os.path.isdir(exp_dir):
                continue
            meta = read_meta(os.path.join(exp_dir, "meta.yaml"), EXPERIMENT_FIELDS)
            if meta["experiment_id"] != exp:
                raise Fault(f"{exp_dir}: experiment_id {meta['experiment_id']!r} is not the directory name")
            experiments[exp] = meta["name"]
            for run in sorted(os.listdir(exp_dir)):
                if os.path.isdir(os.path.join(exp_dir, run)) and run != "tags":
                    runs.append(read_run(exp, os.path.join(exp_dir, run)))
    except (Fault, OSError, yaml.YAMLError) as e:
        print(f"{store}: {e}", file=sys.stderr)
        sys.exit(1)
    json.dump({"experiments": experiments, "runs": runs}, sys.stdout)


if __name__ == "__main__":
    main()
