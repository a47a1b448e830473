"""After Write: the steps for the second terminal, and a check of what that terminal will see.

Two things live here. ``handoff_checklist`` gives the three steps of the hosted-notebook flow
for one checkpoint (the hand-off command that starts the run, how the reproduce step gets
``sandbox_kind=slurm`` and the node count, and last the optional ARI dashboard), each with its
state. ``check_handoff`` verifies
from outside what the second terminal will meet: the files, the shared filesystem, ``ari``
in a login shell, ``ARI_CHECKPOINT_DIR`` exported, ``sbatch --test-only`` for the partition,
the modules in a non-interactive bash, and exported variables that would override the
checkpoint's .env. Each verdict is a ``ProbeResult`` with its fix, so the wizard shows them
like the site probes.

ARI's dashboard (``ari viz <checkpoint> --port N``) has no authentication, binds every
interface (HTTP on N, WebSocket on N+1) and serves ``/api/env-keys`` with raw API keys
(spec §0 item 12, §9 items 1-2): the checklist says so and offers an SSH tunnel instead.
"""
from __future__ import annotations

import asyncio
import getpass
import hashlib
import json
import os
import re
import shlex
import socket
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..base.aio import run_sync
from ..ari import prelude, render
from ..ari.dashboard import DEFAULT_DASHBOARD_PORT, dashboard_command, ssh_tunnel_command
from ..i18n import Text, message, message_of, t, text
from ..base.verdict import ProbeResult
from ..ari.markers import live_process
from .emit import CHECKPOINT_FILES, EmitError
from .contract_step import contract_steps
from .load import load_checkpoint
from ..hosts.host import LocalHost
from ..probes.runner import redacted
from ..ari.dotenv import read_dotenv
from ..ari.choices import Choices
from ..ari.run_settings import api_key_status, package_llm
from ..ari.cost import cost_bound
from ..slurm.accounting import assoc_argv, assoc_limits, fair_shares, share_argv
from ..ari.time_fit import (clock, hours, idle_cull_finding, search_seconds, search_time, time_fit_finding,
                            time_left_seconds)
from ..wizard.run_settings_view import ari_default_llm
from ..slurm.allocation import Allocation
from ..probes import ProbeContext, run_probes
from .ownership import Unsafe, first_unsafe_on_the_way, ours, unsafe_entries, unsafe_workspace_folders
from ..base.bounded_read import OPTION_FILE_CAP, read_json_bounded


CHECK_IDS = ("checkpoint", "script", "checkpoint_env", "env_overrides", "api_key", "shared_fs",
             "ari", "sbatch", "modules", "time_fit", "cost")

_MODULE_INIT = "\n".join(prelude.module_init_lines())


# -- the checklist -------------------------------------------------------------------------

@dataclass(frozen=True)
class ChecklistItem:
    id: str
    title: str
    state: str  # "ready", "not ready" (with_checks), "written", "running" (the hand-off's
    # ari run works in the checkpoint), "env only" (.env without our workflow.yaml), "not written"
    command: str = ""
    detail: str = ""
    warning: str = ""
    extra_commands: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """English texts, plus ``messages``: the catalog id and params of each translated one."""
        data = asdict(self)
        data["extra_commands"] = list(self.extra_commands)
        data["messages"] = {name: _said_as(getattr(self, name))
                            for name in ("title", "detail", "warning")
                            if isinstance(getattr(self, name), Text)}
        data["messages"]["extra_commands"] = [_said_as(extra) if isinstance(extra, Text) else None
                                              for extra in self.extra_commands]
        return data


def _said_as(value: Text) -> dict[str, Any]:
    return message_of(value)  # a sentence inside another (a step's blocked detail) nests


USERS_APART = 500
"""Users whose dashboards start apart (``user_dashboard_port``): 8765 up to 9763."""


def user_dashboard_port(uid: int | None = None) -> int:
    """Where this user's search for a free dashboard port starts: ARI's 8765 shifted by a pair
    per uid (modulo ``USERS_APART``). Two users of one node (a hub's servers) who both check
    before either starts ``ari viz`` are not told the same port; uid 0 and 1000 keep 8765."""
    uid = os.getuid() if uid is None else uid
    return DEFAULT_DASHBOARD_PORT + 2 * (uid % USERS_APART)


def free_port(start: int | None = None, attempts: int = 200, host: str = "0.0.0.0") -> int:
    """First port >= ``start`` (default: ``user_dashboard_port()``) where both ``port`` (HTTP)
    and ``port+1`` (WebSocket) are free on every interface, as ``ari viz`` binds them."""
    start = user_dashboard_port() if start is None else start
    for port in range(start, start + attempts):
        if _bindable(host, port) and _bindable(host, port + 1):
            return port
    raise RuntimeError(f"no free port pair between {start} and {start + attempts}")


def _bindable(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def dashboard_warning(node: str, port: int) -> str:
    return text("handoff.dashboard.warning", node=node, port=port, ws_port=port + 1)


def handoff_checklist(choices: Choices, checkpoint_dir: str, *, notes: Sequence[str] = (),
                      port: int | None = None, env: Mapping[str, str] | None = None,
                      files: Sequence[str] | None = None) -> list[ChecklistItem]:
    """The three steps of the hosted-notebook flow for this checkpoint, each with its state.

    ``notes`` are emit's notes (they say why workflow.yaml was or was not written); ``files``
    the paths emit wrote (default: what exists in the checkpoint now).
    """
    env = os.environ if env is None else env
    ckpt = Path(os.path.abspath(checkpoint_dir))
    port = port or free_port()
    allocation = choices.allocation
    node = (allocation.first_node if allocation is not None else None) or socket.gethostname()
    login = env.get("SLURM_SUBMIT_HOST", "").strip()
    user = env.get("USER", "").strip()
    script = ckpt.parent.parent / "launch" / f"{ckpt.name}.sh"
    present = set(files) if files is not None else {str(p) for p in ckpt.iterdir()} if ckpt.is_dir() else set()

    dashboard = ChecklistItem(
        id="dashboard", title=text("handoff.step.dashboard"), state="ready",
        command=dashboard_command(str(ckpt), port),
        # the port was found free on this machine; on a demo site the site's nodes were not asked
        detail=text("handoff.dashboard.detail_demo" if choices.site_name
                    else "handoff.dashboard.detail", port=port, ws_port=port + 1),
        warning=dashboard_warning(node, port),
        extra_commands=(ssh_tunnel_command(node, port, login, user),
                        text("handoff.dashboard.open", port=port)),
    )
    written = str(script) in present or script.is_file()

    live = live_process(ckpt) if written else None
    handoff = ChecklistItem(
        id="handoff", title=text("handoff.step.handoff"),
        state="running" if live is not None else "written" if written else "not written",
        command=render.handoff_command(str(script)),
        detail=(live.why if live is not None else text("handoff.handoff.detail") if written
                else text("handoff.handoff.missing", script=str(script))),
    )
    env_file = ckpt / ".env"
    workflow = ckpt / "workflow.yaml"
    inputs = render.reproduce_inputs(choices) if choices.partition else {}
    why_not = next((n for n in notes if n.startswith("workflow.yaml not written")), "")
    why_not = why_not if isinstance(why_not, Text) else text("handoff.reproduce.no_workflow")
    parts = []
    if str(env_file) in present or env_file.is_file():
        parts.append(text("handoff.reproduce.env", partition=choices.partition))
    owner = _workflow_owner(ckpt) if str(workflow) in present or workflow.is_file() else ""
    if owner == "ours":
        parts.append(text("handoff.reproduce.workflow", inputs=_shown_inputs(inputs)))
        reproduce_state = "written"
    elif owner:
        # ARI copies its packaged workflow.yaml here when `ari run` starts: not ours to claim
        why = text("handoff.reproduce.workflow_changed" if owner == "changed"
                   else "handoff.reproduce.workflow_foreign")
        found = _reproduce_inputs_in(workflow)
        parts.append(why if found is None
                     else text("handoff.reproduce.workflow_holds", why=why,
                               inputs=_shown_inputs(found, quote_empty=True)))
        reproduce_state = "env only" if env_file.is_file() else "not written"
    else:
        parts.append(text("handoff.reproduce.rubric", why=why_not, rubric=render.rubric_nodes(choices)))
        # Only half of the reproduce inputs exist: say so rather than "written".
        reproduce_state = "env only" if env_file.is_file() else "not written"
    reproduce = ChecklistItem(
        id="reproduce", title=text("handoff.step.reproduce"),
        state=reproduce_state,
        detail=text("handoff.reproduce.two", first=parts[0], second=parts[1]) if len(parts) == 2
        else parts[0])
    # the run first; the dashboard is optional, and last; a newer ARI's differences after them
    return [handoff, reproduce, dashboard, *contract_steps(choices, ChecklistItem)]


_SHOWN_INPUTS = ("sandbox_kind", "partition", "nodes", "cpus")


def _shown_inputs(inputs: Mapping[str, Any], quote_empty: bool = False) -> str:
    """The reproduce inputs a reader checks first; an empty string shown as '' (ARI then takes
    the rubric's value), not as nothing."""
    return ", ".join(f"{k}={inputs[k]!r}" if quote_empty and inputs[k] == "" else f"{k}={inputs[k]}"
                     for k in inputs if k in _SHOWN_INPUTS)


def _workflow_owner(ckpt: Path) -> str:
    """Who wrote ``workflow.yaml``, by evidence: "ours" when launch_config.json records its
    sha256 and the file still has it, "changed" when the hash differs, "foreign" when it is not
    recorded (ARI copies its packaged one into the checkpoint when ``ari run`` starts)."""
    try:
        config = read_json_bounded(ckpt / "launch_config.json", OPTION_FILE_CAP)
        recorded = config[render.LAUNCH_CONFIG_KEY]["files_sha256"]["workflow.yaml"]
    except (OSError, ValueError, KeyError, TypeError):
        return "foreign"
    try:
        actual = hashlib.sha256((ckpt / "workflow.yaml").read_bytes()).hexdigest()
    except OSError:
        return "changed"
    return "ours" if actual == recorded else "changed"


def _reproduce_inputs_in(workflow: Path) -> dict[str, Any] | None:
    """The reproduce stage's inputs a workflow.yaml really holds; None when they cannot be read
    here (no YAML parser without ARI, not YAML, no such stage)."""
    try:
        import yaml  # ARI's dependency, not ours

        document = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    except Exception:  # ImportError, OSError, any YAML error: then only "not ours" is said
        return None
    stages = document.get("pipeline") if isinstance(document, dict) else None
    stage = next((s for s in stages or () if isinstance(s, dict)
                  and s.get("stage") == render.REPRODUCE_STAGE), None)
    inputs = stage.get("inputs") if stage is not None else None
    if not isinstance(inputs, dict):
        return None
    return {k: inputs[k] for k in _SHOWN_INPUTS if k in inputs}


STEP_NEEDS = {"dashboard": ("checkpoint", "ari")}
"""The checks a step's own command needs (``ari viz`` needs ari and a readable checkpoint); a
failed one makes the step "not ready" rather than "ready"."""


def with_checks(items: Sequence[ChecklistItem], checks: Sequence[Any],
                probes: Sequence[Any] = ()) -> list[ChecklistItem]:
    """``items`` as the hand-off checks found them: a ready step whose command needs a check
    that failed is "not ready", and its detail names those checks first.

    ``probes`` are step 2's site checks (the state's probe results): until the hand-off check
    of the same id has run, its verdict stands, so a site without ``ari`` is never "ready" for
    ``ari viz`` while step 2 and check-handoff say it fails."""
    checked = {check.id for check in checks}
    failed = {check.id for check in checks if check.status == "fail"}
    failed_probes = {probe.id for probe in probes
                     if probe.status == "fail" and probe.id not in checked}
    out = []
    for item in items:
        needs = STEP_NEEDS.get(item.id, ())
        blocking, said = [i for i in needs if i in failed], "handoff.step.blocked"
        if not blocking:
            blocking, said = [i for i in needs if i in failed_probes], "handoff.step.blocked_site"
        if item.state == "ready" and blocking:
            item = replace(item, state="not ready",
                           detail=text(said, checks=", ".join(blocking), detail=item.detail))
        out.append(item)
    return out


# -- the check -----------------------------------------------------------------------------

SLOW_CHECK_IDS = ("shared_fs", "ari", "sbatch", "modules", "time_fit", "cost")
"""The checks that run commands (concurrently); the others only read files."""


def check_handoff(checkpoint_dir: str | Path, *, host: Any = None, timeout: float = 20.0,
                  env: Mapping[str, str] | None = None,
                  on_done: Callable[[str], None] | None = None) -> list[ProbeResult]:
    """Blocking: every hand-off check for ``checkpoint_dir`` (works inside a running loop)."""
    return run_sync(check_handoff_async(checkpoint_dir, host=host, timeout=timeout, env=env,
                                        on_done=on_done))


async def check_handoff_async(checkpoint_dir: str | Path, *, host: Any = None,
                              timeout: float = 20.0,
                              env: Mapping[str, str] | None = None,
                              on_done: Callable[[str], None] | None = None) -> list[ProbeResult]:
    """Every hand-off check, in ``CHECK_IDS`` order; commands run concurrently. ``on_done``
    hears the id of each check in ``SLOW_CHECK_IDS`` as it finishes (a live progress line)."""
    host = host or LocalHost()
    env = dict(host.env if env is None else env)
    ckpt = Path(checkpoint_dir).expanduser()
    ckpt = Path(os.path.abspath(ckpt))
    script = ckpt.parent.parent / "launch" / f"{ckpt.name}.sh"
    results: dict[str, ProbeResult] = {}

    not_one = not_a_checkpoint(ckpt)
    if not_one is not None:
        return [not_one]  # every other check would only repeat that there is nothing here
    choices = None
    try:
        choices = load_checkpoint(ckpt).choices()
    except (EmitError, ValueError) as exc:
        results["checkpoint"] = _said("checkpoint", "fail", "handoff.check.checkpoint.unreadable",
                                      "handoff.check.checkpoint.unreadable.fix", error=str(exc))
    if choices is not None:
        results["checkpoint"] = _check_files(ckpt)
    results["script"] = await _check_script(script, ckpt, timeout)
    results["checkpoint_env"] = _check_exported(script, ckpt)
    results["env_overrides"] = _check_overrides(ckpt, env)

    pending = {
        "shared_fs": _probe(host, "shared_fs", ckpt, choices, timeout),
        "ari": _check_ari(host, choices, timeout),
        "sbatch": _probe(host, "sbatch", ckpt, choices, timeout) if choices is not None else _skip(
            "sbatch", "handoff.check.sbatch.unread"),
        "modules": _check_modules(host, choices, timeout),
        "time_fit": _check_time_fit(host, ckpt, choices, timeout),
        "cost": _check_cost(host, choices, timeout),
    }
    assert tuple(pending) == SLOW_CHECK_IDS

    async def reported(check_id: str, check: Any) -> ProbeResult:
        try:
            return await check
        finally:
            if on_done is not None:
                on_done(check_id)

    answers = await asyncio.gather(*(reported(i, c) for i, c in pending.items()))
    results.update(dict(zip(pending, answers)))
    # after the ari check: with no backend chosen, the terminal's own ARI decides which key is
    # needed (its packaged workflow.yaml), not whatever ARI this process could import
    results["api_key"] = _check_api_key(choices, ckpt, env,
                                        config_root=results["ari"].data.get("config_root"))
    # Login shells and module inits print what they like (a ~/.bash_profile echoing a token):
    # every verdict is masked with the secrets of both environments, as the probes' are.
    secrets_from = {**host.env, **env}
    return [redacted(results[i], secrets_from) for i in CHECK_IDS]


def not_a_checkpoint(ckpt: Path) -> ProbeResult | None:
    """The one verdict for a path that is no ari-jupyter checkpoint at all, else None.

    A damaged checkpoint (unreadable JSON, missing files) is still checked item by item; a
    directory without ``launch_config.json`` has nothing the other checks could look at.
    """
    config = ckpt / "launch_config.json"
    if not ckpt.exists():
        why, params = "handoff.not_a_checkpoint.missing", {}
    elif not ckpt.is_dir():
        why, params = "handoff.not_a_checkpoint.not_dir", {}
    elif not config.exists():
        why, params = "handoff.not_a_checkpoint.no_config", {}
    else:
        try:
            data = read_json_bounded(config, OPTION_FILE_CAP)
        except (OSError, ValueError):
            return None  # damaged: the checkpoint check says how
        if isinstance(data, dict) and isinstance(data.get(render.LAUNCH_CONFIG_KEY), dict):
            return None
        why, params = "handoff.not_a_checkpoint.foreign", {"key": render.LAUNCH_CONFIG_KEY}
    runs = _checkpoints_under(ckpt)
    fix = "handoff.not_a_checkpoint.fix_under" if runs else "handoff.not_a_checkpoint.fix"
    if runs:
        params["runs"] = ", ".join(str(r) for r in runs)
    return _said("checkpoint", "fail", why, fix, ckpt=str(ckpt), **params,
                 data={"not_a_checkpoint": True, "path": str(ckpt)})


def _checkpoints_under(path: Path, limit: int = 3) -> list[Path]:
    """The newest checkpoints in ``path/checkpoints`` (a workspace given instead of a run)."""
    root = path / "checkpoints" if path.name != "checkpoints" else path
    try:
        runs = [p for p in root.iterdir() if (p / "launch_config.json").is_file()]
    except OSError:
        return []
    return sorted(runs, key=lambda p: p.name, reverse=True)[:limit]


def _said(check_id: str, status: str, message_id: str, fix_id: str = "", *,
          command: str = "", data: dict | None = None, **params) -> ProbeResult:
    """``ProbeResult.of`` with the sentence's parameters as keywords, as the checks read best."""
    return ProbeResult.of(check_id, status, message_id, fix_id=fix_id, params=params,
                          command=command, data=data or {})


def _key_message(status: Any, backend: str) -> dict:
    """The catalog id for what ``api_key_status`` said (``{}`` when its words are new)."""
    if not status.variable:
        choice = {"ollama": ("handoff.check.api_key.ollama", {}),
                  "cli-shim": ("handoff.check.api_key.cli_shim", {})}.get(
            backend, ("handoff.check.api_key.unknown_backend", {"backend": backend}))
    elif status.is_set and status.source == "environment":
        choice = ("handoff.check.api_key.env", {"variable": status.variable})
    elif status.is_set:
        choice = ("handoff.check.api_key.file", {"variable": status.variable, "path": status.source})
    else:
        choice = ("handoff.check.api_key.not_set", {"variable": status.variable, "backend": backend})
    message_id, params = choice
    if t(message_id, "en", **params) != status.message:
        return {}
    return {"message_id": message_id, "params": params}


async def _skip(check_id: str, message_id: str) -> ProbeResult:
    return _said(check_id, "skip", message_id)


def _check_files(ckpt: Path) -> ProbeResult:
    """The checkpoint files exist, are readable, and are the set emit wrote (hashes match)."""
    config = read_json_bounded(ckpt / "launch_config.json", OPTION_FILE_CAP)
    recorded: dict = (config.get(render.LAUNCH_CONFIG_KEY) or {}).get("files_sha256") or {}
    problems = []
    for name in ("experiment.md", ".env", "launch_config.json", *recorded):
        path = ckpt / name
        if not path.is_file():
            problems.append(message("handoff.check.checkpoint.file_missing", name=name))
        elif not os.access(path, os.R_OK):
            problems.append(message("handoff.check.checkpoint.file_unreadable", name=name))
    for name, digest in recorded.items():
        path = ckpt / name
        if path.is_file() and os.access(path, os.R_OK):
            if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
                problems.append(message("handoff.check.checkpoint.file_changed", name=name))
    if problems:
        unique = {json.dumps(p, sort_keys=True): p for p in problems}
        return _said("checkpoint", "fail", "handoff.check.checkpoint.damaged",
                     "handoff.check.checkpoint.damaged.fix", ckpt=str(ckpt),
                     problems=[unique[k] for k in sorted(unique)])
    return _said("checkpoint", "ok", "handoff.check.checkpoint.ok", ckpt=str(ckpt))


async def _check_script(script: Path, ckpt: Path, timeout: float) -> ProbeResult:
    """The hand-off script is there, readable, safe and bash can parse it (``bash -n`` on this
    machine, where the file is, whichever host the other checks look at)."""
    if not script.is_file():
        return _said("script", "fail", "handoff.check.script.missing", "handoff.check.script.missing.fix",
                     script=str(script))
    if not os.access(script, os.R_OK):
        return _said("script", "fail", "handoff.check.script.unreadable",
                     "handoff.check.script.unreadable.fix", script=str(script),
                     quoted=shlex.quote(str(script)))
    unsafe = unsafe_handoff(script, ckpt)
    if unsafe:
        return _said("script", "fail", "handoff.check.safety.unsafe", "handoff.check.safety.fix",
                     script=str(script), problems=unsafe)
    check = await LocalHost().run(["bash", "-n", str(script)], timeout=timeout)
    if check.returncode != 0 or check.timed_out:
        return replace(_said("script", "fail", "handoff.check.script.invalid",
                             "handoff.check.script.invalid.fix", script=str(script),
                             error=check.stderr.strip(), command=f"bash -n {script}"),
                       evidence=check.stderr)
    return _said("script", "ok", "handoff.check.script.ok", script=str(script),
                 command=f"bash -n {script}")


def unsafe_handoff(script: Path, ckpt: Path) -> list[dict]:
    """What lets another user change what the hand-off runs, as messages (none: safe). The
    rules the script itself checks before it runs anything (``checkpoint/ownership.py``): the
    workspace and the folders above it, the run's folders at its root (``WORKSPACE_FOLDERS``), the checkpoint, its
    files and the script; and the script's sha256 against the one launch_config.json records."""
    workspace = ckpt.parent.parent
    problems: list[Unsafe] = []
    way = first_unsafe_on_the_way(workspace)
    if way is not None:
        problems.append(way)
    problems += unsafe_workspace_folders(workspace)  # checkpoints/, launch/, slurm_logs/, experiments/
    for path in (ckpt,):
        try:
            problem = ours(path, os.lstat(path))
        except OSError:
            continue
        if problem is not None:
            problems.append(problem)
    problems += unsafe_entries(ckpt, CHECKPOINT_FILES)
    problems += unsafe_entries(script.parent, (script.name,))
    try:
        config = read_json_bounded(ckpt / "launch_config.json", OPTION_FILE_CAP)
        recorded = config[render.LAUNCH_CONFIG_KEY].get("handoff_sha256", "")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        recorded = ""
    if recorded:
        try:
            actual = hashlib.sha256(script.read_bytes()).hexdigest()
        except OSError:
            actual = ""
        if actual != recorded:
            problems.append(Unsafe(str(script), "changed", "", ""))
    return [message(p.message_id, **p.params()) for p in problems]


def _check_exported(script: Path, ckpt: Path) -> ProbeResult:
    """The script exports ARI_CHECKPOINT_DIR=<this checkpoint> before running ari."""
    try:
        lines = script.read_text(encoding="utf-8").splitlines()
    except OSError:
        return _said("checkpoint_env", "fail", "handoff.check.checkpoint_env.unreadable",
                     "handoff.check.checkpoint_env.unreadable.fix")
    exported = None
    ari_line = None
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("export ARI_CHECKPOINT_DIR=") and exported is None:
            try:
                exported = (number, shlex.split(stripped)[1].split("=", 1)[1])
            except (ValueError, IndexError):
                exported = (number, "")
        if stripped.startswith("ari run ") and ari_line is None:
            ari_line = number
    if exported is None:
        return _said("checkpoint_env", "fail", "handoff.check.checkpoint_env.not_exported",
                     "handoff.check.write_again")
    number, value = exported
    if os.path.realpath(value) != os.path.realpath(ckpt):
        return _said("checkpoint_env", "fail", "handoff.check.checkpoint_env.other_run",
                     "handoff.check.checkpoint_env.other_run.fix", line=number, value=value,
                     ckpt=str(ckpt))
    if ari_line is None or ari_line < number:
        return _said("checkpoint_env", "fail", "handoff.check.checkpoint_env.order",
                     "handoff.check.write_again")
    return _said("checkpoint_env", "ok", "handoff.check.checkpoint_env.ok", ckpt=str(ckpt),
                 line=number, ari_line=ari_line)


def _check_overrides(ckpt: Path, env: Mapping[str, str]) -> ProbeResult:
    """ARI loads .env with override=False: variables exported here win over the checkpoint's."""
    values = read_dotenv(ckpt / ".env")
    clashes = [message("handoff.check.env_overrides.clash", name=k, value=env[k], checkpoint=v)
               for k, v in values.items() if k in env and env[k] != v]
    # sbatch input variables silently apply to every job ARI submits (spec §3.1).
    inputs = sorted(k for k in env if k.startswith("SBATCH_"))
    names = sorted({*(k for k in values if k in env and env[k] != values[k]), *inputs})
    if clashes or inputs:
        parts = []
        if clashes:
            parts.append(message("handoff.check.env_overrides.clashes", clashes=clashes))
        if inputs:
            parts.append(message("handoff.check.env_overrides.sbatch",
                                 inputs="; ".join(f"{k}={env[k]}" for k in inputs)))
        if len(parts) == 2:
            return _said("env_overrides", "warn", "handoff.check.env_overrides.both",
                         "handoff.check.env_overrides.fix", first=parts[0], second=parts[1],
                         names=" ".join(names))
        return _said("env_overrides", "warn", parts[0]["message_id"],
                     "handoff.check.env_overrides.fix", **parts[0]["params"], names=" ".join(names))
    return _said("env_overrides", "ok", "handoff.check.env_overrides.ok")


def _check_api_key(choices: Choices | None, ckpt: Path, env: Mapping[str, str],
                   config_root: str | None = None) -> ProbeResult:
    """The key the chosen backend needs: set or not in the terminal or ARI's .env files (never
    the value). ``config_root`` is where the terminal's ``ari`` keeps its packaged config."""
    if choices is None:
        return _said("api_key", "skip", "handoff.check.api_key.unread")
    settings = choices.run_settings
    # The wizard's answer for "nothing chosen": ARI's packaged workflow.yaml's llm section.
    default = ari_default_llm(env)[0]
    workflow = Path(config_root) / "workflow.yaml" if config_root else None
    if not settings.llm_backend and workflow is not None and workflow.is_file():
        try:  # the terminal's own ari keeps its packaged config there
            default = package_llm(workflow.read_text(encoding="utf-8"))[0]
        except Exception:  # unreadable or not YAML: the wizard's default stands
            pass
    status = api_key_status(settings, env, checkpoint_dir=str(ckpt), default_backend=default)
    said = _key_message(status, settings.llm_backend or default)
    if status.is_set:
        return ProbeResult("api_key", "ok", status.message, **said,
                           data={"variable": status.variable, "set": True, "source": status.source})
    return ProbeResult("api_key", "fail", status.message, **said,
                       fix=t("handoff.check.api_key.fix", "en", variable=status.variable),
                       fix_id="handoff.check.api_key.fix" if said else "",
                       data={"variable": status.variable, "set": False, "source": ""})


async def _probe(host: Any, probe_id: str, ckpt: Path, choices: Choices | None,
                 timeout: float) -> ProbeResult:
    allocation = (choices.allocation if choices is not None else None) or Allocation.from_env(host.env)
    ctx = ProbeContext(allocation=allocation, partition=(choices.partition if choices is not None
                                                         else None) or None,
                       checkpoint_dir=str(ckpt), timeout=timeout, only=[probe_id])
    return await _first_probe(host, ctx, probe_id)


async def _first_probe(host: Any, ctx: ProbeContext, probe_id: str) -> ProbeResult:
    async for result in run_probes(host, ctx):
        return result
    return _said(probe_id, "unknown", "handoff.check.no_answer")


async def _check_time_fit(host: Any, ckpt: Path, choices: Choices | None,
                          timeout: float) -> ProbeResult:
    """The allocation's time left against what the chosen scope may need (``ari.time_fit``):
    the same finding step 4 of the wizard shows."""
    if choices is None:
        return _said("time_fit", "skip", "handoff.check.time_fit.unread")
    scope = choices.run_settings.scope()
    needed = search_time(scope)
    # The terminal's own allocation is the one `ari run` lives in (none: a login node's shell).
    ctx = ProbeContext(allocation=Allocation.from_env(host.env), timeout=timeout, only=["time_left"])
    left = await _first_probe(host, ctx, "time_left")
    data = {"needed": clock(search_seconds(scope)), "time_left": left.data}
    if left.status == "skip":
        return _said("time_fit", "ok", "handoff.check.time_fit.no_allocation", data=data,
                     needed=needed)
    if left.data.get("unlimited"):
        return _said("time_fit", "ok", "handoff.check.time_fit.unlimited", data=data, needed=needed)
    if time_left_seconds(left) is None:
        return _said("time_fit", "unknown", "handoff.check.time_fit.unknown", data=data,
                     needed=needed, why=message(left.message_id, **left.params) if left.message_id
                     else left.summary)
    # the search longer than the allocation, a hub that stops the idle server (the terminal's
    # environment is the server's), or both: the same findings step 4 shows
    found = [f for f in (time_fit_finding(scope, left), idle_cull_finding(host.env, left)) if f]
    if len(found) == 1:
        [short] = found
        return ProbeResult("time_fit", "warn", short.message, fix=short.fix, data=data,
                           message_id=short.message_id, params=dict(short.params),
                           fix_id=short.fix_id)
    if found:
        said = {"first": message(found[0].message_id, **found[0].params),
                "second": message(found[1].message_id, **found[1].params),
                "first_fix": message(found[0].fix_id, **found[0].params),
                "second_fix": message(found[1].fix_id, **found[1].params)}
        return ProbeResult.of("time_fit", "warn", "handoff.check.time_fit.both",
                              fix_id="handoff.check.time_fit.both.fix", params=said, data=data)
    return _said("time_fit", "ok", "handoff.check.time_fit.fits", data=data, needed=needed,
                 left=hours(time_left_seconds(left)))


async def _check_cost(host: Any, choices: Choices | None, timeout: float) -> ProbeResult:
    """The worst case in node-hours of what was approved (``ari.cost``), beside the time fit,
    and the user's association limits and fair-share factor where ``sacctmgr`` and ``sshare``
    show them (nothing said otherwise). One call of each, at once."""
    if choices is None:
        return _said("cost", "skip", "handoff.check.cost.unread")
    bound = cost_bound(choices)
    user = getpass.getuser()
    assoc, share = await asyncio.gather(host.run(assoc_argv(user), timeout=timeout),
                                        host.run(share_argv(user), timeout=timeout))
    limits = assoc_limits(assoc.stdout) if assoc.ok else []
    shares = fair_shares(share.stdout) if share.ok else []
    data = {"bound": bound.to_json(), "limits": limits, "fair_share": shares}
    said = {"bound": bound.said(), **({"limits": "; ".join(limits)} if limits else {}),
            **({"share": "; ".join(shares)} if shares else {})}
    key = "handoff.check.cost.bound" + ("_limits" if limits else "") + ("_share" if shares else "")
    return _said("cost", "ok", key, data=data, **said)


async def _check_ari(host: Any, choices: Choices | None, timeout: float) -> ProbeResult:
    """``ari`` on PATH in a login shell, after the modules the hand-off loads."""
    modules = list(choices.module_loads) if choices is not None else []
    load = f"{_MODULE_INIT}; module load {' '.join(map(shlex.quote, modules))} >/dev/null 2>&1; " \
        if modules else ""
    script = load + "command -v ari"
    result = await host.run(["bash", "-lc", script], timeout=timeout)
    command = f"bash -lc {shlex.quote(script)}"
    if result.timed_out:
        return _said("ari", "unknown", "handoff.check.ari.timeout", "handoff.check.ari.timeout.fix",
                     timeout=f"{timeout:g}", command=command)
    path = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    if result.returncode == 0 and path:
        config, config_command = await _ari_packaged_config(host, load, timeout)
        if config is not None and not (config.get("profile") and config.get("workflow")):
            said = _said("ari", "fail", "handoff.check.ari.no_config", "handoff.check.ari.no_config.fix",
                         path=path, root=str(config.get("root")), command=config_command,
                         data={"path": path, **config})
            return replace(said, evidence=json.dumps(config))
        data = {"path": path, **({"config_root": config["root"]} if config else {})}
        return _said("ari", "ok", "handoff.check.ari.ok", path=path, command=command, data=data)
    missing = _said("ari", "fail", "handoff.check.ari.missing", "handoff.check.ari.missing.fix",
                    command=command)
    return replace(missing, evidence=result.output[-2000:])


# ARI's own package_config_root(), asked by the Python behind `ari` (its console script's
# shebang, or pip's '#!/bin/sh' + exec form for long paths).
_ARI_CONFIG_QUERY = (
    "import json; from ari.config.finder import package_config_root as r; p = r(); "
    f"print(json.dumps({{'root': str(p), 'profile': (p / 'profiles' / '{render.HANDOFF_ARI_PROFILE}.yaml').is_file(), "
    "'workflow': (p / 'workflow.yaml').is_file()}))")
_ARI_PYTHON = r"""ari_bin=$(command -v ari) || exit 127
first=$(head -n 1 "$ari_bin"); py=
case "$first" in
  "#!/bin/sh"*) py=$(sed -n 2p "$ari_bin"); py=${py#"'''exec' "}; py=${py%% \"\$0\"*}; py=${py//\"/} ;;
  "#!/usr/bin/env "*) py=${first#"#!/usr/bin/env "} ;;
  "#!"*) py=${first#??} ;;
esac
[ -n "$py" ] || py="$(dirname "$ari_bin")/python"
"""


async def _ari_packaged_config(host: Any, load: str, timeout: float) -> tuple[dict | None, str]:
    """Where the terminal's ARI looks for its packaged config and whether the hand-off's
    profile and workflow.yaml are there; None when nothing answered (a demo site)."""
    script = (load + _ARI_PYTHON + "LITELLM_LOCAL_MODEL_COST_MAP=True \"$py\" -c "
              + shlex.quote(_ARI_CONFIG_QUERY))
    result = await host.run(["bash", "-lc", script], timeout=timeout)
    command = f"bash -lc {shlex.quote(script)}"
    lines = result.stdout.strip().splitlines() if result.returncode == 0 else []
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        answer = None
    return (answer if isinstance(answer, dict) and "root" in answer else None), command


async def _check_modules(host: Any, choices: Choices | None, timeout: float) -> ProbeResult:
    """Modules load in a non-interactive bash: the hand-off's (with its init) and the profile's
    (as reproduce.sh runs them, where only BASH_ENV can define ``module``)."""
    if choices is None:
        return _said("modules", "skip", "handoff.check.modules.unread")
    handoff = list(choices.module_loads)
    profile = [m for m in choices.profile.module_loads if m not in handoff]
    if not handoff and not profile:
        return _said("modules", "skip", "handoff.check.modules.none")
    runs = []
    if handoff:
        runs.append((message("handoff.check.modules.label.handoff"), handoff, f"{_MODULE_INIT}; module load \"$@\""))
    if profile or handoff:
        runs.append(("reproduce.sh", [*handoff, *profile] if profile else handoff, 'module load "$@"'))
    failures, evidence = [], []
    for label, names, body in runs:
        argv = ["bash", "-c", body, "module-check", *names]
        result = await host.run(argv, timeout=timeout)
        evidence.append(f"$ {shlex.join(argv)}\n{result.output.strip()}\n(exit {result.returncode})")
        if result.timed_out or result.returncode != 0:
            failures.append((label, names, result, shlex.join(argv)))
    if not failures:
        return _said("modules", "ok", "handoff.check.modules.ok",
                     modules=", ".join(dict.fromkeys([*handoff, *profile])),
                     command=shlex.join(["bash", "-c", runs[0][2], "module-check", *runs[0][1]]),
                           evidence="\n\n".join(evidence))
    label, names, result, command = failures[0]
    text = result.output.lower()
    if "module: command not found" in text or "module: not found" in text:
        said = _said("modules", "fail", "handoff.check.modules.no_module",
                     "handoff.check.modules.no_module.fix", label=label, command=command)
    else:
        said = _said("modules", "fail", "handoff.check.modules.load_failed",
                     "handoff.check.modules.load_failed.fix", names=" ".join(names), label=label,
                     why=_telling_line(result.output) or f"exit {result.returncode}",
                     command=command)
    return replace(said, evidence="\n\n".join(evidence))


_TELLING = re.compile(r"error|unknown|not found|cannot|failed", re.IGNORECASE)


def _telling_line(output: str) -> str:
    """The line that says why a module load failed. Lmod ends its message with advice ("Also
    make sure that all modulefiles written in TCL start with ..."), so the last line is not it:
    the first line naming an error, joined with the next one when it ends in a colon (Lmod puts
    the module names there)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for number, line in enumerate(lines):
        if _TELLING.search(line):
            if line.endswith(":") and number + 1 < len(lines):
                return f"{line} {lines[number + 1]}"
            return line
    return lines[-1] if lines else ""
