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
module load gcc/12 python/3.11
