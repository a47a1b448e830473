"""A class of 30 on the test bed's hub: each learner gets their own lesson, SLURM hears nothing.

tests/testbed/hub.sh with ARI_HUB_CLASS_USERS=30 and tests/testbed/class_config.py (the class's
servers are local processes, no SLURM job); all 30 learners log in at once and open lesson 1
(benchmarks/class_hub.py, which also times it: the figures are in docs/teaching.md, not
asserted here). Each learner's lesson is a copy of the student version in their own home,
owned by them, with no solution in it; sdiag, reset before the class, counts no RPC from any
learner.
"""
from __future__ import annotations
from repo_paths import REPO

import json
import os
import pwd
import subprocess
from pathlib import Path

import pytest

from benchmarks.class_hub import CLASS_CONFIG, HUB_SCRIPT, LESSON, run_class

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

REPO = REPO
LEARNERS = 30


@pytest.fixture
def class_hub(testbed_nogres):
    slurm_env = {**os.environ, **testbed_nogres.env}
    env = {**slurm_env, "ARI_HUB_CLASS_USERS": str(LEARNERS), "ARI_HUB_CONFIG_EXTRA": str(CLASS_CONFIG)}
    started = subprocess.run(["bash", str(HUB_SCRIPT), "start", str(REPO)], capture_output=True,
                             text=True, timeout=1500, stdin=subprocess.DEVNULL, env=env)
    assert started.returncode == 0, f"the hub did not start:\n{started.stderr[-4000:]}"
    hub = {}
    for line in Path(started.stdout.strip().splitlines()[-1]).read_text().splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export "):].partition("=")
            hub[key] = value
    yield hub, slurm_env
    stopped = subprocess.run(["bash", str(HUB_SCRIPT), "stop"], capture_output=True, text=True,
                             timeout=300, stdin=subprocess.DEVNULL, env=env)
    assert stopped.returncode == 0, stopped.stderr
    for name in hub["ARI_HUB_CLASS"].split(","):
        with pytest.raises(KeyError):
            pwd.getpwnam(name)  # stop removed the learners


def test_thirty_learners_each_open_their_own_lesson_and_slurm_hears_nothing(class_hub):
    hub, slurm_env = class_hub
    result = run_class(hub, slurm_env)
    learners = result["learners"]
    assert len(learners) == LEARNERS
    assert [l for l in learners if l["error"]] == []
    assert all(l["kernel_state"] == "ok" for l in learners), learners
    folders = set()
    for learner in learners:
        user = pwd.getpwnam(learner["name"])
        lesson = Path(user.pw_dir) / ".local/share/ari-jupyter/lessons/student/en" / LESSON
        assert learner["lesson_path"] == LESSON  # the server's root is the learner's copies
        assert lesson.is_file(), lesson
        assert lesson.stat().st_uid == user.pw_uid, f"{lesson} is not {learner['name']}'s own"
        text = lesson.read_text()
        assert "BEGIN SOLUTION" not in text and "Solution (for the teacher)" not in text
        assert json.loads(text)["cells"], lesson
        folders.add(lesson.parent)
    assert len(folders) == LEARNERS, "two learners share a folder of lessons"
    # no learner reached slurmctld (the by-user list names only those who sent an RPC)
    assert result["rpcs_by_learners"] == {}, result["rpcs"]
    assert set(result["rpcs"]["by_user"]) <= {"root", "slurm"}, result["rpcs"]
