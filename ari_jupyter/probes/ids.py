"""The probe ids, in the order results are shown (the runner checks its table against them)."""

PROBE_IDS: tuple[str, ...] = (
    "sbatch", "partitions", "gres", "shared_fs", "mpi", "modules", "gpus", "ari", "time_left",
)
