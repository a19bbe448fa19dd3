"""Benchmark: time from a valid scan to a solved cube, through the daemon and the simulated robot.

    python bench/time_to_solved.py [--states 100] [--seed 2026] [--profile simulated]
                                   [--modes 0,0.01,0.1,1,anytime] [--head-start S]
                                   [--first-step S] [--json]

Uniformly random 3x3 states (``CubieCube.random`` with the seed) are handed to the daemon as
``solve`` jobs (the state as scanned), one after the other, for each mode: a fixed solver
budget (``0``: the first solution within the length limit; ``0.01``, ``0.1``, ``1`` seconds),
or ``anytime`` (``[solver] anytime = true``: the motors start on the first solution and the
search goes on while they turn). Everything is real but the motors: the daemon with its journal
(in a temporary folder), the firmware link over a pseudo-terminal, and the simulated firmware
turning each motor with the profile's ``[motors]`` speed, acceleration and settle time (the
bundled six-motor ``simulated`` profile by default); the solver uses the robot-time objective
with the profile's cost model, as the daemon does.

Per mode (``--json``: one row each, fields :data:`FIELDS`):

* ``solved``: jobs whose executed moves (the firmware's own record) solve the state;
* ``wall_s``: from the job's submission (the valid scan) to the last motor stop, mean and
  95th percentile;
* ``motor_s``: the time the motors turned (the sum of the executed groups' times);
* ``compute_visible_ms``: the solve the robot waits for: from the job entering SOLVING (the
  state validated) to the first motor step (mean and median); ``before_motion_ms_median``
  counts from the submission (the job's creation and the given state journaled included);
* ``moves``: motor moves executed;
* ``gaps``: times the motors stood still waiting for the host between two groups of a job
  (a group whose moves arrived after the one before it had stopped); ``gap_jobs``: which
  jobs (0-based, in the order of the states) and how long each gap was (ms), to look into;
* ``refinements_mean``: anytime only, faster remainders found per job; ``joined_mean``: of
  them, those whose first turn joined the group before the state searched from (planned with
  the moves not yet sent before it);
* ``vs_best_fixed``: anytime only, its mean wall time over the best fixed budget's;
* ``head_start_ms_median``: anytime only, the head start the jobs searched for (``[solver]
  head_start_s``, or sized from ``first_step_s``);
* ``visible_breakdown_ms``: where the visible compute goes: for each of :data:`STEPS`, the
  median time from the job entering SOLVING to that step (ms; cumulative);
* ``first_search``: anytime only, the first commit and the first search during the motion
  (:class:`~robot.daemon.committer.FirstSearch`): ``commit_groups_mean`` (groups the first
  commit held), ``lead_ms_median`` (the lead time it was chosen with), ``from_first_commit``
  (jobs whose first search started from the state right after the first commit),
  ``window_ms_median`` and ``searched_ms_median`` (from its start to its deadline, and how long
  it ran), ``saved_s_mean`` (robot time it saved, a job) and ``outcomes`` (jobs by
  :class:`~robot.daemon.committer.SearchOutcome`: ``landed``, ``nothing faster``, ``too late``,
  ``dropped``, ...).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import math
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

# run as a script, bench/ comes first on sys.path and bench/vision.py would shadow the
# vision package (robot.config reads files with vision.imagefile): the checkout's root first
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _args

from firmware_protocol.link import FirmwareLink
from firmware_protocol.sim import MoveRecord
from robot.bundled import bundled_path, load_profile
from robot.config import RobotConfig
from robot.daemon import Daemon, EventName, link_config
from robot.daemon.context import Job
from robot.daemon.prepare import solver_tables
from robot.errors import ConfigError
from robot.journal_async import AsyncJournal
from robot.simrobot import SimulatedRobot
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.geometry import Face
from solver.cube.notation import Move

FIELDS = (
    "mode",
    "states",
    "solved",
    "wall_s_mean",
    "wall_s_p95",
    "motor_s_mean",
    "compute_visible_ms_mean",
    "compute_visible_ms_median",
    "before_motion_ms_median",
    "moves_mean",
    "gaps",
    "gap_jobs",
    "refinements_mean",
    "joined_mean",
    "vs_best_fixed",
    "visible_breakdown_ms",
    "first_search",
    "head_start_ms_median",
)

#: the steps from the job entering SOLVING to the first motor step, in order (the job's
#: :attr:`~robot.daemon.context.Job.marks`, then the simulated firmware's record): the head
#: start or the budgeted search handed back, the plan made, the firmware's STATUS in hand
#: (anytime; the fixed path asks for it after ``sending``), the plan journaled, the first moves
#: handed to the executor, their frames read by the firmware, its first motor step
STEPS = ("searched", "planned", "status", "journaled", "sending", "received", "first_step")

#: a group that starts more than this after the one before it stopped waited for the host
GAP_TOLERANCE_S = 0.0005


@dataclass
class JobResult:
    solved: bool
    wall_s: float
    motor_s: float
    visible_s: float
    before_motion_s: float
    moves: int
    gaps: int
    refinements: int
    #: how long the motors stood waiting for the host in each gap (ms)
    gap_ms: list[float]
    #: ms from SOLVING to each of :data:`STEPS` the job passed
    steps: dict[str, float]
    #: anytime: the first commit and search (:meth:`FirstSearch.to_dict`)
    first: dict[str, Any] | None = None
    #: anytime: refinements joined with the moves before them (:attr:`AnytimeRun.joined`)
    joined: int = 0
    #: anytime: the head start the job searched for (seconds)
    head_start_s: float | None = None


class Counter:
    """An event sink that counts ``solution_refined`` events."""

    def __init__(self) -> None:
        self.refinements = 0

    def publish_status(self, status: dict[str, Any]) -> None:
        pass

    def publish_event(self, name: str, payload: dict[str, Any], on_delivered: Any = None) -> None:
        if name == EventName.SOLUTION_REFINED:
            self.refinements += 1
        if on_delivered is not None:
            on_delivered()

    def reply(self, verb: str, payload: dict[str, Any]) -> None:
        pass


def mode_config(
    base: RobotConfig,
    mode: str,
    folder: Path,
    head_start_s: float | None = None,
    first_step_s: float | None = None,
) -> RobotConfig:
    """The profile for one mode: no cameras, MQTT off, the journal in ``folder``; anytime with
    ``head_start_s`` and ``first_step_s`` (default: the profile's; ``first_step_s`` 0: none)."""
    if mode == "anytime":
        update: dict[str, Any] = {"anytime": True}
        if head_start_s is not None:
            update["head_start_s"] = head_start_s
        if first_step_s is not None:
            update["first_step_s"] = first_step_s
    else:
        update = {"anytime": False, "budget_s": float(mode)}
    # validated as the profile's own [solver] table would be (its ranges, and first_step_s
    # above head_start_s): what the profile stated, with the mode's values on top
    solver = type(base.solver).model_validate(
        {**base.solver.model_dump(exclude_unset=True), **update}
    )
    return base.model_copy(
        update={
            "solver": solver,
            "cameras": (),
            "mqtt": base.mqtt.model_copy(update={"enabled": False}),
            "journal": base.journal.model_copy(update={"path": str(folder / f"{mode}.sqlite")}),
        }
    )


def job_result(
    start: Cube,
    records: list[MoveRecord],
    submitted: float,
    solving: float,
    refinements: int,
    marks: dict[str, int] | None = None,
) -> JobResult:
    executed = [r for r in records if r.outcome == "executed"]
    cube = start.apply([Move.outer(Face(r.motor), r.quarter_turns) for r in executed])
    groups: dict[float, list[MoveRecord]] = {}
    for r in executed:
        assert r.started_at is not None
        groups.setdefault(r.started_at, []).append(r)
    ordered = sorted(groups.items())
    gap_ms: list[float] = []
    for (_, before), (began, group) in itertools.pairwise(ordered):
        stopped = max(r.finished_at or 0.0 for r in before)
        arrived = max(r.received_at for r in group)
        if began > stopped + GAP_TOLERANCE_S and arrived > stopped:
            gap_ms.append(round(1000 * (began - stopped), 1))
    first = ordered[0][0] if ordered else submitted
    last = max((r.finished_at or 0.0 for r in executed), default=submitted)
    steps: dict[str, float] = {}
    if marks and "solving" in marks:
        # perf_counter_ns against the loop's time.monotonic(): one clock on Linux, the offset
        # measured anyway
        offset_s = time.perf_counter() - time.monotonic()
        began = marks["solving"] / 1e9 - offset_s
        steps = {s: 1000 * (marks[s] / 1e9 - offset_s - began) for s in STEPS if s in marks}
        if records:
            steps["received"] = 1000 * (min(r.received_at for r in records) - began)
        if ordered:
            steps["first_step"] = 1000 * (first - began)
    return JobResult(
        solved=cube.is_solved(),
        wall_s=last - submitted,
        motor_s=sum(g[0].group_time_s for _, g in ordered),
        visible_s=first - solving,
        before_motion_s=first - submitted,
        moves=len(executed),
        gaps=len(gap_ms),
        refinements=refinements,
        gap_ms=gap_ms,
        steps=steps,
    )


async def run_mode(
    base: RobotConfig,
    mode: str,
    cubes: list[Cube],
    folder: Path,
    head_start_s: float | None = None,
    first_step_s: float | None = None,
) -> list[JobResult]:
    config = mode_config(base, mode, folder, head_start_s, first_step_s)
    robot = SimulatedRobot(config)
    port = await robot.start()
    link = FirmwareLink(port, config=link_config(config))
    journal = AsyncJournal.open(config.resolve(config.journal.path))
    sink = Counter()
    daemon = Daemon(
        config, link=link, cameras=None, journal=journal, sink=sink, prepare=solver_tables(config)
    )
    loop = asyncio.get_running_loop()
    solving: list[float] = []
    jobs: list[Job] = []

    def on_status(name: str, payload: dict[str, Any]) -> None:
        if name == "status" and payload["state"] == "SOLVING" and not solving:
            solving.append(loop.time())
            if daemon.ctx.job is not None:
                jobs.append(daemon.ctx.job)

    daemon.listeners.append(on_status)
    task = asyncio.create_task(daemon.run(), name="daemon")
    results: list[JobResult] = []
    try:
        await daemon.ready.wait()
        await daemon.firmware_ready.wait()
        await daemon.ctx.prepared.wait()
        # one job first, not counted: the robot-time tables load on the first search
        warm_up = CubieCube.random(random.Random(-1)).to_cube()
        await daemon.submit("solve", {"facelets": warm_up.to_facelets("scheme")})
        await daemon.job_done.wait()
        for cube in cubes:
            robot.firmware.records.clear()
            solving.clear()
            jobs.clear()
            refined = sink.refinements
            submitted = loop.time()
            reply = await daemon.submit("solve", {"facelets": cube.to_facelets("scheme")})
            if not reply["ok"]:
                raise RuntimeError(f"mode {mode}: the daemon refused the job: {reply}")
            await daemon.job_done.wait()
            await asyncio.sleep(0.02)  # the last motor stop is recorded
            records = list(robot.firmware.records)
            began = solving[0] if solving else submitted
            marks = jobs[0].marks if jobs else None
            result = job_result(cube, records, submitted, began, sink.refinements - refined, marks)
            anytime = daemon.pipeline.anytime
            if anytime is not None and anytime.last is not None:
                if anytime.last.first:
                    result.first = anytime.last.first.to_dict()
                result.joined = anytime.last.joined
                result.head_start_s = anytime.last.head_start_s
            results.append(result)
    finally:
        daemon.stop()
        await task
        await journal.close()
        await link.close()
        await robot.stop()
    return results


def row(mode: str, results: list[JobResult]) -> dict[str, Any]:
    walls = sorted(r.wall_s for r in results)
    p95 = walls[min(len(walls) - 1, math.ceil(0.95 * len(walls)) - 1)]
    visible = [1000 * r.visible_s for r in results]
    return {
        "mode": mode,
        "states": len(results),
        "solved": sum(r.solved for r in results),
        "wall_s_mean": round(statistics.fmean(walls), 4),
        "wall_s_p95": round(p95, 4),
        "motor_s_mean": round(statistics.fmean(r.motor_s for r in results), 4),
        "compute_visible_ms_mean": round(statistics.fmean(visible), 2),
        "compute_visible_ms_median": round(statistics.median(visible), 2),
        "before_motion_ms_median": round(
            statistics.median(1000 * r.before_motion_s for r in results), 2
        ),
        "moves_mean": round(statistics.fmean(r.moves for r in results), 2),
        "gaps": sum(r.gaps for r in results),
        "gap_jobs": {i: r.gap_ms for i, r in enumerate(results) if r.gap_ms},
        "refinements_mean": (
            round(statistics.fmean(r.refinements for r in results), 2)
            if mode == "anytime"
            else None
        ),
        "joined_mean": (
            round(statistics.fmean(r.joined for r in results), 2) if mode == "anytime" else None
        ),
        "vs_best_fixed": None,
        "visible_breakdown_ms": {
            step: round(statistics.median(r.steps[step] for r in results), 2)
            for step in STEPS
            if results and all(step in r.steps for r in results)
        },
        "first_search": first_search([r.first for r in results if r.first is not None]),
        "head_start_ms_median": (
            round(1000 * statistics.median(heads), 2)
            if (heads := [r.head_start_s for r in results if r.head_start_s is not None])
            else None
        ),
    }


def first_search(firsts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``first_search`` field: the jobs' first commits and first searches summed up."""
    if not firsts:
        return None
    started = [f for f in firsts if f["start_groups"]]
    outcomes: dict[str, int] = {}
    for f in firsts:
        outcomes[f["outcome"]] = outcomes.get(f["outcome"], 0) + 1
    return {
        "commit_groups_mean": round(statistics.fmean(f["commit_groups"] for f in firsts), 2),
        "lead_ms_median": round(statistics.median(f["lead_ms"] for f in firsts), 2),
        "from_first_commit": sum(f["start_groups"] == f["commit_groups"] for f in started),
        "window_ms_median": (
            round(statistics.median(f["window_ms"] for f in started), 2) if started else None
        ),
        "searched_ms_median": (
            round(statistics.median(f["searched_ms"] for f in started), 2) if started else None
        ),
        "saved_s_mean": round(statistics.fmean(f["saved_s"] for f in firsts), 4),
        "outcomes": dict(sorted(outcomes.items(), key=lambda kv: -kv[1])),
    }


def label(mode: str) -> str:
    return mode if mode == "anytime" else f"budget {float(mode) * 1000:g} ms"


def parse_modes(text: str) -> list[str]:
    """``--modes``: comma-separated budgets in seconds (0 = first solution within 20; checked
    as ``_args.seconds``) or ``anytime``; anything else is refused by name. The items stay
    as written: they name the rows and the journal files."""
    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not modes:
        raise argparse.ArgumentTypeError("no mode given: e.g. --modes 0.1,anytime")
    budget = _args.seconds()
    for mode in modes:
        if mode != "anytime":
            try:
                budget(mode)
            except argparse.ArgumentTypeError as exc:
                raise argparse.ArgumentTypeError(
                    f"{mode!r} is not a mode: a budget or 'anytime' ({exc})"
                ) from None
    return modes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=_args.count(1), default=100)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--profile", default="simulated", help="bundled profile name or TOML path")
    ap.add_argument(
        "--modes",
        type=parse_modes,
        default="0,0.01,0.1,1,anytime",
        help="comma-separated budgets in seconds, or anytime (default: 0,0.01,0.1,1,anytime)",
    )
    # [solver] head_start_s and first_step_s are 0..1 s in a profile
    # (their ranges, and first_step_s above head_start_s, are the profile's: mode_config)
    ap.add_argument(
        "--head-start",
        type=_args.seconds(),
        default=None,
        metavar="S",
        help="anytime: [solver] head_start_s, 0..1 (default: the profile's)",
    )
    ap.add_argument(
        "--first-step",
        type=_args.seconds(),
        default=None,
        metavar="S",
        help="anytime: [solver] first_step_s, 0..1 (default: the profile's; 0: none)",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    profile = args.profile
    try:
        base = load_profile(bundled_path(profile) if "/" not in profile else Path(profile))
    except ConfigError as exc:
        ap.error(f"--profile {profile}: {exc}")
    modes: list[str] = args.modes
    for mode in modes:  # a contradictory or out-of-range setting, before any job runs
        try:
            mode_config(base, mode, Path("."), args.head_start, args.first_step)
        except ValidationError as exc:
            problems = "; ".join(
                f"[solver] {'.'.join(str(p) for p in e['loc']) or 'table'}: {e['msg']}"
                for e in exc.errors()
            )
            ap.error(f"--head-start/--first-step with --profile {profile}: {problems}")
    rng = random.Random(args.seed)
    cubes = [CubieCube.random(rng).to_cube() for _ in range(args.states)]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="cuberobot-bench-") as tmp:
        for mode in modes:
            began = time.perf_counter()
            results = asyncio.run(
                run_mode(base, mode, cubes, Path(tmp), args.head_start, args.first_step)
            )
            rows.append(row(mode, results))
            print(
                f"{label(mode)}: {len(results)} jobs in {time.perf_counter() - began:.0f} s",
                file=sys.stderr,
            )
    fixed = [r for r in rows if r["mode"] != "anytime"]
    if fixed:
        best = min(r["wall_s_mean"] for r in fixed)
        for r in rows:
            if r["mode"] == "anytime":
                r["vs_best_fixed"] = round(r["wall_s_mean"] / best, 4)
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    print(
        f"{'mode':<14}{'solved':>8}{'wall_s':>9}{'p95':>8}{'motor_s':>9}{'visible_ms':>12}"
        f"{'median':>8}{'moves':>7}{'gaps':>6}{'refined':>9}{'vs best':>9}"
    )
    for r in rows:
        refined = "-" if r["refinements_mean"] is None else f"{r['refinements_mean']:.1f}"
        ratio = "-" if r["vs_best_fixed"] is None else f"{r['vs_best_fixed']:.3f}"
        print(
            f"{label(r['mode']):<14}{r['solved']:>5}/{r['states']:<2}{r['wall_s_mean']:>9.3f}"
            f"{r['wall_s_p95']:>8.3f}{r['motor_s_mean']:>9.3f}{r['compute_visible_ms_mean']:>12.1f}"
            f"{r['compute_visible_ms_median']:>8.1f}{r['moves_mean']:>7.1f}{r['gaps']:>6}"
            f"{refined:>9}{ratio:>9}"
        )
    print("\nvisible compute, median ms from SOLVING to each step:")
    print(f"{'mode':<14}" + "".join(f"{s:>12}" for s in STEPS))
    for r in rows:
        cells = (r["visible_breakdown_ms"].get(s) for s in STEPS)
        print(
            f"{label(r['mode']):<14}"
            + "".join(f"{'-':>12}" if c is None else f"{c:>12.1f}" for c in cells)
        )
    for r in rows:
        if r["gap_jobs"]:
            print(f"\n{label(r['mode'])}: gaps (job: ms the motors waited) {r['gap_jobs']}")
    for r in rows:
        if r["first_search"] is not None:
            f = r["first_search"]
            print(
                f"\n{label(r['mode'])}: the first commit held {f['commit_groups_mean']:.2f} "
                f"groups (lead {f['lead_ms_median']:.1f} ms); the first search started right "
                f"after it in {f['from_first_commit']}/{r['states']}, window "
                f"{f['window_ms_median']} ms, ran {f['searched_ms_median']} ms (medians), "
                f"saved {f['saved_s_mean']:.3f} s a job; outcomes {f['outcomes']}; "
                f"refinements joined with the moves before them {r['joined_mean']:.2f} a job"
            )
        if r["head_start_ms_median"] is not None:
            print(f"{label(r['mode'])}: head start {r['head_start_ms_median']:.2f} ms (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
