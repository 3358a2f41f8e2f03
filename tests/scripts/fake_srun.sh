#!/bin/bash
# A stand-in for Slurm's srun on one node, for testing scripts/slurm/*.sbatch: starts SLURM_NTASKS
# copies of the command with the per-task variables srun sets, forwards SIGUSR1 and SIGTERM to
# them, and exits with the first non-zero exit code of a task.
while [[ "$1" == --* ]]; do shift; done
# Set before the tasks start, forwarding to every task started so far (jobs -p): a signal that comes while they are
# starting neither kills this shell (USR1's default) nor misses a task whose pid is not recorded yet.
trap 'kill -USR1 $(jobs -p) 2>/dev/null' USR1
trap 'kill -TERM $(jobs -p) 2>/dev/null' TERM
pids=()
for ((i = 0; i < SLURM_NTASKS; i++)); do
  SLURM_PROCID=$i SLURM_LOCALID=$i "$@" &
  pids+=($!)
done
echo "fake srun: tasks ${pids[*]}" >&2
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
