# common.sh - shell helpers shared by the test-bed scripts (sourced, not run).

# Daemons started by the test bed must keep no descriptor of ours or of our caller: a `flock`
# on the test-bed lock (or a start lock) inherited by munged or sshd would outlive the script
# and block every later user of the test bed.
close_inherited_fds() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  return 0
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
