"""Benchmark: one-camera scanning for the mechanism kinds (robot/kinds/choreography.py).

    python bench/kinds_scan.py [--scans 20] [--sizes 2,3,4,5] [--severity 0.5] [--seed 0]
                               [--width 320] [--only KIND ...] [--json]

For each kind and cube size N (each kind's own sizes by default: N = 2..5, and 2..7 for the
big-cube gripper; ``--sizes`` sets them for every kind), ``--scans`` scrambled cubes
(``random_moves(N, seed=seed+k)``) are scanned on the simulated rig
(:class:`robot.kinds.kindscan.SimulatedScanRig`: the virtual cube moved by the mechanism's
actions, one simulated camera at a fixed pose, light and noise of ``--severity``), with up to
one second look. Fields:

* ``actions``, ``machine_s``: the first pass (the fastest covering choreography) and its machine
  time, six frames at ``capture_s`` included;
* ``search_ms``: the choreography search from scratch (graph and search; later scans hit the
  cache);
* ``right``: scans whose read was accepted and equals the cube; ``refused``: not accepted
  (the robot would not act); ``wrong_accepted``: accepted but not the cube (target 0);
* ``second_looks``: frames taken after the first pass, in all; ``rescued``: scans whose first
  pass was not sure and whose read after the second look was right;
* ``scan_ms``: wall time per scan (rendering the frames, sampling, classifying).

Kinds: ``turntable`` (CUBOTino-like: servo table -1..+1, flip x, camera above),
``turntable-stepper`` (unlimited table), ``two-gripper`` (grippers at D and B with 180° servos,
camera in front), ``bigcube-gripper`` (``configs/bigcube_gripper.toml`` as configured: a
stepper table, a gripper holding 1, 2 or 3 layers, MultiCuber-like slower actions, the camera
above; N = 2..7).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import _args  # noqa: E402
import numpy as np  # noqa: E402

from robot.config import load_config  # noqa: E402
from robot.kinds import Mechanism, Turntable, TwoGripper  # noqa: E402
from robot.kinds.choreography import choreograph, default_camera  # noqa: E402
from robot.kinds.kindscan import SimulatedScanRig, simulate_scan  # noqa: E402
from robot.kinds.profile import MAX_SIZE, build_mechanism  # noqa: E402
from solver.cube.facelets import Cube  # noqa: E402
from solver.cube.geometry import Face  # noqa: E402
from solver.scramble import random_moves  # noqa: E402
from vision.render import RenderParams  # noqa: E402

#: frame widths (pixels, 4:3): the renderer's least image is 16x16 (16 = 22 * 3 // 4)
MIN_WIDTH, MAX_WIDTH = 22, 4096


def _profile(name: str) -> Callable[[int], tuple[Mechanism, Face]]:
    """A profile's mechanism at size ``n`` and the face its one camera looks at."""

    def build(n: int) -> tuple[Mechanism, Face]:
        config = load_config(ROOT / "configs" / name)
        assert config.scan_camera is not None, f"{name} has no one camera"
        mechanism = build_mechanism(config.robot.kind, config.robot.mechanism_table, n)
        return mechanism, Face[config.scan_camera.faces[0]]

    return build


def _default(make: Callable[[int], Mechanism]) -> Callable[[int], tuple[Mechanism, Face]]:
    def build(n: int) -> tuple[Mechanism, Face]:
        mechanism = make(n)
        return mechanism, default_camera(mechanism)

    return build


#: kind -> (its mechanism and camera at size n, its sizes by default)
KINDS: dict[str, tuple[Callable[[int], tuple[Mechanism, Face]], tuple[int, ...]]] = {
    "turntable": (_default(lambda n: Turntable(n=n)), (2, 3, 4, 5)),
    "turntable-stepper": (_default(lambda n: Turntable(n=n, table_positions=None)), (2, 3, 4, 5)),
    "two-gripper": (_default(lambda n: TwoGripper(n=n)), (2, 3, 4, 5)),
    "bigcube-gripper": (_profile("bigcube_gripper.toml"), (2, 3, 4, 5, 6, 7)),
}

FIELDS = (
    "kind",
    "n",
    "actions",
    "machine_s",
    "search_ms",
    "scans",
    "right",
    "refused",
    "wrong_accepted",
    "second_looks",
    "rescued",
    "scan_ms",
)


def run(kind: str, n: int, scans: int, seed: int, severity: float, width: int) -> dict[str, Any]:
    mechanism, camera = KINDS[kind][0](n)
    started = time.perf_counter()
    chore = choreograph(mechanism, camera)
    search_ms = (time.perf_counter() - started) * 1000
    params = RenderParams(width=width, height=width * 3 // 4)
    right = refused = wrong = looks = rescued = 0
    walls = []
    for k in range(scans):
        truth = Cube.solved(n).apply(random_moves(n, seed=seed + k))
        rig = SimulatedScanRig(
            mechanism, truth, camera, params=params, severity=severity, seed=seed + k
        )
        started = time.perf_counter()
        scan = asyncio.run(simulate_scan(rig))
        walls.append((time.perf_counter() - started) * 1000)
        correct = bool(np.array_equal(scan.read.cube.flat, truth.flat))
        right += scan.read.accepted and correct
        refused += not scan.read.accepted
        wrong += scan.read.accepted and not correct
        looks += scan.second_looks
        rescued += scan.second_looks > 0 and scan.read.accepted and correct
    return {
        "kind": kind,
        "n": n,
        "actions": len(chore.actions),
        "machine_s": round(chore.seconds, 3),
        "search_ms": round(search_ms, 1),
        "scans": scans,
        "right": right,
        "refused": refused,
        "wrong_accepted": wrong,
        "second_looks": looks,
        "rescued": rescued,
        "scan_ms": round(statistics.median(walls), 1),
    }


def _table(rows: list[dict[str, Any]]) -> None:
    head = " ".join(f"{f:>17}" for f in FIELDS)
    print(head)
    print("-" * len(head))
    for row in rows:
        print(" ".join(f"{row[f]!s:>17}" for f in FIELDS))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--scans", type=_args.count(1), default=20, help="scans per kind and size (default 20)"
    )
    ap.add_argument(
        "--sizes",
        # a robot's cube sizes ([robot] cube_size): 2..MAX_SIZE; none: each kind's own
        type=_args.int_list(2, MAX_SIZE, what="a cube size", skip_blank=True, allow_empty=True),
        default="",
        help=f"cube sizes (2..{MAX_SIZE}), comma-separated, for every kind (default: each "
        "kind's own, 2..5, the big-cube gripper 2..7)",
    )
    ap.add_argument(
        "--severity",
        type=_args.number(0.0, 1.0, what="a severity"),
        default=0.5,
        help="light and noise, 0..1",
    )
    ap.add_argument(
        "--seed", type=_args.count(0, what="a seed"), default=0, help="random seed (default 0)"
    )
    ap.add_argument(
        "--width",
        type=_args.count(MIN_WIDTH, MAX_WIDTH, what="a width in pixels"),
        default=320,
        help=f"frame width in pixels (4:3, {MIN_WIDTH}..{MAX_WIDTH})",
    )
    ap.add_argument("--only", nargs="*", choices=sorted(KINDS), help="kinds to run")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON objects")
    args = ap.parse_args(argv)
    chosen: list[int] = args.sizes
    rows = []
    for kind in args.only or list(KINDS):
        for n in chosen or KINDS[kind][1]:
            row = run(kind, n, args.scans, args.seed, args.severity, args.width)
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"... {kind} N={n} done", file=sys.stderr, flush=True)
    if not args.json:
        _table(rows)
    return 0 if all(r["wrong_accepted"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
