"""L6 follows a script a reproduce.sh line runs, one level down: the fan-out found there counts,
a script it cannot read is said (not the L6 error), and srun is never put around a script
that calls srun itself. First on the recorded demo run's own files, then a table."""
from __future__ import annotations

import json
import os

import pytest

from ari_jupyter.doctor import diagnose_file
from ari_jupyter.doctor.reproduce_lint import SCRIPT_CAP, lint_reproduce
from ari_jupyter.hosts.recorded_run import RUNS_DIR
from ari_jupyter.hosts.recorded_site import RecordedSite

(RUN_ID,) = RecordedSite.load("rccs-cloud").runs  # the run every demo site shows
SANDBOX = f"checkpoints/{RUN_ID}/repro_sandbox/"


def _place_recorded_sandbox(root):
    """The recorded run's repro_sandbox (reproduce.sh, code/triad_job.sh, ...) as files."""
    data = json.loads((RUNS_DIR / f"{RUN_ID}.json").read_text(encoding="utf-8"))
    for name, entry in data["files"].items():
        if name.startswith(SANDBOX):
            path = root / name[len(SANDBOX):]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(entry["text"], encoding="utf-8")
    return root / "reproduce.sh"


def _seen(findings):
    return {(f.rule, f.severity, f.line) for f in findings}


def test_the_recorded_runs_reproduce_sh_fans_out_inside_the_script_it_calls(tmp_path):
    script = _place_recorded_sandbox(tmp_path)
    assert "bash triad_job.sh" in script.read_text() and "srun" not in script.read_text()
    findings = diagnose_file(str(script), nodes=2)
    l6 = [f for f in findings if f.rule == "L6"]
    assert [(f.severity, f.line) for f in l6] == [("info", 8)]
    assert "triad_job.sh" in l6[0].message and "srun" in l6[0].message
    assert not any(f.is_error for f in findings)
    # the fix never wraps the script (that calls srun) in srun
    assert "srun -N" not in l6[0].fix and "srun -N" not in (l6[0].suggestion or "")
    for lang in ("en", "ja", "zh"):
        assert "triad_job.sh" in l6[0].text(lang) and l6[0].fix_text(lang)


def test_without_its_folder_the_recorded_reproduce_sh_gets_the_weaker_finding(tmp_path):
    text = _place_recorded_sandbox(tmp_path).read_text()
    l6 = [f for f in lint_reproduce(text, nodes=2) if f.rule == "L6"]
    assert [(f.severity, f.line) for f in l6] == [("warning", 8)]
    assert "triad_job.sh" in l6[0].message and "could not be read" in l6[0].message


SRUN_INSIDE = "#!/bin/bash\nsrun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS ./app\n"
MPIRUN_INSIDE = "#!/bin/bash\nmpirun -np $SLURM_NTASKS ./app\n"
NO_LAUNCHER = "#!/bin/bash\n./app --size 10\n"
CALLS_ANOTHER = "#!/bin/bash\nbash deeper.sh\n"
DEEPER = "#!/bin/bash\nsrun -N 2 -n 4 ./app\n"

# (id, reproduce.sh, {relative path: text}, {(rule, severity, line) of L6}, words in the L6 message)
TABLE = [
    ("bash", "#!/bin/bash\nbash job.sh\n", {"job.sh": SRUN_INSIDE}, {("L6", "info", 2)}, ["job.sh"]),
    ("sh", "#!/bin/bash\nsh job.sh 4\n", {"job.sh": SRUN_INSIDE}, {("L6", "info", 2)}, ["job.sh"]),
    ("dot-slash", "#!/bin/bash\n./job.sh\n", {"job.sh": SRUN_INSIDE}, {("L6", "info", 2)}, ["job.sh"]),
    ("source", "#!/bin/bash\nsource job.sh\n", {"job.sh": SRUN_INSIDE}, {("L6", "info", 2)}, ["job.sh"]),
    ("dot", "#!/bin/bash\n. ./job.sh\n", {"job.sh": SRUN_INSIDE}, {("L6", "info", 2)}, ["job.sh"]),
    ("mpirun-inside", "#!/bin/bash\nbash job.sh\n", {"job.sh": MPIRUN_INSIDE}, {("L6", "info", 2)}, ["mpirun"]),
    ("cd-dirname", '#!/bin/bash\ncd "$(dirname "$0")/code"\nbash job.sh\n', {"code/job.sh": SRUN_INSIDE},
     {("L6", "info", 3)}, ["job.sh"]),
    ("cd-relative", "#!/bin/bash\ncd code\nbash job.sh\n", {"code/job.sh": SRUN_INSIDE}, {("L6", "info", 3)},
     ["job.sh"]),
    ("no-launcher-inside", "#!/bin/bash\nbash job.sh\n", {"job.sh": NO_LAUNCHER}, {("L6", "error", 2)}, []),
    ("one-level-only", "#!/bin/bash\nbash job.sh\n", {"job.sh": CALLS_ANOTHER, "deeper.sh": DEEPER},
     {("L6", "error", 2)}, []),
    ("missing", "#!/bin/bash\nbash job.sh\n", {}, {("L6", "warning", 2)}, ["job.sh", "could not be read"]),
    ("directory", "#!/bin/bash\nbash job.sh\n", {"job.sh/x": ""}, {("L6", "warning", 2)}, ["not a regular file"]),
    ("too-large", "#!/bin/bash\nbash job.sh\n", {"job.sh": SRUN_INSIDE + "#" * SCRIPT_CAP},
     {("L6", "warning", 2)}, ["more than"]),
    ("variable-name", '#!/bin/bash\nbash "$JOB"\n', {"job.sh": SRUN_INSIDE}, {("L6", "warning", 2)},
     ["not a plain path"]),
    ("cd-unknown", '#!/bin/bash\ncd "$WORK"\nbash job.sh\n', {"job.sh": SRUN_INSIDE}, {("L6", "warning", 3)},
     ["not known"]),
    ("bash-c-is-no-script", "#!/bin/bash\nbash -c 'echo hi; ./app'\n", {}, {("L6", "error", 2)}, []),
    ("binary-not-read", "#!/bin/bash\n./app\n", {"app": SRUN_INSIDE}, {("L6", "error", 2)}, []),
    ("srun-around-srun", "#!/bin/bash\nsrun bash job.sh\n", {"job.sh": SRUN_INSIDE}, {("L6", "error", 2)},
     ["job.sh", "its own srun"]),
]


@pytest.mark.parametrize("case", TABLE, ids=[row[0] for row in TABLE])
def test_one_level_follow_table(case, tmp_path):
    _id, script, files, expected, words = case
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    findings = lint_reproduce(script, nodes=2, script_dir=str(tmp_path))
    l6 = [f for f in findings if f.rule == "L6"]
    assert _seen(l6) == expected
    for word in words:
        assert word in l6[0].message
    for f in l6:  # never srun in front of a script that calls srun itself
        if f.severity != "error" or "srun-around" in _id:
            assert "srun -N" not in (f.suggestion or "") and "srun -N $SLURM_JOB_NUM_NODES -n $SLURM_NTASKS bash" \
                not in f.fix


def test_a_fifo_is_not_opened_for_reading(tmp_path):
    os.mkfifo(tmp_path / "job.sh")
    l6 = [f for f in lint_reproduce("#!/bin/bash\nbash job.sh\n", nodes=2, script_dir=str(tmp_path))
          if f.rule == "L6"]
    assert _seen(l6) == {("L6", "warning", 2)} and "not a regular file" in l6[0].message
