"""The hub's queue service on the test bed's real hub: each user answered about their own jobs.

tests/testbed/hub.sh with two users and tests/testbed/status_service_config.py (the service as
docs/admin.md adds it, ``hubservice.config``). Each user has a job in the queue. Through the
hub's proxy, the service answers a user's own token with that user's rows only, and refuses
everything else: no token, a token the hub does not know, forged identity headers, another
user's token, a token without the service's scope (401/403). Two users asking within the
interval cost one squeue. A server the hub starts is offered the service and its own token is
answered (its shared host takes the rows, no squeue run). With slurmctld hung the answer comes within the service's timeout,
marked stale; with the service gone, a user's server (``QueueCachingHost``) asks SLURM itself
at once.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from repo_paths import REPO

from ari_jupyter.runs.queue_service import SERVICE_NAME, URL_ENV, user_argv
from ari_jupyter.runs.jobs import SEP, SQUEUE_FIELDS
from ari_jupyter.server.queue_cache import QueueCachingHost

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

HUB_SCRIPT = REPO / "tests" / "testbed" / "hub.sh"
CONFIG = REPO / "tests" / "testbed" / "status_service_config.py"
USERS = ("ari-hubuser", "ari-hubuser2")
ADMIN = "ari-hubadmin"
SERVICE_URL = "http://127.0.0.1:18095"
ACCESS = f"access:services!service={SERVICE_NAME}"
INTERVAL = 5  # the config's


def _env_file(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export "):].partition("=")
            found[key] = value.strip('"')
    return found


def _get(url: str, headers: dict[str, str] | None = None, timeout: float = 30) -> tuple[int, dict]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        body = error.read()
        try:
            return error.code, json.loads(body or b"{}")
        except ValueError:
            return error.code, {"body": body.decode(errors="replace")}


def _token(hub: dict, name: str, scopes: list[str]) -> str:
    """A token of ``name`` made with its password (the hub's API, no other requester)."""
    body = json.dumps({"auth": {"username": name, "password": hub["ARI_HUB_PASSWORD"]},
                       "scopes": scopes, "expires_in": 3600}).encode()
    request = urllib.request.Request(f"{hub['ARI_HUB_URL']}/hub/api/users/{name}/tokens", data=body,
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["token"]


def _service_pids(hub_dir: str = "/tmp/ari-hub") -> list[int]:
    found = subprocess.run(["pgrep", "-f", f"^{hub_dir}/site/bin/python3 -m ari_jupyter.hubservice"],
                           capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


@pytest.fixture(scope="module")
def hub(_testbed):
    testbed = _testbed.ensure("nogres")
    env = {**os.environ, **testbed.env}
    setup = {"ARI_HUB_USERS": " ".join(USERS), "ARI_HUB_CONFIG_EXTRA": str(CONFIG),
             "ARI_HUB_OPTIONS": "--nodes=1 --ntasks=1"}  # a server beside the users' jobs
    subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, text=True, timeout=300,
                   stdin=subprocess.DEVNULL, env=env, check=True)
    started = subprocess.run(["bash", str(HUB_SCRIPT), "start", str(REPO)], capture_output=True,
                             text=True, timeout=1500, stdin=subprocess.DEVNULL, env={**env, **setup})
    assert started.returncode == 0, f"the hub did not start:\n{started.stderr[-4000:]}"
    found = _env_file(Path(started.stdout.strip().splitlines()[-1]))
    jobs = {}
    for user in USERS:  # one job of each user in the queue, as a run's would be
        sbatch = testbed.run(["runuser", "-u", user, "--", "sbatch", "--parsable", "-J", f"svc-{user}",
                              "-p", "large", "-N", "1", "-n", "1", "--chdir=/tmp", "-o", "/dev/null",
                              "--wrap", "sleep 900"], check=True)
        jobs[user] = sbatch.stdout.strip().split(";")[0]
    for _ in range(150):  # the service answers once the hub has started it
        if _get(f"{SERVICE_URL}/services/{SERVICE_NAME}/api/figures", timeout=5)[0] == 401:
            break
        time.sleep(0.2)
    found.update(jobs=jobs, tokens={u: _token(found, u, [ACCESS]) for u in USERS},
                 bare=_token(found, USERS[0], ["users:activity!user"]),
                 admin=_token(found, ADMIN, ["read:metrics", "access:services", "servers", "read:users"]), testbed=testbed)
    yield found
    for user in USERS:
        testbed.run(["scancel", "-u", user])
    stopped = subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, text=True,
                             timeout=300, stdin=subprocess.DEVNULL, env={**env, **setup})
    assert stopped.returncode == 0, stopped.stderr
    assert _service_pids() == [], "the service outlived the hub's stop"


def _jobs_url(hub: dict, name: str, through_proxy: bool = True) -> str:
    base = hub["ARI_HUB_URL"] if through_proxy else SERVICE_URL
    return f"{base}/services/{SERVICE_NAME}/api/jobs/{name}"


def _users_of(rows: str) -> set[str]:
    return {row.split(SEP)[SQUEUE_FIELDS.index("%u")] for row in rows.splitlines() if row}


def _ids_of(rows: str) -> set[str]:
    return {row.split(SEP)[0] for row in rows.splitlines() if row}


def test_each_user_is_answered_with_their_own_jobs_alone(hub):
    for user, other in (USERS, USERS[::-1]):
        for through_proxy in (True, False):
            status, said = _get(_jobs_url(hub, user, through_proxy),
                                {"Authorization": f"token {hub['tokens'][user]}"})
            assert status == 200, said
            assert said["state"] == "ok" and said["user"] == user and said["stale"] is False, said
            assert hub["jobs"][user] in _ids_of(said["rows"]), said
            assert hub["jobs"][other] not in _ids_of(said["rows"]), said
            assert _users_of(said["rows"]) == {user}, said


REFUSED = [
    # (what, whose page, headers, status)
    ("no token", 0, {}, 401),
    ("a token the hub does not know", 0, {"Authorization": "token 0123456789abcdef0123456789abcdef"}, 401),
    ("forged identity headers", 0, {"X-Forwarded-User": USERS[0], "X-Remote-User": USERS[0],
                                    "Remote-User": USERS[0], "X-JupyterHub-User": USERS[0]}, 401),
    ("another user's token", 0, "other", 403),
    ("the user's own token without the service's scope", 0, "bare", 403),
    ("a hub admin's token", 0, "admin", 403),
]


@pytest.mark.parametrize("what,page,headers,status", REFUSED, ids=[r[0] for r in REFUSED])
def test_everything_but_the_users_own_token_is_refused(hub, what, page, headers, status):
    if headers == "other":
        headers = {"Authorization": f"token {hub['tokens'][USERS[1]]}"}
    elif headers in ("bare", "admin"):
        headers = {"Authorization": f"token {hub[headers]}"}
    for through_proxy in (True, False):
        got, said = _get(_jobs_url(hub, USERS[page], through_proxy), headers)
        assert got == status, (what, said)
        assert "rows" not in said, (what, said)


def test_users_asking_within_the_interval_share_one_squeue_and_the_admin_sees_the_figures(hub):
    admin = {"Authorization": f"token {hub['admin']}"}
    figures_url = f"{hub['ARI_HUB_URL']}/services/{SERVICE_NAME}/api/figures"
    assert _get(figures_url, {"Authorization": f"token {hub['tokens'][USERS[0]]}"})[0] == 403
    time.sleep(INTERVAL + 0.5)  # the next ask starts an interval
    before = _get(figures_url, admin)[1]
    for user in USERS:
        for _ in range(3):
            assert _get(_jobs_url(hub, user), {"Authorization": f"token {hub['tokens'][user]}"})[0] == 200
    status, after = _get(figures_url, admin)
    assert status == 200, after
    assert after["queries"] - before["queries"] == 1, (before, after)
    assert after["rpcs"] - before["rpcs"] == after["rpcs_per_query"], (before, after)
    assert after["requests"] - before["requests"] == 6
    assert after["users_served"] == len(USERS)
    assert after["private_data"] is False  # the service runs as root: it sees every job
    assert after["last_answer_age_s"] < INTERVAL + 1


def test_a_hung_controller_gives_the_last_answer_marked_stale_within_the_timeout(hub):
    token = {"Authorization": f"token {hub['tokens'][USERS[0]]}"}
    with hub["testbed"].controller_hung():
        time.sleep(INTERVAL + 0.5)
        started = time.monotonic()
        status, said = _get(_jobs_url(hub, USERS[0]), token)
        waited = time.monotonic() - started
        assert status == 200, said
        assert waited < 4 + 3, f"the request waited {waited:.1f} s on a hung slurmctld"
        assert said["stale"] is True and hub["jobs"][USERS[0]] in _ids_of(said["rows"]), said
    for _ in range(30):  # the controller back: a fresh answer again
        time.sleep(1)
        said = _get(_jobs_url(hub, USERS[0]), token)[1]
        if said.get("stale") is False:
            break
    assert said["stale"] is False, said


def _api(hub: dict, method: str, path: str) -> tuple[int, dict]:
    request = urllib.request.Request(f"{hub['ARI_HUB_URL']}/hub/api{path}", method=method,
                                     headers={"Authorization": f"token {hub['admin']}"},
                                     data=b"{}" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, {}


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


def test_a_real_users_server_is_offered_the_service_and_its_own_token_is_answered(hub):
    """The hub as the config sets it up starts a server (a SLURM job) whose environment names
    the service and whose own token the service answers with that user's rows: the server's
    shared host, made from that very environment, takes them without running squeue."""
    import asyncio

    user = USERS[1]
    status, _ = _api(hub, "POST", f"/users/{user}/server")
    assert status in (201, 202), status
    environ = None
    for _ in range(180):
        model = _api(hub, "GET", f"/users/{user}")[1]
        if (model.get("servers") or {}).get("", {}).get("ready"):
            found = subprocess.run(["pgrep", "-u", user, "-f", "jupyterhub-singleuser"],
                                   capture_output=True, text=True).stdout.split()
            environ = _environ(int(found[0])) if found else None
            break
        time.sleep(1)
    try:
        assert environ is not None, "the server did not start"
        assert environ[URL_ENV] == f"{SERVICE_URL}/services/{SERVICE_NAME}/"
        assert environ["JUPYTERHUB_USER"] == user
        host = QueueCachingHost({**environ, "PATH": "/nonexistent"})
        assert host.service is not None
        served = asyncio.run(host.run(list(user_argv(user)), timeout=10))
        assert served.ok and hub["jobs"][user] in _ids_of(served.stdout), served
        assert _users_of(served.stdout) == {user}
        # the same token asking for another user's jobs: refused
        other = _get(_jobs_url(hub, USERS[0]), {"Authorization": f"token {environ['JUPYTERHUB_API_TOKEN']}"})
        assert other[0] == 403, other
    finally:
        _api(hub, "DELETE", f"/users/{user}/server")


def _server_host(hub: dict, path: str) -> QueueCachingHost:
    """A user's server's shared host as the hub starts it: the service's URL, the user's
    token; ``path`` its PATH."""
    env = {**hub["testbed"].env, "PATH": path, "JUPYTERHUB_USER": USERS[0],
           "JUPYTERHUB_API_TOKEN": hub["tokens"][USERS[0]],
           URL_ENV: f"{SERVICE_URL}/services/{SERVICE_NAME}/"}
    return QueueCachingHost(env)


def test_a_users_server_takes_its_rows_from_the_service_and_asks_slurm_when_it_is_gone(hub):
    import asyncio

    argv = list(user_argv(USERS[0]))
    # no squeue on this server's PATH: an answer can only be the service's
    served = asyncio.run(_server_host(hub, "/nonexistent").run(argv, timeout=10))
    assert served.ok and _users_of(served.stdout) == {USERS[0]}, served
    assert hub["jobs"][USERS[0]] in _ids_of(served.stdout)
    pids = _service_pids()
    assert len(pids) == 1, pids
    os.kill(pids[0], 15)  # the service gone (the hub does not start it again)
    for _ in range(50):
        if not _service_pids():
            break
        time.sleep(0.1)
    host = _server_host(hub, hub["testbed"].env["PATH"])
    started = time.monotonic()
    own = asyncio.run(host.run(argv, timeout=10))
    assert time.monotonic() - started < 3 + 10
    assert own.ok and hub["jobs"][USERS[0]] in _ids_of(own.stdout), own
    assert host.service.asked == 1 and host.service.taken == 0
