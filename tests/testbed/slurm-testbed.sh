#!/usr/bin/env bash
# slurm-testbed.sh - a real two-node SLURM cluster (slurmctld + slurmd n1, n2), Lmod and
# OpenMPI on this one machine, for the project's integration tests. Root only.
#
#   slurm-testbed.sh start [gres|nogres|mem|acct]  install what is missing, start (idempotent;
#                                          a running cluster of another variant is restarted;
#                                          mem = nogres with memory a consumable resource;
#                                          acct = nogres with accounting: slurmdbd on MariaDB,
#                                          MinJobAge=2 so ended jobs leave squeue soon,
#                                          as they do on a site after 300 s, and fair-share
#                                          priority (multifactor: sshare gives a factor))
#   slurm-testbed.sh install [VARIANT]     only install what VARIANT needs (CI, before the tests)
#   slurm-testbed.sh stop                  cancel jobs, stop exactly what start started (by PID)
#   slurm-testbed.sh status                variant, daemons and sinfo; exit 1 when not running
#   slurm-testbed.sh env                   print the path of the env file to source
#   slurm-testbed.sh ctld-stop|ctld-start  stop / restart only slurmctld (controller down)
#   slurm-testbed.sh ctld-pause|ctld-resume  SIGSTOP / SIGCONT slurmctld (controller hangs)
#
# Why it looks the way it does:
# - No systemd here: the daemons are started directly; dpkg postinst start attempts are
#   blocked with a temporary policy-rc.d.
# - Debian's slurmd is built with multiple-slurmd support, so `slurmd -N n1` and `-N n2` are
#   two nodes on 127.0.0.1 with one port each; each runs in its own UTS namespace whose
#   hostname is the node name, so `srun hostname` really prints n1 / n2.
# - Every generated file lives under $ARI_TESTBED_DIR (default /tmp/ari-testbed); nothing in
#   /etc is changed, commands find the cluster through SLURM_CONF (see the env file).
# - Every process we start carries ARI_TESTBED_DIR and our SLURM_CONF in its environment
#   (slurmstepd keeps only the latter): that is how `stop` recognises stray slurmstepd of our
#   own jobs and tells a munged started by us from someone else's.
# - Accounting (variant acct): Debian's MariaDB and slurmdbd. The database's files are made once
#   per test bed directory ($LAB/mysql, a few seconds) and kept across starts; mariadbd listens
#   on its own socket only, slurmdbd reaches it as root through that socket (unix_socket
#   authentication: no password anywhere), and both are stopped by PID like the other daemons.
set -Eeuo pipefail
trap 'log "FAILED (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

LAB=${ARI_TESTBED_DIR:-/tmp/ari-testbed}
CTLD_PORT=${ARI_TESTBED_CTLD_PORT:-16827}
SLURMD_BASE_PORT=${ARI_TESTBED_SLURMD_BASE_PORT:-17100}  # node i listens on base+i
ETC=$LAB/etc
RUN=$LAB/run
LOG=$LAB/log
ENV_FILE=$LAB/env.sh
NODES=(n1 n2)
NODELIST="n[1-2]"
PACKAGES=(slurmctld slurmd slurm-client munge openmpi-bin libopenmpi-dev lmod)
ACCT_PACKAGES=(mariadb-server slurmdbd)  # only the acct variant needs them
DBD_PORT=${ARI_TESTBED_DBD_PORT:-16819}
DB_DIR=$LAB/mysql
DB_RUN=$LAB/mysql-run   # mariadbd's socket and PID file: a folder user mysql owns
DB_SOCK=$DB_RUN/mysqld.sock
LMOD_INIT=/usr/share/lmod/lmod/init/bash

export ARI_TESTBED_DIR=$LAB
export SLURM_CONF=$ETC/slurm.conf
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

log() { printf '[ari-testbed %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# close_inherited_fds, installed
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# run DESCRIPTION CMD...: run a step quietly; on failure say what failed, how, and its output
# (output goes to a file, not a pipe: a daemon that keeps its stdio open must not block us)
run() {
  local what=$1 out rc=0; shift
  out=$(mktemp "${TMPDIR:-/tmp}/ari-testbed-step.XXXXXX")
  ( close_inherited_fds; exec "$@" ) >"$out" 2>&1 </dev/null || rc=$?
  if [ "$rc" != 0 ]; then
    log "FAILED: $what (exit $rc)"
    log "  command: $*"
    tail -n 30 "$out" | sed 's/^/  | /' >&2
  fi
  rm -f "$out"
  return "$rc"
}

# show_log FILE: the tail of a daemon log, printed when a daemon does not come up
show_log() { [ -f "$1" ] && { log "last lines of $1:"; tail -n 20 "$1" | sed 's/^/  | /' >&2; }; return 0; }

# ---- processes: only ever signal PIDs we know, after checking what they are -------------
ours() {  # ours PID COMM: alive, named COMM, and started by this test bed
  local p=$1 c=$2
  alive "$p" "$c" && tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" \
    | grep -qxF -e "ARI_TESTBED_DIR=$LAB" -e "SLURM_CONF=$SLURM_CONF"
}

alive() {  # alive PID COMM: PID exists, is named COMM and is not a zombie
  local p=$1 c=$2 state
  [ -n "$p" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$c" ] || return 1
  state=$(awk '{sub(/^.*\) /, ""); print $1}' "/proc/$p/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

pids_named() {  # pids_named COMM: every PID whose comm is COMM
  local d
  for d in /proc/[0-9]*; do
    [ "$(cat "$d/comm" 2>/dev/null)" = "$1" ] && echo "${d#/proc/}"
  done
  return 0
}

descendants() {  # descendants PID: all children, grandchildren, ... of PID
  local p=$1 d ppid kids=()
  for d in /proc/[0-9]*; do
    ppid=$(awk '{sub(/^.*\) /, ""); print $2}' "$d/stat" 2>/dev/null) || continue
    [ "$ppid" = "$p" ] && kids+=("${d#/proc/}")
  done
  for d in "${kids[@]}"; do echo "$d"; descendants "$d"; done
}

terminate() {  # terminate COMM PID...: TERM ours, wait up to 10 s for them to go, then KILL
  local c=$1 p i left; shift
  local pids=()
  # (CONT too: a paused slurmctld would otherwise hold the TERM until KILL)
  for p in "$@"; do ours "$p" "$c" && { kill -TERM "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; pids+=("$p"); }; done
  [ ${#pids[@]} = 0 ] && return 0
  for i in $(seq 1 100); do
    left=0; for p in "${pids[@]}"; do alive "$p" "$c" && left=1; done
    [ $left = 0 ] && break; sleep 0.1
  done
  for p in "${pids[@]}"; do
    if alive "$p" "$c"; then log "$c $p ignored TERM for 10 s, sending KILL"; kill -KILL "$p" 2>/dev/null || true; fi
  done
  log "stopped $c (pid ${pids[*]})"
}

pidfile_pid() { if [ -s "$1" ]; then cat "$1"; fi; }

# ---- install ----------------------------------------------------------------------------

do_install() {  # do_install VARIANT
  local missing=() p own_policy=0 t0=$SECONDS wanted=("${PACKAGES[@]}")
  [ "${1:-}" = acct ] && wanted+=("${ACCT_PACKAGES[@]}")
  for p in "${wanted[@]}"; do installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} = 0 ] && return 0
  command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get to install them"
  log "installing: ${missing[*]}"
  # the postinst scripts run 'invoke-rc.d slurmctld start || exit 1': keep them from
  # starting daemons (there is no init system) with a policy-rc.d of our own
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\n# ari-testbed: no daemon starts from dpkg\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d; own_policy=1
  fi
  local rc=0
  run "apt-get update" apt-get -o DPkg::Lock::Timeout=600 update -q || rc=$?
  if [ $rc = 0 ]; then
    DEBIAN_FRONTEND=noninteractive run "apt-get install ${missing[*]}" \
      apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}" || rc=$?
  fi
  [ $own_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
  [ $rc = 0 ] || die "could not install ${missing[*]}"
  log "installed in $((SECONDS - t0)) s"
}

# ---- munge --------------------------------------------------------------------------------
munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
  install -d -o munge -g munge -m 0700 /etc/munge /var/log/munge
  install -d -o munge -g munge -m 0711 /var/lib/munge
  install -d -o munge -g munge -m 0755 /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    run "create /etc/munge/munge.key" mungekey --create --keyfile=/etc/munge/munge.key
  fi
  chown munge:munge /etc/munge/munge.key; chmod 0600 /etc/munge/munge.key
  if munge_ok; then log "munged already answers, using it"; return 0; fi
  # munged daemonizes and writes /run/munge/munged.pid; --force gets past a stale socket
  run "start munged as user munge" setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --force \
    || { show_log /var/log/munge/munged.log; die "munged did not start"; }
  local i; for i in $(seq 1 50); do munge_ok && break; sleep 0.1; done
  munge_ok || { show_log /var/log/munge/munged.log; die "munged started but 'munge -n | unmunge' fails"; }
  cp /run/munge/munged.pid "$RUN/munged.pid"
  log "munged started (pid $(cat "$RUN/munged.pid"))"
}

# ---- configuration ----------------------------------------------------------------------------
write_epilog() {
  # A site's proctrack/cgroup ends every process of a job with the job. The test bed's
  # proctrack/linuxproc only finds the job's processes through their parents: one whose parent
  # died first (an `ari run` whose terminal's shell ended on SIGTERM, while ARI waits for a
  # thread) is left running outside any job. The epilog (root, on each node after the job)
  # ends those: the job's user's processes that carry the job's id in their environment.
  cat >"$ETC/epilog.sh.new" <<'EOF'
#!/bin/sh
# generated by tests/testbed/slurm-testbed.sh: the job's leftover processes, as a cgroup ends them
[ -n "$SLURM_JOB_ID" ] && [ -n "$SLURM_JOB_UID" ] && [ "$SLURM_JOB_UID" != 0 ] || exit 0
for dir in /proc/[0-9]*; do
  [ "$(stat -c %u "$dir" 2>/dev/null)" = "$SLURM_JOB_UID" ] || continue
  if tr '\0' '\n' <"$dir/environ" 2>/dev/null | grep -qx "SLURM_JOB_ID=$SLURM_JOB_ID"; then
    kill -KILL "${dir#/proc/}" 2>/dev/null
  fi
done
exit 0
EOF
  chmod 755 "$ETC/epilog.sh.new"
  mv "$ETC/epilog.sh.new" "$ETC/epilog.sh"
}

write_slurm_conf() {  # write_slurm_conf VARIANT
  local variant=$1 host gres="" i
  host=$(hostname -s)
  [ "$variant" = gres ] && gres=" Gres=gpu:v100:4"
  {
    cat <<EOF
# generated by tests/testbed/slurm-testbed.sh (variant $variant)
ClusterName=ari-testbed
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$LAB/state
SlurmdSpoolDir=$LAB/spool/%n
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd-%n.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# no cgroups: what works on one machine without systemd (accounting only in variant acct)
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
EOF
    if [ "$variant" = acct ]; then
      cat <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
# a site's 300 s, shortened: an ended job leaves squeue within seconds, then only sacct knows it
MinJobAge=2
# priority from fair share, as a site with accounting keeps it: sshare gives each account's factor
PriorityType=priority/multifactor
PriorityWeightFairshare=10000
EOF
    else
      cat <<EOF
AccountingStorageType=accounting_storage/none
MinJobAge=300
EOF
    fi
    cat <<EOF
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=$([ "$variant" = mem ] && echo CR_Core_Memory || echo CR_Core)
EOF
    # mem: memory is consumable too (RealMemory below); a job without --mem gets 500 MB a CPU
    [ "$variant" = mem ] && echo "DefMemPerCPU=500"
    cat <<EOF
# each node claims 4 CPUs although the machine may have fewer cores
SlurmdParameters=config_overrides
ReturnToService=2
InactiveLimit=0
KillWait=5
# what proctrack/cgroup does on a site, which linuxproc cannot: see write_epilog
Epilog=$ETC/epilog.sh
MailProg=/bin/true
# impossible requests (-N 3, -t over MaxTime) are refused at submit time instead of
# pending forever, which is what sites usually configure and what the doctor must read
EnforcePartLimits=ALL
EOF
    [ "$variant" = gres ] && echo "GresTypes=gpu"
    for i in "${!NODES[@]}"; do
      echo "NodeName=${NODES[$i]} NodeHostname=${NODES[$i]} NodeAddr=127.0.0.1 Port=$((SLURMD_BASE_PORT + i + 1)) CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=4000$gres State=UNKNOWN"
    done
    echo "PartitionName=small Nodes=$NODELIST Default=YES MaxTime=60 State=UP"
    echo "PartitionName=large Nodes=$NODELIST Default=NO MaxTime=INFINITE State=UP"
  } >"$ETC/slurm.conf.new"
  mv "$ETC/slurm.conf.new" "$ETC/slurm.conf"
  write_epilog

  rm -f "$ETC/gres.conf"
  if [ "$variant" = gres ]; then
    # Slurm 22.05 drops a GPU without File= ("Removing file-less GPU") and wants a char
    # device there: fake nvidia nodes (major 195), never opened, no driver behind them
    install -d -m 0755 "$LAB/dev"
    for i in 0 1 2 3; do
      [ -c "$LAB/dev/nvidia$i" ] && continue
      rm -f "$LAB/dev/nvidia$i"
      # without CAP_MKNOD a plain file still counts (slurmd logs "not a valid character device")
      mknod -m 0666 "$LAB/dev/nvidia$i" c 195 "$i" 2>/dev/null \
        || { log "mknod not permitted: plain file $LAB/dev/nvidia$i instead"; touch "$LAB/dev/nvidia$i"; }
    done
    cat >"$ETC/gres.conf" <<EOF
# generated by tests/testbed/slurm-testbed.sh
AutoDetect=off
NodeName=$NODELIST Name=gpu Type=v100 File=$LAB/dev/nvidia[0-3]
EOF
  fi
}

write_modulefiles() {
  local m=$LAB/modulefiles
  install -d "$m/openmpi" "$m/cuda"
  cat >"$m/openmpi/4.1.lua" <<'EOF'
help([[Open MPI 4.1 (Debian openmpi-bin, system install)]])
whatis("Name: openmpi")
whatis("Version: 4.1")
family("mpi")
local base = "/usr/lib/x86_64-linux-gnu/openmpi"
setenv("MPI_HOME", base)
prepend_path("PATH", "/usr/bin")
prepend_path("LD_LIBRARY_PATH", pathJoin(base, "lib"))
EOF
  cat >"$m/cuda/12.4.lua" <<'EOF'
help([[CUDA 12.4 stand-in for tests: sets the variables, ships no toolkit]])
whatis("Name: cuda")
whatis("Version: 12.4")
local base = "/opt/cuda-12.4-testbed"
setenv("CUDA_HOME", base)
setenv("CUDA_VERSION", "12.4")
prepend_path("PATH", pathJoin(base, "bin"))
EOF
}

write_env_file() {  # plain `export NAME=VALUE` lines: sourced by shells, parsed by cluster.py
  local variant=$1
  {
    echo "# ari test bed ($variant): source this file"
    printf 'export %s=%q\n' \
      ARI_TESTBED_DIR "$LAB" \
      ARI_TESTBED_VARIANT "$variant" \
      SLURM_CONF "$SLURM_CONF" \
      MODULEPATH "$LAB/modulefiles" \
      BASH_ENV "$LMOD_INIT" \
      OMPI_ALLOW_RUN_AS_ROOT 1 \
      OMPI_ALLOW_RUN_AS_ROOT_CONFIRM 1
  } >"$ENV_FILE.new"
  mv "$ENV_FILE.new" "$ENV_FILE"
}

# ---- accounting (variant acct): MariaDB, slurmdbd, the cluster and the users' associations -----
db_up() { mariadb-admin --no-defaults -S "$DB_SOCK" -u root ping >/dev/null 2>&1; }

start_db() {
  local t0=$SECONDS i
  install -d -o mysql -g mysql -m 0755 "$DB_RUN"
  if [ ! -d "$DB_DIR/mysql" ]; then  # once per test bed directory: the system tables
    rm -rf "$DB_DIR"; install -d -o mysql -g mysql -m 0700 "$DB_DIR"
    run "initialise MariaDB in $DB_DIR" mariadb-install-db --no-defaults --user=mysql \
      --datadir="$DB_DIR" --auth-root-authentication-method=socket --skip-test-db \
      || die "mariadb-install-db failed"
    log "MariaDB initialised in $((SECONDS - t0)) s"
  fi
  rm -f "$DB_RUN/mariadbd.pid"
  # mariadbd stays in the foreground: started in the background, known by its PID file
  ( close_inherited_fds; exec mariadbd --no-defaults --user=mysql --datadir="$DB_DIR" \
      --socket="$DB_SOCK" --pid-file="$DB_RUN/mariadbd.pid" --skip-networking \
      --log-error="$LOG/mariadb.log" --skip-log-bin --innodb-buffer-pool-size=16M \
      --innodb-log-file-size=8M --performance-schema=OFF ) </dev/null >/dev/null 2>&1 &
  for i in $(seq 1 150); do db_up && break; sleep 0.2; done
  db_up || { show_log "$LOG/mariadb.log"; die "mariadbd did not answer on $DB_SOCK"; }
  cp "$DB_RUN/mariadbd.pid" "$RUN/mariadbd.pid"
  log "mariadbd started (pid $(cat "$RUN/mariadbd.pid")) in $((SECONDS - t0)) s"
}

write_slurmdbd_conf() {
  cat >"$ETC/slurmdbd.conf.new" <<EOF
# generated by tests/testbed/slurm-testbed.sh (variant acct)
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$RUN/slurmdbd.pid
LogFile=$LOG/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=ari_testbed_acct
EOF
  chmod 600 "$ETC/slurmdbd.conf.new"
  mv "$ETC/slurmdbd.conf.new" "$ETC/slurmdbd.conf"
}

dbd_up() { sacctmgr -n -P show cluster format=cluster >/dev/null 2>&1; }

start_dbd() {
  local t0=$SECONDS i user
  write_slurmdbd_conf
  rm -f "$RUN/slurmdbd.pid"
  # slurmdbd reads slurmdbd.conf beside SLURM_CONF; the client library finds the database's
  # socket through MYSQL_UNIX_PORT (StorageHost=localhost means a socket)
  MYSQL_UNIX_PORT=$DB_SOCK run "start slurmdbd" slurmdbd \
    || { show_log "$LOG/slurmdbd.log"; die "slurmdbd did not start"; }
  for i in $(seq 1 100); do dbd_up && break; sleep 0.2; done
  dbd_up || { show_log "$LOG/slurmdbd.log"; die "slurmdbd started but sacctmgr gets no answer"; }
  # the cluster, an account and each user's association (root, and the users the tests name)
  if [ -z "$(sacctmgr -n -P show cluster format=cluster where cluster=ari-testbed)" ]; then
    run "register cluster ari-testbed" sacctmgr -i add cluster ari-testbed || die "sacctmgr add cluster failed"
  fi
  if [ -z "$(sacctmgr -n -P show account format=account where account=ari)" ]; then
    run "add account ari" sacctmgr -i add account ari cluster=ari-testbed \
      "description=ari test bed" organization=ari || die "sacctmgr add account failed"
  fi
  for user in root ${ARI_TESTBED_ACCT_USERS:-}; do
    id -u "$user" >/dev/null 2>&1 || continue
    [ -n "$(sacctmgr -n -P show assoc format=user where user="$user" account=ari)" ] && continue
    run "add association of $user" sacctmgr -i add user "$user" account=ari cluster=ari-testbed \
      || die "sacctmgr add user $user failed"
  done
  log "slurmdbd up with the cluster registered in $((SECONDS - t0)) s"
}

# ---- daemons ---------------------------------------------------------------------------------------
ctld_up() { scontrol ping 2>/dev/null | grep -q 'is UP'; }

nodes_ready() {  # every node answers and is idle / mixed / allocated
  local states
  states=$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u) || return 1
  [ "$(printf '%s\n' "$states" | awk '$2 ~ /^(idle|mix|alloc)$/ {print $1}' | sort -u | tr '\n' ' ')" = "${NODES[*]} " ]
}

running_variant() {  # the variant of a healthy running cluster, or nothing
  [ -s "$RUN/variant" ] && ctld_ours_up && nodes_ready && cat "$RUN/variant"
  return 0
}

ctld_ours_up() { ours "$(pidfile_pid "$RUN/slurmctld.pid")" slurmctld && ctld_up; }

start_ctld() {
  # a controller of someone else on our port would answer our pings and adopt our nodes
  ! ctld_up || die "another slurmctld already answers on port $CTLD_PORT (set ARI_TESTBED_CTLD_PORT)"
  rm -f "$RUN/slurmctld.pid"
  run "start slurmctld" slurmctld -i -f "$SLURM_CONF" || { show_log "$LOG/slurmctld.log"; die "slurmctld did not start"; }
  local i; for i in $(seq 1 100); do ctld_ours_up && break; sleep 0.1; done
  ctld_ours_up || { show_log "$LOG/slurmctld.log"; die "slurmctld started but is not running or 'scontrol ping' does not say UP"; }
}

start_daemons() {
  local n t0=$SECONDS i
  rm -rf "$LAB/state"; install -d -m 0755 "$LAB/state"   # fresh state: no stale DRAIN nodes
  start_ctld
  for n in "${NODES[@]}"; do
    install -d -m 0755 "$LAB/spool/$n"
    # shellcheck disable=SC2016  # $1/$2 are expanded by that inner sh, not here
    run "start slurmd $n in its own UTS namespace" \
      unshare --uts sh -c 'hostname "$1" && exec slurmd -N "$1" -f "$2"' sh "$n" "$SLURM_CONF" \
      || { show_log "$LOG/slurmd-$n.log"; die "slurmd $n did not start"; }
  done
  for i in $(seq 1 150); do nodes_ready && break; sleep 0.2; done
  if ! nodes_ready; then
    log "nodes not ready after 30 s:"; sinfo -N -o '%N %t %E' >&2 || true
    show_log "$LOG/slurmctld.log"; for n in "${NODES[@]}"; do show_log "$LOG/slurmd-$n.log"; done
    die "nodes did not become idle"
  fi
  log "cluster up in $((SECONDS - t0)) s: $(sinfo -h -N -o '%N:%t' | sort -u | tr '\n' ' ')"
}

do_start() {
  local variant=${1:-gres} current
  case "$variant" in gres|nogres|mem|acct) ;; *) die "unknown variant '$variant' (gres, nogres, mem or acct)" ;; esac
  [ "$(id -u)" = 0 ] || die "must run as root (munge user, mknod, unshare, daemons as root)"
  install -d -m 0755 "$LAB" "$RUN" "$LOG" "$ETC"
  exec 9>"$LAB/.start.lock"; flock 9   # two concurrent starts would fight over ports
  if [ -f "$SLURM_CONF" ] && command -v scontrol >/dev/null; then
    current=$(running_variant)
    if [ "$current" = "$variant" ]; then log "already running ($variant)"; write_env_file "$variant"; return 0; fi
    [ -n "$current" ] && log "switching from $current to $variant"
  fi
  do_stop keep-munge
  do_install "$variant"
  for p in slurmctld slurmd sinfo munged unshare; do command -v "$p" >/dev/null || die "$p not found after install"; done
  start_munge
  write_slurm_conf "$variant"
  write_modulefiles
  write_env_file "$variant"
  if [ "$variant" = acct ]; then start_db; start_dbd; fi
  start_daemons
  echo "$variant" >"$RUN/variant"
  log "ready ($variant). env: $ENV_FILE"
}

cancel_jobs() {
  [ -f "$SLURM_CONF" ] && [ -n "$(pidfile_pid "$RUN/slurmctld.pid")" ] && ctld_up || return 0
  local jobs i
  jobs=$(squeue -h -o '%i' 2>/dev/null | tr '\n' ' ') || true
  [ -z "${jobs// /}" ] && return 0
  log "cancelling jobs: $jobs"
  # shellcheck disable=SC2086
  scancel $jobs 2>/dev/null || true
  for i in $(seq 1 50); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.2; done
}

stop_stray_stepds() {  # slurmstepd of our jobs that outlived slurmd, and their job processes
  local p left kids=() stray=()
  for p in $(pids_named slurmstepd); do
    ours "$p" slurmstepd || continue
    stray+=("$p"); mapfile -t -O "${#kids[@]}" kids < <(descendants "$p")
  done
  [ ${#stray[@]} = 0 ] && return 0
  log "stray slurmstepd ${stray[*]} (job processes: ${kids[*]:-none})"
  # without its slurmd a slurmstepd ignores TERM: end the job processes, then KILL it
  for p in "${kids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 0.3
  for p in "${stray[@]}"; do if ours "$p" slurmstepd; then kill -KILL "$p" 2>/dev/null || true; fi; done
  for p in "${kids[@]}"; do if [ -d "/proc/$p" ]; then kill -KILL "$p" 2>/dev/null || true; fi; done
  local i; for i in $(seq 1 20); do
    left=0; for p in "${stray[@]}"; do alive "$p" slurmstepd && left=1; done
    [ "$left" = 0 ] && break; sleep 0.1
  done
  return 0
}

do_stop() {  # do_stop [keep-munge]
  cancel_jobs
  # each daemon takes about 2 s on TERM: stop them concurrently
  local n pids=()
  for n in "${NODES[@]}"; do pids+=("$(pidfile_pid "$RUN/slurmd-$n.pid")"); done
  terminate slurmd "${pids[@]}" &
  terminate slurmctld "$(pidfile_pid "$RUN/slurmctld.pid")" &
  if [ "${1:-}" != keep-munge ]; then terminate munged "$(pidfile_pid "$RUN/munged.pid")" & fi
  wait
  stop_stray_stepds
  # accounting after the controller (it sends its last records on the way down)
  terminate slurmdbd "$(pidfile_pid "$RUN/slurmdbd.pid")"
  terminate mariadbd "$(pidfile_pid "$RUN/mariadbd.pid")"
  rm -f "$RUN/variant" "$RUN"/slurmd-*.pid "$RUN/slurmctld.pid" "$RUN/slurmdbd.pid" "$RUN/mariadbd.pid"
  [ "${1:-}" = keep-munge ] || rm -f "$RUN/munged.pid"
}

do_status() {
  local variant n p
  variant=$(running_variant)
  for n in slurmctld "${NODES[@]/#/slurmd-}" munged slurmdbd mariadbd; do
    p=$(pidfile_pid "$RUN/$n.pid")
    if [ -n "$p" ] && ours "$p" "${n%%-*}"; then echo "$n: running (pid $p)"; else echo "$n: not running (started by us)"; fi
  done
  if [ -n "$variant" ]; then echo "variant: $variant"; sinfo; return 0; fi
  echo "ari-testbed: not running"; return 1
}

cmd=${1:-status}; shift || true
case "$cmd" in
  start) do_start "$@" ;;
  install) [ "$(id -u)" = 0 ] || die "must run as root"; do_install "${1:-gres}" ;;
  stop) [ -d "$LAB" ] && do_stop; log "stopped" ;;
  status) do_status || exit 1 ;;
  env) [ -s "$ENV_FILE" ] || die "no env file yet: run '$0 start' first"; echo "$ENV_FILE" ;;
  ctld-stop) terminate slurmctld "$(pidfile_pid "$RUN/slurmctld.pid")" ;;
  ctld-start) ctld_ours_up || start_ctld; for _ in $(seq 1 150); do nodes_ready && break; sleep 0.2; done; nodes_ready || die "nodes not ready after slurmctld restart" ;;
  ctld-pause|ctld-resume)  # SIGSTOP / SIGCONT: a controller that accepts but never answers
    p=$(pidfile_pid "$RUN/slurmctld.pid"); ours "$p" slurmctld || die "slurmctld is not running"
    if [ "$cmd" = ctld-pause ]; then kill -STOP "$p"; else kill -CONT "$p"; fi ;;
  -h|--help|help) sed -n '2,30p' "$0" ;;
  *) die "unknown command '$cmd' (start|install|stop|status|env|ctld-stop|ctld-start|ctld-pause|ctld-resume)" ;;
esac
