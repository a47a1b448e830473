"""Will the chosen scope fit in the allocation's time left? The core's bound (ARI's node timeout
× ceil(max nodes / parallel), at least max depth rounds), its warning in step 4's findings and
in ``check-handoff`` (the same sentence in both; table-driven, a stand-in squeue for %L)."""
from __future__ import annotations

import json
import os
import sys
import subprocess

import pytest

from ari_jupyter.ari.judge import for_step, judge
from ari_jupyter.ari.run_settings import RunSettings
from ari_jupyter.ari.run_settings import SCOPE_PRESETS
from ari_jupyter.ari.time_fit import clock, hours, search_rounds, search_seconds, search_time, time_fit_finding
from ari_jupyter.i18n import say
from ari_jupyter.wizard.run_settings_view import preset_options
from ari_jupyter.base.verdict import ProbeResult
from ari_jupyter.checkpoint.emit import emit_checkpoint
from ari_jupyter.checkpoint.handoff import check_handoff

from unit.checkpoint.test_handoff import golden_state, site  # noqa: F401  (the fixture)


def scope(nodes, parallel, depth, timeout_min):
    return {"max_nodes": nodes, "parallel": parallel, "max_depth": depth,
            "node_timeout_min": timeout_min, "max_react": 80}


@pytest.mark.parametrize("given,rounds,seconds", [
    (scope(30, 4, 5, 120), 8, 8 * 7200),        # ARI's Standard preset: ceil(30/4) = 8 rounds
    (scope(10, 2, 3, 30), 5, 5 * 1800),         # Quick
    (scope(8, 4, 5, 10), 5, 5 * 600),           # two rounds of nodes, but depth 5 takes 5
    (scope(5, 64, 2, 10), 2, 2 * 600),
    (scope(7, 7, 1, 60), 1, 3600),
])
def test_search_bound(given, rounds, seconds):
    assert (search_rounds(given), search_seconds(given)) == (rounds, seconds)


@pytest.mark.parametrize("seconds,shown", [(0, "0:00:00"), (3599, "0:59:59"), (57600, "16:00:00"),
                                           (90061, "1-01:01:01")])
def test_clock(seconds, shown):
    assert clock(seconds) == shown


@pytest.mark.parametrize("seconds,en,ja,zh", [
    (57600, "16 hours", "16 時間", "16 小时"),
    (345600, "96 hours", "96 時間", "96 小时"),              # Deep: hours, never 4-00:00:00
    (3600, "1 hour", "1 時間", "1 小时"),
    (9000, "2.5 hours", "2.5 時間", "2.5 小时"),
    (11565, "about 3.2 hours", "約 3.2 時間", "约 3.2 小时"),  # 3:12:45 left
    (37000, "about 10 hours", "約 10 時間", "约 10 小时"),
    (1800, "30 min", "30 分", "30 分钟"),
    (1790, "about 30 min", "約 30 分", "约 30 分钟"),
])
def test_durations_in_sentences_read_as_hours(seconds, en, ja, zh):
    said = hours(seconds)
    assert (say(said, "en"), say(said, "ja"), say(said, "zh")) == (en, ja, zh)


@pytest.mark.parametrize("name", list(SCOPE_PRESETS))
@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_each_preset_label_says_what_its_warning_says(name, lang):
    """One model: the label of a preset names the figure the time-fit warning gives for it."""
    scope_of = SCOPE_PRESETS[name]._asdict()
    [label] = [say(label, lang) for label, value in preset_options() if value == name]
    most = say(search_time(scope_of), lang)
    assert most in label
    warning = time_fit_finding(scope_of, left(60))
    assert most in warning.text(lang) and ":" not in most


def left(seconds=None, unlimited=False, status="ok"):
    return ProbeResult("time_left", status, "", data={"seconds": seconds, "unlimited": unlimited})


@pytest.mark.parametrize("time_left,warns", [
    (left(57600), False),              # exactly what Standard needs
    (left(57599), True),
    (left(1800), True),
    (left(unlimited=True), False),
    (left(status="unknown"), False),   # unknown: nothing concluded
    (None, False),                     # not probed yet
    ({"data": {"seconds": 600, "unlimited": False}}, True),  # the probe's JSON
])
def test_warns_only_when_it_will_not_fit(time_left, warns):
    finding = time_fit_finding(RunSettings().scope(), time_left)
    assert (finding is not None) is warns
    if warns:
        assert finding.severity == "warning" and finding.field.startswith("run_settings.")
        assert "up to 16 hours" in finding.message and "16:00:00" not in finding.message
        for fix in ("smaller scope", "longer allocation", "sbatch", "16 hours", "--time=16:00:00"):
            assert fix in finding.fix


def test_step_4_shows_the_core_finding(tmp_path):
    state = golden_state(workspace=str(tmp_path / "ws"))
    assert [f for f in judge(state.choices()) if f.rule == "time_fit_short"] == []
    state.set_probe_result(left(3600))
    [shown] = [f for f in for_step(judge(state.choices()), "run_settings") if f.rule == "time_fit_short"]
    assert shown.message == time_fit_finding(state.run_settings.scope(), left(3600)).message
    for lang in ("ja", "zh"):
        assert "16 " in shown.text(lang) and "1 " in shown.text(lang) and "16:00:00" not in shown.text(lang)


SQUEUE = '#!/bin/sh\n[ "$2" = "-j" ] && [ "$3" = "77" ] && [ "$5" = "%L" ] && echo "{left}" && exit 0\nexit 1\n'


@pytest.mark.parametrize("time_left,status", [("1:00:00", "warn"), ("1-00:00:00", "ok"),
                                              ("UNLIMITED", "ok"), ("", "unknown")])
def test_check_handoff_says_what_step_4_says(site, time_left, status):  # noqa: F811
    (site.bin / "squeue").write_text(SQUEUE.format(left=time_left))
    (site.bin / "squeue").chmod(0o755)
    state = golden_state(workspace=str(site.workspace), provided_files=[])
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": str(site.workspace)}))
    result = emit_checkpoint(state)
    site.host.env.update(SLURM_JOB_ID="77")  # the hand-off terminal's allocation
    [check] = [c for c in check_handoff(result.checkpoint_dir, host=site.host, timeout=30)
               if c.id == "time_fit"]
    assert check.status == status, check.summary
    if status == "warn":
        state.set_probe_result(left(3600))
        [shown] = [f for f in judge(state.choices()) if f.rule == "time_fit_short"]
        assert (check.summary, check.fix) == (shown.message, shown.fix)
        for lang in ("ja", "zh"):
            assert check.text(lang) == shown.text(lang)
        env = {**os.environ, **site.env, "SLURM_JOB_ID": "77"}
        done = subprocess.run([sys.executable, "-m", "ari_jupyter", "check-handoff", "--json",
                               "--site", "", result.checkpoint_dir], env=env, capture_output=True,
                              text=True, timeout=120)
        [said] = [c for c in json.loads(done.stdout)["checks"] if c["id"] == "time_fit"]
        assert said["status"] == "warn" and said["summary"] == shown.message
