"""The worst case in node-hours of what the user approves (``ari.cost``), and the hand-off's
check that shows it beside the time fit with the association's limits sacctmgr shows and the
fair-share factor sshare shows, each only where the site lets the user see it."""
from __future__ import annotations

import asyncio
import getpass
from dataclasses import replace

import pytest

from ari_jupyter.ari.cost import cost_bound, hours_text
from ari_jupyter.ari.profile import ExecutionProfile
from ari_jupyter.ari.run_settings import RunSettings
from ari_jupyter.base.commands import CommandResult
from ari_jupyter.checkpoint.handoff import _check_cost
from ari_jupyter.i18n import say
from ari_jupyter.slurm.accounting import assoc_argv, assoc_limits, share_argv

from unit.ari.test_render import golden_state

# name, changes to the golden state (Nodes 2, 01:00:00, max nodes 30), then
# (BFTS jobs, nodes, seconds), (reproduce nodes, seconds) or None, total node-hours
CASES = [
    ("golden", {}, (30, 2, 3600), (2, 3600), 62.0),
    ("days", {"walltime": "2-00:00:00"}, (30, 2, 172800), (2, 172800), 2976.0),
    ("small search", {"run_settings": RunSettings(max_nodes=4)}, (4, 2, 3600), (2, 3600), 10.0),
    ("reproduce off", {"run_settings": RunSettings(include_reproduce=False)}, (30, 2, 3600), None, 60.0),
    ("nodes not set: one node each", {"nodes": None, "profile": ExecutionProfile()}, (30, 1, 3600),
     (1, 3600), 31.0),
    ("no walltime: no bound", {"walltime": ""}, (30, 2, None), (2, None), None),
]


@pytest.mark.parametrize("name,changes,bfts,reproduce,total", CASES, ids=[c[0] for c in CASES])
def test_worst_case(name, changes, bfts, reproduce, total):
    bound = cost_bound(golden_state(**changes).choices())
    assert (bound.bfts.jobs, bound.bfts.nodes, bound.bfts.seconds) == bfts
    assert (None if bound.reproduce is None else (bound.reproduce.nodes, bound.reproduce.seconds)) == reproduce
    assert bound.node_hours == total
    said = say(bound.said(), "en")
    if total is None:
        assert said.startswith("no worst case in node-hours") and "Walltime" in said
    else:
        assert said.startswith(f"worst case {hours_text(total)} node-hours")
        assert f"BFTS: {bfts[0]} jobs × {bfts[1]} nodes" in said
    assert ("reproduce:" in said) is (reproduce is not None)
    for lang, word in (("ja", "ノード"), ("zh", "节点")):
        assert word in say(bound.said(), lang)


@pytest.mark.parametrize("hours,shown", [(62.0, "62"), (0.25, "0.25"), (1.5, "1.5"), (2976.0, "2976"),
                                         (12.34, "12.3"), (0.0, "0"), (0.0017, "0.0017"),
                                         (0.00999, "0.01"), (0.012, "0.01"), (2.5e-05, "0.000025")])
def test_hours_text(hours, shown):
    assert hours_text(hours) == shown


# sacctmgr -n -P show assoc where user=<u> format=LIMIT_FIELDS, as a site with limits prints it
ASSOC = [
    ("no limits (the test bed)", "ari|||||||||\nroot|||||||||\n", []),
    ("limits", "proj1||cpu=60000||||20|100||\nproj2|gpu|||node=2||||2-00:00:00|\n",
     ["proj1: GrpTRESMins=cpu=60000, MaxJobs=20, MaxSubmit=100",
      "proj2/gpu: MaxTRESMins=node=2, MaxWall=2-00:00:00"]),
    ("unreadable", "sacctmgr: error: something\n", []),
]


@pytest.mark.parametrize("name,text,limits", ASSOC, ids=[a[0] for a in ASSOC])
def test_assoc_limits(name, text, limits):
    assert assoc_limits(text) == limits


class Host:
    """Answers sacctmgr with ``answer`` and sshare with ``share`` (the same when not given)."""

    def __init__(self, answer, share=None):
        self.answer, self.share, self.calls = answer, share, []

    async def run(self, argv, timeout, env=None):
        self.calls.append(list(argv))
        return self.share if argv[0] == "sshare" and self.share is not None else self.answer


SHARE_SITE = "proj1|alice|100|0.250000|0.412000|0.318000\n"
NO_SHARE = CommandResult(("sshare",), 1, "", "sshare: error: Problem with call to slurm_associations_get_shares")


@pytest.mark.parametrize("answer,share,limits,shared", [
    (CommandResult(("sacctmgr",), 0, ASSOC[1][1], ""), NO_SHARE, True, False),
    (CommandResult(("sacctmgr",), 0, ASSOC[0][1], ""), NO_SHARE, False, False),
    (CommandResult(("sacctmgr",), 1, "", "sacctmgr: error: accounting storage is disabled"), NO_SHARE, False, False),
    (CommandResult(("sacctmgr",), None, "", "", not_found=True), None, False, False),
    (CommandResult(("sacctmgr",), 0, ASSOC[1][1], ""), CommandResult(("sshare",), 0, SHARE_SITE, ""), True, True),
    (CommandResult(("sacctmgr",), 0, ASSOC[0][1], ""), CommandResult(("sshare",), 0, SHARE_SITE, ""), False, True),
    # sshare answers, but with no factor (a site that hides usage): nothing said
    (CommandResult(("sacctmgr",), 0, ASSOC[0][1], ""), CommandResult(("sshare",), 0, "proj1|alice|||||\n", ""),
     False, False),
])
def test_the_handoff_check_shows_the_bound_and_only_limits_it_can_see(answer, share, limits, shared):
    host = Host(answer, share)
    result = asyncio.run(_check_cost(host, golden_state().choices(), 5.0))
    assert result.id == "cost" and result.status == "ok"
    assert result.summary.startswith("cost before the run: worst case 62 node-hours")
    assert ("Your association's limits" in result.summary) is limits
    assert ("Your fair-share factor (sshare" in result.summary) is shared
    assert ("proj1: FairShare=0.318000" in result.summary) is shared
    assert result.data["fair_share"] == (["proj1: FairShare=0.318000"] if shared else [])
    assert result.data["bound"]["node_hours"] == 62.0
    # one call of each
    assert sorted(c[0] for c in host.calls) == ["sacctmgr", "sshare"]
    assert [c for c in host.calls if c[0] == "sshare"] == [share_argv(getpass.getuser())]


@pytest.mark.parametrize("lang, said", [
    ("en", "Your fair-share factor (sshare; 1 is the most priority, it falls as your share is used): "
           "proj1: FairShare=0.318000"),
    ("ja", "あなたのフェアシェア係数（sshare。1 が最も優先され、割り当てを使うほど下がります）: proj1: FairShare=0.318000"),
    ("zh", "您的公平份额系数（sshare；1 为最高优先级，使用份额越多越低）：proj1: FairShare=0.318000"),
])
def test_the_fair_share_is_said_in_each_language(lang, said):
    result = asyncio.run(_check_cost(Host(CommandResult(("sacctmgr",), 0, ASSOC[1][1], ""),
                                          CommandResult(("sshare",), 0, SHARE_SITE, "")),
                                     golden_state().choices(), 5.0))
    assert result.text(lang).endswith(said), result.text(lang)


def test_no_choices_no_bound():
    result = asyncio.run(_check_cost(Host(None), None, 5.0))
    assert result.status == "skip"


def test_step_4_shows_the_same_sentence():
    """The wizard's run settings show what check-handoff shows; nothing for half-typed input."""
    from ari_jupyter.wizard.run_settings_view import cost_before
    state = golden_state()
    assert cost_before(state) == cost_bound(state.choices()).said()
    state.max_cpus = None
    assert cost_before(state) is None
