"""What the whole-run tests accept as ARI's reproduce job running the MPI program on both nodes
(``wholerun_support.reproduce_log_seen``), on the reproduce.log of a real follow-up run
(test_ari_real_followup.py) and on that log changed the ways a wrong run would show: each
change must be refused. No test bed needed."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wholerun_support import reproduce_log_seen  # noqa: E402

RECORDED = (Path(__file__).parents[1] / "fixtures" / "outputs" / "reproduce" / "followup_mpi.log").read_text()


def _without(prefix: str) -> str:
    return "".join(line for line in RECORDED.splitlines(keepends=True) if not line.startswith(prefix))


# name, the log, accepted
LOGS = [
    ("the real run", RECORDED, True),
    ("the allreduce's sum wrong", RECORDED.replace("mpi_rank_sum: 6", "mpi_rank_sum: 5"), False),
    ("every rank on one node", RECORDED.replace(" on n2", " on n1"), False),
    ("a rank missing", RECORDED.replace("mpirun rank 3 of 4 on n2\n", ""), False),
    ("the MPI program did not run", RECORDED.replace("mpi_ranks: 4\nmpi_rank_sum: 6\n", ""), False),
    ("no mpirun (an echo)", _without("mpirun "), False),
    ("no srun", _without("srun "), False),
    ("another partition", RECORDED.replace("partition=small", "partition=large"), False),
]


@pytest.mark.parametrize("name, log, accepted", LOGS, ids=[entry[0] for entry in LOGS])
def test_only_every_rank_on_both_nodes_is_accepted(name, log, accepted):
    if accepted:
        seen = reproduce_log_seen(log)
        assert seen["mpi_allreduce"] == {"ranks": 4, "rank_sum": 6} and seen["job_id"] == "8"
        assert set(seen["mpirun_ranks"].values()) == {"n1", "n2"}
    else:
        with pytest.raises(AssertionError):
            reproduce_log_seen(log)
