"""Bad input never gives a traceback and never a cube: exit 2 for malformed input, exit 1 when
the input is well-formed but shows no readable cube; repair costs are never negative."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from robot.cli import main
from vision.classify import classify
from vision.colour import rgb_to_lab
from vision.errors import GridNotFoundError, NoCubeError, ScanInputError
from vision.locate import find_grid
from vision.rgbfile import dump_rgb_scan, load_rgb_scan


def _scan(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "scan.txt"
    path.write_bytes(content)
    return path


def _run(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    code = main(["scan", "--rgb", str(path), "--format", "json"])
    out = capsys.readouterr()
    return code, out.out, out.err


def _error_only(out: str, code: int) -> None:
    """No cube on stdout: only the --format json error document (robot.cli.exits)."""
    document = json.loads(out)
    assert list(document) == ["error"] and document["error"]["exit_code"] == code


def _uniform(value: float, n: int = 3) -> bytes:
    doc = {str(i + 1): [value, value, value] for i in range(6 * n * n)}
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe\x00garbage\x80\x81", "not a text file"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a text file"),
        (b"", "not JSON"),
        (b"[1, 2, 3]", "expected a JSON object"),
        (b'{"1": [1, 2]}', "6·N²"),
        (json.dumps({str(i + 1): [1, 2, "x"] for i in range(54)}).encode(), "non-numeric"),
        (json.dumps({str(i + 1): [1, 2, True] for i in range(54)}).encode(), "non-numeric"),
        (json.dumps({str(i + 1): [1, 2, 300] for i in range(54)}).encode(), "outside 0..255"),
        (json.dumps({str(i + 1): [1, 2, -1] for i in range(54)}).encode(), "outside 0..255"),
        (
            b'{"1": [NaN, 1, 1]' + b"".join(b', "%d": [1, 1, 1]' % i for i in range(2, 55)) + b"}",
            "outside 0..255",
        ),
        (b"[" * 100_000, "JSON"),
        (_uniform(1.0, 10), "N = 2..9"),
        (b'{"1": [' + b"9" * 5000 + b", 1, 1]}", "a number in it is too long"),
        (b" " * (2 << 20), "larger than 1048576 bytes"),
    ],
    ids=[
        "binary",
        "png-bytes",
        "empty",
        "list",
        "count",
        "string",
        "bool",
        "big",
        "negative",
        "nan",
        "deep",
        "too-big-n",
        "long-number",
        "huge-file",
    ],
)
def test_malformed_rgb_files_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    code, out, err = _run(capsys, _scan(tmp_path, content))
    assert code == 2
    _error_only(out, 2)
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("value", [0.0, 128.0, 255.0])
def test_all_equal_colours_read_no_cube(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: float
) -> None:
    """All zeros used to read as a solved cube."""
    code, out, err = _run(capsys, _scan(tmp_path, _uniform(value)))
    assert code == 1
    _error_only(out, 1)
    assert "same colour" in err


def test_all_equal_samples_raise_no_cube() -> None:
    with pytest.raises(NoCubeError):
        classify(np.zeros((6, 3, 3, 3)))


def test_non_finite_samples_are_malformed() -> None:
    lab = np.zeros((6, 3, 3, 3))
    lab[0, 0, 0, 0] = np.inf
    with pytest.raises(ScanInputError):
        classify(lab)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_random_colours_are_never_accepted_and_repairs_cost_nothing_negative(n: int) -> None:
    """Random colours are no cube: the read may be valid by construction, but it is refused,
    and every repair reported has a cost of at least zero."""
    for seed in range(8):
        rgb = np.random.default_rng([n, seed]).uniform(0, 255, (6, n, n, 3))
        result = classify(rgb_to_lab(rgb))
        assert not result.accepted
        assert all(r.cost >= 0 for r in result.repairs)


def test_random_colour_file_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "random.txt"
    dump_rgb_scan(np.random.default_rng(5).uniform(0, 255, (6, 3, 3, 3)), path)
    code, out, _ = _run(capsys, path)
    assert code == 1
    doc = json.loads(out)
    assert doc["verdict"] == "refused"
    assert all(r["cost"] >= 0 for r in doc["repairs"])


def test_a_directory_as_rgb_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, tmp_path)
    assert code == 2 and "cannot read RGB scan" in err
    _error_only(out, 2)


def test_round_trip_is_unchanged_by_the_checks(tmp_path: Path) -> None:
    rgb = np.random.default_rng(2).integers(0, 256, (6, 3, 3, 3)).astype(np.float64)
    path = tmp_path / "scan.txt"
    dump_rgb_scan(rgb, path)
    assert np.array_equal(load_rgb_scan(path), rgb)


def test_an_endless_rgb_file_is_refused_not_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """/dev/zero used to be read until memory ran out."""
    code, out, err = _run(capsys, Path("/dev/zero"))
    assert code == 2
    _error_only(out, 2)
    assert "/dev/zero: not a regular file" in err  # a device: refused unread


@pytest.mark.parametrize(
    ("shape", "label"),
    [((0, 0, 3), "0x0"), ((1, 5000, 3), "5000x1"), ((40, 100_000, 3), "100000x40")],
)
def test_empty_or_thin_images_find_no_grid(shape: tuple[int, int, int], label: str) -> None:
    """A 0x0 image was a ZeroDivisionError, a 1-pixel-high one an OpenCV assertion."""
    image = np.zeros(shape, np.uint8)
    with pytest.raises(GridNotFoundError, match=f"the image is {label} pixels: too small"):
        find_grid(image, 3)


@pytest.mark.parametrize("centre", [(100.0, 30.0), (30.0, 85.0), (1e9, 1e9)])
def test_a_sticker_centred_outside_the_image_is_refused(centre: tuple[float, float]) -> None:
    """A site whose centre is past the image's edge (a calibration made at a larger
    resolution) used to be sampled from the clipped patch: the frame's border, read as if it
    were the sticker."""
    from solver.cube.geometry import Face
    from vision.calibration import StickerSite
    from vision.locate import sample_sites

    image = np.full((80, 96, 3), 200, np.uint8)
    site = StickerSite(Face.U, 0, 0, centre, (), 8.0)
    with pytest.raises(ScanInputError, match=r"sticker U\[0,0\] at .* is outside the 96x80 image"):
        sample_sites(image, [site])


def _png_bomb(width: int, height: int) -> bytes:
    """A 1-bit grey PNG of zeros: a few kB on disk, width x height x 3 bytes once decoded."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    row = b"\x00" * (1 + (width + 7) // 8)
    packer = zlib.compressobj(9)
    data = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


def test_an_image_declaring_too_many_pixels_is_refused_before_decoding(tmp_path: Path) -> None:
    """An 18 kB PNG of 12,000 x 12,000 pixels was decoded: 430 MB for one face (a 48 kB one of
    20,000 x 20,000, 1.2 GB), six of them took the machine's memory."""
    from vision.errors import CaptureError
    from vision.scan import load_face_images

    for face in "URFDLB":
        (tmp_path / f"{face}.png").write_bytes(_png_bomb(12_000, 12_000))
    with pytest.raises(CaptureError, match=r"declares 12000x12000 pixels; at most 64,000,000"):
        load_face_images(tmp_path)


@pytest.mark.parametrize("ext", [".png", ".jpg", ".bmp", ".tif", ".webp"])
def test_image_headers_give_the_size_opencv_decodes(ext: str) -> None:
    import io

    import cv2

    from vision.imagefile import image_size

    image = np.random.default_rng(0).integers(0, 255, (123, 457, 3), dtype=np.uint8)
    ok, encoded = cv2.imencode(ext, image)
    assert ok
    assert image_size(io.BytesIO(encoded.tobytes())) == (457, 123)


@pytest.mark.parametrize(
    "content",
    [b"", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff\xe0\x00", b"GIF89a....", b"P6\n4 4\n255\n"],
    ids=["empty", "png-cut", "jpeg-cut", "gif", "ppm"],
)
def test_a_face_image_of_no_known_format_is_refused_by_name(tmp_path: Path, content: bytes) -> None:
    from vision.errors import CaptureError
    from vision.scan import load_face_images

    (tmp_path / "U.png").write_bytes(content)
    with pytest.raises(CaptureError, match=r"U\.png: not a PNG, JPEG, BMP, TIFF or WebP"):
        load_face_images(tmp_path)


def test_a_face_image_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    """Opening a FIFO named U.png waited for a writer forever."""
    import os

    from vision.errors import CaptureError
    from vision.scan import load_face_images

    os.mkfifo(tmp_path / "U.png")
    with pytest.raises(CaptureError, match=r"U\.png: not a regular file"):
        load_face_images(tmp_path)
