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


def test_close_closes_the_comm():
    bridge, comms = fake_bridge()
    comms[0].reply({"type": READY, "protocol": 1})
    bridge.close()
    assert comms[0].closed and not bridge.available
