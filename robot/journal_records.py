"""The job journal's (:mod:`robot.journal`) tables and the records it hands out: a job, one of
its moves, one look of a one-camera scan; and the conversion of a ``jobs`` row into a
:class:`JobRecord`."""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass
from typing import Any

from robot.daemon.events import ErrorCode, JobState

__all__ = [
    "FINISHED",
    "SCHEMA_SQL",
    "SCHEMA_VERSION",
    "JobRecord",
    "LookRecord",
    "MoveRecord",
    "job_from_row",
    "loads_object",
    "look_from_row",
    "move_from_row",
]

#: the journal's schema version (``PRAGMA user_version``): an older file is migrated, a newer
#: one refused
SCHEMA_VERSION = 4

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS jobs (
    id            TEXT PRIMARY KEY,
    seq           INTEGER NOT NULL,
    kind          TEXT NOT NULL,
    command_id    TEXT,
    size          INTEGER NOT NULL,
    state         TEXT NOT NULL,
    created_at    REAL NOT NULL,
    updated_at    REAL NOT NULL,
    finished_at   REAL,
    scanned       TEXT,
    scan_detail   TEXT,
    solution      TEXT,
    solution_detail TEXT,
    program       TEXT,
    total_moves   INTEGER NOT NULL DEFAULT 0,
    executed      INTEGER NOT NULL DEFAULT 0,
    reported      INTEGER NOT NULL DEFAULT 0,
    physical      TEXT,
    boot_id       INTEGER,
    first_index   INTEGER,
    dispatch_offset INTEGER,
    error_code    TEXT,
    error_message TEXT,
    stage_times   TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS moves (
    job_id      TEXT NOT NULL REFERENCES jobs(id),
    idx         INTEGER NOT NULL,
    face        TEXT NOT NULL,
    turns       INTEGER NOT NULL,
    motor       INTEGER NOT NULL,
    simultaneous INTEGER NOT NULL,
    fw_index    INTEGER,
    depth       INTEGER NOT NULL DEFAULT 1,
    executed_at REAL,
    PRIMARY KEY (job_id, idx)
);
CREATE TABLE IF NOT EXISTS commands (
    id          TEXT PRIMARY KEY,
    verb        TEXT NOT NULL,
    received_at REAL NOT NULL,
    reply       TEXT
);
CREATE TABLE IF NOT EXISTS scan_looks (
    job_id      TEXT NOT NULL REFERENCES jobs(id),
    seq         INTEGER NOT NULL,
    after       INTEGER NOT NULL,
    orientation INTEGER NOT NULL,
    face        TEXT NOT NULL,
    turn        INTEGER NOT NULL,
    samples     TEXT NOT NULL,
    taken_at    REAL NOT NULL,
    PRIMARY KEY (job_id, seq)
);
CREATE INDEX IF NOT EXISTS jobs_by_seq ON jobs(seq);
"""

#: job states that are finished; anything else is resumable
FINISHED = tuple(state for state in JobState if state.finished)


@dataclass(frozen=True, slots=True)
class MoveRecord:
    """One planned move of a job and whether it executed."""

    idx: int
    face: str
    turns: int
    motor: int
    simultaneous: bool
    fw_index: int | None
    executed_at: float | None
    #: layers the motor's gripper turns (1: the outer layer; journals before schema 3: 1)
    depth: int = 1


@dataclass(frozen=True, slots=True)
class LookRecord:
    """A frame a one-camera scan took (:meth:`Journal.record_look`)."""

    seq: int
    #: how many of the job's moves had executed when it was taken
    after: int
    #: the cube's orientation then (index of :func:`robot.kinds.frames.frames`, in the frame
    #: of the move rows' orientation)
    orientation: int
    #: the model face the camera saw, and the quarter turns clockwise it appeared turned by
    face: str
    turn: int
    #: L*a*b* samples at the camera face's N² cells, LTR order (row 0 at the bottom)
    samples: tuple[tuple[float, float, float], ...]
    taken_at: float


@dataclass(frozen=True, slots=True)
class JobRecord:
    """A job as the journal knows it."""

    id: str
    seq: int
    kind: str
    command_id: str | None
    size: int
    state: JobState
    created_at: float
    updated_at: float
    finished_at: float | None
    scanned: str | None
    scan_detail: dict[str, Any]
    solution: str | None
    solution_detail: dict[str, Any]
    program: str | None
    total_moves: int
    executed: int
    #: how many of the executed moves (from the first) the broker had acknowledged as events
    #: when the journal last wrote the job; a restart re-announces the rest
    reported: int
    physical: str | None
    boot_id: int | None
    first_index: int | None
    dispatch_offset: int | None
    error_code: ErrorCode | None
    error_message: str | None
    stage_times: dict[str, float]

    @property
    def finished(self) -> bool:
        return self.state.finished

    @property
    def remaining(self) -> int:
        return self.total_moves - self.executed


def loads_object(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


#: the latest time a journal row may hold (the year 9999: ``time.localtime`` formats it)
LATEST_TIME = 253402214400.0


def _optional_int(row: sqlite3.Row, name: str) -> int | None:
    """A nullable integer column (SQLite keeps whatever type was written: ``'abc'``, 1.5)."""
    value = row[name]
    if value is None or type(value) is int:
        return value
    raise ValueError(f"{name} is {value!r}, not a whole number")


def _time(row: sqlite3.Row, name: str) -> float | None:
    """A nullable time column: seconds since the epoch, from 1970 to the year 9999."""
    value = row[name]
    if value is None:
        return None
    if type(value) not in (int, float) or not 0 <= value < LATEST_TIME:
        raise ValueError(f"{name} is {value!r}, not a time")
    return float(value)


def _required_time(row: sqlite3.Row, name: str) -> float:
    value = _time(row, name)
    if value is None:
        raise ValueError(f"{name} is empty")
    return value


def job_from_row(row: sqlite3.Row) -> JobRecord:
    """The :class:`JobRecord` of a ``jobs`` row (ValueError, TypeError or KeyError for a value
    of a type or range the code cannot use)."""
    return JobRecord(
        id=row["id"],
        seq=int(row["seq"]),
        kind=row["kind"],
        command_id=row["command_id"],
        size=int(row["size"]),
        state=JobState(row["state"]),
        created_at=_required_time(row, "created_at"),
        updated_at=_required_time(row, "updated_at"),
        finished_at=_time(row, "finished_at"),
        scanned=row["scanned"],
        scan_detail=loads_object(row["scan_detail"]),
        solution=row["solution"],
        solution_detail=loads_object(row["solution_detail"]),
        program=row["program"],
        total_moves=int(row["total_moves"]),
        executed=int(row["executed"]),
        reported=int(row["reported"]),
        physical=row["physical"],
        boot_id=_optional_int(row, "boot_id"),
        first_index=_optional_int(row, "first_index"),
        dispatch_offset=_optional_int(row, "dispatch_offset"),
        error_code=None if row["error_code"] is None else ErrorCode(row["error_code"]),
        error_message=row["error_message"],
        stage_times={k: float(v) for k, v in loads_object(row["stage_times"]).items()},
    )


def move_from_row(r: sqlite3.Row) -> MoveRecord:
    """The :class:`MoveRecord` of a ``moves`` row."""
    return MoveRecord(
        int(r["idx"]),
        str(r["face"]),
        int(r["turns"]),
        int(r["motor"]),
        bool(r["simultaneous"]),
        r["fw_index"],
        r["executed_at"],
        int(r["depth"]),
    )


def look_from_row(r: sqlite3.Row) -> LookRecord:
    """The :class:`LookRecord` of a ``scan_looks`` row (ValueError for samples that are no
    list of finite L*a*b* triples)."""
    return LookRecord(
        int(r["seq"]),
        int(r["after"]),
        int(r["orientation"]),
        str(r["face"]),
        int(r["turn"]),
        _samples(r["samples"]),
        float(r["taken_at"]),
    )


def _samples(text: str) -> tuple[tuple[float, float, float], ...]:
    """A look's samples as :meth:`Journal.record_look` wrote them: a JSON list of L*a*b*
    triples (ValueError for anything else)."""
    cells = json.loads(text)
    if not isinstance(cells, list):
        raise ValueError("a look's samples are no list")
    out = []
    for cell in cells:
        if not (isinstance(cell, list) and len(cell) == 3):
            raise ValueError(f"a look's sample {cell!r} is no L*a*b* triple")
        values = tuple(float(v) for v in cell)
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"a look's sample {cell!r} is not finite")
        out.append((values[0], values[1], values[2]))
    return tuple(out)
