#!/usr/bin/env bash
set -euo pipefail

# Non-login bash: define `module` before loading (L5).
if ! command -v module >/dev/null 2>&1; then
  set +u
  for init in "${MODULESHOME:-/usr/share/lmod/lmod}/init/bash" /etc/profile.d/lmod.sh \
              /etc/profile.d/modules.sh; do
    if [ -f "$init" ]; then . "$init"; break; fi
  done
  set -u
fi
module load cuda/12.4 openmpi/4.1

# Multi-node fan-out (L6): every rank is started by the launcher.
: "${SLURM_NTASKS:=${SLURM_JOB_NUM_NODES:-1}}"  # unset without --ntasks
fan_out() { srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS "$@"; }
