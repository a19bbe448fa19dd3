"""An in-process rig: the simulated firmware on a real pty, a :class:`FirmwareLink` to it, and the
checks that prove exactly-once execution. Used by the tests, ``bench/link.py`` and demos.

:func:`simulated_link` starts firmware + pty endpoint + link in the running loop.
:func:`soak_run` executes one seeded random move stream through injected faults, continues after
resets the way a daemon would (acknowledge, resend what did not execute) and compares, move by
move, what the firmware executed with what the host was told. :func:`overhead_run` measures
the link's time overhead over the pure motor time and the host-caused gaps between moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from firmware_protocol.errors import ExecutionError, FirmwareResetError
from firmware_protocol.link import FirmwareLink, LinkConfig, MoveExecuted
from firmware_protocol.moves import Move, opposite
from firmware_protocol.sim.board import FirmwareConfig, MoveRecord, TurnableCube
from firmware_protocol.sim.endpoints import PtyEndpoint
from firmware_protocol.sim.faults import FaultSpec
from firmware_protocol.sim.firmware import SimulatedFirmware
from firmware_protocol.sim.motors import group_time_s

__all__ = [
    "OverheadResult",
    "SoakResult",
    "check_execution",
    "motor_time_s",
    "overhead_run",
    "random_moves",
    "simulated_link",
    "soak_run",
]

logger = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def simulated_link(
    *,
    faults: FaultSpec | None = None,
    seed: int = 0,
    config: FirmwareConfig | None = None,
    link_config: LinkConfig | None = None,
    cube: TurnableCube | None = None,
    baud: int = 115200,
    connect: bool = True,
) -> AsyncIterator[tuple[SimulatedFirmware, PtyEndpoint, FirmwareLink]]:
    """Firmware on a pty, and a link to it (connected unless ``connect=False``)."""
    config = config or FirmwareConfig()
    firmware = SimulatedFirmware(cube=cube, config=config, faults=faults, seed=seed, baud=baud)
    await firmware.start()
    endpoint = PtyEndpoint(firmware)
    path = await endpoint.start()
    link = FirmwareLink(path, config=link_config or LinkConfig(baudrate=baud))
    try:
        if connect:
            await asyncio.sleep(config.boot_time_s)  # let it boot: HELLOs before are lost
            await link.connect()
        yield firmware, endpoint, link
    finally:
        await link.close()
        await endpoint.close()
        await firmware.stop()


def random_moves(rng: random.Random, count: int, pair_probability: float = 0.15) -> list[Move]:
    """``count`` random valid moves; some consecutive opposite-face pairs run simultaneously."""
    moves: list[Move] = []
    while len(moves) < count:
        motor = rng.randrange(6)
        turns = rng.choice((-2, -1, 1, 2))
        if len(moves) + 2 <= count and rng.random() < pair_probability:
            moves.append(Move(motor, turns, simultaneous_with_next=True))
            moves.append(Move(opposite(motor), rng.choice((-2, -1, 1, 2))))
        else:
            moves.append(Move(motor, turns))
    return moves


def motor_time_s(config: FirmwareConfig, records: Sequence[MoveRecord]) -> float:
    """Sum of the motor times of the groups in ``records`` (simultaneous moves counted once)."""
    total = 0.0
    seen: set[float] = set()
    for record in records:
        if record.started_at is None or record.started_at in seen:
            continue
        seen.add(record.started_at)
        group = [r for r in records if r.started_at == record.started_at]
        total += group_time_s(config.motors, [(r.motor, r.quarter_turns) for r in group])
    return total


@dataclass
class SoakResult:
    """One soak run, compared move by move."""

    seed: int
    moves: int
    executed: int = 0
    lost: int = 0  # the host was told a move executed, or it should have and never did
    duplicated: int = 0  # the firmware executed a move index twice
    wrong: int = 0  # executed something not asked, out of order, or not reported to the host
    resets: int = 0
    resets_reported_exactly: int = 0
    cube_matches: bool = True
    elapsed_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            not (self.lost or self.duplicated or self.wrong)
            and self.resets == self.resets_reported_exactly
            and self.cube_matches
            and self.executed == self.moves
        )


def check_execution(
    requested: Sequence[Move],
    host_events: Sequence[MoveExecuted],
    records: Sequence[MoveRecord],
    base: int,
) -> tuple[int, int, int, list[str]]:
    """Compare one execution: ``(lost, duplicated, wrong, problems)``.

    ``records`` are the firmware's records for indices ``base .. base + len(requested) − 1``.
    """
    problems: list[str] = []
    lost = duplicated = wrong = 0
    executed = [r for r in records if r.outcome == "executed"]
    executed.sort(key=lambda r: (r.finished_at or 0.0, r.index))
    seen: set[int] = set()
    last = base - 1
    for record in executed:
        position = record.index - base
        if record.index in seen:
            duplicated += 1
            problems.append(f"index {record.index} executed twice")
            continue
        seen.add(record.index)
        if not 0 <= position < len(requested):
            wrong += 1
            problems.append(f"index {record.index} executed but never requested")
            continue
        want = requested[position]
        if (record.motor, record.quarter_turns) != (want.motor, want.quarter_turns):
            wrong += 1
            problems.append(f"index {record.index}: executed {record.motor}/{record.quarter_turns}")
        if record.index < last:
            wrong += 1
            problems.append(f"index {record.index} executed after {last}")
        last = max(last, record.index)
    reported = {e.index for e in host_events}
    for event in host_events:
        if event.index not in seen:
            lost += 1
            problems.append(f"host told index {event.index} executed; firmware never did")
    for index in seen - reported:
        wrong += 1
        problems.append(f"index {index} executed but the host was not told")
    return lost, duplicated, wrong, problems


async def soak_run(
    seed: int,
    *,
    max_moves: int = 60,
    flip: float = 1e-3,
    drop: float = 2e-4,
    dup: float = 0.005,
    delay: float = 0.01,
    delay_ms: float = 20.0,
    reset_probability: float = 0.2,
    vanish_probability: float = 0.03,
    speed: float = 50.0,
    baud: int = 115200,
    cube_factory: Callable[[], TurnableCube] | None = None,
    expected_facelets: Callable[[Sequence[Move]], str] | None = None,
) -> SoakResult:
    """One seeded run of a random-length move stream through injected faults.

    After a :class:`FirmwareResetError` the report is checked against the firmware's own records
    (it must name exactly the executed and interrupted moves), then the reset is acknowledged
    and the moves that did not execute are sent again, until all have executed.
    """
    rng = random.Random(seed)
    count = rng.randint(1, max_moves)
    moves = random_moves(rng, count)
    resets = frozenset({rng.randint(1, count)} if rng.random() < reset_probability else set())
    vanish = frozenset(
        {(rng.randint(1, count), rng.uniform(50, 300))}
        if rng.random() < vanish_probability
        else set()
    )
    faults = FaultSpec(
        flip=flip,
        drop=drop,
        dup=dup,
        delay=delay,
        delay_ms=delay_ms,
        resets=resets,
        vanish=vanish,
    )
    config = FirmwareConfig(boot_time_s=0.01).with_speed(speed)
    result = SoakResult(seed=seed, moves=count)
    cube = cube_factory() if cube_factory is not None else None
    loop = asyncio.get_running_loop()
    began = loop.time()
    done_moves: list[Move] = []
    async with simulated_link(faults=faults, seed=seed, config=config, cube=cube, baud=baud) as (
        firmware,
        _,
        link,
    ):
        remaining = list(moves)
        for _round in range(8):
            if not remaining:
                break
            execution = link.execute(remaining)
            try:
                await execution.wait()
            except FirmwareResetError as err:
                result.resets += 1
                report = err.report
                base = execution.base or 0
                fw = {r.index: r.outcome for r in firmware.records if r.index >= base}
                fw_executed = sorted(i for i, o in fw.items() if o == "executed")
                fw_interrupted = sorted(i for i, o in fw.items() if o == "interrupted")
                if [e.index for e in report.executed] == fw_executed and [
                    p.index for p in report.interrupted
                ] == fw_interrupted:
                    result.resets_reported_exactly += 1
                else:
                    result.problems.append(
                        f"reset report {[e.index for e in report.executed]} / "
                        f"{[p.index for p in report.interrupted]} but firmware "
                        f"{fw_executed} / {fw_interrupted}"
                    )
                link.acknowledge_reset()
            except ExecutionError as err:
                result.problems.append(f"{type(err).__name__}: {err}")
            assert execution.base is not None
            records = [
                r
                for r in firmware.records
                if execution.base <= r.index < execution.base + len(execution.moves)
            ]
            lost, duplicated, wrong, problems = check_execution(
                execution.moves, execution.events, records, execution.base
            )
            result.lost += lost
            result.duplicated += duplicated
            result.wrong += wrong
            result.problems += problems
            done_moves += [e.move for e in execution.events]
            result.executed += len(execution.events)
            remaining = remaining[len(execution.events) :]
        if remaining:
            result.lost += len(remaining)
            result.problems.append(f"{len(remaining)} moves never executed")
        if cube is not None and expected_facelets is not None:
            result.cube_matches = cube.facelets() == expected_facelets(done_moves)
            if not result.cube_matches:
                result.problems.append("virtual cube differs from the host's belief")
        strays = [r for r in firmware.records if r.outcome == "queued"]
        if strays:
            result.wrong += len(strays)
            result.problems.append(f"{len(strays)} moves left queued in the firmware")
    result.elapsed_s = loop.time() - began
    return result


@dataclass
class OverheadResult:
    moves: int
    elapsed_s: float  # execute() called → last MoveExecuted received
    motor_s: float  # sum of motor group times (the physical minimum)
    host_gap_max_s: float  # longest time the motors waited for the host between two groups

    @property
    def overhead_pct(self) -> float:
        return 100.0 * (self.elapsed_s - self.motor_s) / self.motor_s


async def overhead_run(
    moves: Sequence[Move],
    *,
    baud: int = 115200,
    config: FirmwareConfig | None = None,
) -> OverheadResult:
    """Execute ``moves`` on a fault-free simulated firmware with realistic motor timing."""
    config = config or FirmwareConfig()
    loop = asyncio.get_running_loop()
    async with simulated_link(config=config, baud=baud, link_config=LinkConfig(baudrate=baud)) as (
        firmware,
        _,
        link,
    ):
        await asyncio.sleep(0.05)  # let the session settle (first STATUS)
        began = loop.time()
        events = await link.execute(list(moves)).wait()
        elapsed = events[-1].at - began if events else 0.0
        records = [r for r in firmware.records if r.outcome == "executed"]
        starts = sorted({r.started_at for r in records if r.started_at is not None})
        ends = sorted({r.finished_at for r in records if r.finished_at is not None})
        gaps = [max(0.0, s - e) for s, e in zip(starts[1:], ends[:-1], strict=False)]
        return OverheadResult(
            moves=len(events),
            elapsed_s=elapsed,
            motor_s=motor_time_s(config, records),
            host_gap_max_s=max(gaps, default=0.0),
        )
