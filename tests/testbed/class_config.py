# A class on the hub: each learner's server is a process on the hub's host, not a SLURM job.
# The lessons run on demo sites and never call SLURM, so a job per learner would only hold
# nodes, and batchspawner would poll squeue for each server. The spawner's command puts the
# learner's own copy of the student lessons in place and serves that folder.
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = ["/bin/sh", "-c",
                 'cd "$(ari-jupyter lessons path --place --lang en)" && exec jupyterhub-singleuser "$@"',
                 "jupyterhub-singleuser"]
c.Spawner.default_url = "/lab/tree/01_allocation_and_hostlists.ipynb"
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300
