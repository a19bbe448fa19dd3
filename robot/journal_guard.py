"""Opening the journal so that no file can keep the daemon from starting.

A journal that cannot be trusted is moved aside (renamed ``<name>.quarantined-<UTC time>``,
with its ``-wal`` and ``-shm`` files) and a fresh one is started; the reason is returned so that
the daemon can say it (an ``error`` event with code ``journal_corrupt`` and a ``journal`` field
in the retained status) until an operator has rescanned the cube. Nothing is deleted: the
quarantined file is there for inspection.

Untrusted means: SQLite cannot open it or its quick check fails (bytes overwritten, a torn
page); it was written by a newer cuberobot; its unfinished job contradicts itself (a state
that is no state, more moves executed than planned, a physical cube that is not a cube of its
size, move rows missing or out of order, a move row the firmware cannot be sent, a dispatch
that is no firmware index or starts past the moves executed, a one-camera scan's look whose
samples are no L*a*b* triples); or any job row holds a value the
code cannot use (a text where a number goes, a time before 1970 or after 9999: the history on
the web page reads them all). A journal emptied to 0 bytes is told apart from a new file by a
marker file written beside it the first time (``<name>.marker``): the history and any
unfinished job are lost, and that is reported rather than silently started afresh.

A folder that cannot be written, or a path under a file, is not corruption: it raises
:class:`~robot.errors.JournalError` with the path, as before.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from firmware_protocol.moves import Move as WireMove
from robot.daemon.context import journaled
from robot.errors import JournalError
from robot.journal import JobRecord, Journal
from robot.kinds.wire import WireAction
from solver.cube.facelets import Cube

__all__ = ["JournalProblem", "open_journal"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JournalProblem:
    """Why the journal was not trusted, and where the old file went (None: nothing to move)."""

    reason: str
    quarantined: Path | None

    def message(self) -> str:
        where = f"; the old file is {self.quarantined}" if self.quarantined else ""
        return (
            f"the job journal could not be trusted ({self.reason}){where}; a new journal was "
            "started. The cube's state is unknown: scan it (`start`) before anything else"
        )


class _Untrusted(Exception):
    pass


def open_journal(path: Path) -> tuple[Journal, JournalProblem | None]:
    """The journal at ``path``, or a fresh one there and the problem with the old one."""
    marker = path.with_name(path.name + ".marker")
    problem: JournalProblem | None = None
    try:
        journal = _open_checked(path, marker)
    except _Untrusted as exc:
        moved = _quarantine(path)
        logger.error("journal %s not trusted: %s; moved to %s", path, exc, moved)
        problem = JournalProblem(str(exc), moved)
        journal = Journal(path)
    if not marker.exists():
        try:
            marker.write_text("cuberobot journal marker: the journal beside me is in use\n")
        except OSError as exc:
            logger.warning("cannot write the journal marker %s: %s", marker, exc.strerror)
    return journal, problem


def _open_checked(path: Path, marker: Path) -> Journal:
    if marker.exists() and path.exists() and path.stat().st_size == 0:
        raise _Untrusted(
            "the journal is empty (0 bytes) although this robot wrote it before: its job "
            "history and any unfinished job are lost"
        )
    if marker.exists() and not path.exists():
        logger.warning("journal %s is missing although it was in use: starting a new one", path)
    try:
        journal = Journal(path)
    except JournalError as exc:
        if _is_folder_problem(path):
            raise
        cause = exc.__cause__
        raise _Untrusted(f"SQLite cannot open it: {cause}" if cause else str(exc)) from exc
    try:
        check(journal)
    except _Untrusted:
        journal.close()
        raise
    return journal


def _is_folder_problem(path: Path) -> bool:
    """Whether the journal cannot be opened because of where it is, not what it holds."""
    parent = path.parent
    return not parent.is_dir() or (path.exists() and not path.is_file())


def check(journal: Journal) -> None:
    """Raise :class:`_Untrusted` if the file or its unfinished job contradicts itself."""
    try:
        verdict = journal.quick_check()
    except sqlite3.DatabaseError as exc:
        raise _Untrusted(f"SQLite cannot read it: {exc}") from exc
    if verdict != "ok":
        raise _Untrusted(f"SQLite's check found damage: {verdict}")
    try:
        record = journal.unfinished_job()
        if record is not None:
            _check_job(journal, record)
    except _Untrusted:
        raise
    except Exception as exc:  # a value the schema allows but the code cannot use
        raise _Untrusted(f"a job row cannot be read: {exc}") from exc
    try:
        journal.jobs(-1)  # every row (LIMIT -1): the history reads them (web page, last pose)
    except Exception as exc:
        raise _Untrusted(f"an older job row cannot be read: {exc}") from exc


def _check_job(journal: Journal, record: JobRecord) -> None:
    where = f"job {record.id}"
    if not 2 <= record.size <= 101:
        raise _Untrusted(f"{where}: cube size {record.size}")
    if not 0 <= record.executed <= record.total_moves:
        raise _Untrusted(
            f"{where}: {record.executed} moves executed of {record.total_moves} planned"
        )
    if not 0 <= record.reported <= record.executed:
        raise _Untrusted(f"{where}: {record.reported} moves reported of {record.executed}")
    _check_dispatch(record)
    _check_moves(journal, record)
    try:
        journal.looks(record.id)  # a one-camera resume reads them
    except JournalError as exc:
        raise _Untrusted(f"{where}: its scan's looks cannot be read: {exc.__cause__}") from exc
    for name, facelets in (("physical", record.physical), ("scanned", record.scanned)):
        if facelets is None:
            continue
        try:
            Cube.from_facelets(facelets, record.size)
        except Exception as exc:
            raise _Untrusted(f"{where}: the {name} cube is not a cube: {exc}") from exc


#: the firmware's move counters and boot id are 32-bit (PROTOCOL.md: IDENT, STATUS)
_COUNTER_LIMIT = 1 << 32


def _check_dispatch(record: JobRecord) -> None:
    """Where the job's moves went to the firmware: the recovery counts with these."""
    where = f"job {record.id}"
    if record.boot_id is not None and not 0 <= record.boot_id < _COUNTER_LIMIT:
        raise _Untrusted(f"{where}: boot_id {record.boot_id} is no firmware boot id")
    if record.first_index is not None and not 1 <= record.first_index <= _COUNTER_LIMIT:
        raise _Untrusted(f"{where}: first_index {record.first_index} is no firmware move index")
    offset = record.dispatch_offset
    if offset is not None and not 0 <= offset <= record.executed:
        raise _Untrusted(
            f"{where}: dispatch from move {offset} of {record.executed} executed (a dispatch "
            "starts at the moves executed)"
        )


def _check_moves(journal: Journal, record: JobRecord) -> None:
    """The job's move rows: one for each index from 0, each a move the firmware can be sent
    (what a resume does with them)."""
    where = f"job {record.id}"
    rows = journal.moves(record.id)
    if record.total_moves and len(rows) != record.total_moves:
        raise _Untrusted(f"{where}: move rows do not match the {record.total_moves} planned")
    for position, row in enumerate(rows):
        if row.idx != position:
            raise _Untrusted(f"{where}: move row {position + 1} has index {row.idx}")
        try:
            move = journaled(row)
            if isinstance(move, WireAction):
                _ = move.wire  # its motor and turns checked
            else:
                WireMove(row.motor, row.turns, row.simultaneous, row.depth)
        except Exception as exc:
            raise _Untrusted(
                f"{where}: move {position + 1} ({row.face!r}, {row.turns} quarter turns, motor "
                f"{row.motor}, depth {row.depth}) is no move: {exc}"
            ) from exc


def _quarantine(path: Path) -> Path | None:
    """Rename the journal and its WAL files aside; the new name (None if there was no file)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}.quarantined-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.quarantined-{stamp}-{n}")
    moved = None
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.rename(target.with_name(target.name + suffix))
            moved = moved or target
    return moved
