"""tests/conftest.py marks what a test uses: `bash tests/run` splits the suite by these markers
(the slurm session alone takes the test bed's lock), so a missing mark would race the cluster."""
from __future__ import annotations

import pytest

import conftest


class FakeItem:
    def __init__(self, *fixtures: str, marks: tuple[str, ...] = ()):
        self.fixturenames = list(fixtures)
        self.marks = list(marks)
        self.user_properties: list = []

    def get_closest_marker(self, name: str):
        return name if name in self.marks else None

    def add_marker(self, mark) -> None:
        self.marks.append(mark.name)


@pytest.mark.parametrize("fixtures, marks, slurm, ari", [
    (("tmp_path",), (), False, False),
    (("_testbed", "testbed_gres"), (), True, False),
    (("testbed_any",), (), True, False),
    (("_testbed",), ("slurm",), True, False),
    (("ari_env",), (), False, True),
    (("ari_env", "_testbed", "testbed_nogres"), (), True, True),
])
def test_a_test_that_uses_the_test_bed_or_ari_carries_their_marker(fixtures, marks, slurm, ari):
    item = FakeItem(*fixtures, marks=marks)
    conftest.pytest_collection_modifyitems(None, None, [item])
    assert (item.get_closest_marker("slurm") is not None, item.get_closest_marker("ari") is not None) \
        == (slurm, ari)
    assert item.marks.count("slurm") <= 1
    assert ("slurm_testbed" in dict(item.user_properties)) == slurm
