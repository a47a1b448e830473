#!/usr/bin/env bash
# ARI run 20260706120000_spgemm_scaling_on_two_nodes: a follow-up allocation that resumes it (ari-jupyter @VERSION@).
# Submitted by ari-jupyter follow-up with partition small, 2 node(s) and time limit 01:00:00, the envelope approved at Write.
set -eo pipefail

export ARI_CHECKPOINT_DIR=/work/alice/ari/checkpoints/20260706120000_spgemm_scaling_on_two_nodes

# ari-jupyter, which the messages below name, by path: a login shell may have reset PATH and left out the folder it is installed in.
ari_jupyter=$(command -v ari-jupyter || echo /opt/ari/venv/bin/ari-jupyter)

# Outside the approved envelope, nothing runs.
if [ "${SLURM_JOB_PARTITION:-}" != small ] || [ "${SLURM_JOB_NUM_NODES:-}" != 2 ]; then
  echo "This follow-up is not in partition small on 2 node(s), as approved: it stops." >&2
  exit 3
fi

# Modules for this run; reproduce jobs inherit them (sbatch --export ALL).
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
module load openmpi/4.1 || {
  echo "ari-jupyter hand-off: module load failed (see the lines above). This run was written for demo site rccs-cloud, whose modules exist only in its recording, so on this machine that is expected and the exercise ends here. What the site's terminal would meet: $ari_jupyter check-handoff $ARI_CHECKPOINT_DIR" >&2
  exit 1
}

# Memory settings inherited from the notebook's own job make srun inside reproduce jobs fail.
unset SLURM_MEM_PER_CPU SLURM_MEM_PER_GPU SLURM_MEM_PER_NODE

# Inside a job step (the server's srun), ARI's srun steps share its resources, or they wait for them.
if [ -n "${SLURM_STEP_ID:-}" ]; then export SLURM_OVERLAP=1; fi

cd /work/alice/ari

if ! command -v ari >/dev/null 2>&1; then
  echo "ari-jupyter hand-off: 'ari' is not on PATH. This run was written for demo site rccs-cloud, whose ARI exists only in its recording, so the exercise ends here. What the site's terminal would meet: $ari_jupyter check-handoff $ARI_CHECKPOINT_DIR" >&2
  exit 127
fi
# The LLM backend's key: in this shell or a .env ari reads (its value is never shown).
if [ -z "${OPENAI_API_KEY:-}" ] && ! grep -qsE '^[[:space:]]*(export[[:space:]]+)?OPENAI_API_KEY[[:space:]]*=[[:space:]]*[^[:space:]#]' \
    "$ARI_CHECKPOINT_DIR/.env" ${ARI_ROOT:+"$ARI_ROOT/.env" "$ARI_ROOT/ari-core/.env"} "$HOME/.env"; then
  echo "ari-jupyter hand-off: OPENAI_API_KEY is set neither here nor in a .env file ari reads, so every LLM call of the run would fail. Export it (or write it to ~/.env, chmod 600) and run this again; with ARI_HANDOFF_WITHOUT_KEY=1 it runs anyway." >&2
  if [ "${ARI_HANDOFF_WITHOUT_KEY:-}" != 1 ]; then exit 2; fi
fi
# The search is finished: end here, submitting nothing.
if "$ari_jupyter" follow-up "$ARI_CHECKPOINT_DIR" --finished; then
  exit 0
fi
# The allocation before has ended (afterany): make the cut run resumable, waiting while a job of the run is still in the queue.
tries=0
until "$ari_jupyter" requeue --force "$ARI_CHECKPOINT_DIR"; do
  tries=$((tries + 1))
  [ "$tries" -lt 60 ] || exit 1
  sleep 10
done
# The next follow-up, while the approved count (2 in all) allows it.
if [ -n "${SLURM_JOB_ID:-}" ]; then
  "$ari_jupyter" follow-up "$ARI_CHECKPOINT_DIR" --after "$SLURM_JOB_ID" \
    || echo "No follow-up allocation was submitted (see above); the run goes on in this allocation only." >&2
fi
log="$ARI_CHECKPOINT_DIR/ari_run_$(date +%Y%m%d%H%M%S).log"
echo "ari run log: $log"
# This script's PID: while it runs and ARI has not written .ari_pid, ARI is starting.
echo $$ > "$ARI_CHECKPOINT_DIR/.ari_handoff_pid.tmp"
mv -f "$ARI_CHECKPOINT_DIR/.ari_handoff_pid.tmp" "$ARI_CHECKPOINT_DIR/.ari_handoff_pid"
# The line ari-jupyter status prints for an interrupted run.
if [ -f "$ARI_CHECKPOINT_DIR/resume.yaml" ]; then
  ARI_CHECKPOINT_DIR=/work/alice/ari/checkpoints/20260706120000_spgemm_scaling_on_two_nodes ari resume /work/alice/ari/checkpoints/20260706120000_spgemm_scaling_on_two_nodes --config /work/alice/ari/checkpoints/20260706120000_spgemm_scaling_on_two_nodes/resume.yaml 2>&1 | tee "$log"
else
  ARI_CHECKPOINT_DIR=/work/alice/ari/checkpoints/20260706120000_spgemm_scaling_on_two_nodes ari resume /work/alice/ari/checkpoints/20260706120000_spgemm_scaling_on_two_nodes 2>&1 | tee "$log"
fi
