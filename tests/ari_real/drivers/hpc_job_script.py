"""Driver (ARI's venv): the BFTS job script ARI's hpc skill builds from a checkpoint.

argv: HPC_SRC JOB_BODY. ARI_CHECKPOINT_DIR is exported by the caller, so importing ari.cli loads the
checkpoint .env as `ari run` does; then ari-skill-hpc's own SlurmClient.submit runs, with the
caller's PATH holding an sbatch that keeps the script it is given. Prints the submit result.
"""
import asyncio
import json
import sys

import ari.cli  # noqa: F401  (loads the .env files, override=False)

sys.path.insert(0, sys.argv[1])
from slurm import SlurmClient  # noqa: E402  (ari-skill-hpc/src)

result = asyncio.run(SlurmClient(mode="local").submit(sys.argv[2], job_name="bfts_node"))
print(json.dumps(result))
