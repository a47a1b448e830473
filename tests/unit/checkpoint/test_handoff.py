"""The hand-off checklist and check-handoff: each check passes, and fails on its own cause.

Commands run for real (bash, a login shell) against stand-in ``ari``, ``sbatch`` and
``module`` programs; the shared-filesystem verdict reads a mount table given to the host
(this machine's own root is a local disk, so the checkpoint lives outside /tmp under a
mount the table declares as NFS). On the demo sites the checkpoint is written to the local demo
workspace, which the recorded site judges as its own workspace, and every command is answered by
the site's recordings.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from ari_jupyter.cli import main
from ari_jupyter.wizard.config import AriWizard, open_host
from ari_jupyter.checkpoint.emit import emit_checkpoint
from ari_jupyter.checkpoint.handoff import CHECK_IDS, _telling_line, check_handoff, free_port, handoff_checklist, with_checks
from ari_jupyter.ari.dashboard import dashboard_command, ssh_tunnel_command
from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.hosts.recorded_site import RecordedCommand, RecordedSite
from ari_jupyter.base.verdict import ProbeResult
from runs_support import live_ari
from unit.ari.test_render import golden_state

SBATCH = """\
#!/bin/sh
case "$1" in
  --version) echo "slurm 22.05.8"; exit 0 ;;
esac
for arg in "$@"; do
  if [ "$prev" = "-p" ] && [ "$arg" = "forbidden" ]; then
    echo "sbatch: error: Batch job submission failed: Invalid partition name specified" >&2; exit 1
  fi
  prev="$arg"
done
echo "sbatch: Job 3 to start at 2026-07-06T12:00:00 using 1 processors on nodes n1 in partition small" >&2
exit 0
"""
MODULE = """\
#!/bin/sh
[ "$1" = load ] || exit 2
shift
for name in "$@"; do
  case "$name" in
    openmpi/4.1|cuda/12.4) ;;
    *) echo "Lmod has detected the following error: The following module(s) are unknown: \\"$name\\"" >&2; exit 1 ;;
  esac
done
"""
ARI = "#!/bin/sh\nexit 0\n"
FAKE_KEY = "sk-test-Zq8Xw7Vu6Ts5Rq4Po3"


@pytest.fixture()
def site(tmp_path):
    """A workspace outside /tmp, a home whose login profile puts the stand-ins on PATH, and a
    host whose mount table says the workspace is on NFS."""
    base = Path.home() / ".cache" / f"ari-jupyter-test-{uuid.uuid4().hex[:8]}"
    base.mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("sbatch", SBATCH), ("module", MODULE), ("ari", ARI)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    home = base / "home"  # the workspace sits in $HOME: ARI's own prefix rule agrees
    home.mkdir()
    (home / ".bash_profile").write_text(f'export PATH="{bin_dir}:$PATH"\n')
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text("22 1 0:40 / / rw,relatime shared:1 - nfs4 filer:/export rw\n")
    # ARI's packaged LLM (openai) needs its key in the terminal's environment: the user has it.
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), "USER": "alice",
           "SLURM_SUBMIT_HOST": "login1", "OPENAI_API_KEY": FAKE_KEY}

    class Site:
        workspace = home / "ws"
        host = LocalHost(env=env, mountinfo_path=str(mountinfo))

    Site.env, Site.bin, Site.home = env, bin_dir, home
    yield Site
    shutil.rmtree(base, ignore_errors=True)


def _emit(site, **overrides):
    state = golden_state(workspace=str(site.workspace), provided_files=[], **overrides)
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": str(site.workspace)}))
    return state, emit_checkpoint(state)


def _by_id(results):
    assert [r.id for r in results] == list(CHECK_IDS)
    return {r.id: r for r in results}


def test_every_check_passes_on_a_good_checkpoint(site):
    _, result = _emit(site, module_loads=["openmpi/4.1"])
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host, timeout=30))
    assert {k: v.status for k, v in checks.items()} == {i: "ok" for i in CHECK_IDS}, \
        {k: (v.status, v.summary) for k, v in checks.items()}
    assert "may submit to small" in checks["sbatch"].summary
    assert checks["ari"].data["path"] == str(site.bin / "ari")


def test_missing_key_of_aris_packaged_llm_fails_and_never_shows_a_value(site):
    """No backend chosen: ARI takes its packaged openai model, so OPENAI_API_KEY is needed,
    the same answer the wizard's Run settings part gives."""
    _, result = _emit(site, module_loads=["openmpi/4.1"])
    without = LocalHost(env={k: v for k, v in site.env.items() if k != "OPENAI_API_KEY"},
                        mountinfo_path=site.host.mountinfo_path)
    missing = _by_id(check_handoff(result.checkpoint_dir, host=without, timeout=30))["api_key"]
    assert (missing.status, missing.data["variable"]) == ("fail", "OPENAI_API_KEY"), missing
    present = _by_id(check_handoff(result.checkpoint_dir, host=site.host, timeout=30))["api_key"]
    assert present.status == "ok" and present.data["source"] == "environment"
    assert FAKE_KEY not in repr((missing, present))


def test_checkpoint_changed_after_writing_fails(site):
    _, result = _emit(site)
    with open(Path(result.checkpoint_dir) / "experiment.md", "a") as handle:
        handle.write("edited\n")
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host))
    assert checks["checkpoint"].status == "fail" and "changed since" in checks["checkpoint"].summary


def test_a_swapped_script_or_a_folder_others_can_write_fails_the_script_check(site):
    """check-handoff checks what the script itself checks before it runs anything: the
    script's sha256 recorded in launch_config.json, and folders no other user can write."""
    state, result = _emit(site)
    script = Path(result.handoff_script)
    assert _by_id(check_handoff(result.checkpoint_dir, host=site.host))["script"].status == "ok"
    script.write_text(script.read_text() + "touch /tmp/someone-elses-code\n")
    check = _by_id(check_handoff(result.checkpoint_dir, host=site.host))["script"]
    assert check.status == "fail" and "another user could change" in check.summary, check
    assert "is not the file that was written" in check.summary and check.fix
    _said_in_ja_and_zh(check)
    emit_checkpoint(state, force=True)  # the script as written again
    Path(result.checkpoint_dir).chmod(0o770)
    check = _by_id(check_handoff(result.checkpoint_dir, host=site.host))["script"]
    assert check.status == "fail" and "can be written by other users (mode 0770" in check.summary


def _other_users(path: Path) -> None:
    os.chown(path, 65534, 65534)


def _open_to_all(path: Path) -> None:
    path.chmod(0o777)


def _a_link(path: Path) -> None:
    real = path.with_name(f".{path.name}-real")
    path.rename(real)
    path.symlink_to(real)


@pytest.mark.parametrize("folder", ["slurm_logs", "experiments"])
@pytest.mark.parametrize("tamper, says", [
    pytest.param(_other_users, "another user", marks=pytest.mark.skipif(
        os.geteuid() != 0, reason="giving a folder to another user needs root")),
    (_open_to_all, "can be written by other users (mode 0777"),
    (_a_link, "symbolic link"),
])
def test_the_runs_folders_at_the_workspace_root_are_checked_by_check_handoff_and_the_script(
        site, folder, tamper, says):
    """slurm_logs/ (the jobs' output) and experiments/ (the node work dirs) are the run's as
    much as checkpoints/ and launch/: emit makes them the user's, and one another user could
    change fails check-handoff's script item, and the script stops before it runs anything."""
    _, result = _emit(site)
    path = site.workspace / folder
    assert path.is_dir() and path.stat().st_mode & 0o777 == 0o750
    run = dict(env=site.env, capture_output=True, text=True, timeout=60)
    assert subprocess.run(["bash", result.handoff_script], **run).returncode == 0
    tamper(path)
    check = _by_id(check_handoff(result.checkpoint_dir, host=site.host))["script"]
    assert check.status == "fail" and says in check.summary and str(path) in check.summary, check
    ran = subprocess.run(["bash", result.handoff_script], **run)
    assert ran.returncode == 3 and "stopped before running anything" in ran.stderr, ran
    assert str(path) in ran.stderr


def test_missing_script_fails_script_and_export(site):
    _, result = _emit(site)
    os.unlink(result.handoff_script)
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host))
    assert checks["script"].status == "fail" and "does not exist" in checks["script"].summary
    assert checks["checkpoint_env"].status == "fail"


def test_script_for_another_checkpoint_fails_the_export_check(site):
    _, result = _emit(site)
    script = Path(result.handoff_script)
    script.write_text(script.read_text().replace(result.checkpoint_dir, "/work/elsewhere/ckpt"))
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host))
    assert checks["checkpoint_env"].status == "fail" and "/work/elsewhere/ckpt" in checks["checkpoint_env"].summary


def test_ari_missing_in_a_login_shell(site):
    _, result = _emit(site)
    (site.home / ".bash_profile").unlink()  # the login shell resets PATH (/etc/profile)
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host))
    assert checks["ari"].status == "fail" and "login shell" in checks["ari"].summary
    assert "bash_profile" in checks["ari"].fix


def test_a_login_profile_that_echoes_a_secret_does_not_leak_it(site):
    _, result = _emit(site)
    token = "plainvalue-4242-zz"  # no token shape: only the environment says it is secret
    (site.home / ".bash_profile").write_text('echo "login: token=$HF_TOKEN"\n')
    host = LocalHost(env={**site.env, "HF_TOKEN": token}, mountinfo_path=site.host.mountinfo_path)
    checks = _by_id(check_handoff(result.checkpoint_dir, host=host))
    assert checks["ari"].status == "fail" and "login: token=***" in checks["ari"].evidence
    assert token not in json.dumps([c.to_json() for c in checks.values()])


def test_partition_this_node_may_not_submit_to(site):
    _, result = _emit(site, partition="forbidden")
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host))
    assert checks["sbatch"].status == "fail"
    assert "Invalid partition name" in checks["sbatch"].summary


def test_module_that_does_not_exist(site):
    _, result = _emit(site, module_loads=["openmpi/4.1", "nosuch/1.0"])
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host))
    assert checks["modules"].status == "fail" and "nosuch/1.0" in checks["modules"].summary
    _said_in_ja_and_zh(checks["modules"])


def test_profile_modules_need_module_in_a_non_interactive_bash(site):
    profile = golden_state().profile
    profile.module_loads = ["cuda/12.4"]
    _, result = _emit(site, module_loads=[], profile=profile)
    (site.bin / "module").unlink()  # module exists only as an interactive shell function
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host))
    assert checks["modules"].status == "fail" and "not defined" in checks["modules"].summary
    assert "BASH_ENV" in checks["modules"].fix
    _said_in_ja_and_zh(checks["modules"])


def _said_in_ja_and_zh(check) -> None:
    """``check-handoff --lang ja|zh`` prints the verdict and its fix with no English clause."""
    import re

    from ari_jupyter.cli.check_handoff import report
    from widget_text import english_sentences

    assert check.message_id and check.fix_id, check
    for lang in ("ja", "zh"):
        lines = report([check], [], lang).splitlines()
        assert all(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", line) for line in lines), lines
        assert english_sentences(lines) == [], lines


def test_checkpoint_on_node_local_storage(site, tmp_path):
    state = golden_state(workspace=str(tmp_path / "ws"), provided_files=[])
    result = emit_checkpoint(state, force=True)  # /tmp: node-local, written only when forced
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host))
    assert checks["shared_fs"].status == "fail" and "node-local" in checks["shared_fs"].summary


def test_exported_variables_that_override_the_checkpoint_env(site):
    _, result = _emit(site)
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host,
                                  env={**site.env, "ARI_SLURM_PARTITION": "large"}))
    assert checks["env_overrides"].status == "warn"
    assert "ARI_SLURM_PARTITION=large (checkpoint: small)" in checks["env_overrides"].summary
    assert "unset ARI_SLURM_PARTITION" in checks["env_overrides"].fix


def test_sbatch_input_variables_are_reported(site):
    _, result = _emit(site)
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host,
                                  env={**site.env, "SBATCH_ACCOUNT": "projX"}))
    assert checks["env_overrides"].status == "warn"
    assert "SBATCH_ACCOUNT=projX" in checks["env_overrides"].summary
    assert checks["env_overrides"].fix.startswith("unset SBATCH_ACCOUNT")


NOT_CHECKPOINTS = [
    # (what the directory holds, the one verdict's summary after the path)
    (None, " does not exist"),
    ("file", " is not a directory"),
    ({}, " is not a checkpoint: it has no launch_config.json"),
    ({"experiment.md": "Metrics: m\n"}, " is not a checkpoint: it has no launch_config.json"),
    ({"launch_config.json": '{"ari": {}}'},
     " is not a checkpoint written by ari-jupyter: its launch_config.json has no 'ari_jupyter' section"),
]


@pytest.mark.parametrize("content, says", NOT_CHECKPOINTS)
def test_a_directory_that_is_not_a_checkpoint_gets_one_verdict(site, tmp_path, content, says):
    path = tmp_path / "launch" / "nope"
    if content == "file":
        path.parent.mkdir(parents=True)
        path.write_text("x")
    elif content is not None:
        path.mkdir(parents=True)
        for name, text in content.items():
            (path / name).write_text(text)
    (check,) = check_handoff(path, host=site.host)
    assert (check.id, check.status, check.summary) == ("checkpoint", "fail", f"{path}{says}")
    assert check.data["not_a_checkpoint"] is True


def test_a_workspace_given_instead_of_a_checkpoint_lists_its_checkpoints(site):
    _, result = _emit(site)
    (check,) = check_handoff(site.workspace, host=site.host)
    assert check.fix.endswith(f"under this directory: {result.checkpoint_dir}.")


def test_a_damaged_checkpoint_is_still_checked_item_by_item(site):
    _, result = _emit(site)
    (Path(result.checkpoint_dir) / "launch_config.json").write_text("{torn")
    checks = _by_id(check_handoff(result.checkpoint_dir, host=site.host))
    assert checks["checkpoint"].status == "fail" and "cannot read" in checks["checkpoint"].summary
    assert checks["script"].status == "ok" and checks["sbatch"].status == "skip"


@pytest.mark.parametrize("json_flag", [False, True])
def test_cli_says_not_a_checkpoint_once_and_stops(tmp_path, json_flag):
    (tmp_path / "nope").mkdir()
    proc = subprocess.run([sys.executable, "-m", "ari_jupyter", "check-handoff",
                           *(["--json"] if json_flag else []), str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    if json_flag:
        assert [c["id"] for c in json.loads(proc.stdout)["checks"]] == ["checkpoint"]
        assert proc.stderr == ""
    else:
        assert proc.stdout == ""
        assert proc.stderr.splitlines() == [
            f"ari-jupyter check-handoff: {tmp_path / 'nope'} is not a checkpoint: it has no "
            "launch_config.json. Give the checkpoint directory that the wizard or `ari-jupyter "
            "emit` printed (<workspace>/checkpoints/<run_id>)."]


# -- the checklist ------------------------------------------------------------------------------

def test_checklist_for_a_written_checkpoint(site):
    state, result = _emit(site)
    steps = handoff_checklist(state.choices(), result.checkpoint_dir, notes=result.notes, files=result.files,
                              port=9100, env=site.env)
    handoff, reproduce, dashboard = steps  # the run first, the optional dashboard last
    assert dashboard.command == f"ari viz {result.checkpoint_dir} --port 9100"
    assert "--host" not in dashboard.command
    assert "no login" in dashboard.warning and "/api/env-keys" in dashboard.warning
    assert dashboard.extra_commands[0] == "ssh -N -L 9100:n1:9100 -L 9101:n1:9101 alice@login1"
    assert handoff.state == "written" and handoff.command == result.handoff_command
    # .env is written, workflow.yaml is not: the state says so instead of "written"
    assert reproduce.state == "env only" and "ARI_PHASE1_SANDBOX=slurm" in reproduce.detail
    assert "workflow.yaml not written" in reproduce.detail
    json.dumps([s.to_json() for s in steps])


def test_checklist_lists_the_run_first_and_the_optional_dashboard_last(site):
    """The command that starts the run is step 1; ARI's dashboard is optional and comes last."""
    state, result = _emit(site)
    steps = handoff_checklist(state.choices(), result.checkpoint_dir, notes=result.notes, files=result.files,
                              port=9100, env=site.env)
    assert [s.id for s in steps] == ["handoff", "reproduce", "dashboard"]


def test_checklist_says_ari_is_running_in_the_checkpoint(site):
    """While the hand-off's `ari run` works in the checkpoint, its step says so (with the
    process), not "written" as before it ran."""
    state, result = _emit(site)
    with live_ari(Path(result.checkpoint_dir)) as pid:
        handoff = handoff_checklist(state.choices(), result.checkpoint_dir, files=result.files, port=9100,
                                    env=site.env)[0]
        assert handoff.state == "running" and str(pid) in handoff.detail
    handoff = handoff_checklist(state.choices(), result.checkpoint_dir, files=result.files, port=9100,
                                env=site.env)[0]
    assert handoff.state == "written"


@pytest.mark.parametrize("we_wrote, then, state, said, inputs", [
    (True, None, "written", "sets the reproduce inputs", "sandbox_kind=slurm, partition=small"),
    # `ari run` copied ARI's packaged workflow.yaml into the checkpoint when it started
    (False, "ari_copies", "env only", "not one ari-jupyter wrote", "sandbox_kind='', partition=''"),
    (True, "edited", "env only", "changed since ari-jupyter wrote it", "sandbox_kind='', partition=''"),
])
@pytest.mark.parametrize("files_from_emit", [True, False])  # the wizard / check-handoff
def test_checklist_claims_workflow_yaml_only_when_launch_config_records_it(
        site, tmp_path, we_wrote, then, state, said, inputs, files_from_emit):
    pytest.importorskip("yaml")
    from unit.ari.test_render import WORKFLOW
    from ari_jupyter.i18n import render as in_lang

    packaged = tmp_path / "packaged-workflow.yaml"
    packaged.write_text(WORKFLOW)
    ours = golden_state(workspace=str(site.workspace), provided_files=[])
    ours.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": str(site.workspace)}))
    result = emit_checkpoint(ours, ari_workflow=packaged if we_wrote else None)
    if then is not None:
        (Path(result.checkpoint_dir) / "workflow.yaml").write_text(WORKFLOW)
    reproduce = handoff_checklist(ours.choices(), result.checkpoint_dir, notes=result.notes, port=9100,
                                  files=result.files if files_from_emit else None, env=site.env)[1]
    assert reproduce.state == state and said in reproduce.detail, reproduce.detail
    assert inputs in reproduce.detail and "ARI_PHASE1_SANDBOX=slurm" in reproduce.detail
    if state != "written":
        assert "sets the reproduce inputs" not in reproduce.detail
        for lang in ("ja", "zh"):
            assert "ari-jupyter wrote" not in in_lang(reproduce.detail, lang)


def test_free_port_skips_a_pair_whose_websocket_port_is_taken():
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        taken = busy.getsockname()[1]
        busy.listen()
        assert free_port(start=taken - 1) not in (taken - 1, taken)


def test_each_user_of_a_node_starts_from_a_port_pair_of_their_own():
    """Two users of one node told ports before either starts ``ari viz``: not the same pair."""
    from ari_jupyter.checkpoint.handoff import user_dashboard_port

    assert user_dashboard_port(0) == user_dashboard_port(1000) == 8765
    assert (user_dashboard_port(1001), user_dashboard_port(1002)) == (8767, 8769)
    assert len({user_dashboard_port(uid) for uid in range(1000, 1500)}) == 500
    assert user_dashboard_port() == user_dashboard_port(os.getuid())


def test_commands_quote_paths():
    assert dashboard_command("/work/a b", 8765) == "ari viz '/work/a b' --port 8765"
    assert ssh_tunnel_command("n1", 8000) == "ssh -N -L 8000:n1:8000 -L 8001:n1:8001 <login-host>"


def test_cli_check_handoff_json(site, tmp_path):
    _, result = _emit(site)
    env = {**os.environ, "HOME": str(tmp_path)}  # this machine: no ari in a login shell here
    out = subprocess.run([sys.executable, "-m", "ari_jupyter", "check-handoff", "--json",
                          "--port", "9200", result.checkpoint_dir],
                         capture_output=True, text=True, env=env, timeout=120)
    report = json.loads(out.stdout)
    assert [c["id"] for c in report["checks"]] == list(CHECK_IDS)
    assert [s["id"] for s in report["steps"]] == ["handoff", "reproduce", "dashboard"]
    failed = [c["id"] for c in report["checks"] if c["status"] == "fail"]
    assert out.returncode == (1 if failed else 0)


# -- on the demo sites ---------------------------------------------------------------------------
# Write goes to this machine's demo workspace (~/ari-demo/<site>), which the site sees as its own
# workspace (/work/<user>/ari): every verdict is the recorded site's.

RCCS_MODULES = ("openmpi/4.1", "cuda/12.4")


@pytest.fixture()
def demo_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(home / ".jupyter"))
    return home


def _emit_on_site(capsys, site_name, *flags):
    # A class's local model: no API key is needed, so every item can pass on a demo site; the
    # Quick scope fits the recorded allocation's time left (rccs-cloud: 3:12:45; Quick needs
    # up to 5 rounds of 30 min, Standard 16 h).
    code = main(["emit", "--site", site_name, "--title", "handoff demo", "--goal", "g",
                 "--metric", "accuracy", "--llm-backend", "ollama", "--scope-preset", "quick",
                 "--json", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)["checkpoint_dir"]


def _check_on(site, checkpoint_dir):
    """check-handoff against a (possibly altered) recorded site, demo workspace mapped."""
    return _by_id(check_handoff(checkpoint_dir, host=open_host(site, AriWizard()), timeout=10))


def _statuses(checks):
    return {k: v.status for k, v in checks.items()}


def _answer_first(site, *recordings):
    """The site with ``recordings`` answering before its own (the first match answers)."""
    return dataclasses.replace(site, commands=[*recordings, *site.commands])


@pytest.fixture()
def rccs_checkpoint(demo_home, capsys):
    flags = ["--walltime", "00:50:00"]
    for name in RCCS_MODULES:
        flags += ["--module", name]
    return _emit_on_site(capsys, "rccs-cloud", *flags)


def test_rccs_cloud_demo_passes_every_check_handoff_item(rccs_checkpoint, demo_home, capsys):
    assert rccs_checkpoint.startswith(str(demo_home / "ari-demo" / "rccs-cloud"))
    code = main(["check-handoff", "--site", "rccs-cloud", "--json", "--port", "9400", rccs_checkpoint])
    report = json.loads(capsys.readouterr().out)
    checks = {c["id"]: c for c in report["checks"]}
    assert code == 0 and {k: c["status"] for k, c in checks.items()} == {i: "ok" for i in CHECK_IDS}, \
        {k: (c["status"], c["summary"]) for k, c in checks.items()}
    assert "/work/u12345/ari/checkpoints/" in checks["shared_fs"]["summary"]
    assert checks["ari"]["data"]["path"] == "/home/u12345/.local/bin/ari"
    assert "may submit to small" in checks["sbatch"]["summary"]
    assert checks["modules"]["summary"].endswith("openmpi/4.1, cuda/12.4")
    dashboard = report["steps"][-1]  # optional, last
    assert dashboard["command"] == f"ari viz {rccs_checkpoint} --port 9400"
    assert dashboard["extra_commands"][0] == "ssh -N -L 9400:rc01:9400 -L 9401:rc01:9401 u12345@rc-login"


def _only_failure(checks, check_id):
    assert {k: s for k, s in _statuses(checks).items() if s != "ok"} == {check_id: "fail"}, \
        {k: (v.status, v.summary) for k, v in checks.items()}
    return checks[check_id]


def test_rccs_cloud_checkpoint_on_tmpfs(demo_home, capsys, tmp_path):
    checkpoint = _emit_on_site(capsys, "rccs-cloud", "--walltime", "00:50:00", "--force",
                               "--module", "openmpi/4.1", "--workspace", str(tmp_path / "node-local"))
    failed = _only_failure(_check_on(RecordedSite.load("rccs-cloud"), checkpoint), "shared_fs")
    assert "tmpfs" in failed.summary and "node-local" in failed.summary


def test_rccs_cloud_without_ari_in_the_login_shell(rccs_checkpoint):
    site = RecordedSite.load("rccs-cloud")
    gone = RecordedCommand(("bash", "-lc", "*command -v ari"), returncode=1)
    failed = _only_failure(_check_on(_answer_first(site, gone), rccs_checkpoint), "ari")
    assert "`ari` is not on PATH in a login shell" in failed.summary and "bash_profile" in failed.fix


def test_rccs_cloud_module_that_no_longer_exists(rccs_checkpoint):
    site = RecordedSite.load("rccs-cloud")
    retired = [dataclasses.replace(c, rest_each=tuple(g for g in c.rest_each if not g.startswith("cuda")))
               for c in site.commands]  # cuda/12.4 removed from the site after the write
    without_cuda = dataclasses.replace(site, commands=retired)
    failed = _only_failure(_check_on(without_cuda, rccs_checkpoint), "modules")
    assert failed.summary.startswith("`module load openmpi/4.1 cuda/12.4` fails in hand-off: Lmod")
    assert "unknown" in failed.summary and "module avail" in failed.fix


@pytest.mark.parametrize("stderr, fix_id", [
    ("sbatch: error: Batch job submission failed: Access/permission denied\n",
     "probe.sbatch.refused.fix.node_may_not_submit"),
    # recorded on the test bed for an unprivileged user (tests/testbed/test_sbatch_refusal_testbed.py)
    ("allocation failure: User's group not permitted to use this partition\n",
     "probe.sbatch.refused.fix.not_permitted"),
])
def test_rccs_cloud_partition_this_user_or_node_may_not_submit_to(rccs_checkpoint, stderr, fix_id):
    """check-handoff gives the wizard's verdict and fix: it asks the same probe."""
    refused = RecordedCommand(
        ("sbatch", "--test-only", "-p", "small", "--wrap", "true"), returncode=1, stderr=stderr)
    site = _answer_first(RecordedSite.load("rccs-cloud"), refused)
    failed = _only_failure(_check_on(site, rccs_checkpoint), "sbatch")
    assert failed.summary == f"sbatch refuses a test job on partition small: {stderr.strip().split('error: ')[-1]}"
    assert failed.fix_id == fix_id and "small" in failed.fix


def test_sx40_has_no_ari_yet_and_no_module_system(demo_home, capsys):
    sx40 = RecordedSite.load("sx40")
    plain = _check_on(sx40, _emit_on_site(capsys, "sx40", "--walltime", "00:30:00"))
    assert plain["modules"].status == "skip" and plain["modules"].summary == "no modules to load"
    assert plain["ari"].status == "fail" and plain["sbatch"].status == "ok"
    assert plain["shared_fs"].status == "ok" and "lustre" in plain["shared_fs"].summary
    # emit refuses a module on a site without a module system; a checkpoint written without
    # asking the site (--no-probes) is what check-handoff must still catch.
    code = main(["emit", "--site", "sx40", "--title", "t", "--goal", "g", "--metric", "m",
                 "--walltime", "00:30:00", "--module", "openmpi/4.1"])
    assert code == 1 and "no module system" in capsys.readouterr().err
    with_module = _check_on(sx40, _emit_on_site(capsys, "sx40", "--walltime", "00:30:00",
                                                "--module", "openmpi/4.1", "--no-probes",
                                                "--run-id", "20261129120000_with_module"))
    assert with_module["modules"].status == "fail"
    assert "`module` is not defined" in with_module["modules"].summary


def test_gres_cluster_defines_module_for_login_shells_only(demo_home, capsys):
    checkpoint = _emit_on_site(capsys, "gres-cluster", "--partition", "gpu", "--walltime",
                               "00:30:00", "--module", "cuda/12.4")
    checks = _check_on(RecordedSite.load("gres-cluster"), checkpoint)
    assert checks["modules"].status == "fail"
    assert checks["modules"].summary.endswith("the non-interactive bash that runs reproduce.sh")
    assert "BASH_ENV" in checks["modules"].fix
    assert "(exit 0)" in checks["modules"].evidence  # the hand-off's own load worked
    assert checks["shared_fs"].status == "warn" and checks["ari"].status == "fail"


def test_laptop_fails_the_slurm_items_with_their_own_messages(rccs_checkpoint):
    checks = _check_on(RecordedSite.load("laptop"), rccs_checkpoint)
    assert checks["sbatch"].status == "fail" and "not on PATH" in checks["sbatch"].summary
    assert checks["ari"].status == "fail" and "login shell" in checks["ari"].summary
    assert checks["shared_fs"].status == "fail" and "node-local" in checks["shared_fs"].summary
    assert checks["modules"].status == "fail" and "not defined" in checks["modules"].summary
    assert len({checks[i].summary for i in ("sbatch", "ari", "shared_fs", "modules")}) == 4


LMOD_UNKNOWN = """\
Lmod has detected the following error:  The following module(s) are unknown:
"nosuch/1.0"

Please check the spelling or version number. Also try "module spider ..."
It is also possible your cache file is out-of-date; it may help to try:
  $ module --ignore-cache load "nosuch/1.0"

Also make sure that all modulefiles written in TCL start with the string #%Module
"""


@pytest.mark.parametrize("output, line", [
    (LMOD_UNKNOWN, 'Lmod has detected the following error:  The following module(s) are unknown: "nosuch/1.0"'),
    ("ModuleCmd_Load.c(213):ERROR:105: Unable to locate a modulefile for 'nosuch'\n",
     "ModuleCmd_Load.c(213):ERROR:105: Unable to locate a modulefile for 'nosuch'"),
    ("loading...\nsomething odd\n", "something odd"),
    ("", ""),
])
def test_the_telling_line_of_a_failed_module_load(output, line):
    assert _telling_line(output) == line


@pytest.mark.parametrize("site_flag, said, fails", [
    ([], "checking against demo site rccs-cloud, where this checkpoint was written", False),
    (["--site", "rccs-cloud"], None, False),
    (["--site", "sx40"], "written on demo site rccs-cloud; checking against sx40", True),
])
def test_a_demo_checkpoint_is_checked_on_the_site_it_was_written_on(
        site_flag, said, fails, demo_checkpoint, capsys, monkeypatch):
    """`emit --site rccs-cloud` then `check-handoff CHECKPOINT`: the site comes from the
    checkpoint (said on stderr); another site is checked when asked, with a warning."""
    home, checkpoint = demo_checkpoint
    monkeypatch.setenv("HOME", str(home))
    capsys.readouterr()
    code = main(["check-handoff", str(checkpoint), *site_flag])
    captured = capsys.readouterr()
    assert (code == 1) is fails, captured.out
    if said is None:
        assert "demo site" not in captured.err, captured.err
    else:
        assert said in captured.err, captured.err
    assert ("[FAIL] sbatch" in captured.out) is fails, captured.out


# -- a step whose command needs a failed check ---------------------------------------------------

@pytest.mark.parametrize("failed, checked, probe_ari, dashboard_state, said", [
    ((), True, "ok", "ready", ""),
    (("ari",), True, "ok", "not ready", "失敗したチェック"),  # `ari viz` needs ari in the terminal
    (("checkpoint",), True, "ok", "not ready", "失敗したチェック"),  # ... and a readable checkpoint
    (("sbatch", "api_key"), True, "ok", "ready", ""),  # the dashboard needs neither
    # before the hand-off checks ran, step 2's verdict on ari stands (as check-handoff's would)
    ((), False, "fail", "not ready", "サイトチェック"),
    ((), False, "ok", "ready", ""),
    ((), True, "fail", "ready", ""),  # the login shell found ari: the check replaces the probe
])
def test_with_checks_marks_a_step_not_ready_when_its_command_needs_a_failed_check(
        site, failed, checked, probe_ari, dashboard_state, said):
    state, result = _emit(site)
    steps = handoff_checklist(state.choices(), result.checkpoint_dir, notes=result.notes, files=result.files,
                              port=9100, env=site.env)
    checks = [ProbeResult(check_id, "fail" if check_id in failed else "ok", "x")
              for check_id in CHECK_IDS] if checked else []
    seen = with_checks(steps, checks, [ProbeResult("ari", probe_ari, "x")])
    assert [s.state for s in seen] == [*(s.state for s in steps[:2]), dashboard_state]
    if dashboard_state == "not ready":
        assert ", ".join(failed or ["ari"]) in seen[2].detail
        assert seen[2].detail.endswith(steps[2].detail)
        from ari_jupyter.i18n import render, render_message
        assert said in render(seen[2].detail, "ja")
        said = json.loads(json.dumps(seen[2].to_json()))  # --json: the nested detail too
        assert render_message(said["detail"], said["messages"]["detail"], "ja") == \
            render(seen[2].detail, "ja")
    assert seen[:2] == steps[:2]


def test_sx40_without_ari_says_the_dashboard_is_not_ready(demo_home, capsys):
    """Step 2's probe, the checklist and check-handoff say the same of a site without ari."""
    assert main(["probe", "--site", "sx40", "--only", "ari"]) == 1
    assert capsys.readouterr().out.splitlines()[1].split()[:2] == ["fail", "ari"]
    checkpoint = _emit_on_site(capsys, "sx40", "--walltime", "00:30:00")
    assert main(["check-handoff", checkpoint, "--port", "9300"]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] ari:" in out
    assert "3. Start ARI's dashboard from the notebook (optional) [not ready]" in out
    assert "First fix the failed check (ari) above" in out
    assert main(["--lang", "ja", "check-handoff", checkpoint, "--port", "9300"]) == 1
    assert "[未準備]" in capsys.readouterr().out


@pytest.mark.parametrize("port", ["-5", "0", "65535", "99999"])
def test_cli_check_handoff_refuses_a_port_the_dashboard_cannot_use(tmp_path, capsys, port):
    assert main(["check-handoff", str(tmp_path), "--port", port]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ari-jupyter check-handoff: error: --port must be from 1 to 65534")
    assert err.rstrip().endswith(f"got {port}")
    assert main(["--lang", "ja", "check-handoff", str(tmp_path), "--port", port]) == 2
    assert "1 から 65534" in capsys.readouterr().err
