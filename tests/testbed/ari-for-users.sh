#!/usr/bin/env bash
# ari-for-users.sh - ARI (from the source snapshot) installed where every user of the test bed
# can run it, as a site installs it for its users: Python 3.13 and ARI's venv under $DEST
# (default /opt/ari-testbed-ari), world-readable. Root only. Idempotent: a stamp of the
# snapshot's hash and of the package list skips a rebuild.
#
#   ari-for-users.sh build SNAPSHOT_TARBALL PYTHON313   prints the venv's bin directory
#   ari-for-users.sh jupyter REPO    ari-jupyter from REPO (a plain install of a copy of the
#                                    tree, as a site installs it, JupyterLab included) into
#                                    $DEST/jupyter, Debian's python3; prints its bin directory
#
# Why: the tests' own ARI venv lives under /root (mode 0700), which an unprivileged user
# cannot enter. pyenv's Python is linked against its own libpython by an absolute RUNPATH
# under /root, so the copy is run with LD_LIBRARY_PATH=$DEST/python/lib (written into the
# venv's activate-free wrapper env file $DEST/env.sh).
set -Eeuo pipefail
DEST=${ARI_USERS_ARI_DIR:-/opt/ari-testbed-ari}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
log() { printf '[ari-for-users %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# what ARI's skills import besides ari-core's own dependencies (see ari-snapshot/README.md)
EXTRAS=("mcp>=1.28.1,<2" "blobfile>=3.0.0" "structlog>=25.1.0" "tiktoken>=0.9.0" "openai>=1.99.9"
        "tenacity>=9.0.0" matplotlib pandas scipy semanticscholar chz)

build() {
  local tarball=$1 py313=$2 stamp pyhome
  [ "$(id -u)" = 0 ] || die "root is needed (writes $DEST)"
  [ -f "$tarball" ] || die "no snapshot tarball: $tarball"
  stamp="$(sha256sum "$tarball" | cut -c1-16) ${EXTRAS[*]}"
  if [ "$(cat "$DEST/.stamp" 2>/dev/null)" = "$stamp" ] && [ -x "$DEST/venv/bin/ari" ]; then
    echo "$DEST/venv/bin"; return 0
  fi
  log "building ARI for all users into $DEST"
  rm -rf "$DEST"; install -d -m 755 "$DEST" "$DEST/src"
  pyhome=$(cd "$(dirname "$py313")/.." && pwd)
  cp -a "$pyhome" "$DEST/python"
  export LD_LIBRARY_PATH=$DEST/python/lib
  tar -xzf "$tarball" -C "$DEST/src" --strip-components=1
  "$DEST/python/bin/python3.13" -m venv "$DEST/venv"
  local pip=("$DEST/venv/bin/python" -m pip install -q --disable-pip-version-check)
  { "${pip[@]}" -e "$DEST/src/ari-skill-memory" && "${pip[@]}" -e "$DEST/src/ari-core" \
    && "${pip[@]}" --no-deps -e "$DEST/src/ari-skill-paper-re" -e "$DEST/src/ari-skill-evaluator" \
    && "${pip[@]}" "${EXTRAS[@]}"; } >"$DEST/build.log" 2>&1 \
    || { tail -n 20 "$DEST/build.log" >&2; die "pip failed; see $DEST/build.log"; }
  printf 'export LD_LIBRARY_PATH=%s\nexport PATH=%s:$PATH\n' "$DEST/python/lib" "$DEST/venv/bin" >"$DEST/env.sh"
  chmod -R a+rX "$DEST"
  echo "$stamp" >"$DEST/.stamp"
  echo "$DEST/venv/bin"
}

jupyter() {
  local repo=$1 src venv=$DEST/jupyter
  [ "$(id -u)" = 0 ] || die "root is needed (writes $DEST)"
  install -d -m 755 "$DEST"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  src=$(mktemp -d "$DEST/src.XXXXXX")
  git -C "$repo" ls-files -z --cached --others --exclude-standard \
    | (cd "$repo" && xargs -0 cp --parents -t "$src" 2>/dev/null) || cp -a "$repo/." "$src/"
  # with its dependencies (JupyterLab and all, as a site installs it: the whole-run test follows
  # the run in the user's own JupyterLab) once; later only ari-jupyter itself is replaced
  if ! "$venv/bin/python" -c 'import jupyterlab, ipykernel' 2>/dev/null; then
    "$venv/bin/pip" install -q --disable-pip-version-check "$src" pyyaml >"$DEST/pip-jupyter.log" 2>&1 \
      || { tail -n 20 "$DEST/pip-jupyter.log" >&2; die "pip install of ari-jupyter with JupyterLab failed"; }
  fi
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall "$src" \
    >>"$DEST/pip-jupyter.log" 2>&1 || { tail -n 20 "$DEST/pip-jupyter.log" >&2; die "pip install of ari-jupyter failed"; }
  rm -rf "$src"
  chmod -R a+rX "$venv"
  echo "$venv/bin"
}

case "${1:-}" in
  build) shift; build "$@" ;;
  jupyter) shift; jupyter "$@" ;;
  *) die "usage: $0 build SNAPSHOT_TARBALL PYTHON313 | jupyter REPO" ;;
esac
