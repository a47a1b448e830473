# The hub's queue service for benchmarks/controller_load.py --hub: as docs/admin.md adds it
# (hubservice.config), with its default settings (one squeue every 30 s for the whole hub).
from ari_jupyter.hubservice.config import add_status_service

add_status_service(c, url="http://127.0.0.1:18095")  # noqa: F821
