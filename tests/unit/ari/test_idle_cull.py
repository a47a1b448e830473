"""A hub that stops idle servers: an ``ari run`` started in a server's terminal ends with the
server. The site's admin says the culler's timeout in the server's environment
(``ARI_JUPYTER_IDLE_CULL``); step 4, ``check-handoff`` and the status route say the same thing
from it (table-driven; a stand-in squeue for %L)."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from ari_jupyter.ari.judge import for_step, judge
from ari_jupyter.ari.time_fit import idle_cull_finding, idle_cull_seconds, idle_duration
from ari_jupyter.base.verdict import ProbeResult
from ari_jupyter.checkpoint.emit import emit_checkpoint
from ari_jupyter.checkpoint.handoff import check_handoff
from ari_jupyter.i18n import render_message, say
from ari_jupyter.server.status import AllocationStatus

from unit.checkpoint.test_handoff import golden_state, site  # noqa: F401  (the fixture)
from unit.ari.test_time_fit import SQUEUE, left


@pytest.mark.parametrize("raw,seconds", [
    ("3600", 3600), (" 90 ", 90), ("0", None), ("-5", None), ("1h", None), ("", None),
    ("1.5", None), ("٣٠", None),  # Arabic-Indic digits: isdigit and int() take them
])
def test_the_sites_timeout_is_whole_seconds_or_nothing(raw, seconds):
    assert idle_cull_seconds({"ARI_JUPYTER_IDLE_CULL": raw}) == seconds


def test_no_variable_no_warning():
    assert idle_cull_seconds({}) is None and idle_cull_seconds(None) is None
    assert idle_cull_finding({}, left(600)) is None


@pytest.mark.parametrize("seconds,en,ja,zh", [
    (90, "90 s", "90 秒", "90 秒"), (119, "119 s", "119 秒", "119 秒"), (120, "2 min", "2 分", "2 分钟"),
    (600, "10 min", "10 分", "10 分钟"), (3600, "1 h", "1 時間", "1 小时"),
    (5400, "1 h 30 min", "1 時間 30 分", "1 小时 30 分钟")])
def test_the_idle_timeout_as_people_say_it(seconds, en, ja, zh):
    assert [say(idle_duration(seconds), lang) for lang in ("en", "ja", "zh")] == [en, ja, zh]


@pytest.mark.parametrize("time_left,message_id,has_left", [
    (left(3000), "run_settings.idle_cull_left", {"en": "50 min", "ja": "50 分", "zh": "50 分钟"}),
    (left(unlimited=True), "run_settings.idle_cull", None),
    (left(status="unknown"), "run_settings.idle_cull", None),
    (None, "run_settings.idle_cull", None),
])
def test_the_warning_says_how_long_the_run_has(time_left, message_id, has_left):
    finding = idle_cull_finding({"ARI_JUPYTER_IDLE_CULL": "1800"}, time_left)
    assert (finding.rule, finding.severity, finding.message_id) == ("idle_cull", "warning", message_id)
    assert "30 min without use" in finding.message and "ends with it" in finding.message
    assert (has_left["en"] in finding.message) if has_left else ("at most" not in finding.message)
    assert "Keep this JupyterLab tab open" in finding.fix and "sbatch" in finding.fix
    for lang in ("ja", "zh"):
        assert {"ja": "30 分", "zh": "30 分钟"}[lang] in finding.text(lang) and "`ari run`" in finding.text(lang)
        assert (has_left[lang] in finding.text(lang)) if has_left else True


def test_step_4_shows_it_from_the_servers_environment(tmp_path):
    state = golden_state(workspace=str(tmp_path / "ws"))
    state.set_probe_result(left(86400 * 3))  # the search fits: only the hub can end the run
    assert [f.rule for f in judge(state.choices(), env={}) if f.rule == "idle_cull"] == []
    [shown] = [f for f in for_step(judge(state.choices(), env={"ARI_JUPYTER_IDLE_CULL": "600"}), "run_settings")
               if f.rule == "idle_cull"]
    assert "72 hours" in shown.message and "10 min" in shown.message


def test_check_handoff_says_what_step_4_says(site):  # noqa: F811
    (site.bin / "squeue").write_text(SQUEUE.format(left="3-00:00:00"))
    (site.bin / "squeue").chmod(0o755)
    state = golden_state(workspace=str(site.workspace), provided_files=[])
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": str(site.workspace)}))
    result = emit_checkpoint(state)
    site.host.env.update(SLURM_JOB_ID="77")
    [check] = [c for c in check_handoff(result.checkpoint_dir, host=site.host, timeout=30) if c.id == "time_fit"]
    assert check.status == "ok", check.summary  # no hub timeout: the search fits, nothing to say
    site.host.env.update(ARI_JUPYTER_IDLE_CULL="600")
    [check] = [c for c in check_handoff(result.checkpoint_dir, host=site.host, timeout=30) if c.id == "time_fit"]
    state.set_probe_result(left(86400 * 3))
    [shown] = [f for f in judge(state.choices(), env=site.host.env) if f.rule == "idle_cull"]
    assert (check.status, check.summary, check.fix) == ("warn", shown.message, shown.fix)
    env = {**os.environ, **site.env, "SLURM_JOB_ID": "77", "ARI_JUPYTER_IDLE_CULL": "600"}
    done = subprocess.run([sys.executable, "-m", "ari_jupyter", "check-handoff", "--json", "--site", "",
                           result.checkpoint_dir], env=env, capture_output=True, text=True, timeout=120)
    [said] = [c for c in json.loads(done.stdout)["checks"] if c["id"] == "time_fit"]
    assert said["status"] == "warn" and said["summary"] == shown.message


@pytest.mark.parametrize("lang,gap", [("en", " "), ("ja", ""), ("zh", "")])
def test_check_handoff_says_both_when_both_apply(site, lang, gap):  # noqa: F811
    """A search longer than the job and a hub that stops the idle server: check-handoff says
    both, as step 4 does, each sentence and each fix in the reader's language."""
    (site.bin / "squeue").write_text(SQUEUE.format(left="0:20:00"))
    (site.bin / "squeue").chmod(0o755)
    state = golden_state(workspace=str(site.workspace), provided_files=[])
    state.set_probe_result(ProbeResult("shared_fs", "ok", "shared", data={"path": str(site.workspace)}))
    result = emit_checkpoint(state)
    site.host.env.update(SLURM_JOB_ID="77", ARI_JUPYTER_IDLE_CULL="600")
    [check] = [c for c in check_handoff(result.checkpoint_dir, host=site.host, timeout=30) if c.id == "time_fit"]
    state.set_probe_result(left(20 * 60))
    shown = {f.rule: f for f in judge(state.choices(), env=site.host.env) if f.rule in ("time_fit_short", "idle_cull")}
    first, second = shown["time_fit_short"], shown["idle_cull"]
    assert check.status == "warn"
    assert check.text(lang) == first.text(lang) + gap + second.text(lang)
    assert check.fix_text(lang) == first.fix_text(lang) + gap + second.fix_text(lang)
    assert {"en": "20 min", "ja": "20 分", "zh": "20 分钟"}[lang] in check.text(lang) and "`ari resume`" in check.fix_text(lang)


@pytest.mark.parametrize("env,expected", [
    ({"SLURM_JOB_ID": "77", "ARI_JUPYTER_IDLE_CULL": "5400"}, (5400, "1 h 30 min")),
    ({"SLURM_JOB_ID": "77"}, None),
    ({"SLURM_JOB_ID": "77", "ARI_JUPYTER_IDLE_CULL": "soon"}, None),
])
def test_the_status_route_carries_it(env, expected):
    async def answered(allocation):
        return left(600).to_json()

    snapshot = asyncio.run(AllocationStatus(env=env, time_left_probe=answered).snapshot())
    idle = snapshot["idle_cull"]
    if expected is None:
        assert idle is None
    else:
        assert (idle["seconds"], idle["text"]) == expected
        # the words cross JSON as a message, for the route to say in the bar's language
        assert render_message(idle["text"], idle, "ja") == "1 時間 30 分"
    assert snapshot["time_left"]["data"]["seconds"] == 600
