#!/usr/bin/env bash
# ARI hand-off for run 20260706120000_spgemm_scaling_on_two_nodes (ari-jupyter @VERSION@).
# Run it in a terminal inside the same allocation:
#   bash /work/alice/ari/launch/20260706120000_spgemm_scaling_on_two_nodes.sh
# ARI loads $ARI_CHECKPOINT_DIR/.env because ARI_CHECKPOINT_DIR is exported.
# After the checks below, the one command it runs (its last line):
#   ari run "$ARI_CHECKPOINT_DIR/experiment.md" --profile hpc 2>&1 | tee "$log"
set -eo pipefail

export ARI_CHECKPOINT_DIR=/work/alice/ari/checkpoints/20260706120000_spgemm_scaling_on_two_nodes

# ari-jupyter, which the messages below name, by path: a login shell may have reset PATH and left out the folder it is installed in.
ari_jupyter=$(command -v ari-jupyter || echo /opt/ari/venv/bin/ari-jupyter)

# Before anything runs: this run's files are yours and unchanged, and no other user can write them or the folders they are in.
ari_uid=$(command -p id -u)
ari_stop() {
  echo "$1" >&2
  echo "Nothing was run. Check with: $ari_jupyter check-handoff $ARI_CHECKPOINT_DIR -- and write the run again in a workspace folder only you can write (the admin guide, Shared workspaces: ari-jupyter guide admin)." >&2
  exit 3
}
ari_own_group() {
  local members
  [ "$1" = "$(command -p id -g)" ] && [ "$(command -p id -gn)" = "$(command -p id -un)" ] || return 1
  members=$(command -p getent group "$1" 2>/dev/null | command -p cut -d: -f4) || return 1
  [ -z "$members" ] || [ "$members" = "$(command -p id -un)" ]
}
ari_check() {
  local info owner group mode
  if [ "$1" = ours ] && [ -L "$2" ]; then ari_stop "ari-jupyter hand-off: stopped before running anything: $2 is missing, unreadable or a symbolic link."; fi
  info=$(command -p stat -L -c '%u %g %a' -- "$2" 2>/dev/null || command -p stat -L -f '%u %g %Mp%Lp' -- "$2" 2>/dev/null) \
    || ari_stop "ari-jupyter hand-off: stopped before running anything: $2 is missing, unreadable or a symbolic link."
  read -r owner group mode <<<"$info"
  if [ "$owner" != "$ari_uid" ] && { [ "$1" = ours ] || [ "$owner" != 0 ]; }; then
    ari_stop "ari-jupyter hand-off: stopped before running anything: $2 belongs to another user (uid $owner), who could change what this script runs as you."
  fi
  mode=$((8#$mode))
  if [ $((mode & 8#002)) != 0 ] || { [ $((mode & 8#020)) != 0 ] && { [ "$1" = ours ] || ! ari_own_group "$group"; }; }; then
    if [ "$1" = ours ] || [ $((mode & 8#1000)) = 0 ]; then
      mode=$(printf "%04o" "$mode")
      ari_stop "ari-jupyter hand-off: stopped before running anything: other users can write $2 (mode $mode), so they could change what this script runs as you."
    fi
  fi
}
ari_way() {
  local dir=$1
  while :; do
    ari_check way "$dir"
    if [ "$dir" = / ]; then break; fi
    dir=${dir%/*}
    dir=${dir:-/}
  done
}
ari_way /work/alice/ari
ari_way "$(cd -P -- /work/alice/ari && pwd -P)"
for ari_path in /work/alice/ari/checkpoints /work/alice/ari/launch /work/alice/ari/slurm_logs /work/alice/ari/experiments "$ARI_CHECKPOINT_DIR" "${BASH_SOURCE[0]}"; do
  ari_check ours "$ari_path"
done
while read -r ari_sum ari_name; do
  ari_path=$ARI_CHECKPOINT_DIR/$ari_name
  ari_check ours "$ari_path"
  ari_got=$( (command -p sha256sum || command -p shasum -a 256) <"$ari_path" 2>/dev/null | command -p cut -d" " -f1)
  if [ "$ari_got" != "$ari_sum" ]; then ari_stop "ari-jupyter hand-off: stopped before running anything: $ari_path is not the file written with this script (its sha256 differs)."; fi
done <<'ARI_JUPYTER_SHA256'
d39de14b1dd69994dab20a885d9b7bf3cc81b7d2d8b1570defc6919b66e3099e followup.sh
ARI_JUPYTER_SHA256
ari_check ours "$ARI_CHECKPOINT_DIR/launch_config.json"

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
# Inside an allocation: submit the follow-up you approved (at most 2 in all), which resumes the run once this allocation ends.
if [ -n "${SLURM_JOB_ID:-}" ]; then
  "$ari_jupyter" follow-up "$ARI_CHECKPOINT_DIR" --after "$SLURM_JOB_ID" \
    || echo "No follow-up allocation was submitted (see above); the run goes on in this allocation only." >&2
fi
log="$ARI_CHECKPOINT_DIR/ari_run_$(date +%Y%m%d%H%M%S).log"
echo "ari run log: $log"
# This script's PID: while it runs and ARI has not written .ari_pid, ARI is starting.
echo $$ > "$ARI_CHECKPOINT_DIR/.ari_handoff_pid.tmp"
mv -f "$ARI_CHECKPOINT_DIR/.ari_handoff_pid.tmp" "$ARI_CHECKPOINT_DIR/.ari_handoff_pid"
ari run "$ARI_CHECKPOINT_DIR/experiment.md" --profile hpc 2>&1 | tee "$log"
