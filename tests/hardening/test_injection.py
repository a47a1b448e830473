"""Shell metacharacters, newlines, quotes and non-ASCII in every value that reaches a shell:
partition, module names, constraint, extra sbatch args, workspace and file paths, titles.

Each value is either refused (with the field named) or quoted — proven by running things
for real: ``bash -n`` on the hand-off, the hand-off itself with a recording ``module`` and
``ari``, ``set -a; . .env; set +a`` as ARI's jobs source it, the sbatch preview line with a
recording sbatch, and the reproduce.sh prelude. A canary file must never appear.
"""
from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from ari_jupyter.ari.prelude import PreludeError, render_prelude
from ari_jupyter.ari.profile import ExecutionProfile, ProfileError
from ari_jupyter.ari.sbatch import ReproduceArgs, merge_with_profile, plan_slurm_dispatch
from ari_jupyter.checkpoint.emit import EmitError, emit_checkpoint

from ._support import mark_shared, valid_state, write_command
from .figures import record

CANARY = "CANARY_h9"
PAYLOADS = [
    f"$(touch {CANARY})", f"`touch {CANARY}`", f"; touch {CANARY}", f"' ; touch {CANARY} '",
    f'" ; touch {CANARY} "', f"| touch {CANARY}", f"&& touch {CANARY}", f"$(touch${{IFS}}{CANARY})",
    f"`touch${{IFS}}{CANARY}`", f";touch${{IFS}}{CANARY}", f"\ntouch {CANARY}\n", f"\rtouch {CANARY}",
    f"x\\\ntouch {CANARY}", f"$'\\x3b'touch {CANARY}", f">{CANARY}", f"<(touch {CANARY})",
    "\u2028touch " + CANARY, "é分\u00a0", "*", "~root", "-rf", "--wrap=touch " + CANARY, '"', "'",
]

WORKFLOW = """\
pipeline:
- stage: ors_run_reproduce
  tool: run_reproduce
  inputs:
    repo_dir: '{{checkpoint_dir}}/repro_sandbox'
    sandbox_kind: ''
    partition: ''
    cpus: 0
    walltime: ''
"""

RECORDER = """\
out="$RECORD_DIR/$(basename "$0").$$.json"
python3 - "$out" "$@" <<'PY'
import json, os, sys
json.dump({"argv": sys.argv[2:], "env": {k: v for k, v in os.environ.items()
                                          if k.startswith(("ARI_", "SLURM_"))}}, open(sys.argv[1], "w"))
PY
"""


def _canaries(*roots: Path) -> list[str]:
    found = []
    for root in roots:
        if root.exists():
            found += [str(p) for p in root.rglob(f"*{CANARY}*") if p.is_file() and p.stat().st_size == 0
                      and p.name.startswith(CANARY)]
    return found


def _apply(state, field: str, payload: str, tmp: Path) -> None:
    if field == "partition":
        state.partition = payload
    elif field == "module":
        state.module_loads = ["openmpi/4.1" + payload]
    elif field == "title":
        state.title = "Scaling " + payload
        state.run_id = ""
    elif field == "workspace":
        state.workspace = f"{tmp}/ws {payload} ü"
        mark_shared(state, state.workspace)
    elif field == "provided_file":
        path = tmp / "inputs" / ("in" + payload.replace("/", "_").replace("\x00", "") + ".c")
        try:
            path.write_text("x")
        except OSError:
            pass
        state.provided_files = [str(path)]
    elif field == "metric":
        state.metrics = [payload]
    elif field == "walltime":
        state.walltime = "01:00:00" + payload
    elif field == "goal":
        state.goal = "Goal " + payload


FIELD_NAMES = {"module": "module_loads", "provided_file": "provided_files", "metric": "metrics",
               "title": "title"}


def _run_everything(tmp: Path, result) -> dict:
    """bash -n, run the hand-off with recording `module`/`ari`, source .env; return records."""
    syntax = subprocess.run(["bash", "-n", result.handoff_script], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr
    bin_dir = tmp / "recorders"
    records = tmp / "records"
    records.mkdir(exist_ok=True)
    write_command(bin_dir, "ari", RECORDER)
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(elsewhere), "RECORD_DIR": str(records),
           "OPENAI_API_KEY": "sk-test-not-a-key",  # the hand-off stops without the backend's key
           "BASH_FUNC_module%%": '() { python3 -c \'import json,sys; json.dump(sys.argv[2:], '
                                 'open(sys.argv[1] + "/module.json", "w"))\' "$RECORD_DIR" "$@"; }'}
    run = subprocess.run(["bash", result.handoff_script], cwd=elsewhere, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    ari = [json.loads(p.read_text()) for p in records.glob("ari.*.json")]
    assert len(ari) == 1, run.stdout + run.stderr
    module = json.loads((records / "module.json").read_text()) if (records / "module.json").exists() else None
    dotenv = Path(result.checkpoint_dir) / ".env"
    sourced = subprocess.run(
        ["bash", "-uc", 'set -a; . "$1"; set +a; env -0', "source-env", str(dotenv)],
        cwd=elsewhere, env={"PATH": "/usr/bin:/bin"}, capture_output=True, timeout=30)
    assert sourced.returncode == 0, sourced.stderr
    exported = dict(item.split("=", 1) for item in sourced.stdout.decode().split("\0") if "=" in item)
    return {"ari": ari[0], "module": module, "env": exported}


FIELDS = ["partition", "module", "title", "workspace", "provided_file", "metric", "walltime", "goal"]


@pytest.mark.parametrize("field", FIELDS)
def test_hostile_values_are_refused_by_name_or_quoted(tmp_path, field):
    refused = quoted = executed = 0
    for n, payload in enumerate(PAYLOADS):
        tmp = tmp_path / f"case{n}"
        tmp.mkdir()
        state = valid_state(tmp)
        _apply(state, field, payload, tmp)
        try:
            result = emit_checkpoint(state, force=True)
        except EmitError as exc:
            refused += 1
            name = FIELD_NAMES.get(field, field)
            assert name in str(exc) or field in str(exc), f"{field}={payload!r}: {exc}"
            assert not _canaries(tmp)
            continue
        seen = _run_everything(tmp, result)
        found = _canaries(tmp, Path(state.workspace))
        executed += bool(found)
        assert not found, f"{field}={payload!r} executed: {found}"
        assert seen["ari"]["argv"][:2] == ["run", f"{result.checkpoint_dir}/experiment.md"]
        assert seen["ari"]["env"]["ARI_CHECKPOINT_DIR"] == result.checkpoint_dir
        if state.module_loads:
            assert seen["module"] == ["load", *state.module_loads]
        assert seen["env"]["ARI_SLURM_PARTITION"] == state.partition
        if state.walltime:
            assert seen["env"]["ARI_SLURM_WALLTIME"] == state.walltime
        quoted += 1
    record("Injection", f"`{field}`: hand-off run, .env sourced", cases=len(PAYLOADS),
           survived=refused + quoted, lost=executed, refused=refused, quoted=quoted)


PROFILE_FIELDS = ["constraint", "gpu_type", "exclude_nodes", "hint", "extra_sbatch_args", "module_loads"]


@pytest.mark.parametrize("key", PROFILE_FIELDS)
def test_profile_values_on_the_sbatch_preview_and_the_prelude(tmp_path, key):
    """The preview line is something users paste into a shell; the prelude runs in reproduce.sh."""
    bin_dir = tmp_path / "bin"
    records = tmp_path / "records"
    records.mkdir()
    write_command(bin_dir, "sbatch", RECORDER)
    refused = quoted = executed = 0
    for payload in PAYLOADS:
        value = {"extra_sbatch_args": [payload, "--comment=" + payload],
                 "module_loads": ["openmpi/4.1" + payload, payload]}.get(key, payload)
        try:
            profile = ExecutionProfile.from_json({**ExecutionProfile().to_json(), key: value})
        except ProfileError as exc:
            refused += 1
            assert key in str(exc), str(exc)
            continue
        args = merge_with_profile(ReproduceArgs(partition="small", cpus=4, walltime="01:00:00", nodes=2), profile)
        try:
            plan = plan_slurm_dispatch(args, {}, str(tmp_path / "repo"), has_gres=True, bind_flags=True)
        except Exception as exc:
            assert type(exc).__name__.startswith("Ari"), repr(exc)
            refused += 1
            continue
        for old in records.iterdir():
            old.unlink()
        line = plan.shell_line()
        run = subprocess.run(["bash", "-c", line], cwd=tmp_path,
                             env={"PATH": f"{bin_dir}:/usr/bin:/bin", "RECORD_DIR": str(records)},
                             capture_output=True, text=True, timeout=30)
        assert run.returncode == 0, (line, run.stderr)
        recorded = json.loads(next(records.glob("sbatch.*.json")).read_text())
        assert recorded["argv"] == list(plan.argv[1:])
        try:
            prelude = render_prelude(profile, nodes=2)
        except PreludeError as exc:
            assert "module name" in str(exc)
            refused += 1
        else:
            script = tmp_path / "prelude.sh"
            script.write_text(prelude + 'printf "%s\\n" "$@" > /dev/null\n')
            body = subprocess.run(
                ["bash", str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=30,
                env={"PATH": "/usr/bin:/bin", "SLURM_JOB_NUM_NODES": "2",
                     "BASH_FUNC_module%%": '() { printf "%s\\0" "$@" > "$PWD/module.args"; }'})
            assert body.returncode == 0, body.stderr
            if profile.module_loads:
                recorded_modules = (tmp_path / "module.args").read_text().split("\0")[:-1]
                assert recorded_modules == ["load", *dict.fromkeys(profile.module_loads)]
            quoted += 1
        found = _canaries(tmp_path)
        executed += bool(found)
        assert not found, f"{key}={payload!r}: {found}"
    record("Injection", f"profile `{key}`: sbatch preview line and reproduce.sh prelude run",
           cases=len(PAYLOADS), survived=refused + quoted, lost=executed, refused=refused, quoted=quoted)


def test_workflow_yaml_carries_hostile_profile_values_as_plain_strings(tmp_path):
    import yaml

    source = tmp_path / "workflow.yaml"
    source.write_text(WORKFLOW)
    checked = 0
    for n, payload in enumerate(PAYLOADS):
        tmp = tmp_path / f"w{n}"
        tmp.mkdir()
        state = valid_state(tmp)
        try:
            state.profile = ExecutionProfile.from_json(
                {**state.profile.to_json(), "constraint": payload,
                 "extra_sbatch_args": ["--comment=" + payload]})
        except ProfileError:
            continue
        try:
            result = emit_checkpoint(state, ari_workflow=source)
        except EmitError as exc:
            assert "constraint" in str(exc) or "extra_sbatch_args" in str(exc), str(exc)
            continue
        document = yaml.safe_load((Path(result.checkpoint_dir) / "workflow.yaml").read_text())
        inputs = document["pipeline"][0]["inputs"]
        assert inputs["constraint"] == payload
        assert inputs["extra_sbatch_args"] == ["--comment=" + payload]
        checked += 1
    assert checked
    record("Injection", "workflow.yaml keeps hostile profile values as exact strings", cases=len(PAYLOADS),
           survived=len(PAYLOADS), refused=len(PAYLOADS) - checked)


def test_control_an_unquoted_module_line_does_run_the_canary(tmp_path):
    """Control: the same run with the hand-off's quoting undone does create the canary."""
    state = valid_state(tmp_path)
    state.module_loads = [f"openmpi/4.1;touch${{IFS}}{CANARY}"]
    result = emit_checkpoint(state)
    script = Path(result.handoff_script)
    text = script.read_text()
    script.write_text(text.replace(shlex.quote(state.module_loads[0]), state.module_loads[0]))
    subprocess.run(["bash", str(script)], cwd=tmp_path, capture_output=True, timeout=60,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                        "BASH_FUNC_module%%": "() { :; }"})
    assert _canaries(tmp_path, Path(state.workspace))


@pytest.mark.parametrize("api_base", ["https://[::1]:8080/v1", "http://[fe80::1]:11434",
                                      "https://[2001:db8::7]/v1"])
def test_an_ipv6_api_base_is_judged_alike_by_the_form_and_write(tmp_path, api_base):
    """The form's check and Write agree: a value the form accepts is written, one Write cannot
    carry is refused by the form first (with the fix), never accepted there and refused later."""
    from ari_jupyter.ari.run_settings import RunSettings, problems
    from ari_jupyter.checkpoint.emit import EmitBlocked, EmitError, emit_checkpoint

    from ._support import valid_state

    settings = RunSettings(llm_backend="custom", llm_model="m", llm_api_base=api_base)
    form = [p for p in problems(settings) if p.field == "run_settings.llm_api_base"
            and p.severity == "error"]
    state = valid_state(tmp_path, run_settings=settings)
    try:
        emit_checkpoint(state)
        written = True
    except EmitBlocked:
        written = False
    except EmitError as exc:  # refused by something other than the findings the form shows
        written = None
        said = str(exc)
    agree = (written is True and not form) or (written is False and bool(form))
    record("Fields", "IPv6 API base: the form's check and Write agree", cases=1,
           survived=int(agree), lost=int(not agree), unit="values")
    assert agree, (written, form, locals().get("said"))
    assert form and form[0].message_id == "run_settings.api_base_ipv6" and "localhost" in form[0].fix
