"""API keys and tokens in the environment never reach probe evidence, the verdicts, the files
emit writes, the command line's JSON, or anything the wizard's widgets hold.

The site commands here do what real ones do on a bad day: print the environment, echo a
token in an error message, log ``NAME=value`` lines. Each scan has a control that turns the
redactor off and shows the same scan then finds the secret.
"""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from ari_jupyter.slurm.allocation import Allocation
from ari_jupyter.ari.profile import PRESETS
from ari_jupyter.checkpoint.emit import emit_checkpoint
from ari_jupyter.hosts.host import LocalHost
from ari_jupyter.hosts.recorded_site import RecordedSite
from ari_jupyter.probes import ProbeContext, run_probes_sync

from ._support import SECRETS, all_strings, marked_env, secrets_in, valid_state, write_command
from .figures import record

REPO = Path(__file__).resolve().parents[2]
COMMANDS = ("sbatch", "sinfo", "squeue", "srun", "mpirun", "mpiexec", "nvidia-smi", "ari")
LEAKY_LINES = "\n".join([
    'env | sort >&2',
    'echo "debug: using key $OPENAI_API_KEY and token=$HF_TOKEN" >&2',
    'echo "export ANTHROPIC_API_KEY=\\"$ANTHROPIC_API_KEY\\"" >&2',
    'echo "auth: $GITHUB_TOKEN / $DB_PASSWORD / $S3_SECRET / $MY_SERVICE_TOKEN / $WANDB_API_KEY" >&2',
])
HAPPY_OUTPUT = {
    "sbatch": 'echo "slurm 22.05.8"',
    "sinfo": "echo 'small*|up|1:00:00|2|4|1000|(null)'",
    "squeue": "echo '55:00'",
    "srun": 'echo "slurm 22.05.8"',
    "mpirun": 'echo "mpirun (Open MPI) 4.1.4"',
    "mpiexec": 'echo "mpiexec (Open MPI) 4.1.4"',
    "nvidia-smi": 'echo "GPU 0: Tesla V100 (UUID: GPU-1)"',
    "ari": 'echo "ari 0.9.1"',
}


def _leaky_bin(tmp: Path, failing: bool) -> Path:
    bin_dir = tmp / "bin"
    for name in COMMANDS:
        body = LEAKY_LINES + "\n" + ('echo "error: request failed for $OPENAI_API_KEY" >&2\nexit 1'
                                     if failing else HAPPY_OUTPUT[name])
        write_command(bin_dir, name, body)
    return bin_dir


def _probe_env(bin_dir: Path) -> dict[str, str]:
    env, _ = marked_env(bin_dir, {**SECRETS, "SLURM_JOB_ID": "77", "SLURM_JOB_PARTITION": "small",
                                  "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_NUM_NODES": "2"})
    return env


def _local_results(tmp: Path, failing: bool):
    env = _probe_env(_leaky_bin(tmp, failing))
    ctx = ProbeContext(allocation=Allocation.from_env(env), partition="small", timeout=5.0,
                       workspace=str(tmp / "ws"))
    return run_probes_sync(LocalHost(env), ctx), env


def test_probe_evidence_never_carries_a_secret(tmp_path):
    results, _ = _local_results(tmp_path, failing=False)
    leaks = {r.id: secrets_in(r.evidence) for r in results if secrets_in(r.evidence)}
    shown = sum(1 for r in results if r.evidence)
    record("Secrets", "probe evidence (commands print env, tokens, NAME=value)", cases=len(results),
           survived=len(results) - len(leaks), lost=len(leaks), unit="probe results")
    assert shown >= 6  # the leaky output really reached the evidence
    assert leaks == {}


def _without_redactor(monkeypatch) -> None:
    import ari_jupyter.probes.context as context
    import ari_jupyter.probes.runner as runner

    for module in (context, runner):
        monkeypatch.setattr(module, "redact", lambda text, env=None: text)


def test_control_without_the_redactor_the_evidence_scan_finds_secrets(tmp_path, monkeypatch):
    _without_redactor(monkeypatch)
    results, _ = _local_results(tmp_path, failing=False)
    assert any(secrets_in(r.evidence) for r in results)


def test_no_field_of_any_verdict_carries_a_secret_when_commands_fail(tmp_path):
    """Summaries quote the first line of a failing command's output: redacted too."""
    results, _ = _local_results(tmp_path, failing=True)
    leaks = {r.id: secrets_in(json.dumps(r.to_json())) for r in results}
    leaks = {k: v for k, v in leaks.items() if v}
    record("Secrets", "every verdict field when failing commands echo a token", cases=len(results),
           survived=len(results) - len(leaks), lost=len(leaks), unit="probe results")
    assert leaks == {}


def _emit_after_probes(tmp: Path, failing: bool) -> Path:
    results, env = _local_results(tmp, failing)
    state = valid_state(tmp, profile=PRESETS["cpu_single"](), module_loads=[])
    for result in results:
        if result.id != "shared_fs":
            state.set_probe_result(result)
    old = dict(os.environ)
    os.environ.update(SECRETS)
    try:
        emit_checkpoint(state)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return Path(state.workspace)


def _scan_files(root: Path) -> dict[str, list[str]]:
    return {str(p): secrets_in(p.read_text(errors="replace"))
            for p in root.rglob("*") if p.is_file() and secrets_in(p.read_text(errors="replace"))}


def test_emitted_files_carry_no_secret(tmp_path):
    workspace = _emit_after_probes(tmp_path, failing=False)
    files = [p for p in workspace.rglob("*") if p.is_file()]
    leaks = _scan_files(workspace)
    record("Secrets", "emitted files (probe results stored in launch_config.json)",
           cases=len(files), survived=len(files) - len(leaks), lost=len(leaks), unit="files")
    assert len(files) >= 4 and leaks == {}


def test_emitted_files_carry_no_secret_when_commands_failed(tmp_path):
    assert _scan_files(_emit_after_probes(tmp_path, failing=True)) == {}


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ari_jupyter", *args], env={**env, "PYTHONPATH": str(REPO)},
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def test_command_line_json_carries_no_secret(tmp_path):
    env = _probe_env(_leaky_bin(tmp_path, failing=False))
    outputs = {
        "probe --json": _cli(["probe", "--json", "--partition", "small", "--timeout", "5"], env, tmp_path),
        "allocation --json": _cli(["allocation", "--json"], env, tmp_path),
        "emit --json": _cli(["emit", "--json", "--force", "--title", "Scaling", "--goal", "Measure.",
                             "--metric", "GFlops", "--partition", "small", "--max-cpus", "4",
                             "--walltime", "00:30:00", "--workspace", str(tmp_path / "ws")], env, tmp_path),
    }
    leaks = {name: secrets_in(p.stdout + p.stderr) for name, p in outputs.items() if secrets_in(p.stdout + p.stderr)}
    assert json.loads(outputs["probe --json"].stdout)["probes"]
    assert outputs["emit --json"].returncode == 0, outputs["emit --json"].stderr
    files = _scan_files(tmp_path / "ws")
    record("Secrets", "CLI output: probe/allocation/emit --json (+ files emit wrote)",
           cases=len(outputs) + 1, survived=len(outputs) + 1 - len(leaks) - bool(files),
           lost=len(leaks) + bool(files), unit="outputs")
    assert leaks == {} and files == {}


# -- the wizard -----------------------------------------------------------------------------

def _secret_site(failing: bool, secrets_env=None, leak: str | None = None) -> RecordedSite:
    secrets_env = SECRETS if secrets_env is None else secrets_env
    site = RecordedSite.load("rccs-cloud")
    data = {"name": "rccs-secrets", "env": {**site.env, **secrets_env},
            "mounts": [{"mountpoint": m.mountpoint, "fstype": m.fstype, "source": m.source}
                       for m in site.mount_table],
            "which": dict(site.programs), "commands": []}
    if leak is None:
        leak = "\n".join(f"{k}={v}" for k, v in SECRETS.items()) + f"\nusing {SECRETS['OPENAI_API_KEY']}\n"
    for command in site.commands:
        entry = {"argv": list(command.argv), "stdout": command.stdout,
                 "stderr": command.stderr + leak, "returncode": command.returncode}
        if failing:
            entry.update(stdout="", stderr=f"error: auth {SECRETS['HF_TOKEN']} rejected\n" + leak,
                         returncode=1)
        data["commands"].append(entry)
    return RecordedSite.from_dict(data)


def _widget_strings(wizard) -> list[str]:
    """Every string in the synced state of every widget reachable from the wizard."""
    import ipywidgets as widgets

    seen, stack, strings = set(), [wizard], []
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, widgets.Widget):
            strings += list(all_strings(obj.get_state()))
            stack += list(getattr(obj, "children", ()) or ())
        for value in vars(obj).values():
            if isinstance(value, widgets.Widget) or (hasattr(value, "__dict__") and
                                                    type(value).__module__.startswith("ari_jupyter.widgets")):
                stack.append(value)
            elif isinstance(value, (list, tuple, dict)):
                items = value.values() if isinstance(value, dict) else value
                stack += [v for v in items if isinstance(v, widgets.Widget)]
    return strings


def _wizard_strings(failing: bool, site: RecordedSite | None = None) -> tuple[list[str], int]:
    from ari_jupyter.wizard.config import AriWizard
    from ari_jupyter.widgets.wizard import Wizard
    from test_widgets_support import fake_bridge

    site = site or _secret_site(failing)

    async def scenario():
        wizard = Wizard(site=site, config=AriWizard(), env={**site.env}, bridge=fake_bridge()[0])
        await wizard.wait()
        for panel in (wizard.allocation_panel, wizard.checks_panel, wizard.profile_panel,
                      wizard.experiment_panel):
            wizard.go([wizard.allocation_panel, wizard.checks_panel, wizard.profile_panel,
                       wizard.experiment_panel].index(panel))
        return wizard

    wizard = asyncio.run(scenario())
    strings = _widget_strings(wizard)
    return strings, len(strings)


def test_wizard_widgets_hold_no_secret():
    strings, count = _wizard_strings(failing=False)
    leaks = secrets_in("\n".join(strings))
    record("Secrets", "wizard widget values (demo site whose commands print secrets)",
           cases=count, survived=count - len(leaks), lost=len(leaks), unit="widget strings")
    assert count > 50 and leaks == []


def test_control_without_the_redactor_the_widget_scan_finds_secrets(monkeypatch):
    _without_redactor(monkeypatch)
    strings, _ = _wizard_strings(failing=False)
    assert secrets_in("\n".join(strings))


def test_wizard_widgets_hold_no_secret_when_commands_fail():
    strings, _ = _wizard_strings(failing=True)
    assert secrets_in("\n".join(strings)) == []


# -- cut secrets and the hand-off check -----------------------------------------------------------

def _site_printing(name: str, value: str, text: str) -> RecordedSite:
    site = RecordedSite.load("rccs-cloud")
    data = {"name": "cut", "env": {**site.env, name: value}, "which": dict(site.programs), "commands": []}
    for command in site.commands:
        entry = {"argv": list(command.argv), "stdout": command.stdout, "stderr": command.stderr,
                 "returncode": command.returncode}
        if command.argv[:2] == ("ari", "--version"):
            entry.update(stdout=text, stderr="", returncode=1)
        data["commands"].append(entry)
    return RecordedSite.from_dict(data)


def test_a_secret_cut_by_the_evidence_limit_is_not_shown_in_part():
    from hypothesis import given
    from hypothesis import strategies as st

    from _hypothesis_profiles import settings
    from ari_jupyter.probes.context import EVIDENCE_LIMIT

    secret = SECRETS["DB_PASSWORD"]  # no token shape: only the environment says it is secret

    @settings(max_examples=30)
    @given(st.integers(EVIDENCE_LIMIT - len(secret) + 2, EVIDENCE_LIMIT - 8))
    def prop(offset):
        site = _site_printing("DB_PASSWORD", secret, "y" * (offset - 1) + "\n" + secret + "\n")
        result = run_probes_sync(site, ProbeContext(allocation=Allocation.from_env(site.env), only=["ari"]))[0]
        shown = json.dumps(result.to_json())
        assert not any(secret[:n] in shown for n in range(8, len(secret) + 1)), result.evidence[-80:]

    prop()


def test_hand_off_check_results_carry_no_secret(tmp_path):
    from ari_jupyter.checkpoint.handoff import check_handoff

    state = valid_state(tmp_path, module_loads=[])
    result = emit_checkpoint(state)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bash_profile").write_text('echo "login: token=$HF_TOKEN key $OPENAI_API_KEY"\n')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), **SECRETS}
    checks = check_handoff(result.checkpoint_dir, host=LocalHost(env), timeout=10)
    leaks = {c.id: secrets_in(json.dumps(c.to_json())) for c in checks}
    assert {k: v for k, v in leaks.items() if v} == {}


def test_redact_masks_every_secret_value_in_any_text():
    """Property of the redactor itself: any value of a secret-named variable (4+ characters)
    disappears from any text around it, and names of the documented shapes count as secret."""
    from hypothesis import given
    from hypothesis import strategies as st

    from _hypothesis_profiles import settings
    from ari_jupyter.base.redact import is_secret_name, redact

    names = st.one_of(
        st.sampled_from(sorted(SECRETS)),
        st.builds(lambda p, s: f"{p}_{s}", st.from_regex(r"[A-Z][A-Z0-9]{0,8}", fullmatch=True),
                  st.sampled_from(["TOKEN", "SECRET", "PASSWORD", "API_KEY", "ACCESS_KEY", "PASSPHRASE"])))
    values = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                     min_size=4, max_size=40).filter(lambda v: v.strip() == v and "*" not in v)
    cases = [0]

    @settings()
    @given(names, values, st.text(max_size=60), st.text(max_size=60))
    def prop(name, value, before, after):
        cases[0] += 1
        assert is_secret_name(name)
        text = redact(before + value + after, {name: value, "PATH": "/usr/bin"})
        assert value not in text

    prop()
    record("Secrets", "redactor: secret-named values in generated text", cases=cases[0], survived=cases[0])


# -- secrets found by their value, under names that do not say so --------------------------------

# (variable or None, what the variable holds or a command prints, the part that is secret)
VALUE_PLANTS = [
    ("DATABASE_URL", "postgres://alice:PgUrlPw7f3a9c1e@db.example/x", "PgUrlPw7f3a9c1e"),
    ("SLURM_DB_PASS", "SlurmDbPass5e8d2b", "SlurmDbPass5e8d2b"),
    ("PGPASSWORD", "PgPassword9a1c3e", "PgPassword9a1c3e"),
    ("MYSQL_PWD", "MysqlPwd4b7d9f2a", "MysqlPwd4b7d9f2a"),
    ("BUILD_OPTS", "token=FreeTok1a2b3c4d5e", "FreeTok1a2b3c4d5e"),
    (None, "GET https://api.example/v1/models?api_key=QueryKey8c7b6a5d4e&page=2", "QueryKey8c7b6a5d4e"),
    (None, "Authorization: Bearer BearerTok3f2e1d0c9b", "BearerTok3f2e1d0c9b"),
    (None, 'config {"password": "JsonPw6a5b4c3d2e", "user": "bob"}', "JsonPw6a5b4c3d2e"),
    (None, "mysql --password OptPw2c3d4e5f6a -u bob", "OptPw2c3d4e5f6a"),
    (None, "machine db.example login bob password NetrcPw7e8f9a0b1c", "NetrcPw7e8f9a0b1c"),
    (None, "github_pat_11ABCDE0123456789_abcdefghijklmnopqrstu", "github_pat_11ABCDE0123456789_abcdefghijklmnopqrstu"),
    (None, "glpat-Zx9Yw8Vu7Ts6Rq5Po4Nm", "glpat-Zx9Yw8Vu7Ts6Rq5Po4Nm"),
    (None, "AIzaSyB1c2D3e4F5g6H7i8J9k0L1m2N3o4P5q6r", "AIzaSyB1c2D3e4F5g6H7i8J9k0L1m2N3o4P5q6r"),
]
VALUE_SECRETS = {f"plant{i}:{name or text.split()[0]}": secret
                 for i, (name, text, secret) in enumerate(VALUE_PLANTS)}
VALUE_ENV = {name: text for name, text, _ in VALUE_PLANTS if name}
VALUE_TEXT = "\n".join([f"{k}={v}" for k, v in VALUE_ENV.items()]
                       + [text for name, text, _ in VALUE_PLANTS if not name]) + "\n"


def _old_redact(text, env=None):
    """The redactor before it looked at values: names only, five token shapes."""
    import re

    from ari_jupyter.base.redact import MASK

    def secret(name):
        words = name.upper().split("_")
        return (any(w in {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
                          "CREDENTIALS", "APIKEY"} for w in words)
                or name.upper().endswith(("_API_KEY", "_KEY", "_PRIVATE_KEY", "_ACCESS_KEY")))
    if not text:
        return text
    for k, v in (env or {}).items():
        if v and len(v) >= 4 and secret(k):
            text = text.replace(v, MASK)
    pair = re.compile(r"(?P<name>\b[A-Za-z_][A-Za-z0-9_]*)(?P<sep>\s*[=:]\s*)(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;]+)")
    text = pair.sub(lambda m: m.group(0) if not secret(m.group("name"))
                    else f"{m.group('name')}{m.group('sep')}{MASK}", text)
    for shape in (r"\bsk-[A-Za-z0-9_\-]{16,}", r"\bhf_[A-Za-z0-9]{20,}", r"\bgh[pousr]_[A-Za-z0-9]{20,}",
                  r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", r"\bAKIA[0-9A-Z]{16}\b"):
        text = re.sub(shape, MASK, text)
    return text


def _old_redactor(monkeypatch) -> None:
    """Control: put the name-only redactor back everywhere the one redactor is used."""
    import ari_jupyter.probes.context as context
    import ari_jupyter.probes.runner as runner
    import ari_jupyter.hosts.recording as recording
    import ari_jupyter.base.redact as redact_module
    import ari_jupyter.doctor as doctor
    import ari_jupyter.doctor.catalog as catalog

    for module in (context, runner, recording, redact_module, doctor, catalog):
        monkeypatch.setattr(module, "redact", _old_redact)


def _value_bin(tmp: Path) -> Path:
    bin_dir = tmp / "vbin"
    leak = "\n".join(["env | sort >&2", f"cat >&2 <<'EOF'\n{VALUE_TEXT}EOF"])
    for name in COMMANDS:
        write_command(bin_dir, name, leak + "\n" + HAPPY_OUTPUT[name])
    write_command(bin_dir, "squeue", leak + "\nexit 1")  # the server quotes a failing squeue
    return bin_dir


def _value_surfaces(tmp: Path, monkeypatch, capsys) -> dict[str, str]:
    """Every surface the issue names, fed the planted values; the text each one shows."""
    from ari_jupyter.cli import main
    from ari_jupyter.server.status import AllocationStatus

    bin_dir = _value_bin(tmp)
    env = _probe_env(bin_dir)
    env.update(VALUE_ENV)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp)
    surfaces: dict[str, str] = {}
    record_file = tmp / "site.json"
    capsys.readouterr()
    assert main(["probe", "--json", "--partition", "small", "--timeout", "5",
                 "--record-site", str(record_file)]) in (0, 1)
    out = capsys.readouterr()
    surfaces["probe --json"] = out.out + out.err
    surfaces["probe --record-site file"] = record_file.read_text()
    surfaces["record-site file mode"] = oct(stat_mode(record_file))
    workspace = _emit_after_probes_with(tmp, env)
    surfaces["launch_config.json"] = (Path(workspace) / "checkpoints").joinpath(
        "20250101120000_spgemm", "launch_config.json").read_text()
    snapshot = asyncio.run(AllocationStatus(dict(os.environ)).snapshot())
    surfaces["server endpoint"] = json.dumps(snapshot)
    strings, _ = _wizard_strings(False, _secret_site(True, VALUE_ENV, VALUE_TEXT))
    surfaces["widget strings"] = "\n".join(strings)
    doctor = []
    for n, line in enumerate(VALUE_TEXT.splitlines()):
        log = tmp / f"run{n}.log"
        log.write_text("sbatch: error: Batch job submission failed: Invalid account or "
                       f"account/partition combination specified {line}\n")
        capsys.readouterr()
        main(["doctor", "--json", "--kind", "log", str(log)])
        doctor.append(capsys.readouterr().out)
    surfaces["doctor --json"] = "\n".join(doctor)
    return surfaces


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def _emit_after_probes_with(tmp: Path, env: dict) -> str:
    ctx = ProbeContext(allocation=Allocation.from_env(env), partition="small", timeout=5.0,
                       workspace=str(tmp / "ws"))
    results = run_probes_sync(LocalHost(env), ctx)
    state = valid_state(tmp, profile=PRESETS["cpu_single"](), module_loads=[])
    for result in results:
        if result.id != "shared_fs":
            state.set_probe_result(result)
    emit_checkpoint(state)
    return state.workspace


def test_secrets_under_innocent_names_reach_no_surface(tmp_path, monkeypatch, capsys):
    """URL credentials, *_PASS, PGPASSWORD, MYSQL_PWD, X=token=..., Bearer, JSON and option
    passwords, netrc, github_pat_, glpat-, AIza...: none reaches probe --json, the record-site
    file (0600), launch_config.json, the server endpoint, the widgets or doctor --json."""
    surfaces = _value_surfaces(tmp_path, monkeypatch, capsys)
    assert surfaces.pop("record-site file mode") == "0o600"
    leaks = {name: secrets_in(text, VALUE_SECRETS) for name, text in surfaces.items()}
    leaks = {k: v for k, v in leaks.items() if v}
    cases = len(surfaces) * len(VALUE_SECRETS)
    lost = sum(len(v) for v in leaks.values())
    record("Secrets", "values under innocent names (URL credentials, *_PASS, tokens in text) "
           "on every surface", cases=cases, survived=cases - lost, lost=lost,
           unit="secret x surface")
    assert leaks == {}


def test_control_the_old_redactor_leaks_them_on_every_surface(tmp_path, monkeypatch, capsys):
    _old_redactor(monkeypatch)
    surfaces = _value_surfaces(tmp_path, monkeypatch, capsys)
    surfaces.pop("record-site file mode")
    leaks = {name: secrets_in(text, VALUE_SECRETS) for name, text in surfaces.items()}
    assert all(leaks.values()), {k: v for k, v in leaks.items() if not v}


REDACTED_FORMS = [
    ("https://alice:UrlPw12345678@host/x", "UrlPw12345678"),
    ("git clone https://oauth2:TokGit12345678@gitlab.example/x.git", "TokGit12345678"),
    ("curl 'https://h/v1?api_key=QKey12345678&page=2'", "QKey12345678"),
    ("https://h/x?sig=Sig123456789a&se=2025", "Sig123456789a"),
    ("SLURM_DB_PASS=DbPass123456", "DbPass123456"),
    ("PGPASSWORD=PgPass123456 psql", "PgPass123456"),
    ("export MYSQL_PWD='MyPwd1234567'", "MyPwd1234567"),
    ("OPTS=token=Nested1234567", "Nested1234567"),
    ("Authorization: Bearer Bearer1234567", "Bearer1234567"),
    ("-H 'X-Api-Key: XKey12345678'", "XKey12345678"),
    ('{"password": "JsonPw123456", "user": "u"}', "JsonPw123456"),
    ("{'client_secret': 'PySecret1234'}", "PySecret1234"),
    ("mysql --password Opt1234567890 -u bob", "Opt1234567890"),
    ("tool --api-token=OptEq12345678", "OptEq12345678"),
    ("machine h login bob password Netrc1234567", "Netrc1234567"),
    ("github_pat_11ABCDE0123456789_abcdefghijklmnop", "github_pat_11ABCDE0123456789_abcdefghijklmnop"),
    ("glpat-Zx9Yw8Vu7Ts6Rq5Po4Nm", "glpat-Zx9Yw8Vu7Ts6Rq5Po4Nm"),
    ("key AIzaSyB1c2D3e4F5g6H7i8J9k0L1m2N3o4P5q6r", "AIzaSyB1c2D3e4F5g6H7i8J9k0L1m2N3o4P5q6r"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXk"),
]
KEPT_FORMS = [
    "PWD=/home/alice OLDPWD=/tmp", "sbatch --export ALL --partition small --time 01:00:00",
    "ssh -L 8765:localhost:8765 alice@login1", "https://github.com/org/repo?tab=readme",
    "no password needed at the prompt", "KEYTAB=/etc/krb5.keytab", "SSH_AUTH_SOCK=/tmp/agent.1",
    "ARI_SLURM_PARTITION=small", "Line 7: tiles are assigned round-robin.",
]


def test_the_redactor_masks_each_form_by_value_and_keeps_plain_text():
    from ari_jupyter.base.redact import redact

    leaked = [(text, redact(text)) for text, secret in REDACTED_FORMS if secret in redact(text)]
    changed = [(text, redact(text)) for text in KEPT_FORMS if redact(text) != text]
    record("Secrets", "redactor: credential forms by value (table)", cases=len(REDACTED_FORMS)
           + len(KEPT_FORMS), survived=len(REDACTED_FORMS) + len(KEPT_FORMS) - len(leaked)
           - len(changed), lost=len(leaked))
    assert leaked == [] and changed == []


def test_control_the_old_redactor_misses_the_forms():
    missed = [text for text, secret in REDACTED_FORMS if secret in _old_redact(text)]
    assert len(missed) >= len(REDACTED_FORMS) - 3
