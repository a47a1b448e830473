"""After the hand-off: follow an ARI run from its checkpoint and steer its SLURM jobs.

``read_status(checkpoint)`` / ``await run_status(checkpoint, host)`` -> ``RunStatus``;
``list_runs(workspace)``; ``await run_jobs(checkpoint, host)``; ``await cancel_jobs(...)``.
The CLI (``ari-jupyter runs|status|cancel``) and the JupyterLab Runs panel (through the
server's ``/ari-jupyter/runs`` endpoints) are views over these functions.
"""
from __future__ import annotations

from .jobs import CancelOutcome, Job, JobsView, cancel_jobs, run_jobs
from .status import ACTIVE_PHASES, PHASES, NotACheckpoint, RunStatus, read_status, run_status
from .workspace import checkpoint_dirs, list_runs

__all__ = ["ACTIVE_PHASES", "PHASES", "CancelOutcome", "Job", "JobsView", "NotACheckpoint",
           "RunStatus", "cancel_jobs", "checkpoint_dirs", "list_runs", "read_status", "run_jobs",
           "run_status"]
