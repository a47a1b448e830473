"""Speed and scale measurements of ari-jupyter, each a ratio against a baseline of the same run.

Run ``python -m benchmarks`` (full) or ``python -m benchmarks --quick`` (CI: proves the
benchmarks still run; its figures are not meant to be quoted). See benchmarks/README.md.
"""
