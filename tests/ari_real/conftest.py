"""Fixtures of the whole-run tests (tests/ari_real/wholerun_support.py)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wholerun_support import ari_for_users, runner  # noqa: E402,F401  (pytest fixtures)
