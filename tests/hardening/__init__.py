"""Hardening tests: bad input, faults, interrupted and concurrent writes, injection, secrets.

Each test records what it tried in the session's figure collector (``figures.py``); the
conftest writes them to ``$ARI_TEST_REPORT_DIR/reliability.json`` and ``python -m
tests.hardening.report`` turns that into ``docs/reliability.md``.
"""
