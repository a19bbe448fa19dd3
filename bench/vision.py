"""Vision benchmark: real scans, real photos, simulated cubes, and timing.

Usage::

    python bench/vision.py [--cubes 1000] [--sizes 3 4 5] [--json] [--data DIR]
    python bench/vision.py --sets-only [--set-cubes 12] [--seed 0] [--extra-seeds 1 2] [--json]

Rows (one table; ``--json`` prints the rows as a JSON list instead):

* ``set`` rows (``--sets-only`` prints just these and the timing): per set ``cases, right,
  wrong_accepted, wrong_refused, right_refused, ms_per_cube`` — ``right`` is right *and
  accepted*, a read that raises counts as wrong-and-refused. Sets: ``real-rgb`` (the labelled
  real scans), ``real-photo`` (the given photo sets), ``real-photo <perturbation>`` (every photo
  set under each seeded perturbation of :mod:`vision.perturb`: JPEG q40, 50 %/25 % scale,
  5°/15° rotation, brightness ×0.6/×1.4, warm/cool white balance, noise σ 8, blur) and their
  union, ``real-photo-extra <degradation>`` (the generalisation check: other severities and
  degradations of :data:`vision.perturb.EXTRA_PHOTO_PERTURBATIONS`, and the issue's
  perturbations again, with other seeds: ``--extra-seeds``), ``sim-NxN`` for N = 2..7
  (rendered robot views, lighting swept from studio to worst);

* ``real-rgb``: the labelled real scans of ``shared/vision-data/rgb-scans`` per N — cubes
  exactly right and stickers wrong (3x3x3-random-06 has no answer and -07 an older one; they are
  reported in their own rows, see the README, vision section);
* ``real-rgb-stage``: the same 3x3 scans with each stage of the classifier (the ablation);
* ``real-photo``: the rig photos — grids found and cubes exactly right (free mode);
* ``sim-robot``: rendered scrambled cubes per N across the lighting range (severity uniform in
  0..1, a light colour per cube), read in robot mode with the renderer's calibration;
* ``sim-corner`` / ``sim-free``: smaller runs with two corner cameras, and free mode;
* ``time``: milliseconds per face image and per full 3x3 cube from six 1920×1080 images, on one
  core, robot mode and free mode (target: ≤ 100 ms per cube): wall clock (``ms_per_cube``) and
  the process's CPU time (``cpu_ms_per_cube``, meaningful on a loaded machine too).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# Run as a script, this file's folder comes first on sys.path and its name would shadow the
# `vision` package: drop that entry.
_HERE = Path(__file__).resolve().parent
# (bench/'s own helper module first, while bench/ is still on sys.path)
import _args  # noqa: E402

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from solver.cube.cubie import CubieCube  # noqa: E402
from solver.cube.facelets import Cube  # noqa: E402
from solver.cube.geometry import Face  # noqa: E402
from vision.calibration import Calibration, ViewCalibration  # noqa: E402
from vision.classify import ConstraintLevel  # noqa: E402
from vision.confidence import ACCEPT_MARGIN  # noqa: E402
from vision.errors import VisionError  # noqa: E402
from vision.perturb import (  # noqa: E402
    EXTRA_PHOTO_PERTURBATIONS,
    PHOTO_PERTURBATIONS,
    perturb_photo_set,
)
from vision.render import (  # noqa: E402
    RenderParams,
    random_light,
    render_corner_view,
    render_face_view,
    sample_params,
)
from vision.rgbfile import load_rgb_scan  # noqa: E402
from vision.scan import load_face_images, read_cube, read_rgb  # noqa: E402
from vision.trust import accepted, choose_margin, cross_validate, measure, tradeoff  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "vision-data"
#: the largest cube this benchmark renders and reads: ``cuberobot scan --size``'s bound (the
#: vision library takes more, but its memory grows as the stickers squared: 128 wanted 72 GiB)
MAX_N = 9


def scrambled(n: int, seed: int) -> Cube:
    """A uniformly random 3x3 state, or 60 random layer turns of a bigger cube."""
    if n == 3:
        return CubieCube.random(random.Random(seed)).to_cube()
    r = random.Random(seed)
    moves = " ".join(
        f"{r.randint(1, n // 2)}{r.choice('URFDLB')}{r.choice(['', chr(39), '2'])}"
        for _ in range(60)
    )
    return Cube.solved(n).apply(moves)


def real_rgb(data: Path) -> list[dict[str, Any]]:
    manifest = json.loads((data / "rgb-scans" / "MANIFEST.json").read_text(encoding="utf-8"))
    rows: dict[int, dict[str, Any]] = {}
    special = []
    for name, meta in sorted(manifest.items()):
        result = read_rgb(load_rgb_scan(data / "rgb-scans" / name))
        expected = meta["expected_kociemba"]
        got = result.to_facelets()
        if expected is None or "older" in meta["source"]:
            note = "no answer" if expected is None else "older answer"
            wrong = (
                None
                if expected is None
                else sum(a != b for a, b in zip(got, expected, strict=True))
            )
            special.append(
                {
                    "row": "real-rgb-special",
                    "case": name,
                    "note": note,
                    "valid": result.valid,
                    "stickers_wrong": wrong,
                    "repairs": [r.where for r in result.repairs],
                }
            )
            continue
        n = result.n
        row = rows.setdefault(
            n, {"row": "real-rgb", "n": n, "cubes": 0, "right": 0, "stickers_wrong": 0}
        )
        row["cubes"] += 1
        row["right"] += got == expected
        row["stickers_wrong"] += sum(a != b for a, b in zip(got, expected, strict=True))
    stage_rows = []
    cases = [
        k
        for k, v in manifest.items()
        if k.startswith("3x3x3") and v["expected_kociemba"] and "older" not in v["source"]
    ]
    for stage in ConstraintLevel:
        right = sum(
            read_rgb(load_rgb_scan(data / "rgb-scans" / k), level=stage).to_facelets()
            == manifest[k]["expected_kociemba"]
            for k in cases
        )
        stage_rows.append(
            {
                "row": "real-rgb-stage",
                "stage": stage.name.lower(),
                "cubes": len(cases),
                "right": right,
            }
        )
    return [rows[n] for n in sorted(rows)] + special + stage_rows


def real_photos(data: Path) -> list[dict[str, Any]]:
    manifest = json.loads((data / "photos" / "MANIFEST.json").read_text(encoding="utf-8"))
    rows = []
    for case, meta in sorted(manifest.items()):
        row: dict[str, Any] = {"row": "real-photo", "case": case}
        try:
            start = time.perf_counter()
            result = read_cube(load_face_images(data / "photos" / case))
            row["ms"] = round((time.perf_counter() - start) * 1000, 1)
            row["grids_found"] = 6
            row["right"] = result.to_facelets() == meta["expected_kociemba"]
            row["valid"] = result.valid
        except VisionError as exc:
            row["grids_found"] = 0
            row["right"] = False
            row["error"] = str(exc)
        rows.append(row)
    return rows


def simulated(n: int, cubes: int, mode: str, seed: int = 0) -> dict[str, Any]:
    right = 0
    failures: list[dict[str, Any]] = []
    start = time.perf_counter()
    for k in range(cubes):
        rng = np.random.default_rng([seed, n, k])
        cube = scrambled(n, 1_000_000 * n + k)
        severity = float(rng.uniform(0, 1))
        light = random_light(rng, severity)
        if mode == "corner":
            base = RenderParams(1280, 960)
            views = {
                c: render_corner_view(
                    cube, c, sample_params(rng, severity, base=base, light_rgb=light), rng
                )
                for c in ("URF", "DLB")
            }
        else:
            views = {
                f.name: render_face_view(
                    cube, f, sample_params(rng, severity, light_rgb=light), rng
                )
                for f in Face
            }
        images = {k2: v.image for k2, v in views.items()}
        cal = None
        if mode in ("robot", "corner"):
            cal = Calibration(n, tuple(ViewCalibration(k2, v.sites) for k2, v in views.items()))
        try:
            result = read_cube(images, cal, n if mode == "free" else None)
            ok = result.cube == cube
            wrong = int((result.cube.flat != cube.flat).sum())
        except VisionError as exc:
            ok, wrong = False, -1
            failures.append({"cube": k, "severity": round(severity, 2), "error": str(exc)})
        right += ok
        if not ok and wrong >= 0:
            failures.append({"cube": k, "severity": round(severity, 2), "stickers_wrong": wrong})
    elapsed = time.perf_counter() - start
    return {
        "row": f"sim-{mode}",
        "n": n,
        "cubes": cubes,
        "right": right,
        "rate": round(right / cubes, 4) if cubes else None,
        "failures": failures[:10],
        "s_per_cube_incl_render": round(elapsed / max(cubes, 1), 3),
    }


# ---------------------------------------------------------------------------------------------
# Sets: right and accepted, wrong and accepted, ... (the trust of a read, issue 13)


class SetTally:
    """The outcome counts of one set (the ``--json`` fields of a ``"row": "set"`` row).

    ``right`` is right *and accepted*; a read that raises (no grid, no cube) is refused, and
    counted as wrong-and-refused (there is no cube to be right)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.counts = {"right": 0, "wrong_accepted": 0, "wrong_refused": 0, "right_refused": 0}
        self.ms: list[float] = []
        self.examples: list[dict[str, Any]] = []

    def add(self, case: str, read: Any, expected: Any, ms: float) -> None:
        """``read`` is a ScanResult or an exception; ``expected`` a facelet string or a Cube."""
        self.ms.append(ms)
        if isinstance(read, Exception):
            self.counts["wrong_refused"] += 1
            self._note(case, "error", str(read))
            return
        right = (
            read.cube == expected
            if isinstance(expected, Cube)
            else (read.to_facelets() == expected)
        )
        key = (
            ("right" if read.accepted else "right_refused")
            if right
            else ("wrong_accepted" if read.accepted else "wrong_refused")
        )
        self.counts[key] += 1
        if key != "right":
            self._note(case, key, f"confidence {read.cube_confidence:.4f}")

    def _note(self, case: str, kind: str, detail: str) -> None:
        if len(self.examples) < 8:
            self.examples.append({"case": case, "outcome": kind, "detail": detail[:160]})

    def row(self) -> dict[str, Any]:
        cases = sum(self.counts.values())
        return {
            "row": "set",
            "set": self.name,
            "cases": cases,
            **self.counts,
            "right_share": round(self.counts["right"] / cases, 4) if cases else None,
            "ms_per_cube": round(float(np.mean(self.ms)), 1) if self.ms else None,
            "not_right": self.examples,
        }


def _timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    try:
        result = fn(*args, **kwargs)
    except VisionError as exc:
        result = exc
    return result, (time.perf_counter() - start) * 1000


def set_real_rgb(data: Path) -> dict[str, Any]:
    """Every labelled real RGB scan (random-06 has no answer and random-07 an older one: out)."""
    manifest = json.loads((data / "rgb-scans" / "MANIFEST.json").read_text(encoding="utf-8"))
    tally = SetTally("real-rgb")
    for name, meta in sorted(manifest.items()):
        if not meta["expected_kociemba"] or "older" in meta["source"]:
            continue
        rgb = load_rgb_scan(data / "rgb-scans" / name)
        read, ms = _timed(read_rgb, rgb)
        tally.add(name, read, meta["expected_kociemba"], ms)
    return tally.row()


def sets_real_photos(data: Path, seed: int) -> list[dict[str, Any]]:
    """The given photo sets as they are, then all of them under each seeded perturbation."""
    manifest = json.loads((data / "photos" / "MANIFEST.json").read_text(encoding="utf-8"))
    photos = {case: load_face_images(data / "photos" / case) for case in sorted(manifest)}
    rows = []
    plain = SetTally("real-photo")
    for case, images in photos.items():
        read, ms = _timed(read_cube, images)
        plain.add(case, read, manifest[case]["expected_kociemba"], ms)
    rows.append(plain.row())
    everything = SetTally("real-photo-perturbed (all)")
    for name in PHOTO_PERTURBATIONS:
        tally = SetTally(f"real-photo {name}")
        for index, (case, images) in enumerate(photos.items()):
            changed = perturb_photo_set(images, name, seed * 1000 + index)
            read, ms = _timed(read_cube, changed)
            for t in (tally, everything):
                t.add(case, read, manifest[case]["expected_kociemba"], ms)
        rows.append(tally.row())
    rows.append(everything.row())
    return rows


def sets_real_photos_extra(data: Path, seeds: list[int]) -> list[dict[str, Any]]:
    """The generalisation check: the given photo sets under the degradations of
    :data:`vision.perturb.EXTRA_PHOTO_PERTURBATIONS` (never used to build or tune the
    classifier) and the issue's perturbations again, each with every seed of ``seeds``."""
    manifest = json.loads((data / "photos" / "MANIFEST.json").read_text(encoding="utf-8"))
    photos = {case: load_face_images(data / "photos" / case) for case in sorted(manifest)}
    rows = []
    extra_all = SetTally("real-photo-extra (all)")
    again_all = SetTally(f"real-photo-perturbed, seeds {','.join(map(str, seeds))} (all)")
    names = [(name, True) for name in EXTRA_PHOTO_PERTURBATIONS]
    names += [(name, False) for name in PHOTO_PERTURBATIONS]
    for name, extra in names:
        tally = SetTally(f"real-photo-extra {name}")
        for seed in seeds:
            for index, (case, images) in enumerate(photos.items()):
                changed = perturb_photo_set(images, name, seed * 1000 + index)
                read, ms = _timed(read_cube, changed)
                expected = manifest[case]["expected_kociemba"]
                for t in (tally, extra_all) if extra else (again_all,):
                    t.add(f"{case} seed {seed}", read, expected, ms)
        if extra:
            rows.append(tally.row())
    rows += [extra_all.row(), again_all.row()]
    return rows


def set_simulated(n: int, cubes: int, seed: int) -> dict[str, Any]:
    """Rendered robot views of N×N cubes with the lighting swept from studio (severity 0) to the
    worst specified (1), a random light colour per cube; robot mode."""
    tally = SetTally(f"sim-{n}x{n}")
    for k in range(cubes):
        rng = np.random.default_rng([seed, n, k])
        cube = scrambled(n, 7_000_000 + 1000 * n + k)
        severity = k / max(cubes - 1, 1)
        light = random_light(rng, severity)
        views = {
            f.name: render_face_view(cube, f, sample_params(rng, severity, light_rgb=light), rng)
            for f in Face
        }
        cal = Calibration(n, tuple(ViewCalibration(key, v.sites) for key, v in views.items()))
        read, ms = _timed(read_cube, {key: v.image for key, v in views.items()}, cal)
        tally.add(f"cube {k} severity {severity:.2f}", read, cube, ms)
    return tally.row()


def calibration(data: Path, perturbations: int, seed: int) -> list[dict[str, Any]]:
    """The measurement behind the acceptance bar (docs/vision-calibration.md): the labelled real
    scans as given and under ``perturbations`` seeded lighting perturbations at severities 0.4,
    0.7 and 1.0; the trade-off curve over the cube margin; the bar chosen per held-out half."""
    manifest = json.loads((data / "rgb-scans" / "MANIFEST.json").read_text(encoding="utf-8"))
    cases = [
        (name, load_rgb_scan(data / "rgb-scans" / name), meta["expected_kociemba"])
        for name, meta in sorted(manifest.items())
        if meta["expected_kociemba"] and "older" not in meta["source"]
    ]
    outcomes = measure(cases, 0, 0.0)
    for severity in (0.4, 0.7, 1.0):
        outcomes += [o for o in measure(cases, perturbations, severity, seed) if o.variant]
    rows: list[dict[str, Any]] = [
        {"row": "calibration-curve", **r}
        for r in tradeoff(outcomes, [0.0, 1.0, 2.0, 4.0, 6.0, 8.0, ACCEPT_MARGIN, 12.0, 16.0, 24.0])
    ]
    rows.append(
        {
            "row": "calibration-choice",
            "reads": len(outcomes),
            "wrong": sum(not o.right for o in outcomes),
            "wrong_margins_top": sorted(
                round(o.margin, 2) for o in outcomes if not o.right and accepted(o, 0.0)
            )[-5:],
            "chosen_margin": round(choose_margin(outcomes), 2),
            "shipped_margin": ACCEPT_MARGIN,
        }
    )
    for fold in cross_validate(outcomes):
        rows.append(
            {
                "row": "calibration-fold",
                "held_out": len(fold.held_out),
                "bar": round(fold.margin, 2),
                "right": fold.right,
                "right_accepted": fold.right_accepted,
                "wrong": fold.wrong,
                "wrong_accepted_at_fold_bar": fold.wrong_accepted,
                "wrong_accepted_at_shipped_bar": sum(
                    accepted(o, ACCEPT_MARGIN)
                    for o in outcomes
                    if o.case in fold.held_out and not o.right
                ),
            }
        )
    return rows


def timing(repeats: int = 10) -> list[dict[str, Any]]:
    cv2.setNumThreads(1)
    cube = scrambled(3, 42)
    rng = np.random.default_rng(42)
    base = RenderParams(1920, 1080)
    views = {
        f.name: render_face_view(cube, f, sample_params(rng, 0.5, base=base), rng) for f in Face
    }
    images = {k: v.image for k, v in views.items()}
    cal = Calibration(3, tuple(ViewCalibration(k, v.sites) for k, v in views.items()))
    rows = []
    for mode, calibration in (("robot", cal), ("free", None)):
        read_cube(images, calibration)  # warm-up
        totals, per_face, cpu = [], [], []
        for _ in range(repeats):
            started = time.process_time()
            result = read_cube(images, calibration)
            cpu.append((time.process_time() - started) * 1000)
            totals.append(result.timings_ms["total"])
            face_ms = [
                v for k, v in result.timings_ms.items() if k.split()[0] in ("sample", "locate")
            ]
            per_face.append(sum(face_ms) / 6)
        rows.append(
            {
                "row": "time",
                "mode": mode,
                "image": "1920x1080",
                "ms_per_face": round(float(np.median(per_face)), 2),
                "ms_per_cube": round(float(np.median(totals)), 2),
                # CPU time of this process: what the read costs one core, whatever else runs
                # on the machine (the wall-clock figure above is inflated by other load)
                "cpu_ms_per_cube": round(float(np.median(cpu)), 2),
                "ms_classify": round(float(result.timings_ms["classify"]), 2),
                "target_ms": 100,
            }
        )
    return rows


def render_table(rows: list[dict[str, Any]]) -> str:
    lines = []
    for row in rows:
        kind = row["row"]
        if kind == "real-rgb":
            lines.append(
                f"real RGB scans  {row['n']}x{row['n']}: {row['right']}/{row['cubes']} "
                f"cubes right, {row['stickers_wrong']} stickers wrong"
            )
        elif kind == "real-rgb-special":
            lines.append(
                f"real RGB scan   {row['case']} ({row['note']}): valid={row['valid']}, "
                f"stickers differing={row['stickers_wrong']}, repairs={row['repairs']}"
            )
        elif kind == "real-rgb-stage":
            lines.append(
                f"3x3 ablation    {row['stage']:<9}: {row['right']}/{row['cubes']} cubes right"
            )
        elif kind == "real-photo":
            lines.append(
                f"real photos     {row['case']}: grids {row['grids_found']}/6, "
                f"right={row['right']}, {row.get('ms', '-')} ms"
            )
        elif kind.startswith("sim-"):
            lines.append(
                f"simulated {kind[4:]:<6}{row['n']}x{row['n']}: {row['right']}/{row['cubes']} "
                f"cubes right ({100 * (row['rate'] or 0):.1f}%), "
                f"{row['s_per_cube_incl_render']} s/cube incl. render"
            )
        elif kind == "set":
            lines.append(
                f"set {row['set']:<28} {row['cases']:>4} cases: right+accepted {row['right']}, "
                f"right refused {row['right_refused']}, wrong refused {row['wrong_refused']}, "
                f"WRONG ACCEPTED {row['wrong_accepted']}; {row['ms_per_cube']} ms/cube"
            )
        elif kind == "time":
            lines.append(
                f"time ({row['mode']:<5} {row['image']}): {row['ms_per_face']} ms/face, "
                f"{row['ms_per_cube']} ms/cube, CPU {row['cpu_ms_per_cube']} ms "
                f"(classify {row['ms_classify']} ms; target "
                f"{row['target_ms']} ms)"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--cubes", type=_args.count(0), default=1000, help="simulated cubes per N (robot mode)"
    )
    parser.add_argument(
        "--extra-cubes", type=_args.count(0), default=100, help="cubes for corner/free runs"
    )
    parser.add_argument(
        "--sizes",
        type=_args.count(2, MAX_N, what="a cube size"),
        nargs="+",
        default=[3, 4, 5],
        help=f"cube sizes of the simulated robot rows (2..{MAX_N})",
    )
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("CUBEROBOT_VISION_DATA", DEFAULT_DATA))
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--set-cubes",
        type=_args.count(0),
        default=12,
        help="simulated cubes per N in the sim-N sets",
    )
    parser.add_argument(
        "--seed",
        type=_args.count(0, what="a seed"),
        default=0,
        help="seed of perturbations and renders",
    )
    parser.add_argument(
        "--sets-only", action="store_true", help="only the sets (right/wrong × accepted/refused)"
    )
    parser.add_argument(
        "--extra-seeds",
        type=_args.count(0, what="a seed"),
        nargs="*",
        default=[1, 2],
        help="seeds of the generalisation sets (extra degradations; none: skip them)",
    )
    parser.add_argument(
        "--calibration",
        type=_args.count(0),
        metavar="K",
        help="only the confidence calibration, with K perturbations per scan and severity",
    )
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    rows: list[dict[str, Any]] = []
    if args.calibration is not None:
        if not (args.data / "rgb-scans" / "MANIFEST.json").is_file():
            parser.error(
                f"--calibration reads the labelled scans: no rgb-scans/MANIFEST.json in "
                f"--data {args.data}"
            )
        rows = calibration(args.data, args.calibration, args.seed)
        print(json.dumps(rows, indent=1))
        return 0
    # the real rows read both the labelled scans and the photos
    manifests = [args.data / folder / "MANIFEST.json" for folder in ("rgb-scans", "photos")]
    real = all(m.is_file() for m in manifests)
    if not real and any(m.is_file() for m in manifests):
        parser.error(
            f"--data {args.data}: the real rows need both rgb-scans/ and photos/ with their "
            f"MANIFEST.json; missing: {', '.join(str(m) for m in manifests if not m.is_file())}"
        )
    if real:
        rows.append(set_real_rgb(args.data))
        rows += sets_real_photos(args.data, args.seed)
        if args.extra_seeds:
            rows += sets_real_photos_extra(args.data, args.extra_seeds)
    for n in range(2, 8):
        rows.append(set_simulated(n, args.set_cubes, args.seed))
    if args.sets_only:
        rows += timing()
        print(json.dumps(rows, indent=1) if args.json else render_table(rows))
        return 0
    if real:
        rows += real_rgb(args.data)
        rows += real_photos(args.data)
    else:
        print(f"(real data not found at {args.data}; skipping real rows)", file=sys.stderr)
    for n in args.sizes:
        rows.append(simulated(n, args.cubes, "robot"))
    if args.extra_cubes:
        rows.append(simulated(3, args.extra_cubes, "corner"))
        rows.append(simulated(3, args.extra_cubes, "free"))
    rows += timing()
    print(json.dumps(rows, indent=1) if args.json else render_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
