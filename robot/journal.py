"""The job journal: every job, its scan, its solution and each executed move, in SQLite.

The physical cube's state is the data that must never be lost. The journal records, in order:

* a job row when a job starts (kind, command id, cube size);
* the scanned (or given) state as a facelet string;
* the solution and the motor program (each planned move, its firmware index still unknown);
  with anytime solving the plan as it stands: the moves sent to the firmware never change, the
  ones after them are replaced by each refinement (:meth:`Journal.record_refinement`);
* every move as the firmware reports it executed (``moves.executed_at`` set, and the job's
  ``executed`` counter and ``physical`` facelets updated in the same transaction);
* the end: state DONE / ERROR / ABORTED, error code and message, per-stage times.

So after a crash the cube's exact physical state is ``physical`` of the last job (or, for a job
that never executed a move, its scanned state), and an unfinished job's remaining moves are the
rows with ``executed_at IS NULL``. Commits use WAL with ``synchronous=FULL``: a move recorded is a
move that survives a power cut. The WAL is copied into the file when a job ends
(:data:`AUTOCHECKPOINT_PAGES`).

Commands seen (id, verb, reply) are kept too, so a duplicate command id is recognised across a
restart.

A one-camera scan (:mod:`robot.daemon.onecamera`) also keeps each frame it took
(:meth:`Journal.record_look`: the view, the cube's orientation then and the colour samples at
the camera's sticker cells), so that after a crash mid-scan the scan goes on from where it
stopped and takes only the views it still lacks.

Schema version (``PRAGMA user_version``) :data:`SCHEMA_VERSION`; an older file is migrated, a
newer one is refused.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from robot.daemon.events import ErrorCode, JobState
from robot.errors import JournalError
from robot.journal_records import (
    FINISHED,
    SCHEMA_SQL,
    SCHEMA_VERSION,
    JobRecord,
    LookRecord,
    MoveRecord,
    job_from_row,
    loads_object,
    look_from_row,
    move_from_row,
)

__all__ = [
    "FINISHED",
    "SCHEMA_VERSION",
    "JobRecord",
    "Journal",
    "LookRecord",
    "MoveRecord",
]

logger = logging.getLogger(__name__)

#: SQLite copies the WAL into the file inside the commit that makes it this long (pages); at
#: the default 1000 (ten jobs) an anytime refinement's write took 73 ms and held the next
#: commit. :meth:`Journal.finish` copies it at each job's end; this is only a backstop.
AUTOCHECKPOINT_PAGES = 20000


_T = TypeVar("_T")


class Journal:
    """Synchronous SQLite journal (one connection; from the event loop use
    :class:`~robot.journal_async.AsyncJournal`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if "\x00" in str(path):
            raise JournalError(
                f"the journal path {str(path)!r} contains a NUL character; fix [journal] path "
                "in the profile (or --journal)"
            )
        if str(path) != ":memory:":
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise JournalError(
                    f"cannot make the journal's folder {self.path.parent}: {exc.strerror} (is a "
                    "part of the path a file?); fix [journal] path in the profile"
                ) from exc
        try:
            self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")
            self._db.execute("PRAGMA foreign_keys=ON")
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                self._db.close()
                raise JournalError(
                    f"journal {self.path} has schema version {version}, newer than this "
                    f"cuberobot ({SCHEMA_VERSION}); upgrade cuberobot or point [journal] path "
                    "at a new file"
                )
            self._migrate(version)
            self._db.executescript(SCHEMA_SQL)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            raise JournalError(
                f"cannot open the job journal {self.path}: {exc}; check the path in [journal] "
                "and that the folder is writable"
            ) from exc
        self._lock = threading.Lock()
        logger.info("journal %s (schema %d)", self.path, SCHEMA_VERSION)

    def _migrate(self, version: int) -> None:
        """Bring a file of an older schema up to date (a new file has no tables yet)."""
        tables = {
            str(row[0])
            for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if "jobs" not in tables:
            return
        if version < 2:
            # schema 2: jobs.reported (events the broker acknowledged, re-announced after a crash)
            self._db.execute("ALTER TABLE jobs ADD COLUMN reported INTEGER NOT NULL DEFAULT 0")
            logger.info("journal %s migrated from schema %d to 2", self.path, version)
        if version < 3:
            # schema 3: moves.depth (layers the gripper turns; every older move turned one)
            self._db.execute("ALTER TABLE moves ADD COLUMN depth INTEGER NOT NULL DEFAULT 1")
            logger.info("journal %s migrated from schema %d to 3", self.path, version)
        if version < 4:
            # schema 4: the scan_looks table (created with the schema below; no older job has
            # a look to keep)
            logger.info("journal %s migrated from schema %d to 4", self.path, version)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def quick_check(self) -> str:
        """SQLite's ``quick_check`` verdict: ``"ok"`` or what is damaged (raises
        :class:`sqlite3.DatabaseError` on a file too damaged to say)."""
        with self._lock:
            return str(self._db.execute("PRAGMA quick_check").fetchone()[0])

    def _tx(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    result = fn(self._db)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                return result
            except sqlite3.Error as exc:
                raise JournalError(f"journal {self.path}: {exc}") from exc

    def _read(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """A read under the lock: what SQLite cannot read (a file damaged while the daemon
        runs, a disk gone) and a row of a type or range the code cannot use (written by hand
        since the journal was checked at start) are a :class:`JournalError` naming the
        journal, not an exception of the layer below."""
        with self._lock:
            try:
                return fn(self._db)
            except sqlite3.Error as exc:
                raise JournalError(f"journal {self.path}: {exc}") from exc
            except (ValueError, TypeError, KeyError, IndexError) as exc:
                raise JournalError(
                    f"journal {self.path}: a row the daemon cannot use ({exc}); stop the "
                    "daemon and start it again: the journal is checked at start and set aside "
                    "when it cannot be trusted"
                ) from exc

    def _all(
        self, sql: str, params: tuple[Any, ...], convert: Callable[[sqlite3.Row], _T]
    ) -> list[_T]:
        """The rows of a query, each converted (both checked as :meth:`_read` does)."""
        return self._read(lambda db: [convert(r) for r in db.execute(sql, params).fetchall()])

    def _first(
        self, sql: str, params: tuple[Any, ...], convert: Callable[[sqlite3.Row], _T]
    ) -> _T | None:
        """The first row of a query, converted, or None."""

        def run(db: sqlite3.Connection) -> _T | None:
            row = db.execute(sql, params).fetchone()
            return None if row is None else convert(row)

        return self._read(run)

    # --- jobs ---------------------------------------------------------------------------------
    def create_job(self, kind: str, size: int, command_id: str | None = None) -> str:
        job_id = uuid.uuid4().hex[:12]
        now = time.time()

        def run(db: sqlite3.Connection) -> None:
            seq = int(db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs").fetchone()[0])
            db.execute(
                "INSERT INTO jobs (id, seq, kind, command_id, size, state, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (job_id, seq, kind, command_id, size, JobState.IDLE.value, now, now),
            )

        self._tx(run)
        return job_id

    def set_state(self, job_id: str, state: JobState) -> None:
        self._update(job_id, state=JobState(state).value)

    def _update(self, job_id: str, **fields: Any) -> None:
        fields["updated_at"] = time.time()
        cols = ", ".join(f"{k} = ?" for k in fields)

        def run(db: sqlite3.Connection) -> None:
            cur = db.execute(f"UPDATE jobs SET {cols} WHERE id = ?", (*fields.values(), job_id))
            if cur.rowcount != 1:
                raise JournalError(f"journal {self.path}: no job {job_id}")

        self._tx(run)

    def record_scan(self, job_id: str, facelets: str, detail: Mapping[str, Any]) -> None:
        self._update(
            job_id, scanned=facelets, physical=facelets, scan_detail=json.dumps(dict(detail))
        )

    def record_stage_time(self, job_id: str, stage: str, seconds: float) -> None:
        def run(db: sqlite3.Connection) -> None:
            row = db.execute("SELECT stage_times FROM jobs WHERE id = ?", (job_id,)).fetchone()
            times = loads_object(row["stage_times"]) if row else {}
            times[stage] = round(times.get(stage, 0.0) + seconds, 6)
            db.execute(
                "UPDATE jobs SET stage_times = ?, updated_at = ? WHERE id = ?",
                (json.dumps(times), time.time(), job_id),
            )

        self._tx(run)

    def record_plan(
        self,
        job_id: str,
        solution: str,
        solution_detail: Mapping[str, Any],
        program: str,
        moves: Sequence[tuple[str, int, int, bool] | tuple[str, int, int, bool, int]],
        *,
        state: JobState | None = None,
        dispatch: tuple[int, int, int] | None = None,
        syncing: Callable[[], object] = lambda: None,
    ) -> None:
        """Store the solution and the motor program: ``moves`` are (face, turns, motor,
        simultaneous_with_next[, depth]) in execution order (no depth: the outer layer). In the
        same transaction (one write less before the motors start): the job's new ``state`` and
        the ``dispatch`` of its moves (``boot_id, first_index, offset`` as
        :meth:`record_dispatch`), when given; ``syncing()`` is called before the commit's sync."""
        now = time.time()

        def run(db: sqlite3.Connection) -> None:
            if state is not None:
                db.execute(
                    "UPDATE jobs SET state = ?, updated_at = ? WHERE id = ?",
                    (JobState(state).value, now, job_id),
                )
            if dispatch is not None:
                db.execute(
                    "UPDATE jobs SET boot_id = ?, first_index = ?, dispatch_offset = ? "
                    "WHERE id = ?",
                    (*dispatch, job_id),
                )
            db.execute("DELETE FROM moves WHERE job_id = ? AND executed_at IS NULL", (job_id,))
            done = int(
                db.execute("SELECT COUNT(*) FROM moves WHERE job_id = ?", (job_id,)).fetchone()[0]
            )
            db.executemany(
                "INSERT INTO moves (job_id, idx, face, turns, motor, simultaneous, depth) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (job_id, done + k, m[0], m[1], m[2], int(m[3]), m[4] if len(m) > 4 else 1)
                    for k, m in enumerate(moves)
                ],
            )
            db.execute(
                "UPDATE jobs SET solution = ?, solution_detail = ?, program = ?, "
                "total_moves = ?, updated_at = ? WHERE id = ?",
                (
                    solution,
                    json.dumps(dict(solution_detail)),
                    program,
                    done + len(moves),
                    now,
                    job_id,
                ),
            )
            syncing()

        self._tx(run)

    def record_refinement(
        self,
        job_id: str,
        keep: int,
        solution: str,
        solution_detail: Mapping[str, Any],
        program: str,
        moves: Sequence[tuple[str, int, int, bool]],
    ) -> None:
        """Anytime solving: the job's first ``keep`` planned moves stay (they were sent to the
        firmware); the planned moves after them are replaced by ``moves`` (as in
        :meth:`record_plan`). Refuses (:class:`JournalError`) to replace a move executed."""
        now = time.time()

        def run(db: sqlite3.Connection) -> None:
            executed = int(
                db.execute("SELECT executed FROM jobs WHERE id = ?", (job_id,)).fetchone()[0]
            )
            if executed > keep:
                raise JournalError(
                    f"job {job_id}: a refinement keeping {keep} moves would replace executed "
                    f"moves ({executed} executed)"
                )
            db.execute("DELETE FROM moves WHERE job_id = ? AND idx >= ?", (job_id, keep))
            db.executemany(
                "INSERT INTO moves (job_id, idx, face, turns, motor, simultaneous) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (job_id, keep + k, face, turns, motor, int(sim))
                    for k, (face, turns, motor, sim) in enumerate(moves)
                ],
            )
            db.execute(
                "UPDATE jobs SET solution = ?, solution_detail = ?, program = ?, "
                "total_moves = ?, updated_at = ? WHERE id = ?",
                (
                    solution,
                    json.dumps(dict(solution_detail)),
                    program,
                    keep + len(moves),
                    now,
                    job_id,
                ),
            )

        self._tx(run)

    def record_dispatch(self, job_id: str, boot_id: int, first_index: int, offset: int) -> None:
        """The remaining moves (from job move ``offset`` on) are sent to the firmware with boot
        id ``boot_id``; the first of them gets firmware move index ``first_index``."""
        self._update(job_id, boot_id=boot_id, first_index=first_index, dispatch_offset=offset)

    def record_executed(
        self,
        job_id: str,
        idx: int,
        physical: str | None,
        fw_index: int | None = None,
        reported: int | None = None,
    ) -> None:
        """Move ``idx`` of the job executed; ``physical`` is the cube after it (None: not
        known yet, an action of a one-camera scan before the cube is read). ``reported``,
        when given, is how many executed moves' events the broker has acknowledged so far."""
        now = time.time()

        def run(db: sqlite3.Connection) -> None:
            cur = db.execute(
                "UPDATE moves SET executed_at = ?, fw_index = ? "
                "WHERE job_id = ? AND idx = ? AND executed_at IS NULL",
                (now, fw_index, job_id, idx),
            )
            if cur.rowcount != 1:
                row = db.execute(
                    "SELECT executed_at FROM moves WHERE job_id = ? AND idx = ?", (job_id, idx)
                ).fetchone()
                what = "is not planned" if row is None else "was already recorded as executed"
                raise JournalError(f"job {job_id}: move {idx} {what}")
            expected = int(
                db.execute("SELECT executed FROM jobs WHERE id = ?", (job_id,)).fetchone()[0]
            )
            if expected != idx:
                raise JournalError(
                    f"job {job_id}: move {idx} reported executed after {expected} moves; moves "
                    "must execute in order"
                )
            db.execute(
                "UPDATE jobs SET executed = executed + 1, physical = ?, updated_at = ?, "
                "reported = MAX(reported, MIN(?, executed + 1)) WHERE id = ?",
                (physical, now, 0 if reported is None else reported, job_id),
            )

        self._tx(run)

    def retract_executed(self, job_id: str, keep: int, physical: str | None) -> list[int]:
        """The job's moves ``keep`` on are no longer believed executed: the report that
        journaled them was denied (a later STATUS, or the firmware's own counter on the same
        boot, says they did not complete). They go back to not executed, the job to ``keep``
        executed moves with ``physical`` the cube after them (None: a one-camera scan's actions
        before the cube is read), and the broker's acknowledged mark no further. Returns the
        indexes retracted (0-based), in order."""
        now = time.time()

        def run(db: sqlite3.Connection) -> list[int]:
            row = db.execute("SELECT executed FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None:
                raise JournalError(f"job {job_id} is not in the journal")
            if not 0 <= keep <= int(row[0]):
                raise JournalError(
                    f"job {job_id}: cannot keep {keep} executed moves of {int(row[0])}"
                )
            retracted = [
                int(r[0])
                for r in db.execute(
                    "SELECT idx FROM moves WHERE job_id = ? AND idx >= ? "
                    "AND executed_at IS NOT NULL ORDER BY idx",
                    (job_id, keep),
                )
            ]
            db.execute(
                "UPDATE moves SET executed_at = NULL, fw_index = NULL "
                "WHERE job_id = ? AND idx >= ?",
                (job_id, keep),
            )
            db.execute(
                "UPDATE jobs SET executed = ?, physical = ?, updated_at = ?, "
                "reported = MIN(reported, ?) WHERE id = ?",
                (keep, physical, now, keep, job_id),
            )
            return retracted

        result: list[int] = self._tx(run)
        return result

    def finish(
        self,
        job_id: str,
        state: JobState,
        error_code: ErrorCode | None = None,
        error_message: str | None = None,
    ) -> None:
        state = JobState(state)
        if not state.finished:
            raise ValueError(f"finish with {state.value!r}; use one of {', '.join(FINISHED)}")
        self._update(
            job_id,
            state=state.value,
            finished_at=time.time(),
            error_code=None if error_code is None else ErrorCode(error_code).value,
            error_message=error_message,
        )
        self.checkpoint()

    def checkpoint(self) -> None:
        """Copy the WAL into the file now (between jobs: :data:`AUTOCHECKPOINT_PAGES`)."""
        with self._lock:
            try:
                self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.Error as exc:  # (the job's end is recorded: only the copy waits)
                logger.warning("journal %s: checkpoint failed: %s", self.path, exc)

    def job(self, job_id: str) -> JobRecord | None:
        return self._first("SELECT * FROM jobs WHERE id = ?", (job_id,), job_from_row)

    def latest_job(self) -> JobRecord | None:
        return self._first("SELECT * FROM jobs ORDER BY seq DESC LIMIT 1", (), job_from_row)

    def unfinished_job(self) -> JobRecord | None:
        """The latest job if it did not finish (the daemon died during it)."""
        job = self.latest_job()
        return job if job is not None and not job.finished else None

    def jobs(self, limit: int = 20, offset: int = 0) -> list[JobRecord]:
        """Jobs, newest first (``offset`` skips that many)."""
        sql = "SELECT * FROM jobs ORDER BY seq DESC LIMIT ? OFFSET ?"
        return self._all(sql, (limit, offset), job_from_row)

    def last_moved_job(self, before: str | None = None) -> JobRecord | None:
        """The latest job with an executed move (other than ``before``): the one whose last
        move left the machine as it is (jobs refused before their first move do not count),
        or one that sent moves and ended ``parts_unknown`` (whether any ran is unknown, so none
        may be reported executed)."""
        return self._first(
            "SELECT * FROM jobs WHERE (executed > 0 OR (error_code = ? AND first_index IS "
            "NOT NULL)) AND id IS NOT ? ORDER BY seq DESC LIMIT 1",
            (ErrorCode.PARTS_UNKNOWN.value, before),
            job_from_row,
        )

    def job_count(self) -> int:
        return self._read(lambda db: int(db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0]))

    def moves(self, job_id: str) -> list[MoveRecord]:
        sql = "SELECT * FROM moves WHERE job_id = ? ORDER BY idx"
        return self._all(sql, (job_id,), move_from_row)

    def record_look(
        self,
        job_id: str,
        after: int,
        orientation: int,
        face: str,
        turn: int,
        samples: Sequence[Sequence[float]],
    ) -> int:
        """A frame a one-camera scan took after ``after`` of the job's moves executed, the cube
        in ``orientation``: the camera saw model ``face`` turned ``turn`` quarter turns, with
        ``samples`` (L*a*b*) at its cells. Returns the look's number within the job."""
        now = time.time()
        text = json.dumps([[round(float(v), 4) for v in cell] for cell in samples])

        def run(db: sqlite3.Connection) -> int:
            seq = int(
                db.execute(
                    "SELECT COALESCE(MAX(seq), -1) + 1 FROM scan_looks WHERE job_id = ?",
                    (job_id,),
                ).fetchone()[0]
            )
            db.execute(
                "INSERT INTO scan_looks (job_id, seq, after, orientation, face, turn, samples, "
                "taken_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (job_id, seq, after, orientation, face, turn, text, now),
            )
            return seq

        result: int = self._tx(run)
        return result

    def forget_looks(self, job_id: str) -> None:
        """Drop the job's looks (a fresh scan starts: the earlier ones are not in its frame)."""

        def run(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM scan_looks WHERE job_id = ?", (job_id,))

        self._tx(run)

    def looks(self, job_id: str) -> list[LookRecord]:
        """The frames the job's one-camera scans took, in order."""
        sql = "SELECT * FROM scan_looks WHERE job_id = ? ORDER BY seq"
        return self._all(sql, (job_id,), look_from_row)

    def last_physical(self) -> str | None:
        """The cube's physical state as last known (latest job with a state)."""
        return self._first(
            "SELECT physical FROM jobs WHERE physical IS NOT NULL ORDER BY seq DESC LIMIT 1",
            (),
            lambda row: str(row["physical"]),
        )

    # --- commands -----------------------------------------------------------------------------
    def seen_command(self, command_id: str) -> dict[str, Any] | None:
        """The reply given to ``command_id`` (``{}`` if it is in progress), or None if new."""
        # the row as a tuple: no row (a new command) is None, a NULL reply (in progress) is (None,)
        reply = self._first("SELECT reply FROM commands WHERE id = ?", (command_id,), tuple)
        if reply is None:
            return None
        try:
            return loads_object(reply[0])
        except (ValueError, TypeError) as exc:  # a row written by hand, or a torn one
            logger.warning(
                "journal %s: the reply to command %r cannot be read (%s); it is answered as a "
                "duplicate without it",
                self.path,
                command_id,
                exc,
            )
            return {}

    def record_command(self, command_id: str, verb: str) -> bool:
        """Remember a command id; False if it was already known (a duplicate)."""

        def run(db: sqlite3.Connection) -> bool:
            cur = db.execute(
                "INSERT OR IGNORE INTO commands (id, verb, received_at) VALUES (?, ?, ?)",
                (command_id, verb, time.time()),
            )
            return cur.rowcount == 1

        return bool(self._tx(run))

    def record_reply(self, command_id: str, reply: Mapping[str, Any]) -> None:
        def run(db: sqlite3.Connection) -> None:
            db.execute(
                "UPDATE commands SET reply = ? WHERE id = ?", (json.dumps(dict(reply)), command_id)
            )

        self._tx(run)
