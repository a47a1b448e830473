#!/usr/bin/env bash
# Rebuild the lab extension from labextension/ in a temporary copy with `npm ci` (the pinned
# package-lock.json) and fail when the result differs from the committed build in
# ari_jupyter/labextension/. Needs node >= 20.19 and jupyter-builder (installed with jupyterlab)
# for the Python named by $PYTHON (default: python3).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
python=${PYTHON:-python3}
committed="$repo/ari_jupyter/labextension"

scripts=$("$python" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
export PATH="$scripts:$PATH"
command -v jupyter-builder >/dev/null || { echo "check-fresh: jupyter-builder not found (pip install jupyterlab)" >&2; exit 2; }
command -v npm >/dev/null || { echo "check-fresh: npm not found" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/ari-labext-fresh.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/labextension" "$work/ari_jupyter"
# Sources only: no node_modules, no tsc output (nor the tests'), so the build starts from the lock file.
tar -C "$here" --exclude=./node_modules --exclude=./lib --exclude=./lib-test --exclude=./tsconfig.tsbuildinfo -cf - . \
    | tar -C "$work/labextension" -xf -

cd "$work/labextension"
npm ci --no-audit --no-fund --prefer-offline
npm run build

if diff -r "$work/ari_jupyter/labextension" "$committed"; then
    echo "check-fresh: the committed build in ari_jupyter/labextension is up to date"
else
    echo "check-fresh: ari_jupyter/labextension differs from a fresh build of labextension/;" \
         "run 'cd labextension && npm ci && npm run build' and commit the result" >&2
    exit 1
fi
