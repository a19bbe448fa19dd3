"""Benchmark: the simulated robot under deliberately ambiguous lighting — active re-scan and the
check after a solve.

Usage::

    python bench/robot_vision.py [--jobs 20] [--seed 0] [--json]

Every job runs the whole daemon on the simulated robot (the simulated firmware on a pty, the two
rendered corner cameras of ``configs/simulated.toml``, no broker) on a scrambled cube
(``random_moves(3, 25, seed + k)``), with a strong warm lamp over twelve sticker positions of the
upper camera's faces (:data:`vision.spotlight.AMBIGUOUS`): under it orange reads as red and yellow
as orange. Row ``robot-ambiguous`` (``--json``: the same fields):

* ``jobs``, ``solved`` (the simulated cube ends solved), ``done`` (the job reported success);
* ``wrong_accepted``: jobs that reported success on a cube that is not solved (target 0);
* ``single_refused`` / ``single_wrong``: how the first read alone came out (refused; accepted
  but wrong): what a robot without re-scan and check would have acted on;
* ``rescans``: face turns made to look again, in all; ``jobs_rescanned``;
* ``corrections``: solves started again after the check found a misread;
* ``s_per_job``: wall time per job (motors at ``speed_factor`` 8).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import _args  # noqa: E402

from robot.assemble import assemble  # noqa: E402
from robot.cameras import CameraRig, SpotlitCameras  # noqa: E402
from robot.config import RobotConfig, load_config  # noqa: E402
from solver.cube.facelets import SCHEMES, Cube  # noqa: E402
from solver.scramble import random_moves  # noqa: E402
from vision.spotlight import AMBIGUOUS, Spotlight  # noqa: E402

__all__ = ["JobOutcome", "ambiguous_config", "run_job", "summarise"]


@dataclass
class JobOutcome:
    seed: int
    solved: bool = False
    done: bool = False
    error: str | None = None
    single: str = ""  # the first read alone: "right", "refused" or "wrong"
    rescans: int = 0
    corrections: int = 0
    seconds: float = 0.0
    events: list[str] = field(default_factory=list)


def ambiguous_config(speed_factor: float = 8.0) -> RobotConfig:
    """configs/simulated.toml with fast motors and no broker."""
    config = load_config(ROOT / "configs" / "simulated.toml")
    assert config.simulation is not None
    return config.model_copy(
        update={
            "simulation": config.simulation.model_copy(update={"speed_factor": speed_factor}),
            "mqtt": config.mqtt.model_copy(update={"enabled": False}),
        }
    )


class _FirstRead:
    """Records how the first capture of a job reads alone (vision on the lit frames)."""

    def __init__(self, cameras: SpotlitCameras, truth: Cube, scheme: str) -> None:
        self.cameras = cameras
        self.calibration = cameras.calibration
        self.missing_calibration = cameras.missing_calibration
        self.truth = truth
        self.scheme = SCHEMES[scheme]
        self.single = ""

    def capture(self) -> dict[str, Any]:
        frames = self.cameras.capture()
        if not self.single and self.calibration is not None:
            from vision.scan import read_cube

            result = read_cube(frames, self.calibration, self.truth.n, scheme=self.scheme)
            right = result.cube == self.truth
            self.single = "refused" if not result.accepted else "right" if right else "wrong"
        return frames


async def run_job(
    config: RobotConfig,
    seed: int,
    workdir: Path,
    spotlight: Spotlight = AMBIGUOUS,
    rig_seed: int = 0,
) -> JobOutcome:
    """One start job on the simulated robot under ``spotlight`` (``rig_seed``: of the cameras'
    light colour and noise)."""
    start = Cube.solved(3).apply(random_moves(3, 25, seed))
    outcome = JobOutcome(seed)
    started = time.perf_counter()
    async with contextlib.AsyncExitStack() as stack:
        parts = await assemble(
            config,
            stack,
            journal_path=workdir / f"journal-{seed}.sqlite",
            sim_start=start,
            seed=rig_seed,
        )
        rig = parts.daemon.pipeline.cameras
        assert isinstance(rig, CameraRig)
        first = _FirstRead(SpotlitCameras(rig, spotlight), start, config.colours.scheme)
        parts.daemon.pipeline.cameras = first
        payloads: dict[str, dict[str, Any]] = {}

        def listen(name: str, payload: dict[str, Any]) -> None:
            if name != "status":
                outcome.events.append(name)
                payloads[name] = payload

        parts.daemon.listeners.append(listen)
        task = asyncio.create_task(parts.daemon.run())
        try:
            await parts.daemon.firmware_ready.wait()
            reply = await parts.daemon.submit("start", {})
            assert reply["ok"], reply
            await parts.daemon.job_done.wait()
        finally:
            parts.daemon.stop()
            await task
        assert parts.sim is not None
        outcome.solved = parts.sim.cube_state().is_solved()
    done = payloads.get("done")
    outcome.done = done is not None
    if done is not None:
        outcome.rescans, outcome.corrections = done["rescans"], done["corrections"]
    elif "error" in payloads:
        outcome.error = f"{payloads['error']['code']}: {payloads['error']['message']}"
        outcome.rescans = outcome.events.count("rescan")
    outcome.single = first.single
    outcome.seconds = time.perf_counter() - started
    return outcome


def summarise(outcomes: list[JobOutcome]) -> dict[str, Any]:
    jobs = len(outcomes)
    return {
        "row": "set",
        "set": "robot-ambiguous",
        "jobs": jobs,
        "solved": sum(o.solved for o in outcomes),
        "done": sum(o.done for o in outcomes),
        "wrong_accepted": sum(o.done and not o.solved for o in outcomes),
        "single_refused": sum(o.single == "refused" for o in outcomes),
        "single_wrong": sum(o.single == "wrong" for o in outcomes),
        "rescans": sum(o.rescans for o in outcomes),
        "jobs_rescanned": sum(o.rescans > 0 for o in outcomes),
        "corrections": sum(o.corrections for o in outcomes),
        "s_per_job": round(sum(o.seconds for o in outcomes) / max(jobs, 1), 2),
        "errors": [f"seed {o.seed}: {o.error}" for o in outcomes if o.error],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=_args.count(1), default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    config = ambiguous_config()
    outcomes: list[JobOutcome] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.jobs):
            outcome = asyncio.run(run_job(config, args.seed + k, Path(tmp)))
            outcomes.append(outcome)
            if not args.json:
                print(
                    f"job {k + 1}/{args.jobs} seed {outcome.seed}: first read {outcome.single}, "
                    f"rescans {outcome.rescans}, corrections {outcome.corrections}, "
                    f"{'solved' if outcome.solved else 'NOT solved'}"
                    f"{'' if outcome.done else f' ({outcome.error})'}",
                    flush=True,
                )
    row = summarise(outcomes)
    if args.json:
        print(json.dumps([row], indent=1))
    else:
        for key, value in row.items():
            print(f"{key:>16}: {value}")
    return 0 if row["wrong_accepted"] == 0 and row["solved"] == row["jobs"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
