"""Hypothesis profiles shared by the property tests.

``HYPOTHESIS_PROFILE=ci`` runs 1000 examples per property (CI), ``dev`` (the default)
100. Import ``settings`` from here so every property module sees the loaded profile.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE_EXAMPLES = {"ci": 1000, "dev": 100}

# No deadline: the machine is shared and a slow example is not a failing one.
for _name, _examples in PROFILE_EXAMPLES.items():
    settings.register_profile(
        _name, max_examples=_examples, deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
if PROFILE not in PROFILE_EXAMPLES:
    raise ValueError(f"HYPOTHESIS_PROFILE={PROFILE!r}; known profiles: {', '.join(PROFILE_EXAMPLES)}")
settings.load_profile(PROFILE)
MAX_EXAMPLES = PROFILE_EXAMPLES[PROFILE]

__all__ = ["MAX_EXAMPLES", "PROFILE", "settings"]
