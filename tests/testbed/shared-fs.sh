#!/usr/bin/env bash
# shared-fs.sh - a real network filesystem for the test bed's two nodes: sshfs (FUSE over SFTP)
# served by an sshd of our own on 127.0.0.1. This kernel has no NFS client; fuse.sshfs is a
# network filesystem the shared-filesystem probe must recognise from the real mount table,
# with nothing substituted. Root only (FUSE mount, package install).
#
#   shared-fs.sh start    install what is missing, start sshd, mount (idempotent); prints the mount point
#   shared-fs.sh stop     unmount, stop exactly the sshd we started (by PID)
#   shared-fs.sh status   exit 1 when not mounted
#
# The mount point is under $HOME (ARI's prefix rule also calls $HOME shared), the exported
# directory and all keys and configs under $ARI_SHAREDFS_DIR; nothing in /etc is changed.
# ARI_SHAREDFS_OPTS adds sshfs -o options (e.g. uid=N,gid=N: a user's home whose files it owns).
set -Eeuo pipefail

LAB=${ARI_SHAREDFS_DIR:-/tmp/ari-sharedfs}
PORT=${ARI_SHAREDFS_PORT:-16922}
MOUNT=${ARI_SHAREDFS_MOUNT:-$HOME/.cache/ari-testbed-shared}
EXPORT=$LAB/export
PACKAGES=(openssh-server openssh-client sshfs)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

log() { printf '[ari-sharedfs %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# close_inherited_fds, installed
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

install_missing() {
  local p missing=() own_policy=0
  for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  if [ ! -e /usr/sbin/policy-rc.d ]; then  # no daemon starts from dpkg (no init system here)
    printf '#!/bin/sh\n# ari-sharedfs: no daemon starts from dpkg\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d; own_policy=1
  fi
  local rc=0
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >"$LAB/apt.log" 2>&1 \
    || { apt-get update -q >>"$LAB/apt.log" 2>&1 \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$LAB/apt.log" 2>&1; } \
    || rc=$?
  [ $own_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
  [ $rc = 0 ] || { tail -n 20 "$LAB/apt.log" >&2; die "apt-get install ${missing[*]} failed"; }
}

sshd_pid() {  # our sshd listener, if it runs
  local pid
  pid=$(cat "$LAB/sshd.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-f $LAB/sshd_config" && echo "$pid"
}

mounted() { [ "$(findmnt -n -o FSTYPE --target "$MOUNT" 2>/dev/null)" = fuse.sshfs ] \
            && [ "$(findmnt -n -o TARGET --target "$MOUNT")" = "$MOUNT" ]; }

start_sshd() {
  sshd_pid >/dev/null && return 0
  [ -f "$LAB/host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$LAB/host_key"
  [ -f "$LAB/client_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$LAB/client_key"
  cp "$LAB/client_key.pub" "$LAB/authorized_keys"
  cat >"$LAB/sshd_config" <<EOF
# ari-sharedfs: serves $EXPORT over SFTP on 127.0.0.1 only
Port $PORT
ListenAddress 127.0.0.1
HostKey $LAB/host_key
PidFile $LAB/sshd.pid
AuthorizedKeysFile $LAB/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
EOF
  install -d -m 755 /run/sshd  # sshd's privilege separation directory
  ( close_inherited_fds; exec /usr/sbin/sshd -f "$LAB/sshd_config" -E "$LAB/sshd.log" ) \
    || { tail -n 20 "$LAB/sshd.log" >&2; die "sshd did not start"; }
  local _
  for _ in $(seq 1 50); do sshd_pid >/dev/null && return 0; sleep 0.1; done
  die "sshd wrote no pid file: $(tail -n 5 "$LAB/sshd.log")"
}

do_start() {
  [ "$(id -u)" = 0 ] || die "root is needed (FUSE mount, packages)"
  [ -c /dev/fuse ] || die "/dev/fuse is missing: no FUSE on this machine"
  install -d -m 755 "$LAB" "$EXPORT"
  install_missing
  start_sshd
  if ! mounted; then
    install -d "$MOUNT"
    ( close_inherited_fds
      exec sshfs -p "$PORT" -o "IdentityFile=$LAB/client_key,StrictHostKeyChecking=no" \
        -o "UserKnownHostsFile=/dev/null,BatchMode=yes,LogLevel=ERROR,allow_other${ARI_SHAREDFS_OPTS:+,$ARI_SHAREDFS_OPTS}" \
        "root@127.0.0.1:$EXPORT" "$MOUNT" ) || die "sshfs mount of $MOUNT failed"
    mounted || die "$MOUNT is not a fuse.sshfs mount after sshfs"
  fi
  echo "$MOUNT" >"$LAB/mountpoint"
  log "$MOUNT: fuse.sshfs from 127.0.0.1:$PORT:$EXPORT"
  echo "$MOUNT"
}

do_stop() {
  local target pid
  target=$(cat "$LAB/mountpoint" 2>/dev/null || echo "$MOUNT")
  if [ "$(findmnt -n -o FSTYPE --target "$target" 2>/dev/null)" = fuse.sshfs ]; then
    fusermount3 -u "$target" 2>/dev/null || fusermount -u "$target" 2>/dev/null || umount -l "$target"
  fi
  if pid=$(sshd_pid); then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$LAB/sshd.pid" "$LAB/mountpoint"
  log "stopped"
}

case "${1:-status}" in
  start) do_start ;;
  stop) [ -d "$LAB" ] && do_stop || true ;;
  status) if mounted; then echo "$MOUNT: mounted (fuse.sshfs)"; else echo "not mounted"; exit 1; fi ;;
  *) die "usage: $0 start|stop|status" ;;
esac
