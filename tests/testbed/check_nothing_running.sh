#!/usr/bin/env bash
# check_nothing_running.sh - exit 1 when test-bed processes outlived the tests: any slurmctld,
# slurmd or slurmstepd, a munged, slurmdbd or mariadbd that the test bed started (ARI_TESTBED_DIR
# in its environment), or the shared filesystem's sshd / sshfs (their command line names
# ARI_SHAREDFS_DIR) and its mount, and the hub of tests/testbed/hub.sh: anything running from
# ARI_HUB_DIR (hub, proxy, sshd, sshfs, single-user servers and their kernels), the test users'
# processes and their home mounts (ARI_HUB_USERS, default: the hub tests' two users). Zombies are ignored (already dead, waiting for init to reap
# them); the check waits up to ARI_CHECK_GRACE_S (default 5) seconds for exiting processes first.
set -u
LAB=${ARI_TESTBED_DIR:-/tmp/ari-testbed}
SHARED=${ARI_SHAREDFS_DIR:-/tmp/ari-sharedfs}
HUB=${ARI_HUB_DIR:-/tmp/ari-hub}
read -r -a HUB_USERS <<<"${ARI_HUB_USERS:-${ARI_HUB_USER:-ari-hubuser} ari-hubuser2}"
HUB_UIDS=" "   # " 1001 1002 ": the uids of those that exist
for user in "${HUB_USERS[@]}"; do uid=$(id -u "$user" 2>/dev/null) && HUB_UIDS+="$uid "; done
GRACE=${ARI_CHECK_GRACE_S:-5}

leftovers() {
  local d pid comm state
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    comm=$(cat "$d/comm" 2>/dev/null) || continue
    case "$comm" in
      slurmctld|slurmd|slurmstepd|slurmscriptd) ;;
      munged|slurmdbd|mariadbd) tr '\0' '\n' 2>/dev/null <"$d/environ" | grep -qxF "ARI_TESTBED_DIR=$LAB" || continue ;;
      sshd|sshfs) tr '\0' ' ' 2>/dev/null <"$d/cmdline" | grep -qF "$SHARED/" || continue ;;
      *) if tr '\0' ' ' 2>/dev/null <"$d/cmdline" | grep -qF "$HUB/"; then :
         elif [[ "$HUB_UIDS" == *" $(stat -c %u "$d" 2>/dev/null) "* ]]; then :
         else continue; fi ;;
    esac
    state=$(awk '{sub(/^.*\) /, ""); print $1}' "$d/stat" 2>/dev/null) || continue
    [ "$state" = Z ] && continue
    echo "$pid $comm $(tr '\0' ' ' 2>/dev/null <"$d/cmdline")"
  done
  grep -F " fuse.sshfs root@127.0.0.1:$SHARED/" /proc/self/mountinfo | awk '{print "mount", $5}'
  for user in "${HUB_USERS[@]}"; do
    grep -F " fuse.sshfs $user@127.0.0.1:" /proc/self/mountinfo | awk '{print "mount", $5}'
  done
}

deadline=$((SECONDS + GRACE))
while :; do
  left=$(leftovers)
  [ -z "$left" ] && { echo "nothing of the SLURM test bed is running"; exit 0; }
  [ "$SECONDS" -ge "$deadline" ] && break
  sleep 0.5
done
echo "still running after the tests (pid comm args):"
printf '%s\n' "$left" | sed 's/^/  /'
exit 1
