"""Property tests with a hostile firmware endpoint: an honest in-memory firmware whose line also
carries forged counters, replays of its own old frames, reordered frames and invented frames,
all with valid checksums (built with the real codec). Whatever arrives, the host never reports
a move executed that the firmware did not execute.

A forged counter here is one the host can refute: past the highest move index it could have
sent, or out of order within its report. A lie that stays within what the host sent and agrees
with every other report is indistinguishable from the truth on the line; the STATUS cross-check
of completion (``test_trust.py``) and the daemon's rescan cover that case.

``HOSTILE_EXAMPLES`` in the environment raises the number of examples (the default keeps the
suite quick); :data:`TRIED` accumulates what was tried, for the figures.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol.codec import Frame, encode_frame
from firmware_protocol.errors import FirmwareContradictionError
from firmware_protocol.messages import (
    Ack,
    ErrorCode,
    Executed,
    FirmwareState,
    Message,
    Status,
    StatusFlags,
)
from firmware_protocol.moves import Face, Move

from .memfirmware import Driver, MemoryFirmware
from .test_properties import sequences

U32 = 0xFFFFFFFF
EXAMPLES = int(os.environ.get("HOSTILE_EXAMPLES", "200"))
#: examples run, hostile frames injected, moves falsely reported executed (must stay 0)
TRIED: Counter[str] = Counter()
#: firmware → host types whose counters a forged frame sets (invented frames avoid them: a
#: random in-bounds counter would be an undetectable lie, see the module docstring)
COUNTER_TYPES = (0x82, 0x84, 0x85)


class RecordingFirmware(MemoryFirmware):
    """The honest firmware, remembering every frame it sent (for replays)."""

    def __init__(self, queue_depth: int) -> None:
        super().__init__(queue_depth=queue_depth)
        self.sent: list[bytes] = []

    def _send(self, message: Message) -> bytes:
        data = super()._send(message)
        self.sent.append(data)
        return data


@dataclass(frozen=True)
class Hostile:
    """One hostile frame: its kind, numbers to build it from, and where it goes on the line."""

    kind: str
    past: int  # how far past the last move index a forged counter is
    a: int
    b: int
    payload: bytes
    position: int

    def frame(self, firmware: RecordingFirmware, n_moves: int) -> bytes:
        forged = min(n_moves + self.past, U32)
        seq = self.a & 0xFFFF
        match self.kind:
            case "executed":
                return encode_frame(Frame(0x84, seq, Executed(forged, self.b, 0).pack()))
            case "ack":
                return encode_frame(Frame(0x82, seq, Ack(self.b & 0xFFFF, forged, 0).pack()))
            case "status":
                status = _status(firmware, forged, self.a, self.b)
                return encode_frame(Frame(0x85, seq, status.pack()))
            case "replay":
                return firmware.sent[self.a % len(firmware.sent)] if firmware.sent else b""
            case _:
                type_ = self.b & 0xFF
                if type_ in COUNTER_TYPES:
                    type_ ^= 0x40  # an unknown type instead
                return encode_frame(Frame(type_, seq, self.payload))


def _status(firmware: RecordingFirmware, forged: int, a: int, b: int) -> Status:
    """A STATUS of the firmware's own boot whose ``last_executed`` is forged."""
    return Status(
        boot_id=firmware.boot_id,
        state=FirmwareState(a % 3),  # IDLE, RUNNING, HOLD: not a stop
        error=ErrorCode.NONE,
        error_motor=0xFF,
        flags=StatusFlags.HOMED | StatusFlags.SESSION,
        enabled_mask=0x3F,
        queue_free=0,
        expected_seq=firmware.expected_seq,
        last_received=b & U32,
        started_upto=(a * 7919) & U32,
        last_executed=forged,
        uptime_ms=0,
    )


hostile_frames = st.builds(
    Hostile,
    kind=st.sampled_from(["executed", "ack", "status", "replay", "invent"]),
    past=st.one_of(st.integers(1, 4), st.integers(1, U32), st.just(0xFFFFFF00)),
    a=st.integers(0, U32),
    b=st.integers(0, U32),
    payload=st.sampled_from([0, 1, 7, 8, 9, 28, 31, 40]).flatmap(
        lambda n: st.binary(min_size=n, max_size=n)
    ),
    position=st.integers(0, 8),
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    moves=sequences(12),
    attack=st.lists(st.tuples(st.integers(0, 40), hostile_frames), min_size=1, max_size=25),
    chaos=st.lists(st.integers(0, 255), max_size=150),
    queue_depth=st.integers(2, 6),
    seed=st.integers(0, 2**16),
)
def test_no_move_is_reported_executed_that_the_firmware_did_not_execute(
    moves: list[Move],
    attack: list[tuple[int, Hostile]],
    chaos: list[int],
    queue_depth: int,
    seed: int,
) -> None:
    firmware = RecordingFirmware(queue_depth)
    driver = Driver(firmware, seed=seed)
    driver.open()
    execution = driver.execute(moves)
    schedule: dict[int, list[Hostile]] = {}
    step = 0
    for gap, hostile in attack:
        step += gap
        schedule.setdefault(step, []).append(hostile)
    for k in range(max(step + 1, len(chaos))):
        for hostile in schedule.get(k, []):
            lane = driver.wire.to_host
            lane.insert(hostile.position % (len(lane) + 1), hostile.frame(firmware, len(moves)))
            TRIED["hostile frames"] += 1
        driver.step(chaos[k] if k < len(chaos) else None)
    driver.run_until(lambda: execution.done)
    for _ in range(100):  # late reports after the end change nothing
        driver.step()

    done_by_firmware = {m.index for m in firmware.executed_log}
    false = [e for e in driver.events if e.index not in done_by_firmware]
    TRIED["examples"] += 1
    TRIED["false executed"] += len(false)
    assert false == []
    assert [e.index for e in execution.events] == list(
        range(execution.base or 1, (execution.base or 1) + len(execution.events))
    )
    if execution.error is None:
        assert sorted(done_by_firmware) == list(range(1, len(moves) + 1))
        return
    TRIED[type(execution.error).__name__] += 1
    assert {e.index for e in execution.error.report.executed} <= done_by_firmware


def test_the_forged_frame_of_the_report_fails_the_execution_with_known_moves_only() -> None:
    """The case from the issue: 3 moves run, then EXECUTED last_executed=0xFFFFFF00."""
    firmware = RecordingFirmware(queue_depth=16)
    driver = Driver(firmware)
    driver.open()
    moves = [Move(Face.R, 1, False)] * 23
    execution = driver.execute(moves)
    driver.run_until(lambda: len(driver.events) >= 3)
    attack = Hostile("executed", 0xFFFFFF00 - 23, 0, 0xFFFFFF00, b"", 0)
    driver.wire.to_host.insert(0, attack.frame(firmware, 23))
    driver.run_until(lambda: execution.done)
    error = execution.error
    assert isinstance(error, FirmwareContradictionError)
    assert len(error.report.executed) <= len(firmware.executed_log) < 23
    assert (
        len(error.report.executed) + len(error.report.unknown) + len(error.report.not_executed)
        == 23
    )
    assert driver.core.stats.protocol_errors == 1
