"""The simulated firmware against PROTOCOL.md, driven frame by frame by a scripted host."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest

from firmware_protocol.codec import Frame, FrameDecoder
from firmware_protocol.codes import move_flags
from firmware_protocol.messages import (
    Ack,
    Clear,
    Enable,
    ErrorCode,
    ErrorReport,
    EStop,
    Executed,
    FirmwareState,
    Heartbeat,
    Hello,
    Hold,
    Home,
    Ident,
    Message,
    MoveFlags,
    Moves,
    Nak,
    NakReason,
    Resume,
    Status,
    StatusFlags,
    StatusRequest,
    WireMove,
    encode_message,
    parse_message,
)
from firmware_protocol.sim import FirmwareConfig, NonVolatile, SimulatedFirmware
from firmware_protocol.sim.faults import FaultSpec

from ..helpers import RecordingCube, run

M = TypeVar("M", bound=Message)

FAST = FirmwareConfig(boot_time_s=0.005, status_period_s=5.0).with_speed(20)  # ~5 ms a turn


class ScriptedHost:
    """Writes frames straight into the firmware's line, collects what it answers."""

    def __init__(self, firmware: SimulatedFirmware) -> None:
        self.firmware = firmware
        self.decoder = FrameDecoder()
        self.inbox: list[Message] = []
        firmware.port_attached(self._receive, None)

    def _receive(self, data: bytes) -> None:
        for item in self.decoder.feed(data):
            assert isinstance(item, Frame), item
            self.inbox.append(parse_message(item))

    def send(self, message: Message, seq: int = 0) -> None:
        self.firmware.port_bytes(encode_message(message, seq))

    def send_raw(self, data: bytes) -> None:
        self.firmware.port_bytes(data)

    async def expect(
        self, kind: type[M], where: Callable[[M], bool] = lambda m: True, timeout: float = 5.0
    ) -> M:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for i, message in enumerate(self.inbox):
                if isinstance(message, kind) and where(message):
                    del self.inbox[: i + 1]
                    return message
            if loop.time() > deadline:
                raise AssertionError(f"no {kind.__name__} within {timeout} s; got {self.inbox}")
            await asyncio.sleep(0.002)

    async def hello(self, seq: int = 100, nonce: int = 77, watchdog_ms: int = 0) -> Ident:
        self.send(Hello(nonce, watchdog_ms), seq)
        return await self.expect(Ident, lambda m: m.nonce == nonce)


async def booted(
    config: FirmwareConfig = FAST, **kwargs: object
) -> tuple[SimulatedFirmware, ScriptedHost, RecordingCube]:
    cube = RecordingCube()
    firmware = SimulatedFirmware(cube=cube, config=config, baud=0, **kwargs)  # type: ignore[arg-type]
    await firmware.start()
    host = ScriptedHost(firmware)
    announcement = await host.expect(Ident)
    assert announcement.nonce == 0 and announcement.boot_id == firmware.boot_id
    return firmware, host, cube


def moves(first: int, *turns: tuple[int, int], pair_at: int | None = None) -> Moves:
    out = []
    for k, (motor, quarter) in enumerate(turns):
        flags = MoveFlags.SIMULTANEOUS_WITH_NEXT if pair_at == k else MoveFlags.NONE
        out.append(WireMove(first + k, motor, quarter, flags))
    return Moves(tuple(out))


def test_hello_opens_a_session_and_moves_execute_in_order() -> None:
    async def scenario() -> None:
        firmware, host, cube = await booted()
        ident = await host.hello(seq=100)
        assert (ident.last_received, ident.state, ident.queue_depth) == (0, FirmwareState.IDLE, 16)
        host.send(moves(1, (1, 1), (0, -1), (3, 2), pair_at=1), seq=101)
        ack = await host.expect(Ack)
        assert (ack.seq, ack.last_received) == (101, 3)
        done = await host.expect(Executed, lambda m: m.last_executed == 3)
        assert done.started_upto == 3
        assert cube.turns == [("R", 1), ("U", -1), ("D", 2)]
        r, u, d = firmware.records
        assert u.started_at == d.started_at and u.finished_at == d.finished_at  # overlapped
        assert r.finished_at is not None and u.started_at is not None
        assert u.started_at >= r.finished_at
        await firmware.stop()

    run(scenario())


def test_duplicate_and_out_of_order_frames() -> None:
    async def scenario() -> None:
        firmware, host, cube = await booted()
        await host.hello(seq=10)
        frame = moves(1, (0, 1))
        host.send(frame, seq=11)
        assert (await host.expect(Ack)).seq == 11
        host.send(frame, seq=11)  # a retransmission after a lost ACK
        assert (await host.expect(Ack)).seq == 11
        host.send(moves(2, (1, 1)), seq=13)  # 12 was lost
        nak = await host.expect(Nak)
        assert (nak.reason, nak.seq) == (NakReason.SEQ_GAP, 12)
        host.send_raw(b"\x05\x01\x02\x03\x04\x00")  # line noise, in the NAK hold-off:
        await asyncio.sleep(0.005)
        assert not any(isinstance(m, Nak) for m in host.inbox)  # one NAK per 20 ms
        await asyncio.sleep(0.03)
        host.send_raw(b"\x05\x01\x02\x03\x04\x00")
        nak = await host.expect(Nak)
        assert (nak.reason, nak.seq) == (NakReason.CORRUPT, 12)
        host.send(moves(2, (1, 1)), seq=12)
        host.send(moves(3, (2, 1)), seq=13)
        assert (await host.expect(Ack, lambda m: m.seq == 13)).last_received == 3
        await host.expect(Executed, lambda m: m.last_executed == 3)
        assert cube.turns == [("U", 1), ("R", 1), ("F", 1)]
        assert [r.index for r in firmware.records] == [1, 2, 3]
        await firmware.stop()

    run(scenario())


def test_move_indices_deduplicate_across_sessions() -> None:
    async def scenario() -> None:
        firmware, host, cube = await booted()
        await host.hello(seq=10, nonce=1)
        host.send(moves(1, (0, 1), (1, 1)), seq=11)
        await host.expect(Ack)
        ident = await host.hello(seq=50, nonce=2)  # e.g. after a reconnect
        assert ident.last_received == 2
        host.send(moves(1, (0, 1), (1, 1), (2, 1)), seq=51)  # overlaps what it already has
        assert (await host.expect(Ack)).last_received == 3
        host.send(moves(5, (3, 1)), seq=52)  # skips index 4
        nak = await host.expect(Nak)
        assert (nak.reason, nak.seq, nak.detail) == (NakReason.MOVE_GAP, 52, 4)
        await host.expect(Executed, lambda m: m.last_executed == 3)
        assert cube.turns == [("U", 1), ("R", 1), ("F", 1)]
        await firmware.stop()

    run(scenario())


def test_same_nonce_hello_keeps_the_session() -> None:
    async def scenario() -> None:
        firmware, host, _ = await booted()
        await host.hello(seq=10, nonce=5)
        host.send(Home(), seq=11)
        await host.expect(Ack)
        await host.hello(seq=10, nonce=5)  # a delayed duplicate HELLO
        host.send(Home(), seq=11)  # ... must not make 11 new again
        ack = await host.expect(Ack)
        assert ack.seq == 11
        assert firmware.state is FirmwareState.HOMING
        await firmware.stop()

    run(scenario())


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        pytest.param(moves(1, (0, 1), pair_at=0), NakReason.BAD_GROUP, id="open-group"),
        pytest.param(moves(1, (0, 1), (1, 1), pair_at=0), NakReason.BAD_GROUP, id="adjacent"),
        pytest.param(moves(1, *[(0, 1)] * 17), NakReason.BAD_PAYLOAD, id="over-max-batch"),
    ],
)
def test_refused_moves(frame: Moves, reason: NakReason) -> None:
    async def scenario() -> None:
        firmware, host, _ = await booted()
        await host.hello(seq=10)
        host.send(frame, seq=11)
        nak = await host.expect(Nak)
        assert (nak.reason, nak.seq) == (reason, 11)
        assert firmware.records == []
        host.send(moves(1, (0, 1)), seq=11)  # the refused frame was not consumed
        assert (await host.expect(Ack)).seq == 11
        await firmware.stop()

    run(scenario())


def test_queue_full_and_disabled_motor() -> None:
    async def scenario() -> None:
        slow = FirmwareConfig(boot_time_s=0.005, queue_depth=4, status_period_s=5.0)
        firmware, host, _ = await booted(slow)
        await host.hello(seq=10)
        host.send(moves(1, *[(0, 1)] * 4), seq=11)  # move 1 starts, 3 queued
        await host.expect(Ack)
        host.send(moves(5, (0, 1), (0, 1)), seq=12)  # only one slot free
        nak = await host.expect(Nak)
        assert (nak.reason, nak.detail) == (NakReason.QUEUE_FULL, 1)
        host.send(EStop())
        await host.expect(Status, lambda s: s.state is FirmwareState.STOPPED)
        host.send(Clear(), seq=12)
        await host.expect(Ack)
        host.send(Enable(0x3E), seq=13)  # release U
        await host.expect(Ack)
        host.send(moves(2, (0, 1)), seq=14)
        nak = await host.expect(Nak)
        assert nak.reason is NakReason.BAD_MOVE
        await firmware.stop()

    run(scenario())


def test_no_session_answers() -> None:
    async def scenario() -> None:
        firmware, host, _ = await booted()
        host.send(moves(1, (0, 1)), seq=3)
        assert (await host.expect(Nak)).reason is NakReason.NO_SESSION
        host.send(Heartbeat())
        assert (await host.expect(Nak)).reason is NakReason.NO_SESSION
        host.send(StatusRequest())  # realtime works without a session
        status = await host.expect(Status)
        assert not status.flags & StatusFlags.SESSION
        await firmware.stop()

    run(scenario())


def test_estop_interrupts_flushes_and_latches() -> None:
    async def scenario() -> None:
        config = FirmwareConfig(boot_time_s=0.005, status_period_s=5.0)  # ~100 ms a turn
        firmware, host, cube = await booted(config)
        await host.hello(seq=10)
        host.send(moves(1, (0, 1), (1, 1), (2, 1)), seq=11)
        await host.expect(Ack)
        await asyncio.sleep(0.03)
        host.send(EStop())
        report = await host.expect(ErrorReport)  # ERROR first, then the STATUS answering ESTOP
        assert (report.code, report.move_index) == (ErrorCode.ESTOP, 1)
        status = await host.expect(Status, lambda s: s.state is FirmwareState.STOPPED)
        assert status.error is ErrorCode.ESTOP
        assert (status.last_executed, status.started_upto, status.last_received) == (0, 1, 1)
        assert [r.outcome for r in firmware.records] == ["interrupted", "discarded", "discarded"]
        assert cube.turns == []
        host.send(moves(2, (1, 1)), seq=12)
        assert (await host.expect(Nak)).reason is NakReason.STOPPED
        host.send(Home(), seq=12)
        await host.expect(Ack)
        homed = await host.expect(Status, lambda s: s.state is FirmwareState.IDLE, timeout=2)
        assert homed.flags & StatusFlags.HOMED and homed.error is ErrorCode.NONE
        host.send(moves(2, (1, 1)), seq=13)
        await host.expect(Executed, lambda m: m.last_executed == 2)
        assert cube.turns == [("R", 1)]
        await firmware.stop()

    run(scenario())


def test_reset_keeps_counters_and_changes_boot_id() -> None:
    async def scenario() -> None:
        nv = NonVolatile()
        config = FirmwareConfig(boot_time_s=0.005, status_period_s=5.0).with_speed(2)
        firmware, host, cube = await booted(config, nv=nv, faults=FaultSpec(resets=frozenset({3})))
        old_boot = firmware.boot_id
        await host.hello(seq=10)
        host.send(moves(1, (0, 1), (1, 1), (2, 1), (3, 1), (4, 1)), seq=11)
        await host.expect(Ack)
        ident = await host.expect(Ident, lambda m: m.nonce == 0, timeout=2)
        assert ident.boot_id != old_boot
        assert (ident.last_executed, ident.started_upto, ident.last_received) == (2, 3, 3)
        assert cube.turns == [("U", 1), ("R", 1)]
        assert [r.outcome for r in firmware.records] == [
            "executed",
            "executed",
            "interrupted",
            "discarded",
            "discarded",
        ]
        host.send(moves(4, (3, 1)), seq=12)  # the old session is gone
        assert (await host.expect(Nak)).reason is NakReason.NO_SESSION
        ident = await host.hello(seq=20, nonce=9)
        assert ident.last_received == 3
        await firmware.stop()

    run(scenario())


def test_stall_reports_fault() -> None:
    async def scenario() -> None:
        firmware, host, cube = await booted(faults=FaultSpec(stalls=frozenset({(1, 2)})))
        await host.hello(seq=10)
        host.send(moves(1, (0, 1), (1, 1), (2, 1)), seq=11)
        report = await host.expect(ErrorReport)
        assert (report.code, report.motor, report.move_index) == (ErrorCode.STALL, 1, 2)
        status = await host.expect(Status, lambda s: s.state is FirmwareState.FAULT)
        assert (status.error_motor, status.last_executed, status.started_upto) == (1, 1, 2)
        assert cube.turns == [("U", 1)]
        await firmware.stop()

    run(scenario())


def test_watchdog_finishes_the_group_then_stops() -> None:
    async def scenario() -> None:
        config = FirmwareConfig(boot_time_s=0.005, status_period_s=5.0)  # ~100 ms a turn
        firmware, host, cube = await booted(config)
        await host.hello(seq=10, watchdog_ms=40)
        host.send(moves(1, (0, 1), (1, 1), (2, 1)), seq=11)
        await host.expect(Ack)
        report = await host.expect(ErrorReport, timeout=1)  # host went quiet
        assert report.code is ErrorCode.WATCHDOG
        status = await host.expect(Status, lambda s: s.state is FirmwareState.STOPPED, timeout=1)
        assert status.error is ErrorCode.WATCHDOG
        assert (status.last_executed, status.started_upto, status.last_received) == (1, 1, 1)
        assert cube.turns == [("U", 1)]  # the group in progress finished
        await firmware.stop()

    run(scenario())


def test_watchdog_while_idle_only_closes_the_session() -> None:
    async def scenario() -> None:
        firmware, host, _ = await booted()
        await host.hello(seq=10, watchdog_ms=30)
        await asyncio.sleep(0.1)
        assert firmware.state is FirmwareState.IDLE
        host.send(Heartbeat())
        assert (await host.expect(Nak)).reason is NakReason.NO_SESSION
        await firmware.stop()

    run(scenario())


def test_hold_and_resume() -> None:
    async def scenario() -> None:
        config = FirmwareConfig(boot_time_s=0.005, status_period_s=5.0).with_speed(4)
        firmware, host, cube = await booted(config)
        await host.hello(seq=10)
        host.send(moves(1, (0, 1), (1, 1), (2, 1)), seq=11)
        await host.expect(Ack)
        host.send(Hold())
        await host.expect(Status, lambda s: bool(s.flags & StatusFlags.HOLD_REQUESTED))
        held = await host.expect(Status, lambda s: s.state is FirmwareState.HOLD)
        assert held.last_executed == 1
        await asyncio.sleep(0.1)
        assert len(cube.turns) == 1
        host.send(Resume())
        await host.expect(Executed, lambda m: m.last_executed == 3)
        assert len(cube.turns) == 3
        await firmware.stop()

    run(scenario())


def test_state_file_follows_every_move(tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        state = tmp_path / "cube.txt"
        # ~400 ms a turn: the file is read between the two turns even on a loaded machine
        # (at ~5 ms a turn the second turn could be done before the host looked)
        slow = FirmwareConfig(boot_time_s=0.005, status_period_s=5.0).with_speed(0.25)
        firmware, host, _ = await booted(slow, state_file=state)
        seen = [state.read_text()]
        await host.hello(seq=10)
        host.send(moves(1, (0, 1), (1, -1)), seq=11)
        await host.expect(Executed, lambda m: m.last_executed == 1)
        seen.append(state.read_text())
        await host.expect(Executed, lambda m: m.last_executed == 2)
        seen.append(state.read_text())
        await firmware.stop()
        return seen

    assert run(scenario()) == ["\n", "U+1\n", "U+1 R-1\n"]


def test_a_state_file_that_cannot_be_written_does_not_stop_the_moves(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        folder = tmp_path / "gone"
        folder.mkdir()
        firmware, host, _ = await booted(state_file=folder / "cube.txt")
        for name in os.listdir(folder):
            (folder / name).unlink()
        folder.rmdir()  # the folder vanishes while the firmware runs
        await host.hello(seq=10)
        host.send(moves(1, (0, 1)), seq=11)
        await host.expect(Executed, lambda m: m.last_executed == 1)
        await firmware.stop()

    run(scenario())
    assert "cannot write the state file" in caplog.text


def test_estop_in_the_same_instant_as_completion_counts_as_interrupted() -> None:
    """The completion timer and the ESTOP land in one loop iteration: the moves must not be
    both reported interrupted (STATUS) and then executed (EXECUTED)."""

    async def scenario() -> None:
        firmware, host, cube = await booted()
        await host.hello(seq=10)
        host.send(moves(1, (0, 1)), seq=11)
        await host.expect(Ack)
        while firmware._group is None:
            await asyncio.sleep(0)
        group = firmware._group
        firmware._group_done(group)  # the timer fires ...
        firmware._estop()  # ... and the ESTOP is processed before the motor task resumes
        await asyncio.sleep(0.05)
        assert [r.outcome for r in firmware.records] == ["interrupted"]
        assert cube.turns == []
        assert (firmware.nv.last_executed, firmware.nv.started_upto) == (0, 1)
        assert not any(isinstance(m, Executed) for m in host.inbox)
        await firmware.stop()

    run(scenario())


def test_depth_moves_turn_that_many_layers_up_to_the_configured_grip() -> None:
    """A board whose grippers hold 3 layers runs depths 1..3 and hands each to the cube; a
    depth of 4 is refused whole with NAK BAD_MOVE (detail: that move's index); a board of
    the default configuration (no depth actuator) refuses any depth above 1 the same way."""

    async def scenario() -> None:
        deep = replace(FAST, max_depth=3)
        firmware, host, cube = await booted(deep)
        await host.hello(seq=20)
        depths = [
            WireMove(1, 1, 1, move_flags(depth=2)),
            WireMove(2, 4, -1, move_flags(depth=3, simultaneous_with_next=True)),
            WireMove(3, 1, 2, move_flags(depth=1)),
        ]
        host.send(Moves(tuple(depths)), seq=21)
        await host.expect(Executed, lambda m: m.last_executed == 3)
        assert cube.turns == [("R", 1), ("L", -1), ("R", 2)] and cube.depths == [2, 3, 1]
        assert [r.depth for r in firmware.records] == [2, 3, 1]
        host.send(Moves((WireMove(4, 0, 1), WireMove(5, 2, 1, move_flags(depth=4)))), seq=22)
        nak = await host.expect(Nak)
        assert (nak.reason, nak.detail) == (NakReason.BAD_MOVE, 5)
        assert len(firmware.records) == 3  # nothing of the refused frame was queued
        await firmware.stop()

        firmware, host, cube = await booted()
        await host.hello(seq=30)
        host.send(Moves((WireMove(1, 0, 1, move_flags(depth=2)),)), seq=31)
        nak = await host.expect(Nak)
        assert (nak.reason, nak.detail) == (NakReason.BAD_MOVE, 1) and cube.turns == []
        await firmware.stop()

    run(scenario())
