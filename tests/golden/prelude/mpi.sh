#!/usr/bin/env bash
set -euo pipefail

# Multi-node fan-out (L6): every rank is started by the launcher.
: "${SLURM_NTASKS:=${SLURM_JOB_NUM_NODES:-1}}"  # unset without --ntasks
fan_out() { srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS "$@"; }
