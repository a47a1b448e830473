"""``python -m ari_jupyter.hubservice``: the hub's queue service (started by JupyterHub)."""
from .app import main

if __name__ == "__main__":
    main()
