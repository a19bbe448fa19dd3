"""The one-table cache file (:mod:`solver.engines.common.tablefile`): what cannot be written
is the caller's typed error naming the place, never an ``OSError`` traceback."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest

from solver.engines.common.tablefile import read_table, write_table

MAGIC = b"TESTTBL1"
TABLE = np.arange(100, dtype=np.int8)


class Unwritable(Exception):
    pass


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t.bin"
    write_table(path, TABLE, MAGIC, {"v": 1}, Unwritable, "the test table")
    out = read_table(path, MAGIC, {"v": 1}, len(TABLE), "the test table")
    assert out is not None and np.array_equal(out, TABLE)


def test_a_folder_where_the_file_goes_is_the_callers_error(tmp_path: Path) -> None:
    path = tmp_path / "t.bin"
    path.mkdir()
    assert read_table(path, MAGIC, {"v": 1}, len(TABLE), "the test table") is None
    with pytest.raises(Unwritable, match=r"cannot write the test table to .*t\.bin"):
        write_table(path, TABLE, MAGIC, {"v": 1}, Unwritable, "the test table")
    assert os.listdir(tmp_path) == ["t.bin"]  # no temporary file left behind


def test_a_full_disk_is_the_callers_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*_args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(Unwritable, match="No space left on device"):
        write_table(tmp_path / "t.bin", TABLE, MAGIC, {"v": 1}, Unwritable, "the test table")
    assert os.listdir(tmp_path) == []
