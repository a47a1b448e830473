"""The kernel half of the "Open in terminal" protocol (see ari_jupyter/widgets/terminal_bridge.py)."""
import pytest

from ari_jupyter.widgets.terminal_bridge import (
    HELLO, OPEN_TERMINAL, PROTOCOL, READY, TARGET_NAME, TERMINAL_OPENED, TerminalBridge,
)

from test_widgets_support import fake_bridge


def test_hello_is_sent_on_the_agreed_target_and_ready_makes_it_available():
    bridge, comms = fake_bridge()
    assert comms[0].target_name == TARGET_NAME == "ari_jupyter_terminal"
    assert comms[0].open_data == {"type": HELLO, "protocol": PROTOCOL}
    assert not bridge.available
    comms[0].reply({"type": "ari-jupyter:something-newer"})  # ignored
    assert not bridge.available
    comms[0].reply({"type": READY, "protocol": 1})
    assert bridge.available


def test_open_terminal_message_and_matching_reply():
    bridge, comms = fake_bridge()
    comms[0].reply({"type": READY, "protocol": 1})
    request_id = bridge.open_terminal("bash /work/u/ari/launch/x.sh", cwd="/work/u/ari")
    assert comms[0].sent == [{"type": OPEN_TERMINAL, "request_id": request_id,
                              "cwd": "/work/u/ari", "command": "bash /work/u/ari/launch/x.sh",
                              "run": False}]
    comms[0].reply({"type": TERMINAL_OPENED, "request_id": "someone-else", "ok": True})
    assert bridge.last_result == {}
    comms[0].reply({"type": TERMINAL_OPENED, "request_id": request_id, "ok": False,
                    "error": "terminals are disabled"})
    assert bridge.last_result == {"ok": False, "error": "terminals are disabled"}


@pytest.mark.parametrize("command, cwd", [("bash x.sh\nrm -rf ~", ""), ("ok\r", ""),
                                          ("bash x.sh", "relative/dir")])
def test_multi_line_commands_and_relative_cwd_are_refused(command, cwd):
    bridge, comms = fake_bridge()
    comms[0].reply({"type": READY, "protocol": 1})
    with pytest.raises(ValueError):
        bridge.open_terminal(command, cwd=cwd)
    assert comms[0].sent == []


def test_without_the_extension_nothing_is_sent():
    bridge, comms = fake_bridge()
    comms[0].frontend_closes()  # what JupyterLab does for an unknown comm target
    assert not bridge.available
    with pytest.raises(RuntimeError):
        bridge.open_terminal("bash x.sh")


def test_no_kernel_means_no_bridge_and_no_error():
    def failing_factory(**kwargs):
        raise RuntimeError("no kernel")

    bridge = TerminalBridge(comm_factory=failing_factory)
    bridge.connect()
    assert not bridge.available


def test_connect_soon_says_hello_when_the_loop_turns_and_at_once_without_a_loop():
    """In a kernel the cell that makes a wizard returns before the hello goes out (the page
    answers only after the cell anyway); a script without a loop connects at once."""
    import asyncio

    from test_widgets_support import FakeComm

    comms: list = []

    def factory(**kwargs):
        comms.append(FakeComm(**kwargs))
        return comms[-1]

    async def in_a_kernel():
        bridge = TerminalBridge(comm_factory=factory)
        bridge.connect_soon()
        before = len(comms)
        await asyncio.sleep(0)
        return before, len(comms)

    assert asyncio.run(in_a_kernel()) == (0, 1)
    assert comms[0].open_data == {"type": HELLO, "protocol": PROTOCOL}
    TerminalBridge(comm_factory=factory).connect_soon()
    assert len(comms) == 2


def test_close_closes_the_comm():
    bridge, comms = fake_bridge()
    comms[0].reply({"type": READY, "protocol": 1})
    bridge.close()
    assert comms[0].closed and not bridge.available


def test_a_reloaded_page_gets_a_new_comm_and_the_wizard_follows_it():
    """JupyterLab reloaded: the new page opens a comm saying so (step 5). The old page's comm is
    dead, so a new one says hello; until the new page answers, Open in terminal is unavailable
    (hidden), then it works and the wizard speaks the new page's language."""
    from ari_jupyter.widgets.terminal_bridge import PAGE, _on_page_opened
    from ari_jupyter.widgets.wizard import Wizard
    from test_widgets_support import FakeComm

    bridge, comms = fake_bridge()
    comms[0].reply({"type": READY, "protocol": PROTOCOL, "locale": "en"})
    wizard = Wizard(run_probes=False, bridge=bridge)
    assert bridge.available and wizard.ctx.lang == "en"

    page = FakeComm(target_name=TARGET_NAME)
    _on_page_opened(page, {"content": {"data": {"type": PAGE, "protocol": PROTOCOL}}})
    assert page.closed  # only a wake-up
    assert not comms[0].closed and len(comms) == 2  # the old page is gone: nothing to tell it
    assert comms[1].open_data == {"type": HELLO, "protocol": PROTOCOL}
    assert not bridge.available
    comms[1].reply({"type": READY, "protocol": PROTOCOL, "locale": "ja"})
    assert bridge.available and wizard.ctx.lang == "ja"
    bridge.open_terminal("ari-jupyter check-handoff /w/c")
    assert comms[1].sent[-1]["command"] == "ari-jupyter check-handoff /w/c" and comms[0].sent == []

    # a comm of another kind on the target is closed and changes nothing
    _on_page_opened(FakeComm(target_name=TARGET_NAME), {"content": {"data": {"type": "x"}}})
    assert len(comms) == 2 and bridge.available


def test_a_request_made_while_the_page_reloads_reaches_the_new_page_once():
    """Clicked just after a reload, before the new page said it is here: the request went to
    the old page's comm. The new page gets it once it answers the hello, and only once."""
    from ari_jupyter.widgets.terminal_bridge import PAGE, _on_page_opened
    from test_widgets_support import FakeComm

    bridge, comms = fake_bridge()
    comms[0].reply({"type": READY, "protocol": PROTOCOL})
    request_id = bridge.open_terminal("bash /w/launch/x.sh")
    _on_page_opened(FakeComm(), {"content": {"data": {"type": PAGE}}})
    comms[1].reply({"type": READY, "protocol": PROTOCOL})
    assert [m["request_id"] for m in comms[1].sent] == [request_id]
    comms[1].reply({"type": TERMINAL_OPENED, "request_id": request_id, "ok": True,
                    "terminal": "1"})
    assert bridge.last_result == {"ok": True, "terminal": "1"}
    _on_page_opened(FakeComm(), {"content": {"data": {"type": PAGE}}})  # another reload
    comms[2].reply({"type": READY, "protocol": PROTOCOL})
    assert comms[2].sent == []  # answered already: not sent again


def test_a_click_between_the_reload_and_the_new_pages_answer_waits_for_it():
    """The page said it is here, the new hello is not answered yet, and the user clicks (the
    redrawn button still shows): the request waits and goes to the new page with READY."""
    from ari_jupyter.widgets.terminal_bridge import PAGE, _on_page_opened
    from test_widgets_support import FakeComm

    bridge, comms = fake_bridge()
    comms[0].reply({"type": READY, "protocol": PROTOCOL})
    _on_page_opened(FakeComm(), {"content": {"data": {"type": PAGE}}})
    request_id = bridge.open_terminal("bash /w/launch/x.sh")
    assert comms[0].sent == [] and comms[1].sent == []
    comms[1].reply({"type": READY, "protocol": PROTOCOL})
    assert [m["request_id"] for m in comms[1].sent] == [request_id]


def test_a_reloaded_page_without_the_extension_answers_the_waiting_click():
    """The page came back without the extension (it was disabled): the new hello is closed,
    and the click that waited for it is told so instead of doing nothing."""
    from ari_jupyter.widgets.terminal_bridge import PAGE, _on_page_opened
    from test_widgets_support import FakeComm

    bridge, comms = fake_bridge()
    comms[0].reply({"type": READY, "protocol": PROTOCOL})
    _on_page_opened(FakeComm(), {"content": {"data": {"type": PAGE}}})
    bridge.open_terminal("bash /w/launch/x.sh")
    comms[1].frontend_closes()
    assert bridge.last_result == {"ok": False, "unavailable": True} and not bridge.available
    with pytest.raises(RuntimeError):
        bridge.open_terminal("bash /w/launch/x.sh")
