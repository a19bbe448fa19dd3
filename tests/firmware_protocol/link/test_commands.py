"""The link's command bookkeeping: order, timeouts, and what a failed link hands back."""

from __future__ import annotations

from firmware_protocol.errors import LinkError, LinkTimeoutError
from firmware_protocol.link.commands import Commands
from firmware_protocol.link.window import Op
from firmware_protocol.messages import Clear, Enable, Home


def test_the_links_own_clear_goes_first_and_is_seen() -> None:
    commands = Commands("/dev/ttyX")
    commands.add(Op(1, Home(), 5.0))
    assert not commands.clearing
    commands.add_first(Op(2, Clear(), None))
    assert [op.op_id for op in commands] == [2, 1]
    assert commands.clearing


def test_a_late_command_ends_with_a_timeout_naming_it_and_the_port() -> None:
    commands = Commands("/dev/ttyX")
    commands.add(Op(1, Home(), 5.0))
    commands.add(Op(2, Enable(0x3F), 9.0))
    commands.add_first(Op(3, Clear(), None))
    assert commands.expired(4.9) == []
    (end,) = commands.expired(5.0)
    assert end.op_id == 1
    assert isinstance(end.error, LinkTimeoutError)
    assert "HOME not acknowledged by the firmware on /dev/ttyX" in str(end.error)
    assert [op.op_id for op in commands] == [3, 2]
    assert commands.deadlines() == [None, 9.0]


def test_done_ends_a_command_once() -> None:
    commands = Commands("/dev/ttyX")
    op = Op(1, Home(), 5.0)
    commands.add(op)
    end = commands.done(op, None)
    assert end is not None and end.op_id == 1 and end.error is None
    assert commands.done(op, None) is None  # already ended: nothing to report twice


def test_a_failed_link_ends_the_awaited_commands_and_drops_the_rest() -> None:
    commands = Commands("/dev/ttyX")
    commands.add(Op(1, Home(), 5.0))
    commands.add_first(Op(2, Clear(), None))  # nobody waits for the link's own CLEAR
    error = LinkError("port gone", "/dev/ttyX")
    ends = commands.drop_all(error)
    assert [(end.op_id, end.error) for end in ends] == [(1, error)]
    assert list(commands) == []
    commands.add(Op(4, Home(), 1.0))
    commands.discard(4)
    assert list(commands) == []
