"""Pure functions that mirror ARI's own rules: partition precedence, the execution_profile
schema, the reproduce sbatch line and its preconditions, the reproduce.sh prelude, run ids.

No subprocesses: site facts ARI shells out for (``which sbatch``, ``sinfo -h -o %G``,
``sbatch --help``) are parameters. The only filesystem access is reading launch_config.json
and resolving paths, as ARI does.
"""
