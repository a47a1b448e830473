#!/usr/bin/env bash
# hub.sh - a JupyterHub whose spawner is batchspawner's SlurmSpawner, on the SLURM test bed,
# the way a site hosts JupyterLab inside batch jobs (R-CCS Cloud and many others). Root only.
#
#   hub.sh start REPO   install what is missing, create the test user, mount its home, start
#                       the hub (idempotent); REPO is the ari-jupyter tree installed for users
#   hub.sh stop         stop the hub, cancel the user's jobs, unmount, remove the test user
#   hub.sh restart      stop the hub process and start it again with the same config and database
#                       (the servers live on when ARI_HUB_KEEP_SERVERS=1 started it)
#   hub.sh status       exit 1 when the hub does not answer
#   hub.sh env          print the path of the env file to source (URL, user, password)
#
# Why it looks the way it does:
# - The cluster must already run (slurm-testbed.sh start); SLURM_CONF comes from its env file.
# - The user is a real unprivileged Unix user (useradd) whose home is on a network filesystem:
#   sshfs from an sshd of our own, logged in AS that user, so files it writes are its own on
#   the server side, as on NFS. Mounted at /home/<user>: ARI and our shared-FS probe both count
#   /home as shared.
# - Python for the site is Debian's /usr/bin/python3 in a venv under $HUB: the user must be
#   able to execute it (root's pyenv lives in /root, mode 0700). ari-jupyter is installed
#   there, system-wide for every user, as the README tells a site admin (docs/admin.md).
# - Single-user servers are 2-node sbatch jobs; the server runs in the batch step on the first
#   node (req_srun=''), so terminals it opens carry the job's SLURM_* variables. The users in
#   ARI_HUB_STEP_USERS get batchspawner's other mode: the server in a job step of one task
#   (ARI_HUB_STEP_SRUN), whose terminals carry the step's variables.
# - ARI_HUB_USERS: the hub's users, space-separated (default: ARI_HUB_USER alone), each a real
#   user with its own sshfs home, all logging in with the one test password.
# - ARI_HUB_CLASS_USERS=N adds N learners (ari-class01..NN, same password) with homes on local
#   disk under $ARI_HUB_DIR/class-homes, allowed to log in; stop removes them with their homes.
# - ARI_HUB_CONFIG_EXTRA names a file of jupyterhub_config.py lines appended to the generated
#   config (a spawner form from `ari-jupyter site-card --hub-config form`, say).
# - ARI_HUB_KEEP_SERVERS=1: the hub's cleanup_servers is False, so a restart leaves users'
#   servers (and what runs in their terminals) running, as a site upgrading its hub wants.
# - ARI_HUB_CULL_IDLE=SECONDS: jupyterhub-idle-culler runs as a hub service and stops servers idle
#   that long; the servers are told the timeout (ARI_JUPYTER_IDLE_CULL, docs/admin.md), and
#   activity is reported every ARI_HUB_ACTIVITY_INTERVAL seconds (default 15; JupyterHub's 300
#   would let a short timeout cull a server in use).
# - ARI_HUB_OPTIONS: the servers' sbatch options (default --nodes=2 --ntasks=4);
#   ARI_HUB_RUNTIME_OF="user=HH:MM:SS ...": a time limit of its own for those users' servers
#   (a server that reaches its walltime, soon).
# - Everything lives under $ARI_HUB_DIR (default /tmp/ari-hub) but the user (/etc/passwd), its
#   mount point /home/<user> and the served home under $ARI_HUB_EXPORT; stop removes the first
#   two (the served files stay, as a site's home directories do, until the next start).
set -Eeuo pipefail
trap 'log "FAILED (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

HUB=${ARI_HUB_DIR:-/tmp/ari-hub}
HUB_USER=${ARI_HUB_USER:-ari-hubuser}
read -r -a HUB_USERS <<<"${ARI_HUB_USERS:-$HUB_USER}"
HUB_USER=${HUB_USERS[0]}             # the first user: ARI_HUB_USER and ARI_HUB_HOME in the env file
read -r -a STEP_USERS <<<"${ARI_HUB_STEP_USERS:-}"
# batchspawner's default req_srun is a plain srun, which starts one server per task of the job
# (4 here): the server's step gets one task on the first node
STEP_SRUN=${ARI_HUB_STEP_SRUN:-srun --nodes=1 --ntasks=1}
HUB_PASSWORD=${ARI_HUB_PASSWORD:-ari-hub-test-password}
PUBLIC_PORT=${ARI_HUB_PORT:-18000}
API_PORT=$((PUBLIC_PORT + 1))        # configurable-http-proxy's REST API
HUB_PORT=$((PUBLIC_PORT + 81))       # the hub itself (single-user servers call it)
SSHD_PORT=${ARI_HUB_SSHD_PORT:-16923}
CLASS_USERS=${ARI_HUB_CLASS_USERS:-0}  # a class: that many more users, ari-class01..., local homes
CLASS_HOMES=$HUB/class-homes
TESTBED=${ARI_TESTBED_DIR:-/tmp/ari-testbed}
SITE=$HUB/site                       # the site's Python environment (hub + single-user)
# the server side of the home: a chroot holding home/<user>. Not under /tmp: sshd wants every
# component of a chroot path owned by root and writable by no one else (/tmp is 1777).
EXPORT=${ARI_HUB_EXPORT:-/srv/ari-hub-export}
HOME_DIR=/home/$HUB_USER
ENV_FILE=$HUB/env.sh
ARI_VENV=$HUB/ari                    # ARI from the snapshot, for every user of the site
# the hub stack pinned to the versions these tests pass with (the newest releases as of 2026-12)
# (ari-jupyter itself goes in with --no-deps, from this tree: its dependencies are listed here,
# the language packs included, as a site's plain `pip install ari-jupyter` brings them)
SITE_PACKAGES=(jupyterhub==6.1.1 batchspawner==1.3.0 jupyterhub-idle-culler==2.0.0 jupyterlab ipywidgets
               ipykernel voila jupyterlab-language-pack-ja-JP jupyterlab-language-pack-zh-CN)
KEEP_SERVERS=${ARI_HUB_KEEP_SERVERS:-0}
CULL_IDLE=${ARI_HUB_CULL_IDLE:-0}
ACTIVITY_INTERVAL=${ARI_HUB_ACTIVITY_INTERVAL:-15}
JOB_OPTIONS=${ARI_HUB_OPTIONS:---nodes=2 --ntasks=4}
read -r -a RUNTIME_OF <<<"${ARI_HUB_RUNTIME_OF:-}"  # user=HH:MM:SS ...
CHP_VERSION=5.3.0
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

log() { printf '[ari-hub %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# close_inherited_fds, installed
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

pid_of() {  # pid_of NAME: the pid in $HUB/NAME.pid if that process still runs our config
  local pid
  pid=$(cat "$HUB/$1.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$HUB/" && echo "$pid"
}

terminate() {  # terminate PID: TERM, wait up to 15 s, then KILL
  local pid=$1 _
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

# ---- install ----------------------------------------------------------------------------------
install_debian() {  # python3-venv for the site venv, sshfs/sshd for the home, npm for the proxy
  local p missing=()
  for p in python3-venv openssh-server sshfs npm; do
    if [ "$p" = npm ] && command -v npm >/dev/null; then continue; fi
    installed "$p" || missing+=("$p")
  done
  [ ${#missing[@]} = 0 ] && return 0
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
    "${missing[@]}" >"$HUB/apt.log" 2>&1 \
    || { apt-get -o DPkg::Lock::Timeout=600 update -q >>"$HUB/apt.log" 2>&1 \
         && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
              --no-install-recommends "${missing[@]}" >>"$HUB/apt.log" 2>&1; } \
    || { tail -n 20 "$HUB/apt.log" >&2; die "apt-get install ${missing[*]} failed"; }
}

install_site() {  # install_site REPO: the site venv with the hub, batchspawner and ari-jupyter
  local repo=$1 stamp="$SITE/.ari-hub-packages"
  if [ ! -x "$SITE/bin/python" ]; then
    log "creating the site environment $SITE (Debian python3)"
    /usr/bin/python3 -m venv "$SITE"
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "${SITE_PACKAGES[*]}" ]; then
    log "installing ${SITE_PACKAGES[*]} into $SITE"
    "$SITE/bin/pip" install -q --disable-pip-version-check "${SITE_PACKAGES[@]}"
    echo "${SITE_PACKAGES[*]}" >"$stamp"
  fi
  # ari-jupyter as users get it: a plain (non-editable) install of this tree, every start,
  # from a copy so the build leaves nothing in the work tree
  log "installing ari-jupyter from $repo into $SITE"
  local src; src=$(mktemp -d "$HUB/src.XXXXXX")
  git -C "$repo" ls-files -z --cached --others --exclude-standard \
    | (cd "$repo" && xargs -0 cp --parents -t "$src" 2>/dev/null) || cp -a "$repo/." "$src/"
  "$SITE/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall "$src" \
    >"$HUB/pip-ari-jupyter.log" 2>&1 || { tail -n 20 "$HUB/pip-ari-jupyter.log" >&2; die "pip install of ari-jupyter failed"; }
  rm -rf "$src"
  chmod -R a+rX "$SITE"
  if [ "$(sed -n 's/^ *"version": "\(.*\)",$/\1/p' "$HUB/chp/node_modules/configurable-http-proxy/package.json" \
          2>/dev/null)" != "$CHP_VERSION" ] || [ ! -x "$HUB/chp/node_modules/.bin/configurable-http-proxy" ]; then
    log "installing configurable-http-proxy $CHP_VERSION (npm)"
    npm install -q --prefix "$HUB/chp" "configurable-http-proxy@$CHP_VERSION" >"$HUB/npm.log" 2>&1 \
      || { tail -n 20 "$HUB/npm.log" >&2; die "npm install configurable-http-proxy failed"; }
  fi
}

ari_source() {  # ari_source REPO: where ARI comes from, as tests/ari_env.py looks for it
  local repo=$1 snapshots=${ARI_SNAPSHOT_DIR:-$1/../shared/ari-snapshot}
  if [ -n "${ARI_SRC:-}" ]; then echo "$ARI_SRC"; return 0; fi
  ls "$snapshots"/ARI-*.tar.gz 2>/dev/null | head -n 1
}

install_ari() {  # install_ari REPO: ARI's core from the snapshot, editable as ARI's setup.sh does
  local src stamp
  src=$(ari_source "$1")
  [ -n "$src" ] && [ -e "$src" ] \
    || die "no ARI source: set ARI_SRC to an ARI checkout or snapshot tarball (or ARI_SNAPSHOT_DIR)"
  if [ -f "$src" ]; then stamp=$(sha256sum "$src" | cut -c1-16); else stamp=$(cd "$src" && pwd); fi
  stamp="$stamp mcp<2"   # what is installed besides the source: a change here rebuilds
  if [ "$(cat "$ARI_VENV/.ari-snapshot" 2>/dev/null)" = "$stamp" ]; then
    # `ari viz` (the dashboard the hand-off offers) needs websockets, which ari-core leaves out
    "$ARI_VENV/bin/python" -c "import websockets" 2>/dev/null \
      || "$ARI_VENV/bin/pip" install -q --disable-pip-version-check websockets >>"$HUB/pip-ari.log" 2>&1 \
      || die "pip install websockets into $ARI_VENV failed"
    return 0
  fi
  log "installing ARI from $src into $ARI_VENV (Debian python3; ari-core needs >= 3.9)"
  rm -rf "$HUB/ari-src" "$ARI_VENV"
  install -d "$HUB/ari-src"
  if [ -f "$src" ]; then tar -xzf "$src" -C "$HUB/ari-src" --strip-components=1
  else cp -a "$src/ari-core" "$src/ari-skill-memory" "$HUB/ari-src/"; fi
  /usr/bin/python3 -m venv "$ARI_VENV"
  # ari-core imports ari_skill_memory, which is on no index: both editable, memory first;
  # mcp<2 as ARI's skills import mcp.server.fastmcp, which mcp 2 removed
  "$ARI_VENV/bin/pip" install -q --disable-pip-version-check -e "$HUB/ari-src/ari-skill-memory" \
    -e "$HUB/ari-src/ari-core" "mcp>=1.28.1,<2" websockets >"$HUB/pip-ari.log" 2>&1 \
    || { tail -n 20 "$HUB/pip-ari.log" >&2; die "pip install of ARI failed"; }
  chmod -R a+rX "$HUB/ari-src" "$ARI_VENV"
  echo "$stamp" >"$ARI_VENV/.ari-snapshot"
}

# ---- the user and its network home ------------------------------------------------------------
create_user() {  # create_user USER
  local user=$1 home=/home/$1
  if ! id "$user" >/dev/null 2>&1; then
    log "creating user $user (home $home on sshfs)"
    useradd -M -d "$home" -s /bin/bash -U "$user"
    echo "$user" >>"$HUB/created-user"
    rm -rf "${EXPORT:?}$home"   # a new user starts with an empty home
  fi
  # an account with no usable password but not locked: sshd (UsePAM no) refuses locked ones
  usermod -p '*' "$user"
}

class_names() { local n; for n in $(seq 1 "$CLASS_USERS"); do printf 'ari-class%02d\n' "$n"; done; }

create_class() {  # the learners of ARI_HUB_CLASS_USERS, each a real user with a local home
  local name
  [ "$CLASS_USERS" -gt 0 ] 2>/dev/null || return 0
  install -d -m 755 "$CLASS_HOMES"
  for name in $(class_names); do
    id "$name" >/dev/null 2>&1 && continue
    useradd -m -d "$CLASS_HOMES/$name" -s /bin/bash -U "$name"
    echo "$name" >>"$HUB/created-class"
  done
  log "class: $CLASS_USERS learners (ari-class01...) with homes under $CLASS_HOMES"
}

remove_class() {
  local name
  [ -f "$HUB/created-class" ] || return 0
  while read -r name; do
    pkill -KILL -u "$name" 2>/dev/null || true
    userdel -r "$name" 2>/dev/null || true
  done <"$HUB/created-class"
  rm -f "$HUB/created-class"
}

start_sshd() {
  pid_of sshd >/dev/null && return 0
  [ -f "$HUB/host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$HUB/host_key"
  [ -f "$HUB/client_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$HUB/client_key"
  install -d -m 755 "$HUB/authorized_keys"
  local user; for user in "${HUB_USERS[@]}"; do
    install -m 644 "$HUB/client_key.pub" "$HUB/authorized_keys/$user"
  done
  cat >"$HUB/sshd_config" <<EOF
# ari-hub: serves the test user's home over SFTP on 127.0.0.1 only
Port $SSHD_PORT
ListenAddress 127.0.0.1
HostKey $HUB/host_key
PidFile $HUB/sshd.pid
AuthorizedKeysFile $HUB/authorized_keys/%u
AllowUsers ${HUB_USERS[*]}
# chroot: sshd enters the user's home at login, and that home IS the sshfs mount this session
# serves; without the chroot it would wait on itself. In the chroot, home/<user> is the export.
ChrootDirectory $EXPORT
PermitRootLogin no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
EOF
  install -d -m 755 /run/sshd
  ( close_inherited_fds; exec /usr/sbin/sshd -f "$HUB/sshd_config" -E "$HUB/sshd.log" ) \
    || { tail -n 20 "$HUB/sshd.log" >&2; die "sshd did not start"; }
  local _; for _ in $(seq 1 50); do pid_of sshd >/dev/null && return 0; sleep 0.1; done
  die "sshd wrote no pid file: $(tail -n 5 "$HUB/sshd.log")"
}

home_mounted() {  # home_mounted HOME
  [ "$(findmnt -n -o FSTYPE --target "$1" 2>/dev/null)" = fuse.sshfs ] \
    && [ "$(findmnt -n -o TARGET --target "$1")" = "$1" ]; }

mount_home() {  # mount_home USER
  local HUB_USER=$1 HOME_DIR=/home/$1
  install -d -m 755 "$EXPORT" "$EXPORT/home"   # root-owned, as ChrootDirectory requires
  install -d -m 700 -o "$HUB_USER" -g "$HUB_USER" "$EXPORT$HOME_DIR"
  home_mounted "$HOME_DIR" && return 0
  install -d -m 755 -o "$HUB_USER" -g "$HUB_USER" "$HOME_DIR"
  start_sshd
  # allow_other: slurmd (root) and the user's processes use it; default_permissions: the
  # kernel checks modes, as an NFS client does
  ( close_inherited_fds
    exec sshfs -p "$SSHD_PORT" -o "IdentityFile=$HUB/client_key,StrictHostKeyChecking=no" \
      -o "UserKnownHostsFile=/dev/null,BatchMode=yes,LogLevel=ERROR,allow_other,default_permissions" \
      "$HUB_USER@127.0.0.1:$HOME_DIR" "$HOME_DIR" ) || die "sshfs mount of $HOME_DIR failed"
  home_mounted "$HOME_DIR" || die "$HOME_DIR is not a fuse.sshfs mount after sshfs"
  log "$HOME_DIR: fuse.sshfs as $HUB_USER from 127.0.0.1:$SSHD_PORT"
}

# ---- the hub ----------------------------------------------------------------------------------
write_config() {
  local slurm_conf=$1
  cat >"$HUB/jupyterhub_config.py" <<EOF
# generated by tests/testbed/hub.sh
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = "http://127.0.0.1:$PUBLIC_PORT"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = $HUB_PORT
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:$API_PORT"
c.ConfigurableHTTPProxy.command = ["$HUB/chp/node_modules/.bin/configurable-http-proxy"]
c.ConfigurableHTTPProxy.pid_file = "$HUB/proxy.pid"
c.JupyterHub.db_url = "sqlite:///$HUB/state/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "$HUB/state/cookie_secret"
c.JupyterHub.pid_file = "$HUB/hub.pid"
c.JupyterHub.cleanup_servers = $( [ "$KEEP_SERVERS" = 1 ] && echo False || echo True )

# a test authenticator: one user, one password (a site uses PAM, LDAP or OAuth)
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = "$HUB_PASSWORD"
c.Authenticator.allowed_users = {$(printf '"%s", ' "${HUB_USERS[@]}")$(class_names | sed 's/.*/"&", /' | tr -d '\n')}

# single-user servers as SLURM jobs of the user: 2 nodes, the server in the batch step
c.JupyterHub.spawner_class = "batchspawner.MultiSlurmSpawner"
c.MultiSlurmSpawner.daemon_resolver = {"n1": "127.0.0.1", "n2": "127.0.0.1"}
c.BatchSpawnerBase.exec_prefix = "/usr/sbin/runuser -u {username} --"
c.BatchSpawnerBase.batchspawner_singleuser_cmd = "$SITE/bin/batchspawner-singleuser"
c.Spawner.cmd = ["$SITE/bin/jupyterhub-singleuser"]
c.Spawner.default_url = "/lab"
# for the browser tests: the lab object reachable from the page, no news or update checks
c.Spawner.args = ["--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
                  "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 120
c.BatchSpawnerBase.req_srun = ""
SERVER_IN_A_STEP = {$(printf '"%s", ' "${STEP_USERS[@]}")}
# (an empty list prints one "": skipped)
RUNTIME_OF = dict(item.split("=", 1) for item in [$(printf '"%s", ' "${RUNTIME_OF[@]}")] if item)


def server_in_a_step(spawner):
    """batchspawner's other mode for these users: the server in a job step (req_srun); and a
    time limit of their own for the users in RUNTIME_OF."""
    if spawner.user.name in SERVER_IN_A_STEP:
        spawner.req_srun = "$STEP_SRUN"
    if spawner.user.name in RUNTIME_OF:
        spawner.req_runtime = RUNTIME_OF[spawner.user.name]


c.Spawner.pre_spawn_hook = server_in_a_step
# "large": "small" caps jobs at 1 h, under which the time-left check warns
c.BatchSpawnerBase.req_runtime = "01:30:00"
c.BatchSpawnerBase.req_partition = "large"
c.BatchSpawnerBase.req_options = "$JOB_OPTIONS"
c.Spawner.environment = {
    "PATH": "$SITE/bin:$ARI_VENV/bin:/usr/local/bin:/usr/bin:/bin",
    "SLURM_CONF": "$slurm_conf",
    # what the site's ARI needs here: no model-cost download, in-memory memory backend, and
    # an LLM endpoint on 127.0.0.1 where nothing listens (no key, no network)
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "ARI_MEMORY_BACKEND": "in_memory",
    "OLLAMA_API_BASE": "http://127.0.0.1:9",
}
c.BatchSpawnerBase.batch_script = '''#!/bin/bash
#SBATCH --output={{homedir}}/jupyterhub_slurmspawner_%j.log
#SBATCH --job-name=spawner-jupyterhub
#SBATCH --chdir={{homedir}}
#SBATCH --export={{keepvars}}
{% if partition %}#SBATCH --partition={{partition}}
{% endif %}{% if runtime %}#SBATCH --time={{runtime}}
{% endif %}{% if options %}#SBATCH {{options}}
{% endif %}
set -euo pipefail
trap 'echo SIGTERM received' TERM
{{prologue}}
{% if srun %}{{srun}} {% endif %}{{cmd}}
echo "jupyterhub-singleuser ended gracefully"
'''
EOF
  if [ "$CULL_IDLE" != 0 ]; then
    cat >>"$HUB/jupyterhub_config.py" <<EOF

# idle culling, as docs/admin.md sets it up: the culler as a hub service with the scopes it
# needs; the servers are told its timeout (the status bar and step 4 say it) and report their
# activity often enough for it
c.JupyterHub.services = [{"name": "idle-culler", "command": [
    "$SITE/bin/python3", "-m", "jupyterhub_idle_culler", "--timeout=$CULL_IDLE", "--cull-every=10"]}]
c.JupyterHub.load_roles = [{"name": "idle-culler", "services": ["idle-culler"], "scopes": [
    "list:users", "read:users:activity", "read:servers", "delete:servers"]}]
c.JupyterHub.last_activity_interval = $ACTIVITY_INTERVAL
c.Spawner.environment["ARI_JUPYTER_IDLE_CULL"] = "$CULL_IDLE"
c.Spawner.environment["JUPYTERHUB_ACTIVITY_INTERVAL"] = "$ACTIVITY_INTERVAL"
c.Spawner.poll_interval = 10
EOF
  fi
  if [ -n "${ARI_HUB_CONFIG_EXTRA:-}" ]; then  # a site's own lines: a spawner form, a class
    { printf '\n# from %s\n' "$ARI_HUB_CONFIG_EXTRA"; cat "$ARI_HUB_CONFIG_EXTRA"; } >>"$HUB/jupyterhub_config.py"
  fi
}

hub_up() { curl -fsS -m 5 "http://127.0.0.1:$PUBLIC_PORT/hub/health" >/dev/null 2>&1; }

start_hub() {
  pid_of hub >/dev/null && hub_up && return 0
  install -d -m 700 "$HUB/state"
  ( close_inherited_fds; cd "$HUB/state"
    exec setsid "$SITE/bin/jupyterhub" -f "$HUB/jupyterhub_config.py" \
      >"$HUB/hub.log" 2>&1 </dev/null ) &
  local _; for _ in $(seq 1 300); do hub_up && break; sleep 0.2; done
  hub_up || { tail -n 30 "$HUB/hub.log" >&2; die "the hub did not answer on port $PUBLIC_PORT"; }
  log "hub up: http://127.0.0.1:$PUBLIC_PORT/ (user $HUB_USER)"
}

write_env_file() {
  cat >"$ENV_FILE.new" <<EOF
export ARI_HUB_URL=http://127.0.0.1:$PUBLIC_PORT
export ARI_HUB_USER=$HUB_USER
export ARI_HUB_PASSWORD=$HUB_PASSWORD
export ARI_HUB_HOME=$HOME_DIR
export ARI_HUB_USERS="${HUB_USERS[*]}"
export ARI_HUB_STEP_USERS="${STEP_USERS[*]}"
export ARI_HUB_SITE=$SITE
export ARI_HUB_LOG=$HUB/hub.log
export ARI_HUB_CLASS=$(class_names | paste -sd, -)
EOF
  mv "$ENV_FILE.new" "$ENV_FILE"
}

do_start() {
  local repo=${1:?usage: hub.sh start REPO}
  [ "$(id -u)" = 0 ] || die "root is needed (useradd, FUSE mount, runuser)"
  [[ "$CLASS_USERS" =~ ^[0-9]{1,3}$ ]] || die "ARI_HUB_CLASS_USERS must be a number of learners"
  [[ "$CULL_IDLE" =~ ^[0-9]{1,6}$ ]] || die "ARI_HUB_CULL_IDLE must be a number of seconds"
  [[ "$ACTIVITY_INTERVAL" =~ ^[0-9]{1,6}$ ]] || die "ARI_HUB_ACTIVITY_INTERVAL must be a number of seconds"
  local item; for item in "${RUNTIME_OF[@]}"; do
    [[ "$item" =~ ^[a-z][a-z0-9-]*=[0-9:-]+$ ]] || die "ARI_HUB_RUNTIME_OF: user=HH:MM:SS, not $item"
  done
  [ -s "$TESTBED/env.sh" ] || die "the SLURM test bed is not running (slurm-testbed.sh start)"
  local slurm_conf; slurm_conf=$(. "$TESTBED/env.sh" && echo "$SLURM_CONF")
  install -d -m 755 "$HUB"
  exec 8>"$HUB/.start.lock"; flock 8
  install_debian
  repo=$(cd "$repo" && pwd)
  install_site "$repo"
  install_ari "$repo"
  local user
  for user in "${HUB_USERS[@]}"; do create_user "$user"; done
  create_class
  for user in "${HUB_USERS[@]}"; do mount_home "$user"; done
  write_config "$slurm_conf"
  write_env_file
  SLURM_CONF=$slurm_conf start_hub
  echo "$ENV_FILE"
}

stop_services() {
  # The hub's managed services (the idle culler, the queue service) can outlive a stopped hub: seen after a
  # restart and a stop, a culler kept polling the next hub with its old token (403s and
  # "Connection refused" tracebacks in that hub's log). They run as root from the site venv;
  # the users' servers, which a restart keeps, do not.
  local pid
  # (pgrep finds none: exit 1, which is no failure here)
  for pid in $(pgrep -u root -f "^$HUB/site/bin/python3 -m (jupyterhub_idle_culler|ari_jupyter.hubservice)" || true); do
    terminate "$pid"
  done
}

do_restart() {  # the hub process only: its config, database and (kept) servers stay
  [ "$(id -u)" = 0 ] || die "root is needed"
  [ -s "$HUB/jupyterhub_config.py" ] || die "no hub to restart: run '$0 start REPO' first"
  local pid slurm_conf; slurm_conf=$(. "$TESTBED/env.sh" && echo "$SLURM_CONF")
  if pid=$(pid_of hub); then terminate "$pid"; fi
  if pid=$(pid_of proxy); then terminate "$pid"; fi   # the hub stops the proxy it started; if not
  stop_services
  log "hub stopped; starting it again"
  SLURM_CONF=$slurm_conf start_hub
}

do_stop() {
  local pid user
  if pid=$(pid_of hub); then terminate "$pid"; fi   # cleanup_servers: it stops the servers first
  if pid=$(pid_of proxy); then terminate "$pid"; fi
  stop_services
  # the users of this start and those an earlier start created (another ARI_HUB_USERS)
  # (an empty created-user is an older start's mark for ARI_HUB_USER)
  if [ -f "$HUB/created-user" ] && [ ! -s "$HUB/created-user" ]; then echo "$HUB_USER" >"$HUB/created-user"; fi
  local users=("${HUB_USERS[@]}"); [ -f "$HUB/created-user" ] && mapfile -t -O "${#users[@]}" users <"$HUB/created-user"
  for user in "${users[@]}"; do
    if [ -s "$TESTBED/env.sh" ] && id "$user" >/dev/null 2>&1; then
      ( . "$TESTBED/env.sh"; scancel -u "$user" 2>/dev/null || true
        for _ in $(seq 1 50); do [ -z "$(squeue -h -u "$user" 2>/dev/null)" ] && break; sleep 0.2; done )
    fi
    if home_mounted "/home/$user"; then
      fusermount3 -u "/home/$user" 2>/dev/null || fusermount -u "/home/$user" 2>/dev/null || umount -l "/home/$user"
    fi
  done
  if pid=$(pid_of sshd); then terminate "$pid"; fi
  for user in "${users[@]}"; do
    if id "$user" >/dev/null 2>&1; then pkill -KILL -u "$user" 2>/dev/null || true; fi
  done
  remove_class
  if [ -f "$HUB/created-user" ]; then
    while read -r user; do
      [ -n "$user" ] || continue
      userdel "$user" 2>/dev/null || true
      rmdir "/home/$user" 2>/dev/null || true
    done <"$HUB/created-user"
    rm -f "$HUB/created-user"
  fi
  # the users are gone: so are their hub records (a spawner's saved user_options would shape
  # the next start's jobs)
  rm -f "$HUB/hub.pid" "$HUB/proxy.pid" "$HUB/sshd.pid" "$HUB/state/jupyterhub.sqlite"
  log "stopped"
}

case "${1:-status}" in
  start) shift; do_start "$@" ;;
  restart) do_restart ;;
  stop) [ -d "$HUB" ] && do_stop || true ;;
  status) if hub_up; then echo "hub: up on port $PUBLIC_PORT"; else echo "hub: not running"; exit 1; fi ;;
  env) [ -s "$ENV_FILE" ] || die "no env file yet: run '$0 start REPO' first"; echo "$ENV_FILE" ;;
  *) die "usage: $0 start REPO|restart|stop|status|env" ;;
esac
