"""The hub's queue service: one squeue for all the hub's users, each answered about their own.

A front end beside ``server/``: JupyterHub starts it (``c.JupyterHub.services``, docs/admin.md),
it asks SLURM at most once per interval for everyone's jobs (``queue``) and answers a user's
server, authenticated by the hub with that server's own token, about that user's jobs alone
(``app``). It never imports the other front ends; the answer's shape is
``runs.queue_service``'s, which the user's server reads.
"""
