# Sourced by every BFTS job ARI's hpc skill submits (sbatch --export=NONE; ARI_ENV_FILE in .env).
# ari-jupyter @VERSION@, run 20260706120000_spgemm_scaling_on_two_nodes. The job exports what this file sets (set -a).
ARI_CHECKPOINT_DIR=/work/alice/ari/checkpoints/20260706120000_spgemm_scaling_on_two_nodes
# --export=NONE leaves SLURM_EXPORT_ENV=NONE in the job, and every srun in it reads that:
# its tasks would start with no PATH at all ("execve(): sh: No such file or directory").
# The job's own environment (this file, the modules below) goes to its steps instead.
SLURM_EXPORT_ENV=ALL
ARI_SLURM_PARTITION=small
ARI_SLURM_CPUS=4
ARI_SLURM_WALLTIME=01:00:00
ARI_PHASE1_SANDBOX=slurm
SLURM_DEFAULT_PARTITION=small
ARI_MAX_NODES=30
ARI_MAX_DEPTH=5
ARI_MAX_REACT=80
ARI_TIMEOUT_NODE=7200
ARI_PARALLEL=4
ARI_FRONTIER_SCORE=scientific_plus_diversity
ARI_COMPOSITE=harmonic_mean
ARI_AXIS_MODE=dynamic
ARI_BFTS_ALLOW_WEB=0
ARI_PAPER_LANGUAGE=en
SLURM_LOG_DIR=/work/alice/ari/slurm_logs
ARI_ENV_FILE=/work/alice/ari/checkpoints/20260706120000_spgemm_scaling_on_two_nodes/bfts_env.sh

# The run's modules (step 3 / --module), loaded in the job as in the hand-off.
# A non-login bash has no `module`: define it before loading (L5).
if ! command -v module >/dev/null 2>&1; then
  case $- in *u*) ari_nounset=1; set +u ;; *) ari_nounset= ;; esac
  for init in ${MODULESHOME:+"$MODULESHOME/init/bash"} \
              /etc/profile.d/lmod.sh /usr/share/lmod/lmod/init/bash /etc/profile.d/modules.sh \
              /usr/share/modules/init/bash /usr/share/Modules/init/bash; do
    if [ -r "$init" ]; then . "$init" || true; break; fi
  done
  if [ -n "$ari_nounset" ]; then set -u; fi
fi
module load openmpi/4.1 || echo "ari-jupyter: module load failed in this BFTS job" >&2
