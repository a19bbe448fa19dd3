"""``cuberobot scan | vision calibrate | vision learn-colors``: the vision pipeline from the shell.

Forms (a contract; scripts call them):

* ``cuberobot scan IMAGE_DIR [--size N] [--format facelets|json] [--annotate OUT_DIR]
  [--calibration FILE]`` — IMAGE_DIR holds one photo per face named by its face letter
  (``U.png``, ``rubiks-side-U.png``, ``..._U.jpg``), each face as it lies on the unfolded net;
  N is inferred when not given. With ``--calibration`` the images are named by the calibrated
  view names instead (robot mode).
* ``cuberobot scan --rgb FILE [...]`` — mean RGB per sticker (the ``shared/vision-data`` format,
  U L F R B D blocks).
* ``cuberobot vision calibrate SOURCE [--view NAME] [--size N] --out FILE`` — find the sticker
  grid on a first image (a file, a folder of face images, or a camera index/URL) and write or
  update the calibration file.
* ``cuberobot vision learn-colors IMAGE_DIR|--rgb FILE --out FILE`` — learn the sticker colours
  from a *solved* cube held in the scheme's orientation (white up, green front); optional.

Output: ``facelets`` prints the URFDLB facelet string (letters by centre for odd N, by the
default colour scheme for even N); ``json`` adds the validity verdict, the repairs made, the
low-confidence stickers, and ``verdict`` (``accepted``/``refused``), ``confidence`` and
``in_doubt``. Exit codes: 0 a valid cube was read and accepted; 1 no valid cube could be read,
or the read was refused as too uncertain (the json is still printed; the reasons go to
stderr); 2 malformed input or usage (the vision errors, mapped by :mod:`robot.cli.exits`:
``GridNotFoundError`` and ``NoCubeError`` → 1, the others → 2).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from robot.cli.args import cube_size
from robot.cli.exits import CommandFailed, UsageError, report
from solver.cube.facelets import DEFAULT_SCHEME
from solver.cube.geometry import Face
from vision.annotate import annotate_view, net_image
from vision.calibration import (
    Calibration,
    ViewCalibration,
    load_calibration,
    merge_views,
    save_calibration,
)
from vision.capture import OpenCVCamera
from vision.classify import ColourPalette
from vision.errors import CaptureError, GridNotFoundError, NoCubeError, ScanInputError
from vision.imagefile import read_image
from vision.locate import find_grid
from vision.rgbfile import load_rgb_scan
from vision.scan import ScanResult, face_images_in, load_face_images, read_cube, read_rgb

__all__ = ["register"]

log = logging.getLogger(__name__)


def register(sub: Any) -> None:
    p = sub.add_parser("scan", help="read a cube from one photo per face (or RGB samples)")
    p.add_argument("image_dir", metavar="IMAGE_DIR", nargs="?", help="folder of face photos")
    p.add_argument("--rgb", metavar="FILE", help="mean RGB per sticker (vision-data format)")
    p.add_argument("--size", type=_size, default=None, help="cube size N (inferred)")
    p.add_argument(
        "--format",
        choices=("facelets", "json"),
        default="facelets",
        help="facelets (default): the URFDLB string; json: with validity, repairs, confidence",
    )
    p.add_argument("--annotate", metavar="OUT_DIR", help="write annotated PNGs and a net here")
    p.add_argument("--calibration", metavar="FILE", help="robot-mode calibration (TOML)")
    p.set_defaults(handler=_scan)

    vision = sub.add_parser("vision", help="camera calibration and colour learning")
    vsub = vision.add_subparsers(dest="vision_command", metavar="ACTION", required=True)
    c = vsub.add_parser("calibrate", help="find the sticker grid of a view and save it")
    c.add_argument(
        "source", metavar="SOURCE", help="image file, folder of face images, camera index or URL"
    )
    c.add_argument("--view", help="view name (default: the face letter in the file name)")
    c.add_argument("--size", type=_size, default=None, help="cube size N (inferred)")
    c.add_argument("--out", required=True, metavar="FILE", help="calibration TOML to write/update")
    c.set_defaults(handler=_calibrate)

    lc = vsub.add_parser("learn-colors", help="learn sticker colours from a solved cube")
    lc.add_argument(
        "image_dir", metavar="IMAGE_DIR", nargs="?", help="folder of face photos of a solved cube"
    )
    lc.add_argument("--rgb", metavar="FILE", help="mean RGB per sticker instead of photos")
    lc.add_argument("--calibration", metavar="FILE", help="robot-mode calibration to sample with")
    lc.add_argument("--out", required=True, metavar="FILE", help="calibration TOML to update")
    lc.set_defaults(handler=_learn_colors)


_size = cube_size(9)


def _read(
    args: argparse.Namespace, palette: ColourPalette | None
) -> tuple[ScanResult, dict[str, Any]]:
    images: dict[str, Any] = {}
    if args.rgb:
        if args.image_dir:
            raise ScanInputError("give either IMAGE_DIR or --rgb FILE, not both")
        rgb = load_rgb_scan(args.rgb)
        if args.size is not None and rgb.shape[1] != args.size:
            raise ScanInputError(
                f"{args.rgb} holds a {rgb.shape[1]}x{rgb.shape[1]} cube, not N={args.size}"
            )
        return read_rgb(rgb, palette=palette), images
    if not args.image_dir:
        raise ScanInputError("give a folder of face photos (IMAGE_DIR) or --rgb FILE")
    calibration = load_calibration(args.calibration) if getattr(args, "calibration", None) else None
    if calibration is not None and not calibration.views:
        calibration = None  # a file with learned colours only: free mode, with the palette
    if calibration is not None:
        folder = Path(args.image_dir)
        for view in calibration.views:
            matches = [
                p for p in sorted(folder.glob(f"*{view.name}.*")) if p.stem.endswith(view.name)
            ]
            if not matches:
                raise ScanInputError(f"no image for calibrated view {view.name} in {folder}")
            try:  # its declared size checked before it is decoded
                images[view.name] = read_image(matches[0])
            except CaptureError as exc:
                raise ScanInputError(str(exc)) from exc
    else:
        images = dict(load_face_images(args.image_dir))
    return read_cube(images, calibration, args.size, palette=palette), images


def _failed(args: argparse.Namespace, error: CommandFailed) -> int:
    """A read that failed: raised for the exit map, or with ``--format json``, whose result
    document (``valid``/``accepted`` false) is already on stdout, reported on stderr only."""
    if args.format == "json":
        return report(error)
    raise error


def _palette_from(args: argparse.Namespace) -> ColourPalette | None:
    if not getattr(args, "calibration", None):
        return None
    cal = load_calibration(args.calibration)
    lab = cal.palette(DEFAULT_SCHEME)
    return ColourPalette(lab) if lab is not None else None


def _annotation_folder(text: str) -> Path:
    """``--annotate``'s folder, created now (before the scan's work): a path that is a file, under
    a file or cannot be created is a usage error naming it (was a traceback after the scan)."""
    out = Path(text)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"--annotate {text[:80]}: cannot create the folder ({exc.strerror}); give a folder path"
        ) from exc
    return out


def _write_png(path: Path, image: npt.NDArray[np.uint8]) -> None:
    if not cv2.imwrite(str(path), image):  # OpenCV says False, nothing more
        raise CommandFailed(f"cannot write {path}; check that the --annotate folder is writable")


def _scan(args: argparse.Namespace) -> int:
    out = _annotation_folder(args.annotate) if args.annotate else None
    result, images = _read(args, _palette_from(args))
    if out is not None:
        for view, image in images.items():
            _write_png(out / f"{view}.png", annotate_view(image, view, result))
        _write_png(out / "net.png", net_image(result.cube, result))
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2))
    elif result.accepted:
        print(result.to_facelets())
    if not result.valid:
        details = [problem.message for problem in result.problems]
        for sticker in result.low_confidence:
            conf = float(result.confidence[sticker.face, sticker.row, sticker.col])
            details.append(f"unsure of sticker {sticker} (confidence {conf:.2f})")
        return _failed(args, CommandFailed("no valid cube could be read:", details=details))
    if not result.accepted:
        named = [str(s) for s in result.in_doubt]
        doubt = ", ".join(named[:12]) + (f" and {len(named) - 12} more" if len(named) > 12 else "")
        return _failed(
            args,
            CommandFailed(
                f"read refused: confidence {result.cube_confidence:.3f} is under "
                f"{result.classification.accept_confidence:.3f}; stickers in doubt: {doubt} "
                "(re-take those faces in better light, or scan again)"
            ),
        )
    for repair in result.repairs:
        log.warning("%s", repair.describe())
    return 0


def _decode(path: Path) -> Any:
    try:  # its declared size checked before it is decoded
        return read_image(path)
    except CaptureError as exc:
        raise UsageError(str(exc)) from exc


def _frames(args: argparse.Namespace) -> dict[str, Any]:
    """The first image of every view named by ``args.source`` (folder, file or camera)."""
    source = Path(args.source)
    if source.is_dir():
        frames = {letter: _decode(path) for letter, path in face_images_in(source).items()}
        if not frames:
            raise UsageError(f"no face images (U.png, ..._U.jpg) in {source}")
        return frames
    if source.is_file():
        img = _decode(source)
        name = args.view or source.stem[-1:]
        if name not in Face.__members__ and not args.view:
            raise UsageError(f"cannot tell the view of {source.name}: give --view NAME")
        return {name: img}
    if not args.view:
        raise UsageError("a camera source needs --view NAME (e.g. --view U)")
    spec: int | str = int(args.source) if args.source.isdigit() else args.source
    with OpenCVCamera(spec) as camera:
        return {args.view: camera.read()}


def _calibrate(args: argparse.Namespace) -> int:
    frames = _frames(args)
    views = []
    sizes = set()
    height, width = next(iter(frames.values())).shape[:2]
    try:
        for name, img in frames.items():
            if name not in Face.__members__:
                raise UsageError(
                    f"automatic calibration finds one face head-on; view {name!r} must be named "
                    "by its face letter (edit the file by hand for corner views)"
                )
            fit = find_grid(img, args.size, Face[name])
            sizes.add(fit.n)
            views.append(ViewCalibration(name, fit.sites))
            print(f"view {name}: {fit.n}x{fit.n} grid, {fit.detected} stickers detected")
    except (GridNotFoundError, NoCubeError) as exc:
        raise CommandFailed(f"calibration failed: {exc}") from exc
    if len(sizes) != 1:
        raise CommandFailed(f"views disagree on the cube size ({sorted(sizes)}); give --size N")
    out = _out_path(args.out)
    base = load_calibration(out) if out.exists() else None
    cal = merge_views(base, views, sizes.pop())
    cal = Calibration(cal.n, cal.views, width, height, cal.palette_lab)
    _save(cal, out)
    print(f"wrote {out} ({len(cal.views)} views)")
    return 0


def _out_path(text: str) -> Path:
    """``--out`` as a path the system can look up (``exists()`` raises for a name too long)."""
    out = Path(text)
    try:
        out.exists()
    except OSError as exc:
        raise UsageError(f"--out {text[:60]}…: {exc.strerror}; give a shorter path") from exc
    return out


def _save(cal: Calibration, out: Path) -> None:
    """Save ``cal`` to ``--out``; a path that cannot be written is a usage error naming it (was
    a FileNotFoundError / NotADirectoryError traceback, the work done lost without a word)."""
    try:
        save_calibration(cal, out)
    except OSError as exc:
        shown = str(out) if len(str(out)) <= 80 else f"{str(out)[:60]}…"
        raise UsageError(
            f"cannot write the calibration to {shown}: {exc.strerror}; give --out a path in an "
            "existing, writable folder and run the command again"
        ) from exc


def _learn_colors(args: argparse.Namespace) -> int:
    args.size = None
    result, _ = _read(args, None)
    lab = result.samples.reshape(6, -1, 3)
    spread = float(np.max(np.std(lab, axis=1)))
    if not result.cube.is_solved() or spread > 15.0:
        raise CommandFailed(
            "learn-colors needs a solved cube (each face one colour); the scan reads "
            f"{'an unsolved cube' if not result.cube.is_solved() else 'uneven faces'}"
        )
    out = _out_path(args.out)
    base = load_calibration(out) if out.exists() else Calibration(result.n, ())
    palette = dict(base.palette_lab)
    for face in Face:
        name = DEFAULT_SCHEME.colours[face]
        med = np.median(lab[face], axis=0)
        palette[name] = (float(med[0]), float(med[1]), float(med[2]))
    _save(Calibration(base.n, base.views, base.width, base.height, palette), out)
    print(f"wrote colours for {', '.join(palette)} to {out}")
    return 0
