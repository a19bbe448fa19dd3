"""A firmware whose frames pass every check of their own (CRC, sizes, enums, order within the
report) but contradict what the host sent or what the firmware itself said: counters at the
end of the move index space, an IDENT answering a later HELLO with moves the host never sent,
and refusals that its own IDENT denies, for ever. Each must end in a typed error with an exact
report, never a ``ValueError`` from the encoder, a false success or a loop without end."""

from __future__ import annotations

import dataclasses

import pytest

from firmware_protocol.errors import (
    ExecutionError,
    FirmwareContradictionError,
    MoveIndexError,
)
from firmware_protocol.link.actions import Write
from firmware_protocol.messages import FirmwareState, Ident, Message, Moves, Nak, NakReason
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
    """``execute()`` before the first session checks the counters known then (none); the
    first IDENT announces where they stand."""
    firmware = MemoryFirmware(queue_depth=16)
    firmware.last_received = firmware.started = firmware.executed = LAST_INDEX - 2
    driver = Driver(firmware)
    execution = driver.execute(MOVES)
    driver.run_until(lambda: execution.done)
    assert isinstance(execution.error, ExecutionError)
    assert isinstance(execution.error.__cause__, MoveIndexError)
    assert len(execution.error.report.not_executed) == len(MOVES)
    assert not [m for m in _sent(driver) if isinstance(m, Moves)]


class LyingIdent(MemoryFirmware):
    """Once ``lie`` is set, its IDENT claims every counter at ``claim``."""

    lie = False
    claim = 1000

    def _ident(self, nonce: int) -> Ident:
        ident = super()._ident(nonce)
        if not self.lie:
            return ident
        return dataclasses.replace(
            ident, last_received=self.claim, started_upto=self.claim, last_executed=self.claim
        )


@pytest.mark.parametrize("new_boot", [False, True], ids=["same-boot", "new-boot"])
def test_an_ident_answering_a_later_hello_with_moves_never_sent_is_a_contradiction(
    new_boot: bool,
) -> None:
    """Two of 8 moves executed, then the firmware drops the session and the IDENT answering the
    new HELLO says 1000 moves executed: the host had reported all 8 executed and the execution
    a success."""
    firmware = LyingIdent(queue_depth=16)
    driver = Driver(firmware)
    driver.open()
    execution = driver.execute(MOVES)
    for _ in range(1000):
        if firmware.executed >= 2 and firmware.last_received == len(MOVES):
            break
        driver.step(execute=firmware.executed < 2)
    firmware.lie, firmware.nonce = True, None
    firmware.queue.clear()
    if new_boot:
        firmware.boot_id += 1
    driver.wire.to_host.append(firmware._send(Nak(0, NakReason.NO_SESSION)))
    for _ in range(300):
        if execution.done:
            break
        driver.step(execute=False)
    assert execution.done and isinstance(execution.error, FirmwareContradictionError)
    report = execution.error.report
    assert [e.index for e in report.executed] == [1, 2]
    assert [p.index for p in report.unknown] == list(range(3, len(MOVES) + 1))
    assert execution.error.field == "last_received" and execution.error.value == 1000
    assert len(driver.events) == 2
    assert driver.core.stats.protocol_errors >= 1
    assert driver.core.session_open  # the session opens all the same (the firmware's counters)


def test_the_first_ident_may_announce_any_counters() -> None:
    driver = at_the_end(123_456)
    assert driver.core.stats.protocol_errors == 0
    execution = driver.execute(MOVES[:2])
    driver.run_until(lambda: execution.done)
    assert execution.error is None and execution.events[0].index == 123_457


@pytest.mark.parametrize(
    "reason", [NakReason.MOVE_GAP, NakReason.STOPPED, NakReason.BUSY], ids=lambda r: r.name
)
def test_moves_refused_for_ever_despite_the_ident_end_the_execution(reason: NakReason) -> None:
    """A firmware that refuses every MOVES frame with a reason a new session should cure, while
    the IDENT of each new session says it takes moves: the host re-opened the session about 33
    times a second for ever and the execution never ended."""

    class Refusing(MemoryFirmware):
        def _accept(self, message: Message) -> tuple[NakReason, int] | None:
            if isinstance(message, Moves):
                return reason, self.last_received + 1
            return super()._accept(message)

    driver = Driver(Refusing(queue_depth=16))
    driver.open()
    execution = driver.execute(MOVES[:2])
    for _ in range(2000):
        if execution.done:
            break
        driver.step()
    assert execution.done, f"still running after {driver.sessions} sessions"
    assert driver.sessions <= 10
    error = execution.error
    assert isinstance(error, FirmwareContradictionError)
    assert reason.name in str(error) and "mem0" in str(error) and "re-scan" in str(error)
    assert not error.report.executed and error.report.unknown  # they were sent
    assert driver.core.stats.protocol_errors == 1


def test_a_refusal_the_new_session_cures_does_not_count_against_the_next() -> None:
    """MOVE_GAP once in a while (the firmware lost its queue), each time cured by the IDENT:
    an execution as long as the host likes runs to the end."""

    class Forgetful(MemoryFirmware):
        frames = 0

        def _accept(self, message: Message) -> tuple[NakReason, int] | None:
            if isinstance(message, Moves):
                self.frames += 1
                if self.frames % 2:  # every other frame refused, the next one taken
                    return NakReason.MOVE_GAP, self.last_received + 1
            return super()._accept(message)

    driver = Driver(Forgetful(queue_depth=16))
    driver.open()
    execution = driver.execute(MOVES * 4)
    driver.run_until(lambda: execution.done)
    assert execution.error is None and len(execution.events) == len(MOVES) * 4
    assert driver.sessions > driver.config.max_retries


def test_moves_refused_while_the_firmware_says_it_homes_wait_for_the_homing() -> None:
    """BUSY from a firmware whose IDENT says HOMING is no contradiction: the moves wait, however
    many sessions the homing takes, and run once it is done."""

    class Homing(MemoryFirmware):
        refused = 0

        def _accept(self, message: Message) -> tuple[NakReason, int] | None:
            if isinstance(message, Moves) and self.refused < 30:
                self.refused += 1
                return NakReason.BUSY, self.last_received + 1
            if self.refused >= 30:
                self.state = FirmwareState.IDLE
            return super()._accept(message)

    firmware = Homing(queue_depth=16)
    firmware.state = FirmwareState.HOMING
    driver = Driver(firmware)
    driver.open()
    execution = driver.execute(MOVES[:2])
    driver.run_until(lambda: execution.done)
    assert execution.error is None and len(execution.events) == 2
    assert firmware.refused == 30 > driver.config.max_retries
