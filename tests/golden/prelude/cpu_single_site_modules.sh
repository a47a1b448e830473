#!/usr/bin/env bash
set -euo pipefail

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
module load gcc/12 python/3.11
