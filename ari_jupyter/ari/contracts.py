"""Which hand-off contract the installed ARI speaks, and what of the user's choices reaches its jobs.

Two contracts are known (``docs/compat.md`` has the table):

* ``e41c806`` — ARI at commit e41c806 (ari-core 0.9.1, the snapshot the rest of this package
  is checked against): BFTS jobs source ``$ARI_ENV_FILE`` (our ``bfts_env.sh``), the reproduce
  job is ``sbatch --wait … .slurm_wrap.sh``. Everything the wizard writes reaches the jobs.
* ``typed-hpc-v1`` — ARI's newer HPC skill (``ari-skill-hpc/ari_skill_hpc/``, kotama7/ARI
  commit 78ca18c8; ``ari-core/ari/mcp/child_environment.py`` at 1dc9fb98): jobs are submitted
  with ``sbatch --parsable --export=NIL`` and start with ``PATH=/usr/local/bin:/usr/bin:/bin``;
  ``.env`` is never sourced in a job; skills start with a stripped environment (the names their
  ``skill.yaml`` declares); every submission is recorded first in a ledger
  (``ari.hpc.submission-ledger/v1``) whose parent folder ARI makes 0700.

The contract is told from what the installed code provides (the typed skill package or its
published schemas beside ari-core), never from a version string: ari-core says 0.9.1 in both.
Pure but for reading the files of the install, as ``install`` does.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, Mapping

from ..base.verdict import Finding
from ..i18n import message, text
from .choices import Choices
from .install import ari_package_of_command, environment_of

REFERENCE = "e41c806"
TYPED_HPC_V1 = "typed-hpc-v1"
CONTRACTS = (REFERENCE, TYPED_HPC_V1)

TYPED_MARKS = ("ari-skill-hpc/ari_skill_hpc/contracts.py",
               "ari-skill-hpc/schemas/job-request-v1.schema.json")
"""Files only the newer skill has (beside ari-core in ARI's tree)."""
REFERENCE_MARKS = ("ari-skill-hpc/src/slurm.py",)
"""The e41c806 skill: a ``src/`` module that sources ``$ARI_ENV_FILE`` in every job."""
TYPED_PACKAGE_MARK = "ari_skill_hpc/contracts.py"
"""The newer skill installed as a package into ARI's environment instead of run from its tree."""

JOB_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The PATH the newer ARI's scheduler commands and jobs start with (``LocalCommandRunner``,
``EnvironmentPolicyV1.path``); ``ARI_SCHEDULER_PATH`` replaces it for scheduler commands."""
LEDGER_FOLDER = "ari-ledger"
LEDGER_FILE = "hpc-jobs-v1.json"
"""ARI's own file name (``default_ledger_path``)."""


def contract_of_root(root: Path) -> str | None:
    """The contract of an ARI source tree (the folder holding ``ari-core``), None when neither
    skill is there."""
    if any((root / mark).is_file() for mark in TYPED_MARKS):
        return TYPED_HPC_V1
    if any((root / mark).is_file() for mark in REFERENCE_MARKS):
        return REFERENCE
    return None


def contract_of_package(package: Path, prefix: Path | None = None) -> str | None:
    """The contract of the ARI whose ``ari`` package is ``package`` (``<root>/ari-core/ari``);
    ``prefix``: its environment, where the newer skill may be installed as a package."""
    if prefix is not None:
        for site in sorted(prefix.glob("lib/python3*/site-packages")):
            if (site / TYPED_PACKAGE_MARK).is_file():
                return TYPED_HPC_V1
    return contract_of_root(package.parent.parent)


def installed_contract(env: Mapping[str, str] | None = None) -> str | None:
    """The contract of the ARI ``ari run`` would be: the ``ari`` on PATH first, then an ``ari``
    importable here, then ``$ARI_ROOT`` (as ``install.find_ari_workflow`` looks); None when no
    ARI is found or its skill is neither layout."""
    env = os.environ if env is None else env
    command = ari_package_of_command(env.get("PATH", ""))
    if command is not None:
        found = contract_of_package(command[1], environment_of(command[0]))
        if found:
            return found
    try:
        spec = importlib.util.find_spec("ari")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        found = contract_of_package(Path(spec.origin).resolve().parent)
        if found:
            return found
    root = env.get("ARI_ROOT", "").strip()
    return contract_of_root(Path(root)) if root else None


# -- the state's contract ----------------------------------------------------------------------

def contract_of(choices: Choices) -> str:
    """The contract step 2's ``ari`` probe found (kept in the checkpoint's state); the reference
    when it was not asked or could not tell."""
    result = choices.probe("ari")
    found = ((result.data or {}).get("contract") if result is not None else None)
    return found if found in CONTRACTS else REFERENCE


def is_typed(choices: Choices) -> bool:
    return contract_of(choices) == TYPED_HPC_V1


def sbatch_dir(choices: Choices) -> str:
    """The folder of the ``sbatch`` step 2 found, '' when unknown."""
    result = choices.probe("sbatch")
    path = ((result.data or {}).get("path") if result is not None else None) or ""
    return os.path.dirname(path) if isinstance(path, str) and path.startswith("/") else ""


def scheduler_path(choices: Choices) -> str:
    """``ARI_SCHEDULER_PATH`` for a site whose ``sbatch`` is not on the default PATH (its folder
    first, the default after), '' where none is needed or the folder is unknown."""
    folder = sbatch_dir(choices)
    if not folder or folder in JOB_DEFAULT_PATH.split(":"):
        return ""
    return f"{folder}:{JOB_DEFAULT_PATH}"


def ledger_path(choices: Choices) -> str:
    """``<workspace>/ari-ledger/<run_id>/hpc-jobs-v1.json``: a folder of the run's own in the
    shared workspace (ARI makes the ledger's parent 0700; by default that is the checkpoint,
    which would lose the group access the user chose). '' while unknown."""
    workspace, run_id = choices.workspace.rstrip("/"), choices.run_id
    if not workspace or not run_id:
        return ""
    return f"{workspace}/{LEDGER_FOLDER}/{run_id}/{LEDGER_FILE}"


# -- what the checkpoint writes for the newer contract ------------------------------------------

def contract_env_values(choices: Choices) -> dict[str, str]:
    """The ``.env`` lines the newer contract needs on top of the reference's; {} for e41c806
    (``arguments.env_values`` judges them as every other value)."""
    if not is_typed(choices):
        return {}
    values = {}
    ledger = ledger_path(choices)
    if ledger:
        values["ARI_HPC_LEDGER_PATH"] = ledger
    path = scheduler_path(choices)
    if path:
        values["ARI_SCHEDULER_PATH"] = path
    return values


def module_limit_line(choices: Choices) -> str:
    """experiment.md's module line for the newer contract ('' for e41c806, which loads them in
    ``bfts_env.sh``): the agent passes ``modules:`` to ``slurm_submit``, the only way a module
    reaches a BFTS job. Prose for the LLM; no word ARI's experiment.md parsers look for."""
    modules = list(choices.module_loads)
    if not modules or not is_typed(choices):
        return ""
    listed = ", ".join(f'"{name}"' for name in modules)
    return (f"- Modules every job needs: pass modules: [{listed}] to every slurm_submit call "
            "(a job loads no module it is not given)")


# -- setting by setting: what reaches the jobs ---------------------------------------------------

def _said(setting: str, reaches: bool, key: str, **params: Any) -> Finding:
    return Finding.of(f"contract.{setting}", "info" if reaches else "warning",
                      f"contract.{key}", fix_id="" if reaches else f"contract.{key}.fix",
                      field=setting, **params)


def job_settings(contract: str, choices: Choices) -> list[Finding]:
    """For the chosen settings, what reaches ARI's jobs with
    ``contract`` and what does not: an ``info`` finding for a setting that reaches them, a
    ``warning`` with ARI's reason and the fix for one that does not. [] for the reference,
    where every setting reaches them (``bfts_env.sh``, ``.slurm_wrap.sh``)."""
    if contract != TYPED_HPC_V1:
        return []
    out: list[Finding] = []
    partition = choices.partition
    if partition:
        out.append(_said("partition", True, "partition.reaches", partition=partition))
        out.append(_said("valid_partitions", False, "valid_partitions.no_reader"))
    modules = list(choices.module_loads)
    if modules:
        out.append(_said("module_loads", False, "module_loads.agent_only",
                         modules=" ".join(modules)))
    out.append(_said("env_file", False, "env_file.never_sourced"))
    max_cpus = choices.max_cpus
    if max_cpus:
        out.append(_said("max_cpus", False, "max_cpus.agent_wins", cpus=max_cpus))
    walltime = choices.walltime
    if walltime:
        out.append(_said("walltime", False, "walltime.not_declared", walltime=walltime))
    mem_gb = choices.mem_gb
    if mem_gb:
        out.append(_said("mem_gb", True, "mem_gb.reaches", mem_gb=mem_gb))
    if choices.allow_no_gres:
        out.append(_said("allow_no_gres", False, "allow_no_gres.no_reader"))
    out.append(_said("log_dir", False, "log_dir.no_reader"))
    path = scheduler_path(choices)
    folder = sbatch_dir(choices)
    if path:
        out.append(_said("scheduler_path", True, "scheduler_path.written", folder=folder,
                         path=path))
    elif not folder:
        out.append(_said("scheduler_path", False, "scheduler_path.unknown",
                         default=JOB_DEFAULT_PATH))
    ledger = ledger_path(choices)
    if ledger:
        out.append(_said("ledger", True, "ledger.own_folder", path=ledger))
    else:
        checkpoint = choices.checkpoint_dir
        out.append(_said("ledger", False, "ledger.in_checkpoint",
                         path=f"{checkpoint.rstrip('/')}/{LEDGER_FILE}" if checkpoint
                         else LEDGER_FILE))
    out.append(_said("reproduce", False, "reproduce.typed"))
    return out


def settings_message(findings: list[Finding]) -> list[dict]:
    """The findings as sentences a step's detail nests (each with its fix)."""
    return [message("contract.line", sentence=message(f.message_id, **f.params),
                    fix=message(f.fix_id, **f.params)) if f.fix_id
            else message(f.message_id, **f.params) for f in findings]


def preview_note(contract: str | None):
    """What the reproduce preview says about itself with ``contract`` (None: nothing to say)."""
    if contract != TYPED_HPC_V1:
        return None
    return text("contract.preview.reference_only", contract=contract, reference=REFERENCE)


def contract_of_written(saved: Mapping[str, Any] | None, env: Mapping[str, str]) -> str | None:
    """The contract for a preview: the one recorded in a checkpoint's saved state (its ``ari`` probe),
    else the installed ARI's."""
    for result in (saved or {}).get("probe_results") or ():
        if isinstance(result, Mapping) and result.get("id") == "ari":
            found = (result.get("data") or {}).get("contract")
            if found in CONTRACTS:
                return found
    return installed_contract(env)
