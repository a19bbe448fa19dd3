"""Table cache files crafted to hurt (2026-11-27 evening sweep): a FIFO where a table goes made
the solver wait for a writer forever; a header nested thousands deep, or with values of the
wrong type, ended the solve with a RecursionError / TypeError traceback. Each is now a damaged
file, rebuilt (see docs/security.md, "Table caches")."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from solver.engines.common.tablefile import read_table, write_table
from solver.engines.twophase.tables.cache import MAGIC, Corrupt, read_bundle, write_bundle
from tests.fifo_guard import outcome_without_writer

TABLE_MAGIC = b"TESTTBL1"
TABLE = np.arange(100, dtype=np.int8)


class Unwritable(Exception):
    pass


def _bundle(tmp_path: Path) -> tuple[Path, dict[str, object], bytes]:
    path = tmp_path / "twophase-v2-test.bin"
    write_bundle(path, "test", {"a": np.arange(12, dtype=np.uint8).reshape(3, 4)})
    data = path.read_bytes()
    length = int.from_bytes(data[8:12], "little")
    return path, json.loads(data[12 : 12 + length]), data[12 + length :]


def _write(path: Path, header: bytes, payload: bytes) -> None:
    path.write_bytes(MAGIC + len(header).to_bytes(4, "little") + header + payload)


def _without_crc(header: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in header.items() if k != "header_crc32"}


def test_a_bundle_header_nested_deeply_is_corrupt(tmp_path: Path) -> None:
    path, _, payload = _bundle(tmp_path)
    _write(path, b"[" * 100_000 + b"]" * 100_000, payload)
    with pytest.raises(Corrupt):
        read_bundle(path, "test")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("shape", 12, id="shape-a-number"),
        pytest.param("name", [1], id="name-a-list"),
        pytest.param("shape", [3, "4"], id="shape-text"),
        pytest.param("dtype", ["u1"], id="dtype-a-list"),
        pytest.param("offset", None, id="offset-null"),
    ],
)
def test_a_bundle_header_of_the_wrong_types_is_corrupt(
    tmp_path: Path, field: str, value: object
) -> None:
    path, header, payload = _bundle(tmp_path)
    arrays = header["arrays"]
    assert isinstance(arrays, list)
    entry = {**arrays[0], field: value}
    _write(path, json.dumps({**_without_crc(header), "arrays": [entry]}).encode(), payload)
    with pytest.raises(Corrupt):
        read_bundle(path, "test")


def test_a_fifo_where_a_bundle_goes_is_corrupt_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "twophase-v2-test.bin"
    os.mkfifo(fifo)
    got = outcome_without_writer(fifo, lambda: read_bundle(fifo, "test"))
    assert len(got) == 1 and isinstance(got[0], Corrupt)
    assert "not a regular file" in str(got[0])


def test_a_fifo_where_a_table_goes_is_damaged_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "t.bin"
    os.mkfifo(fifo)
    got = outcome_without_writer(fifo, lambda: read_table(fifo, TABLE_MAGIC, {"v": 1}, 100, "t"))
    assert got == [None]


def test_a_table_header_nested_deeply_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "t.bin"
    write_table(path, TABLE, TABLE_MAGIC, {"v": 1}, Unwritable, "the test table")
    header = b"[" * 100_000 + b"]" * 100_000
    path.write_bytes(TABLE_MAGIC + len(header).to_bytes(4, "little") + header + TABLE.tobytes())
    assert read_table(path, TABLE_MAGIC, {"v": 1}, len(TABLE), "the test table") is None


def test_a_cache_folder_name_too_long_is_a_table_error_naming_the_way_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The two-phase loader's ``exists()`` raised ``OSError: File name too long`` (a traceback);
    the 2x2 and big-cube engines already said so (measured with fresh processes)."""
    from robot.cli import main

    folder = tmp_path / ("x" * 300)
    assert main(["solve", "--scramble", "R", "--cache-dir", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "too long" in err and "Traceback" not in err
