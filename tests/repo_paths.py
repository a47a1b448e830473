"""Where things are, for tests in any folder under tests/: the repository and tests/ itself."""
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
