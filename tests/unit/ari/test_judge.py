"""One verdict: each cause is told once, with the same severity on step 1 and on step 4."""
import re

import pytest

from ari_jupyter.ari.profile import PRESETS
from ari_jupyter.ari.judge import for_step, judge
from ari_jupyter.widgets.wizard import Wizard

from test_widgets_support import fake_bridge, run
from widget_text import as_shown, shown


def wizard_on(site, tmp_path):
    async def scenario():
        wizard = Wizard(site=site, bridge=fake_bridge()[0], env={"HOME": str(tmp_path)})
        await wizard.wait()
        return wizard
    return run(scenario())


def _step1_severities(wizard) -> dict[str, str]:
    """rule -> severity of what step 1 shows under the placement picture."""
    value = wizard.allocation_panel.placement.value
    return dict(re.findall(r'data-rule="([^"]+)" data-severity="([^"]+)"', value))


def _cpu_overcommit(state):
    state.max_cpus = 12


def _nodes_beyond_partition(state):
    state.nodes = 3


def _gpu_without_gres(state):
    state.profile = PRESETS["gpu_single"]()


def _walltime_over_limit(state):
    state.walltime = "06:00:00"


def _bfts_memory_over_node(state):
    state.mem_gb = 8  # rccs-cloud's nodes have 4000 MB


# cause, site, change, the one rule that tells it, rules of the same cause that must not appear
CAUSES = [
    ("cpu-overcommit", "rccs-cloud", _cpu_overcommit, "cpus_over_node",
     {"placement_cpu_oversubscribed"}),
    ("nodes-beyond-partition", "sx40", _nodes_beyond_partition, "nodes_over_partition",
     {"placement_nodes_exceed_allocation", "nodes_over_allocation"}),
    ("gpu-without-gres", "sx40", _gpu_without_gres, "no_gres", {"placement_gpus_not_visible"}),
    ("walltime-over-limit", "rccs-cloud", _walltime_over_limit, "walltime_over_limit", set()),
    ("bfts-memory-over-node", "rccs-cloud", _bfts_memory_over_node, "bfts_mem_over_node", set()),
]


@pytest.mark.parametrize("cause, site, change, rule, duplicates", CAUSES,
                         ids=[c[0] for c in CAUSES])
def test_step_1_and_step_4_show_one_cause_with_one_severity(cause, site, change, rule,
                                                            duplicates, tmp_path):
    wizard = wizard_on(site, tmp_path)
    change(wizard.state)
    verdict = wizard.ctx.problems()
    told = [f for f in verdict if f.rule == rule]
    assert len(told) == 1 and told[0].severity == "error", verdict
    assert not {f.rule for f in verdict} & duplicates, verdict

    step1 = _step1_severities(wizard)
    assert step1.get(rule) == "error", step1
    assert not set(step1) & duplicates, step1

    panel = wizard.experiment_panel
    assert panel.write.disabled
    reason = shown(panel.write_reason.value)
    assert as_shown(told[0].message) in reason or f"{len(for_step(verdict, 'experiment'))}" in reason
    assert told[0] in for_step(verdict, "experiment")
    # the core and the widgets agree: the same list, the same severity
    assert {(f.rule, f.severity) for f in judge(wizard.state.choices(), env=wizard.ctx.host.env)} == \
        {(f.rule, f.severity) for f in verdict}


def test_placement_tells_a_cause_the_validator_cannot_see(tmp_path):
    """Without a partition's node size the placement's warning stays (once, not per node)."""
    wizard = wizard_on("rccs-cloud", tmp_path)
    state = wizard.state
    state.profile = PRESETS["mpi"]()
    wizard.allocation_panel.fan_out.value = False
    rules = [f.rule for f in wizard.ctx.problems()]
    assert rules.count("placement_all_ranks_on_first_node") == 1
    assert "placement_all_ranks_on_first_node" in _step1_severities(wizard)


def test_for_step_rejects_an_unknown_step():
    with pytest.raises(ValueError):
        for_step([], "five")


def _allow_no_gres(state):
    state.profile = PRESETS["gpu_single"]()
    state.allow_no_gres = True


# site, change, the gres row's status in step 2, the severity Write's checks give its cause
GRES_ROWS = [
    ("rccs-cloud", lambda state: None, "ok", None),  # a CPU class: nothing asked, nothing wrong
    ("sx40", lambda state: None, "ok", None),
    ("rccs-cloud", _gpu_without_gres, "fail", "error"),
    ("sx40", _gpu_without_gres, "fail", "error"),
    ("sx40", _allow_no_gres, "ok", "info"),  # GPUs seen, ARI drops the GPU flags: fine
    ("rccs-cloud", _allow_no_gres, "warn", "warning"),  # no GPU seen: the job may get none
]


@pytest.mark.parametrize("site, change, status, severity", GRES_ROWS)
def test_the_gres_row_takes_the_severity_of_the_gpu_request(site, change, status, severity,
                                                              tmp_path):
    """A site without GRES is a problem only for a profile that asks for GPUs, and then step 2
    and Write's checks tell it with one severity."""
    from ari_jupyter.ari.judge import GRES_CAUSE_RULES, probe_verdicts

    wizard = wizard_on(site, tmp_path)
    assert wizard.state.probe_results["gres"].status == "ok"  # the probe: no profile known
    change(wizard.state)
    row = wizard.checks_panel.rows["gres"]
    assert probe_verdicts(wizard.state.choices(), wizard.ctx.problems)["gres"].status == status
    assert row.icon.tooltip == {"ok": "ok", "warn": "warning", "fail": "failed"}[status]
    told = {f.severity for f in wizard.ctx.problems() if f.rule in GRES_CAUSE_RULES}
    assert told == ({severity} if severity else set()), told
    if severity == "error":
        assert wizard.experiment_panel.write.disabled
    # the gpus row never tells the GRES cause a second time
    gpus = wizard.state.probe_results["gpus"]
    assert gpus.status in ("ok", "skip") and gpus.fix_id in ("", "probe.fix.see_gres")


# a refused value, the field's own rule, the validator's rule that would only follow from it
REFUSED = [
    ("partition", "small;rm -rf ~", "partition_bad_chars", "no_partition"),
    ("max_cpus", -1, "max_cpus_low", "cpus_over_node"),
    ("max_cpus", 0, "max_cpus_low", "cpus_over_node"),
]


@pytest.mark.parametrize("field, value, rule, consequence", REFUSED,
                         ids=[f"{r[0]}={r[1]}" for r in REFUSED])
def test_a_refused_value_is_told_once_not_again_as_what_ari_would_make_of_it(
        field, value, rule, consequence, tmp_path):
    """ARI reads an unreadable partition as none and a CPU count below 1 as its default (8):
    the field's error names the cause; a finding about a value the user never gave would not."""
    wizard = wizard_on("rccs-cloud", tmp_path)
    setattr(wizard.state, field, value)
    rules = [f.rule for f in wizard.ctx.problems()]
    assert rules.count(rule) == 1, rules
    assert consequence not in rules, rules


def test_the_consequence_is_still_told_when_the_value_was_never_refused(tmp_path):
    """Control: the rules left out above are real findings for values the user did give."""
    wizard = wizard_on("rccs-cloud", tmp_path)
    wizard.state.max_cpus = 12
    assert "cpus_over_node" in [f.rule for f in wizard.ctx.problems()]
    wizard.state.partition = ""
    wizard.state.partition_source = ""
    assert "no_partition" in [f.rule for f in wizard.ctx.problems()]
