"""A firmware whose frames pass every check of their own (CRC, sizes, enums, order within the
report) but contradict what the host sent or what the firmware itself said: counters at the
end of the move index space, an IDENT answering a later HELLO with moves the host never sent,
and refusals that its own IDENT denies, for ever. Each must end in a typed error with an exact
report, never a ``ValueError`` from the encoder, a false success or a loop without end."""

from __future__ import annotations

import pytest

from firmware_protocol.errors import ExecutionError, MoveIndexError
from firmware_protocol.link.actions import Write
from firmware_protocol.messages import Message, Moves
from firmware_protocol.moves import parse_moves

from .memfirmware import Driver, MemoryFirmware
from .test_core import messages

MOVES = parse_moves("R U R' U' F2 B2 L D")
LAST_INDEX = 0xFFFF_FFFF


def at_the_end(last_received: int) -> Driver:
    """A session with a firmware whose move counters all stand at ``last_received``."""
    firmware = MemoryFirmware(queue_depth=16)
    firmware.last_received = firmware.started = firmware.executed = last_received
    driver = Driver(firmware)
    driver.open()
    return driver


@pytest.mark.parametrize("last_received", [LAST_INDEX, LAST_INDEX - 3], ids=["full", "3-left"])
def test_moves_past_the_last_move_index_are_refused_before_anything_is_sent(
    last_received: int,
) -> None:
    """An erased EEPROM reads 0xFF: a firmware that keeps no check on its counters announces
    last_received = 0xFFFFFFFF. Moves after it have no index (the encoder raised ValueError
    from inside the link: the daemon's job ended in an internal error with a traceback)."""
    driver = at_the_end(last_received)
    with pytest.raises(MoveIndexError, match="4294967295") as refused:
        driver.execute(MOVES)
    message = str(refused.value)
    assert "mem0" in message and "counters" in message and "nothing was sent" in message
    assert not driver.core.busy  # the link is still usable
    assert not [m for m in _sent(driver) if isinstance(m, Moves)]
    few = driver.execute(MOVES[: LAST_INDEX - last_received])  # what still fits runs
    driver.run_until(lambda: few.done)
    assert few.error is None and [e.index for e in few.events] == list(
        range(last_received + 1, LAST_INDEX + 1)
    )


def test_extending_past_the_last_move_index_is_refused_and_the_execution_goes_on() -> None:
    driver = at_the_end(LAST_INDEX - 4)
    execution = driver.execute(MOVES[:2])
    with pytest.raises(MoveIndexError, match="after move index 4294967293"):
        driver.core.extend(MOVES[2:], driver.now)
    driver.run_until(lambda: execution.done)
    assert execution.error is None and len(execution.moves) == 2


def _sent(driver: Driver) -> list[Message]:
    return messages([Write(data) for data in driver.wire.to_firmware])


def test_indices_fixed_after_the_counters_moved_on_fail_the_execution_with_nothing_sent() -> None:
    """``execute()`` while the session is down checks the counters known then; the IDENT of the
    next session may announce more (another host drove the firmware meanwhile)."""
    driver = at_the_end(10)
    driver.apply(driver.core.connection_lost())
    execution = driver.execute(MOVES)
    driver.firmware.last_received = driver.firmware.started = LAST_INDEX - 2
    driver.firmware.executed = LAST_INDEX - 2
    driver.firmware.nonce = None
    driver.apply(driver.core.connection_made(driver.now))
    driver.run_until(lambda: execution.done)
    assert isinstance(execution.error, ExecutionError)
    assert isinstance(execution.error.__cause__, MoveIndexError)
    assert len(execution.error.report.not_executed) == len(MOVES)
    assert not [m for m in _sent(driver) if isinstance(m, Moves)]
