#!/bin/bash
# A stand-in for Slurm's srun on one node, for testing scripts/slurm/*.sbatch: starts SLURM_NTASKS
# copies of the command with the per-task variables srun sets, forwards SIGUSR1 and SIGTERM to
# them, and exits with the first non-zero exit code of a task.
while [[ "$1" == --* ]]; do shift; done
pids=()
for ((i = 0; i < SLURM_NTASKS; i++)); do
  SLURM_PROCID=$i SLURM_LOCALID=$i "$@" &
  pids+=($!)
done
echo "fake srun: tasks ${pids[*]}" >&2
trap 'kill -USR1 "${pids[@]}" 2>/dev/null' USR1
trap 'kill -TERM "${pids[@]}" 2>/dev/null' TERM
status=0
for pid in "${pids[@]}"; do
  wait "$pid"
  s=$?
  while ((s > 128)) && kill -0 "$pid" 2>/dev/null; do
    wait "$pid"
    s=$?
  done
  ((s != 0 && status == 0)) && status=$s
done
exit "$status"
