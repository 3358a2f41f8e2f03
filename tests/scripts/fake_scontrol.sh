#!/bin/bash
# A stand-in for Slurm's scontrol, for testing scripts/slurm/*.sbatch: appends each call's arguments
# as one line to $FAKE_SCONTROL_LOG; `show hostnames a,b` prints a and b, one a line; `requeue`
# exits with $FAKE_SCONTROL_REQUEUE_EXIT (default 0).
echo "$*" >>"$FAKE_SCONTROL_LOG"
case "$1 $2" in
  "show hostnames") tr ',' '\n' <<<"$3" ;;
  "requeue "*) exit "${FAKE_SCONTROL_REQUEUE_EXIT:-0}" ;;
esac
