"""The project's real SLURM + Lmod + OpenMPI test bed (see slurm-testbed.sh)."""
from .cluster import (DEFAULT_PARTITION, NODES, PARTITIONS, VARIANTS, RunningTestbed, Testbed,
                      TestbedError, can_run)

__all__ = ["DEFAULT_PARTITION", "NODES", "PARTITIONS", "VARIANTS", "RunningTestbed", "Testbed",
           "TestbedError", "can_run"]
