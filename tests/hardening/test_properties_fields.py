"""Every wizard field and ``emit`` flag that reaches a file or a shell line, generated.

For each value the state either refuses it with an error naming that field, or every file
renders, the .env is inert, the hand-off's lines split into exactly the intended words and
ARI's parsers read back what was chosen (``_safety.py``). Nothing else may happen: no
exception, no error blamed on another field, no renderer refusing what validation accepted.
"""
from __future__ import annotations

import contextlib
import io
import json
import string
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from _hypothesis_profiles import settings
from ari_jupyter.ari.prelude import PreludeError, render_prelude
from ari_jupyter.ari.sbatch import ReproduceArgs, plan_slurm_dispatch
from ari_jupyter.ari.profile import ExecutionProfile, ProfileError
from ari_jupyter.cli import main as cli_main

from . import _safety
from ._support import mark_shared, valid_state
from .figures import record

import pytest

PAYLOADS = ["$(touch CANARY)", "`touch CANARY`", "; touch CANARY", "' ; touch CANARY '",
            '" ; touch CANARY "', "| touch CANARY", "&& touch CANARY", "$(touch${IFS}CANARY)",
            ";touch${IFS}CANARY", "\ntouch CANARY\n", "\\\n", "${HOME}", "~root", "*", "!!",
            "a\rb", "x\x00y", "é分\u202e\u00a0\u2028", "-rf", "--export=ALL", "#", "a b"]
SHELLISH = string.ascii_letters + string.digits + "-_./:=,@%+ ;$()`'\"\n\r\t\\|&<>*?#~{}![]^é分\u2028\x00\x7f"


def hostile(max_size: int = 24, allow_nul: bool = True) -> st.SearchStrategy[str]:
    text = st.one_of(
        st.sampled_from(PAYLOADS),
        st.text(alphabet=SHELLISH, max_size=max_size),
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=max_size),
        st.builds(lambda a, p, b: a + p + b, st.from_regex(r"[a-z0-9]{0,6}", fullmatch=True),
                  st.sampled_from(PAYLOADS), st.from_regex(r"[a-z0-9./]{0,6}", fullmatch=True)),
    )
    if not allow_nul:
        text = text.filter(lambda s: "\x00" not in s)
    return text


class Outcomes:
    def __init__(self) -> None:
        self.cases = self.refused = self.written = 0


def _judge(state, field: str, outcomes: Outcomes, also: tuple[str, ...] = ()) -> None:
    """Refused with an error naming ``field`` (or ``also``), or rendered and safe."""
    outcomes.cases += 1
    errors = [p for p in state.problems() if p.severity == "error"]
    if errors:
        names = {p.field for p in errors}
        assert names <= {field, *also}, f"{field} value refused under {names}: {errors}"
        assert all(p.message.strip() for p in errors)
        outcomes.refused += 1
        return
    _safety.check_rendered(state)
    outcomes.written += 1


FIELDS = {
    # field: (strategy, how to set it, fields an error may name besides the field itself)
    "partition": (hostile(), lambda s, v: setattr(s, "partition", v), ()),
    "module_loads": (st.lists(hostile(), min_size=1, max_size=3),
                     lambda s, v: setattr(s, "module_loads", v), ()),
    "title": (hostile(40), lambda s, v: setattr(s, "title", v), ()),
    "goal": (hostile(80), lambda s, v: setattr(s, "goal", v), ()),
    "metrics": (st.lists(hostile(), min_size=0, max_size=3), lambda s, v: setattr(s, "metrics", v), ()),
    "walltime": (st.one_of(hostile(), st.from_regex(r"(\d-)?\d\d:\d\d:\d\d", fullmatch=True)),
                 lambda s, v: setattr(s, "walltime", v), ()),
    "run_id": (st.one_of(hostile(),
                        st.builds(lambda p: "20250101120000_" + p, hostile())),
               lambda s, v: setattr(s, "run_id", v), ()),
}


@pytest.mark.parametrize("field", list(FIELDS))
def test_state_field_is_refused_by_name_or_written_safely(tmp_path, field):
    strategy, assign, also = FIELDS[field]
    base = valid_state(tmp_path)
    outcomes = Outcomes()

    @settings()
    @given(strategy)
    def prop(value):
        state = base.copy()
        assign(state, value)
        _judge(state, field, outcomes, also)

    prop()
    record("Fields", f"wizard field `{field}`", cases=outcomes.cases,
           survived=outcomes.cases, refused=outcomes.refused, written=outcomes.written)


@pytest.mark.parametrize("field, value", [("partition", "small\n"),
                                          ("run_id", "20250101120000_x\n"),
                                          ("metrics", ["GFlops\n"])])
def test_a_trailing_newline_is_refused_by_the_fields_own_check(tmp_path, field, value):
    """`$` also matches before a final newline: each field's own check must not be fooled."""
    state = valid_state(tmp_path, **{field: value})
    assert any(p.field == field and p.severity == "error" for p in state.field_problems())


def test_workspace_path_is_refused_by_name_or_written_safely(tmp_path):
    base = valid_state(tmp_path)
    outcomes = Outcomes()

    @settings()
    @given(hostile(allow_nul=True), st.booleans())
    def prop(suffix, relative):
        state = base.copy()
        state.workspace = (suffix if relative else f"{tmp_path}/ws-{suffix}")
        mark_shared(state, state.workspace)
        _judge(state, "workspace", outcomes)

    prop()
    record("Fields", "wizard field `workspace`", cases=outcomes.cases, survived=outcomes.cases,
           refused=outcomes.refused, written=outcomes.written)


def test_provided_file_path_is_refused_by_name_or_written_safely(tmp_path):
    base = valid_state(tmp_path)
    outcomes = Outcomes()
    inputs = tmp_path / "hostile-inputs"
    inputs.mkdir()

    @settings()
    @given(hostile(allow_nul=False), st.booleans())
    def prop(name, create):
        state = base.copy()
        safe_name = name.replace("/", "_") or "_"
        path = f"{inputs}/{safe_name}"
        if create and safe_name not in (".", ".."):
            with contextlib.suppress(OSError):
                Path(path).write_text("x")
        state.provided_files = [path, f"/{name}"] if name.startswith("/") else [path]
        _judge(state, "provided_files", outcomes)

    prop()
    record("Fields", "wizard field `provided_files`", cases=outcomes.cases, survived=outcomes.cases,
           refused=outcomes.refused, written=outcomes.written)


def test_walltime_written_to_env_is_what_sbatch_reads():
    """sbatch reads --time in ASCII digits; a value the wizard writes must be one."""
    import re

    outcomes = Outcomes()

    @settings()
    @given(st.from_regex(r"(\d-)?\d\d:\d\d:\d\d", fullmatch=True))
    def prop(value):
        from ari_jupyter.wizard.state import WizardState

        outcomes.cases += 1
        state = WizardState(walltime=value)
        if not [p for p in state.field_problems() if p.field == "walltime"]:
            assert re.fullmatch(r"(?:[0-9]+-)?[0-9]{1,3}:[0-9]{2}:[0-9]{2}", value), \
                f"walltime {value!r} accepted but sbatch --time cannot read it"

    prop()
    record("Fields", "walltime accepted only in sbatch's ASCII form", cases=outcomes.cases,
           survived=outcomes.cases)


# -- the execution profile: what reaches the sbatch line -------------------------------------

PROFILE_TEXT = ("constraint", "gpu_type", "exclude_nodes", "cpu_bind", "mem_bind", "hint")


def test_profile_values_reach_sbatch_as_single_words(tmp_path):
    """constraint, extra sbatch args, module names...: the preview shell line splits back into
    exactly ARI's argv, or the profile is refused with the key named."""
    outcomes = Outcomes()

    @settings()
    @given(st.sampled_from(PROFILE_TEXT), hostile(), st.lists(hostile(), max_size=3),
           st.lists(hostile(), max_size=2))
    def prop(key, value, extra, modules):
        outcomes.cases += 1
        data = {**ExecutionProfile().to_json(), key: value, "extra_sbatch_args": extra,
                "module_loads": modules}
        try:
            profile = ExecutionProfile.from_json(data)
        except ProfileError as exc:
            outcomes.refused += 1
            assert exc.messages and all(any(k in m for k in (key, "extra_sbatch_args", "module_loads"))
                                        for m in exc.messages), exc.messages
            return
        args = ReproduceArgs(partition="small", cpus=4, walltime="01:00:00", nodes=2)
        from ari_jupyter.ari.sbatch import merge_with_profile

        merged = merge_with_profile(args, profile)
        try:
            plan = plan_slurm_dispatch(merged, {}, str(tmp_path / "repo"), has_gres=True, bind_flags=True)
        except Exception as exc:  # ARI's own refusals (AriRuntimeError, AriValueError)
            assert type(exc).__name__.startswith("Ari"), repr(exc)
            outcomes.refused += 1
            return
        import shlex

        assert shlex.split(plan.shell_line()) == list(plan.argv)
        for item in extra:
            assert item in plan.argv  # verbatim, one word each, as ARI passes them
        # the profile's modules reach reproduce.sh through the prelude
        try:
            prelude = render_prelude(profile, nodes=2)
        except PreludeError as exc:
            assert "module name" in str(exc)
            outcomes.refused += 1
            return
        loads = [line for line in prelude.split("\n") if line.startswith("module load")]
        wanted = list(dict.fromkeys(profile.module_loads))
        assert [shlex.split(line) for line in loads] == ([["module", "load", *wanted]] if wanted else [])
        outcomes.written += 1

    prop()
    record("Fields", "execution profile keys and extra sbatch args on the sbatch line",
           cases=outcomes.cases, survived=outcomes.cases, refused=outcomes.refused,
           written=outcomes.written)


# -- the emit command line --------------------------------------------------------------------

FLAGS = {
    "--partition": "partition", "--module": "module_loads", "--title": "title",
    "--metric": "metrics", "--walltime": "walltime", "--workspace": "workspace",
    "--run-id": "run_id", "--goal": "goal",
}


def test_emit_flags_exit_1_naming_the_field_or_write_safe_files(tmp_path):
    outcomes = Outcomes()
    counter = iter(range(10**9))

    @settings()
    @given(st.sampled_from(sorted(FLAGS)), hostile(allow_nul=False))
    def prop(flag, value):
        outcomes.cases += 1
        workspace = tmp_path / f"ws{next(counter)}"
        argv = {"--title": "Scaling", "--goal": "Measure it.", "--metric": "GFlops",
                "--partition": "small", "--max-cpus": "4", "--walltime": "01:00:00",
                "--workspace": str(workspace)}
        argv[flag] = f"{workspace}/{value}" if flag == "--workspace" and not value.startswith("/") else value
        args = ["emit", "--no-probes", "--force", "--json"]
        for name, item in argv.items():
            args.append(f"{name}={item}")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli_main(args)
            except SystemExit as exc:  # argparse: usage error
                code = exc.code
        if code != 0:
            assert code == 1, (args, err.getvalue())
            message = err.getvalue()
            assert message.startswith("ari-jupyter emit: ")
            assert FLAGS[flag] in message or flag in message, message
            assert not list(workspace.rglob("*.tmp-ari-jupyter-*"))
            outcomes.refused += 1
            return
        result = json.loads(out.getvalue())
        files = {Path(p).name: Path(p).read_text(encoding="utf-8") for p in result["files"]}
        _safety.env_lines_are_inert(files[".env"])
        from ari_jupyter.checkpoint.load import load_checkpoint

        state = load_checkpoint(result["checkpoint_dir"])
        script = next(p for p in result["files"] if "/launch/" in p and p.endswith(".sh"))
        _safety.check_bfts_env(files["bfts_env.sh"], state)
        _safety.check_handoff(Path(script).read_text(encoding="utf-8"), state, result["checkpoint_dir"])
        _safety.check_experiment(files["experiment.md"], state)
        outcomes.written += 1

    prop()
    record("Fields", "`ari-jupyter emit` flags", cases=outcomes.cases, survived=outcomes.cases,
           refused=outcomes.refused, written=outcomes.written)
