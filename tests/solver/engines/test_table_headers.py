"""Table files: the checks cover the header as well as the payload, so an edited header (the
tester's ``"offset": 78732`` -> ``78730`` in the moves file, ``967680`` -> ``967679`` in a
shape) is refused and the file rebuilt, never a crash or a search on a misread table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from solver.engines.twophase.tables.cache import (
    MAGIC,
    Corrupt,
    read_bundle,
    write_bundle,
)

ARRAYS = {
    "a": np.arange(19683, dtype=np.uint16).reshape(19683),
    "b": np.arange(967680, dtype=np.uint8) % 251,
    "c": np.arange(12, dtype=np.int32).reshape(3, 4),
}


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "t.bin"
    write_bundle(path, "moves", ARRAYS)
    return path


def _edit_header(path: Path, edit: str, replace: str) -> None:
    """Replace text in the JSON header only (keeping its length, as a byte edit would)."""
    data = bytearray(path.read_bytes())
    start = len(MAGIC) + 4
    hlen = int.from_bytes(data[len(MAGIC) : start], "little")
    header = data[start : start + hlen].decode()
    assert edit in header, header
    new = header.replace(edit, replace, 1).ljust(hlen)
    data[start : start + hlen] = new.encode()[:hlen]
    path.write_bytes(bytes(data))


def test_round_trip(tmp_path: Path) -> None:
    out = read_bundle(_file(tmp_path), "moves")
    for name, arr in ARRAYS.items():
        assert np.array_equal(out[name], arr)


@pytest.mark.parametrize(
    ("edit", "replace", "why"),
    [
        pytest.param('"offset": 39366', '"offset": 39364', "header checksum", id="offset-2-less"),
        pytest.param("967680", "967679", "header checksum", id="shape-1-less"),
        pytest.param('"<u2"', '"<u4"', "header checksum", id="dtype"),
        pytest.param('"group": "moves"', '"group": "moveX"', "is not", id="group"),
    ],
)
def test_an_edited_header_is_refused(tmp_path: Path, edit: str, replace: str, why: str) -> None:
    path = _file(tmp_path)
    _edit_header(path, edit, replace)
    with pytest.raises(Corrupt, match=why):
        read_bundle(path, "moves")


def _legacy(tmp_path: Path, mutate: dict[str, object] | None = None) -> Path:
    """A file as written before header_crc32 existed (optionally with one array entry edited)."""
    path = _file(tmp_path)
    data = path.read_bytes()
    start = len(MAGIC) + 4
    hlen = int.from_bytes(data[len(MAGIC) : start], "little")
    header = json.loads(data[start : start + hlen])
    del header["header_crc32"]
    if mutate:
        header["arrays"][1].update(mutate)
    text = json.dumps(header).encode()
    path.write_bytes(MAGIC + len(text).to_bytes(4, "little") + text + data[start + hlen :])
    return path


def test_a_file_from_before_the_header_checksum_still_loads(tmp_path: Path) -> None:
    out = read_bundle(_legacy(tmp_path), "moves")
    assert np.array_equal(out["b"], ARRAYS["b"])


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param({"offset": 39364}, id="offset"),
        pytest.param({"shape": [967679]}, id="shape"),
        pytest.param({"dtype": "<f8"}, id="float-dtype"),
        pytest.param({"dtype": "|O"}, id="object-dtype"),
        pytest.param({"shape": [-1]}, id="negative"),
        pytest.param({"name": "a"}, id="duplicate-name"),
    ],
)
def test_an_old_file_with_an_edited_array_list_is_refused(
    tmp_path: Path, mutate: dict[str, object]
) -> None:
    with pytest.raises(Corrupt):
        read_bundle(_legacy(tmp_path, mutate), "moves")
