#!/usr/bin/env bash
# Real Environment Modules (Debian's environment-modules package, Tcl modulecmd) for the tests,
# beside the test bed's Lmod. Debian's lmod and environment-modules packages conflict, so the
# package is unpacked (dpkg-deb -x), not installed, and relocated under one directory the way a
# site installs it under /opt: its own paths are rewritten, nothing in /etc or /usr is touched.
#
#   bash tests/testbed/environment-modules.sh setup [DIR]   # idempotent; prints the env file
#   bash tests/testbed/environment-modules.sh remove [DIR]
#
# DIR defaults to $ARI_ENVMODULES_DIR or /tmp/ari-envmodules. DIR/env.sh exports MODULES_CMD,
# MODULESHOME and MODULEPATH (Tcl modulefiles openmpi/4.1 and cuda/12.4, as the Lmod tree has).
set -euo pipefail

PACKAGE=environment-modules
cmd=${1:-setup}
DIR=$(realpath -m "${2:-${ARI_ENVMODULES_DIR:-/tmp/ari-envmodules}}")
ROOT=$DIR/root
ENV_FILE=$DIR/env.sh

log() { printf '[ari-envmodules] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

need_tclsh() {  # modulecmd.tcl starts with #!/usr/bin/tclsh8.6
  [ -x /usr/bin/tclsh8.6 ] && return 0
  [ "$(id -u)" = 0 ] || die "tclsh8.6 is missing and installing it needs root (apt-get install tcl8.6)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q tcl8.6 >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q tcl8.6 >&2; } \
    || die "could not install tcl8.6"
}

fetch_deb() {  # the .deb from apt's cache, or downloaded by apt-get (no install)
  local cached
  cached=$(ls /var/cache/apt/archives/${PACKAGE}_*.deb 2>/dev/null | tail -n1 || true)
  if [ -n "$cached" ]; then cp "$cached" "$DIR/"; return 0; fi
  (cd "$DIR" && apt-get download -q "$PACKAGE" >&2 2>/dev/null) && return 0
  [ "$(id -u)" = 0 ] || die "apt-get download $PACKAGE failed (package lists out of date? run apt-get update)"
  apt-get update -q >&2 && (cd "$DIR" && apt-get download -q "$PACKAGE" >&2) \
    || die "apt-get download $PACKAGE failed"
}

relocate() {  # rewrite the package's absolute paths to ROOT (only the files the tests use)
  local modulecmd libdir file
  modulecmd=$(find "$ROOT/usr/lib" -name modulecmd.tcl -type f | head -n1)
  [ -n "$modulecmd" ] || die "no modulecmd.tcl in the package"
  libdir=${modulecmd#"$ROOT"}; libdir=${libdir%/modulecmd.tcl}
  for file in "$modulecmd" "$ROOT/usr/share/modules/init/bash" "$ROOT/usr/share/modules/init/sh" \
              "$ROOT/usr/share/modules/init/profile.sh" "$ROOT/etc/profile.d/modules.sh" \
              "$ROOT/etc/environment-modules/modulespath" "$ROOT/etc/environment-modules/initrc"; do
    [ -f "$file" ] || continue
    sed -i -e "s#$libdir/#$ROOT$libdir/#g" -e "s#{$libdir}#{$ROOT$libdir}#g" \
           -e "s#/usr/share/modules#$ROOT/usr/share/modules#g" \
           -e "s#/etc/environment-modules#$ROOT/etc/environment-modules#g" "$file"
  done
  printf '%s\n' "$modulecmd" >"$DIR/modulecmd.path"
}

write_modulefiles() {  # the same two modules as the Lmod tree, written in Tcl
  local m=$DIR/modulefiles
  install -d "$m/openmpi" "$m/cuda"
  cat >"$m/openmpi/4.1" <<'EOF'
#%Module1.0
module-whatis "Open MPI 4.1 (Debian openmpi-bin, system install)"
conflict mpi
setenv MPI_HOME /usr/lib/x86_64-linux-gnu/openmpi
prepend-path PATH /usr/bin
EOF
  cat >"$m/cuda/12.4" <<'EOF'
#%Module1.0
module-whatis "CUDA 12.4 stand-in for tests: sets the variables, ships no toolkit"
setenv CUDA_HOME /opt/cuda-12.4-testbed
setenv CUDA_VERSION 12.4
prepend-path PATH /opt/cuda-12.4-testbed/bin
EOF
}

setup() {
  if [ -f "$ENV_FILE" ] && [ -x "$(cat "$DIR/modulecmd.path" 2>/dev/null)" ]; then
    need_tclsh; cat "$ENV_FILE"; return 0
  fi
  command -v dpkg-deb >/dev/null || die "dpkg-deb not found (a Debian-based machine is needed)"
  need_tclsh
  rm -rf "$DIR"; install -d "$DIR"
  fetch_deb
  dpkg-deb -x "$DIR"/${PACKAGE}_*.deb "$ROOT"
  relocate
  write_modulefiles
  local version
  version=$(dpkg-deb -f "$DIR"/${PACKAGE}_*.deb Version)
  {
    echo "# Environment Modules $version (Debian package, unpacked and relocated): source this file"
    printf 'export %s=%q\n' \
      MODULES_CMD "$(cat "$DIR/modulecmd.path")" \
      MODULESHOME "$ROOT/usr/share/modules" \
      MODULEPATH "$DIR/modulefiles" \
      ARI_ENVMODULES_VERSION "$version"
  } >"$ENV_FILE.new"
  mv "$ENV_FILE.new" "$ENV_FILE"
  log "Environment Modules $version ready under $DIR"
  cat "$ENV_FILE"
}

mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"  # two test sessions set up one directory in turn
flock -w 600 9 || die "another setup of $DIR holds $DIR.lock"
case "$cmd" in
  setup) setup ;;
  remove) rm -rf "$DIR"; log "removed $DIR" ;;
  *) die "usage: $0 setup|remove [DIR]" ;;
esac
