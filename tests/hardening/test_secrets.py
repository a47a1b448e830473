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

from ari_jupyter.allocation import Allocation
from ari_jupyter.ari.profile import PRESETS
from ari_jupyter.emit import emit_checkpoint
from ari_jupyter.host import LocalHost, RecordedSite
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

def _secret_site(failing: bool) -> RecordedSite:
    site = RecordedSite.load("rccs-cloud")
    data = {"name": "rccs-secrets", "env": {**site.env, **SECRETS},
            "mounts": [{"mountpoint": m.mountpoint, "fstype": m.fstype, "source": m.source}
                       for m in site.mount_table],
            "which": dict(site.programs), "commands": []}
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


def _wizard_strings(failing: bool) -> tuple[list[str], int]:
    from ari_jupyter.config import AriWizard
    from ari_jupyter.widgets.wizard import Wizard
    from test_widgets_support import fake_bridge

    site = _secret_site(failing)

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
    from ari_jupyter.handoff import check_handoff

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
    from ari_jupyter.redact import is_secret_name, redact

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
