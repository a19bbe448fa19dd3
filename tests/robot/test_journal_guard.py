"""No journal file can keep the daemon from starting: each untrusted file is moved aside with the
reason, a fresh journal is started; a path problem stays a clear JournalError."""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from robot.daemon.events import JobState
from robot.errors import JournalError
from robot.journal import Journal
from robot.journal_guard import open_journal
from solver.cube.facelets import Cube


def _journal_with_unfinished_job(path: Path) -> str:
    """A journal whose last job executed 2 of 3 planned moves (as a crash leaves it)."""
    journal, problem = open_journal(path)
    assert problem is None
    cube = Cube.solved(3).apply("R U F")
    job = journal.create_job("start", 3)
    journal.record_scan(job, cube.to_facelets("scheme"), {})
    journal.record_plan(job, "F' U' R'", {}, "F' U' R'", [("F", -1, 2, False),
                        ("U", -1, 0, False), ("R", -1, 1, False)])  # fmt: skip
    journal.record_dispatch(job, 0x1234, 1, 0)
    for idx, move in enumerate(["F'", "U'"]):
        cube = cube.apply(move)
        journal.record_executed(job, idx, cube.to_facelets("scheme"), idx + 1, 0)
    journal.set_state(job, JobState.EXECUTING)
    journal.close()
    return job


def _sql(path: Path, statement: str) -> None:
    db = sqlite3.connect(path)
    db.execute(statement)
    db.commit()
    db.close()


def _scribble(path: Path) -> None:
    """8 KB of random bytes over the middle of the file (a torn or overwritten page)."""
    data = bytearray(path.read_bytes())
    start = max(100, len(data) // 2 - 4096)
    data[start : start + 8192] = random.Random(7).randbytes(8192)
    path.write_bytes(bytes(data))


Damage = Callable[[Path], None]
CASES: list[tuple[str, Damage, str]] = [
    ("random-bytes-in-a-page", _scribble, "SQLite"),
    ("physical-not-a-cube", lambda p: _sql(p, "UPDATE jobs SET physical='UUUUXX'"), "not a cube"),
    ("executed-999", lambda p: _sql(p, "UPDATE jobs SET executed=999"), "999 moves executed"),
    ("state-unknown", lambda p: _sql(p, "UPDATE jobs SET state='FLYING'"), "cannot be read"),
    ("reported-ahead", lambda p: _sql(p, "UPDATE jobs SET reported=3"), "reported"),
    ("moves-missing", lambda p: _sql(p, "DELETE FROM moves WHERE idx=2"), "move rows"),
    ("newer-schema", lambda p: _sql(p, "PRAGMA user_version=99"), "newer"),
    ("zero-bytes", lambda p: p.write_bytes(b""), "0 bytes"),
    ("not-sqlite", lambda p: p.write_bytes(b"hello" * 100), "SQLite"),
]


@pytest.mark.parametrize(("damage", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_untrusted_journal_is_quarantined_and_a_new_one_started(
    tmp_path: Path, damage: Damage, words: str
) -> None:
    path = tmp_path / "journal.sqlite"
    _journal_with_unfinished_job(path)
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    damage(path)
    journal, problem = open_journal(path)
    try:
        assert problem is not None, "damage went unnoticed"
        assert words in problem.reason, problem.reason
        assert problem.quarantined is not None and problem.quarantined.exists()
        assert "quarantined" in problem.quarantined.name
        assert journal.unfinished_job() is None and journal.jobs() == []
        assert "scan it" in problem.message()
    finally:
        journal.close()
    again, second = open_journal(path)  # the new journal is trusted from now on
    again.close()
    assert second is None


_OLDEST = "WHERE seq = (SELECT MIN(seq) FROM jobs)"


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(f"UPDATE jobs SET state='FLYING' {_OLDEST}", id="state-unknown"),
        pytest.param(f'UPDATE jobs SET stage_times=\'{{"scan": "x"}}\' {_OLDEST}', id="times"),
        pytest.param(f"UPDATE jobs SET error_code='no_such_code' {_OLDEST}", id="error-code"),
        pytest.param(f"UPDATE jobs SET scan_detail='{{not json' {_OLDEST}", id="detail-json"),
    ],
)
def test_an_older_finished_job_that_cannot_be_read_is_untrusted(
    tmp_path: Path, damage: str
) -> None:
    """The history (the web page's, a one-camera robot's last pose) reads every job: a row
    the code cannot use is found at start, not as a failed request later."""
    path = tmp_path / "journal.sqlite"
    journal, _ = open_journal(path)
    old = journal.create_job("start", 3)
    journal.finish(old, JobState.DONE)
    journal.close()
    _journal_with_unfinished_job(path)
    _sql(path, damage)
    journal, problem = open_journal(path)
    try:
        assert problem is not None, "damage went unnoticed"
        assert "an older job row cannot be read" in problem.reason
        assert journal.jobs() == []
    finally:
        journal.close()


def test_a_sound_journal_is_opened_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    job = _journal_with_unfinished_job(path)
    journal, problem = open_journal(path)
    try:
        assert problem is None
        record = journal.unfinished_job()
        assert record is not None and record.id == job and record.executed == 2
    finally:
        journal.close()


def test_a_new_journal_is_no_problem_and_leaves_a_marker(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "journal.sqlite"
    journal, problem = open_journal(path)
    journal.close()
    assert problem is None and path.with_name("journal.sqlite.marker").exists()


def test_an_empty_file_without_a_marker_is_a_new_journal(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    path.write_bytes(b"")
    journal, problem = open_journal(path)
    journal.close()
    assert problem is None


def test_a_path_under_a_file_is_a_clear_error_not_a_quarantine(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(JournalError, match="journal"):
        open_journal(blocker / "journal.sqlite")
    assert blocker.read_text() == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_an_unwritable_folder_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o500)
    with pytest.raises(JournalError):
        open_journal(folder / "journal.sqlite")


def test_quarantine_never_overwrites_an_earlier_one(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    names = set()
    for _ in range(3):
        path.write_bytes(b"garbage" * 50)
        journal, problem = open_journal(path)
        journal.close()
        assert problem is not None and problem.quarantined is not None
        names.add(problem.quarantined.name)
        path.unlink()
        for suffix in ("-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
    assert len(names) == 3
    assert Journal  # the module's class stays importable beside the guard
