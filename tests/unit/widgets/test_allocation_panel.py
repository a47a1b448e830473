"""Step 1: allocation facts, node list, and the placement picture driven by the sbatch line."""
import asyncio
import html
import re
import subprocess
import sys

import pytest

from ari_jupyter.ari.placement import JobRequest, NodeShape, plan_placement
from ari_jupyter.widgets.placement_view import render_findings, render_placement
from ari_jupyter.widgets.wizard import Wizard
from ari_jupyter.i18n import t
from ari_jupyter.probes.slurm import ends_at_clock
from ari_jupyter.widgets._base import is_shown

from test_widgets_support import fake_bridge, run


def wizard_on(site):
    async def scenario():
        wizard = Wizard(site=site, bridge=fake_bridge()[0])
        await wizard.wait()
        return wizard
    return run(scenario())


def ranks_per_node(placement_html: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r'data-node="([^"]+)" data-ranks="(\d+)"', placement_html)}


def test_facts_show_the_allocation_as_slurm_reports_it(monkeypatch):
    from ari_jupyter.hosts.recorded_site import RecordedSite

    # read as a real allocation would be (a demo's is said to be recorded: see below)
    monkeypatch.setattr(RecordedSite, "is_demo", property(lambda self: False))
    wizard = wizard_on("rccs-cloud")
    facts = html.unescape(wizard.allocation_panel.facts.value)
    assert "1027 (jupyterlab)" in facts
    assert "2 — rc[01-02]" in facts
    assert "3,1" in facts  # tasks per node, SLURM's own notation
    assert "3:12:45" in facts  # from the time_left probe
    # ... and until when, on the clock: the time left goes stale while the page stays open
    answered = wizard.ctx.runner.answered_at["time_left"]
    until = ends_at_clock(answered + 3 * 3600 + 12 * 60 + 45, answered)
    assert f"job 1027 has 3:12:45 left (until about {until})" in facts
    row = html.unescape(wizard.checks_panel.rows["time_left"].summary.value)
    assert f"(until about {until})" in row
    wizard.ctx.lang = "ja"
    assert f"（{until} ごろまで）" in html.unescape(wizard.allocation_panel.facts.value)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_demo_sites_time_left_is_said_to_be_recorded_with_no_moving_end(lang):
    """The demo's "Time left" stood still while its "until about ..." moved with the clock:
    a recording's time left is said as recorded, with no end on this machine's clock."""
    wizard = wizard_on("rccs-cloud")
    wizard.ctx.lang = lang
    facts = html.unescape(wizard.allocation_panel.facts.value)
    row = html.unescape(wizard.checks_panel.rows["time_left"].summary.value)
    for text in (facts, row):
        assert "3:12:45" in text and t("time_left_recorded", lang) in text
        assert t("probe.time_left.until", lang, ends="")[:4] not in text


def test_a_short_time_left_reads_as_in_the_checks_step():
    """A warning's `ari run` is code, as in step 2, not a word between raw backticks."""
    facts = wizard_on("gres-cluster").allocation_panel.facts.value
    assert ">ari run</code>" in facts and "`" not in facts


def node_names(facts_html: str) -> str:
    """The folded node list of the facts block ('' when there is none)."""
    found = re.search(r'<details class="ari-node-names-box[^"]*"><summary>([^<]*)</summary>'
                      r'<div class="ari-node-names[^"]*">([^<]*)</div></details>', facts_html)
    return html.unescape(found.group(2)) if found else ""


def test_node_names_are_folded_under_their_summary():
    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0])
    facts = wizard.allocation_panel.facts.value
    assert "<details " in facts and "<details open" not in facts  # folded until opened
    assert f"<summary>{html.escape(t('alloc_show_nodes', 'en'))}</summary>" in facts
    assert node_names(facts) == "rc01 rc02"


def test_a_two_node_job_without_fan_out_puts_every_rank_on_node_one():
    wizard = wizard_on("rccs-cloud")
    panel = wizard.allocation_panel
    profile = wizard.profile_panel
    profile.preset.value = "cpu_single"
    profile.fields["requested_nodes"].widget.value = "2"
    profile.fields["min_ranks"].widget.value = "4"
    # every kind of a profile is told "Multi-node fan-out: srun -N ... -n ..." by ARI's prompt
    assert panel.fan_out.value is True
    assert ranks_per_node(panel.placement.value) == {"rc01": 2, "rc02": 2}
    assert "all_ranks_on_first_node" not in panel.placement.value

    panel.fan_out.value = False  # what happens when reproduce.sh ignores the prelude
    assert ranks_per_node(panel.placement.value) == {"rc01": 4, "rc02": 0}
    assert "ari-finding-all_ranks_on_first_node" in panel.placement.value

    profile.fields["kind"].widget.value = "mpi"  # another kind: the drawing follows it again
    assert panel.fan_out.value is True


def test_gpus_and_their_owner_ranks_are_drawn():
    wizard = wizard_on("gres-cluster")
    wizard.profile_panel.preset.value = "gpu_multi"  # --gpus-per-node 4 on one node
    picture = wizard.allocation_panel.placement.value
    assert picture.count(">G") == 4 and "GPU 3: requested for the node" in html.unescape(picture)


def test_outside_an_allocation_there_is_no_picture():
    wizard = Wizard(site="laptop", run_probes=False, bridge=fake_bridge()[0])
    panel = wizard.allocation_panel
    assert panel.children == (panel.banner, panel.demo_picker)  # the banner says why
    assert panel.facts is None and panel.fan_out is None and panel.placement is None
    assert t("alloc_demo_no_allocation", "en") in html.unescape(panel.banner.value)


def test_the_allocation_rows_come_with_the_first_allocation_shown_and_hide_without_one():
    wizard = Wizard(site="laptop", lang="ja", run_probes=False, bridge=fake_bridge()[0])
    panel = wizard.allocation_panel
    wizard.use_site("rccs-cloud")  # a demo site inside an allocation
    rows = (panel.facts, panel.fan_out, panel.placement)
    assert panel.children == (panel.banner, panel.demo_picker, *rows)
    assert all(is_shown(row) for row in rows)
    assert panel.fan_out.description == t("placement_fan_out", "ja")
    assert t("placement_title", "ja") in panel.facts.value and panel.placement.value
    wizard.language.value = "en"
    assert panel.fan_out.description == t("placement_fan_out", "en")
    wizard.use_site("laptop")
    assert panel.children == (panel.banner, panel.demo_picker, *rows)
    assert not any(is_shown(row) for row in rows)
    wizard.use_site("rccs-cloud")
    assert (panel.facts, panel.fan_out, panel.placement) == rows and all(is_shown(r) for r in rows)


def tr_en(key, **params):
    return t(key, "en", **params)


def test_rendering_a_huge_allocation_stays_small():
    shapes = (NodeShape(f"nid{i:06d}", 128, 0) for i in range(1, 158977))
    placement = plan_placement(shapes, JobRequest(nodes=158976, ntasks_per_node=128),
                               fan_out=True, available_nodes=158976)
    picture = render_placement(placement, tr_en)
    assert len(picture) < 200_000
    assert "158,968 more nodes" in picture
    assert ranks_per_node(picture)["nid000001"] == 128


def test_findings_are_translated_and_escaped():
    placement = plan_placement([NodeShape("<n1>", 4, 0), NodeShape("n2", 4, 0)],
                               JobRequest(nodes=2, ntasks=8), fan_out=False)
    findings = render_findings(placement, lambda key, **p: t(key, "ja", **p))
    assert "&lt;n1&gt;" in findings and "<n1>" not in findings
    assert "ノード 1" in findings


def test_a_160k_node_allocation_renders_quickly():
    import time

    from ari_jupyter.hosts.recorded_site import RecordedSite

    env = {"SLURM_JOB_ID": "9", "SLURM_JOB_NODELIST": "nid[000001-158976]",
           "SLURM_JOB_NUM_NODES": "158976", "SLURM_JOB_CPUS_PER_NODE": "128(x158976)",
           "SLURM_TASKS_PER_NODE": "128(x158976)", "SLURM_JOB_PARTITION": "batch",
           "HOME": "/home/u", "USER": "u"}
    site = RecordedSite.from_dict({"name": "exascale", "env": env})
    started = time.monotonic()
    wizard = Wizard(site=site, run_probes=False, bridge=fake_bridge()[0])
    wizard.profile_panel.preset.value = "mpi"
    assert time.monotonic() - started < 10
    facts = html.unescape(wizard.allocation_panel.facts.value)
    assert "158,976 — nid[000001-158976]" in facts and "128(x158976)" in facts
    names = node_names(wizard.allocation_panel.facts.value)
    assert "nid000500" in names and "nid000501" not in names and "158,476" in names
    assert len(wizard.allocation_panel.placement.value) < 100_000


def test_without_an_event_loop_the_probes_run_synchronously_at_the_first_look():
    wizard = Wizard(site="laptop", bridge=fake_bridge()[0])  # plain Python: no running loop
    assert wizard.ctx.state.probe_results == {}  # Wizard() returned without waiting for them
    assert len(wizard.state.probe_results) == 9
    assert wizard.ctx.runner.running == [] and wizard.ctx.runner.deferred == ()


def _gpus_row(wizard) -> str:
    facts = html.unescape(wizard.allocation_panel.facts.value)
    return re.search(r"<th scope=\"row\">GPUs</th><td[^>]*>([^<]*)</td>", facts).group(1)


def test_the_gpus_row_says_slurm_allocated_none_and_what_the_node_has():
    """sx40 has no GRES: SLURM gives the job no GPU while nvidia-smi sees 4 on the node (the
    GPUs check). Step 1 says both rather than "none visible" beside step 2's "4 visible"."""
    async def settled(site):
        wizard = Wizard(site=site, lang="en", bridge=fake_bridge()[0])
        await wizard.wait()
        return wizard

    assert _gpus_row(run(settled("sx40"))) == "none allocated by SLURM · 4 on this node (nvidia-smi)"
    assert _gpus_row(run(settled("rccs-cloud"))) == "none allocated by SLURM"  # no nvidia-smi there
    assert _gpus_row(run(settled("gres-cluster"))) == "0,1,2,3"


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_outside_an_allocation_step_1_says_what_each_demo_site_is(lang, monkeypatch):
    """The demo-site buttons are bare names: the banner above them says what each one is, so a
    teacher can pick one without trying them all; inside an allocation or on a demo site the
    list is not shown."""
    from ari_jupyter.hosts.host import list_sites
    from ari_jupyter.i18n import t

    monkeypatch.delenv("ARI_JUPYTER_DEMO_SITE", raising=False)
    outside = Wizard(run_probes=False, lang=lang, bridge=fake_bridge()[0], env={"PATH": "/usr/bin"})
    banner = outside.allocation_panel.banner.value
    for name in list_sites():
        assert f"<li><b>{name}</b> — {t('alloc_demo_hint_' + name, lang)}</li>" in banner
    on_demo = Wizard(site="sx40", run_probes=False, lang=lang, bridge=fake_bridge()[0])
    assert "ari-demo-hints" not in on_demo.allocation_panel.banner.value


def test_the_placement_is_drawn_at_the_first_look_outside_a_kernel():
    """``Wizard()`` leaves step 1's placement (ARI's rules: most of a cold start) for the first
    look at the wizard, as it leaves the probes."""
    wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0])
    step_1 = wizard._panels[0]
    assert step_1.placement.value == ""  # not drawn inside Wizard()
    drawn = wizard.allocation_panel.placement.value
    assert set(ranks_per_node(drawn)) == {"rc01", "rc02"} and drawn == step_1._placement_html()


def test_the_placement_is_drawn_once_a_kernels_loop_turns():
    async def scenario():
        wizard = Wizard(site="rccs-cloud", run_probes=False, bridge=fake_bridge()[0])
        step_1 = wizard._panels[0]
        before = step_1.placement.value
        await asyncio.sleep(0)  # the cell is done: the loop turns
        return before, step_1.placement.value, step_1._placement_html()

    before, after, drawn = run(scenario())
    assert before == "" and set(ranks_per_node(after)) == {"rc01", "rc02"} and after == drawn


@pytest.mark.parametrize("site", [None, "rccs-cloud"])
def test_a_new_wizard_loads_none_of_aris_rules(site):
    """What the first step does not show is not loaded by ``Wizard()`` in a fresh interpreter."""
    code = ("import sys; from ari_jupyter import Wizard; Wizard(site=%r)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('ari_jupyter.ari.judge',"
            " 'ari_jupyter.ari.render', 'ari_jupyter.ari.validate', 'ari_jupyter.widgets.placement_view'))))"
            % site)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[-1] == "[]", done.stderr
