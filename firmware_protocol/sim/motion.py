"""The motor side of the simulated board: the move queue, groups of moves on the motors with
their timing, stops (e-stop, stall, watchdog), scheduled faults, and the cube the moves turn.

:class:`MotionControl` is the base of :class:`~firmware_protocol.sim.firmware.SimulatedFirmware`,
which adds the protocol side (frames, sessions, replies) and supplies :meth:`_send`,
:meth:`_status` and :meth:`reset`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from firmware_protocol.messages import (
    ErrorCode,
    ErrorReport,
    Executed,
    FirmwareState,
    Message,
    Status,
    WireMove,
)
from firmware_protocol.moves import Face
from firmware_protocol.sim.board import (
    NO_MOTOR,
    FirmwareConfig,
    MoveRecord,
    NonVolatile,
    PortControl,
    TurnableCube,
)
from firmware_protocol.sim.faults import FaultSpec
from firmware_protocol.sim.motors import group_time_s

__all__ = ["MotionControl"]

logger = logging.getLogger(__name__)


@dataclass
class _Group:
    moves: list[WireMove]
    records: list[MoveRecord]
    done: asyncio.Future[bool]
    time_s: float
    handles: list[asyncio.TimerHandle] = field(default_factory=list)


class MotionControl(ABC):
    """Queue, motors, stops and faults of the simulated board."""

    def __init__(
        self,
        *,
        cube: TurnableCube | None,
        config: FirmwareConfig,
        faults: FaultSpec,
        state_file: Path | None,
        nv: NonVolatile,
    ) -> None:
        self.cube = cube
        self.config = config
        self.faults = faults
        self.state_file = state_file
        self.nv = nv
        self._control: PortControl | None = None
        self._fired: set[tuple[str, int]] = set()
        self.state = FirmwareState.IDLE
        self.error = ErrorCode.NONE
        self._error_motor = NO_MOTOR
        self._queue: deque[tuple[WireMove, MoveRecord]] = deque()
        self._group: _Group | None = None
        self._hold = False
        self._stop_after_group = False
        self._home_handle: asyncio.TimerHandle | None = None
        self._wake = asyncio.Event()
        self._motor_free_at = 0.0
        #: Every move received, in order, with its fate (for tests and benchmarks).
        self.records: list[MoveRecord] = []

    @abstractmethod
    def _send(self, message: Message) -> None:
        """Send ``message`` to the host."""

    @abstractmethod
    def _status(self) -> Status:
        """The STATUS the firmware would report now."""

    @abstractmethod
    def reset(self, wipe: bool = False) -> None:
        """Reset the board (the ``reset@K`` fault; ``wipe``: its non-volatile memory is lost
        too, the ``wipe@K`` fault)."""

    def _estop(self) -> None:
        if self._home_handle is not None:
            self._home_handle.cancel()
            self._home_handle = None
        if self.state is FirmwareState.STOPPED and self.error is ErrorCode.ESTOP:
            return  # ESTOP is repeated until the host sees STOPPED: idempotent
        logger.info("emergency stop")
        index = self._group.moves[0].index if self._group is not None else 0
        self._stop(FirmwareState.STOPPED, ErrorCode.ESTOP, NO_MOTOR, index)

    def _stop(self, state: FirmwareState, error: ErrorCode, motor: int, index: int) -> None:
        """Stop now: interrupt the group in progress, flush the queue, report ``error``."""
        self._interrupt_group()
        self._discard_queue()
        self._hold = False
        self._stop_after_group = False
        self.error = error
        self._error_motor = motor
        self.state = state
        self._send(ErrorReport(error, motor, index))

    def _interrupt_group(self) -> None:
        group = self._group
        if group is None:
            return
        for handle in group.handles:
            handle.cancel()
        for record in group.records:
            record.outcome = "interrupted"
        if not group.done.done():
            group.done.set_result(False)
        self._group = None

    def _discard_queue(self) -> None:
        for _, record in self._queue:
            record.outcome = "discarded"
        self._queue.clear()
        self.nv.last_received = self.nv.started_upto

    def _set_state(self, state: FirmwareState) -> None:
        if state is not self.state:
            self.state = state
            self._send(self._status())

    def _can_start(self) -> bool:
        return (
            self.state is FirmwareState.RUNNING
            and bool(self._queue)
            and not self._hold
            and not self._stop_after_group
        )

    async def _motor_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            self._motor_free_at = max(self._motor_free_at, loop.time())  # idle until now
            while self._can_start():
                await self._run_group()

    def _pop_group(self) -> tuple[list[WireMove], list[MoveRecord]]:
        moves: list[WireMove] = []
        records: list[MoveRecord] = []
        while self._queue:
            move, record = self._queue.popleft()
            moves.append(move)
            records.append(record)
            if not move.simultaneous_with_next:
                break
        return moves, records

    async def _run_group(self) -> None:
        loop = asyncio.get_running_loop()
        moves, records = self._pop_group()
        # The motor timeline is kept like a microcontroller's hardware timer: a group starts when
        # the previous one ends (or when its moves arrived, if later), and ends exactly
        # ``time_s`` after that; the event loop's timer lateness does not accumulate.
        now = loop.time()
        start = min(now, max(self._motor_free_at, max(r.received_at for r in records)))
        time_s = group_time_s(self.config.motors, [(m.motor, m.quarter_turns) for m in moves])
        group = _Group(moves, records, loop.create_future(), time_s)
        self._group = group
        self.nv.started_upto = moves[-1].index
        for record in records:
            record.started_at = start
            record.group_time_s = time_s
        group.handles.append(loop.call_at(start + time_s, self._group_done, group))
        self._schedule_faults(group, start)
        completed = await group.done
        if not completed or self._group is not group:
            # Interrupted (ESTOP, stall, reset) — possibly in the same loop iteration as the
            # completion timer fired: the interruption wins, the records already say so.
            self._motor_free_at = loop.time()
            return
        finished = start + time_s
        self._motor_free_at = finished
        for move, record in zip(moves, records, strict=True):
            record.finished_at = finished
            record.outcome = "executed"
            if self.cube is not None:
                self.cube.apply(Face(move.motor).name, move.quarter_turns, move.depth)
        self.nv.last_executed = moves[-1].index
        self._group = None
        if self.state_file is not None:
            self._write_state_file()
        self._send(Executed(self.nv.last_executed, self.nv.started_upto, self._queue_free()))
        if self._stop_after_group:
            self._stop_after_group = False
            self._discard_queue()
            self.error = ErrorCode.WATCHDOG
            self._set_state(FirmwareState.STOPPED)
        elif self._hold:
            self._set_state(FirmwareState.HOLD)
        elif not self._queue:
            self._set_state(FirmwareState.IDLE)

    def _group_done(self, group: _Group) -> None:
        if not group.done.done():
            group.done.set_result(True)

    def _schedule_faults(self, group: _Group, start: float) -> None:
        loop = asyncio.get_running_loop()
        half = start + group.time_s / 2
        for move in group.moves:
            if move.index in self.faults.resets and ("reset", move.index) not in self._fired:
                self._fired.add(("reset", move.index))
                group.handles.append(loop.call_at(half, self.reset))
            if move.index in self.faults.wipes and ("wipe", move.index) not in self._fired:
                self._fired.add(("wipe", move.index))
                group.handles.append(loop.call_at(half, self.reset, True))
            for motor, index in self.faults.stalls:
                if index == move.index and ("stall", index) not in self._fired:
                    self._fired.add(("stall", index))
                    group.handles.append(loop.call_at(half, self._stall, motor, index))
            for index, millis in self.faults.vanish:
                if index == move.index and ("vanish", index) not in self._fired:
                    self._fired.add(("vanish", index))
                    if self._control is not None:
                        self._control.vanish(millis / 1000.0)

    def _stall(self, motor: int, index: int) -> None:
        logger.info("motor %s stalled during move %d", Face(motor).name, index)
        self._stop(FirmwareState.FAULT, ErrorCode.STALL, motor, index)
        self._send(self._status())

    def _write_state_file(self) -> None:
        if self.cube is None or self.state_file is None:
            return
        path = self.state_file
        tmp = path.with_name(path.name + ".tmp")
        try:
            tmp.write_text(self.cube.facelets() + "\n", encoding="ascii")
            os.replace(tmp, path)
        except OSError as exc:  # the file is a side view: the moves still ran and are reported
            logger.error(
                "cannot write the state file %s: %s; the cameras reading it see an old cube",
                path,
                exc.strerror or exc,
            )

    def _queue_free(self) -> int:
        return self.config.queue_depth - len(self._queue)
