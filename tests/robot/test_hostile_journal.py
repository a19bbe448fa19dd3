"""Journal rows that SQLite stores (its columns take any type) but the daemon cannot use (the
2026-11-29 sweep). A text ``first_index`` or a negative ``dispatch_offset`` in the unfinished
job ended the daemon at start (TypeError / JournalError in the recovery); a move row that is
no move (a face ``Q``, 99 quarter turns, motor -5, depth 0, a gap in the indexes) was resumed
and failed as an internal error with a traceback; ``dispatch_offset`` past the executed moves
made the recovery count the firmware's moves wrong (the resumed job ended unsolved). Now each
is found when the journal is opened: moved aside with the reason, a new journal started.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from robot.daemon.events import ErrorCode
from robot.errors import JournalError
from robot.journal_guard import open_journal
from solver.cube.facelets import Cube
from tests.robot.daemon_fakes import FakeFirmware, running
from tests.robot.helpers import run
from tests.robot.test_journal_guard import _journal_with_unfinished_job, _sql

JOB = "WHERE seq = (SELECT MAX(seq) FROM jobs)"

UNUSABLE = [
    pytest.param(f"UPDATE jobs SET first_index = 'abc' {JOB}", "first_index", id="index-text"),
    pytest.param(f"UPDATE jobs SET first_index = 1.5 {JOB}", "first_index", id="index-real"),
    pytest.param(f"UPDATE jobs SET first_index = -1 {JOB}", "first_index", id="index-negative"),
    pytest.param(f"UPDATE jobs SET dispatch_offset = -7 {JOB}", "dispatch", id="offset-negative"),
    pytest.param(f"UPDATE jobs SET dispatch_offset = 3 {JOB}", "dispatch", id="offset-ahead"),
    pytest.param(f"UPDATE jobs SET boot_id = 'x' {JOB}", "boot_id", id="boot-text"),
    pytest.param(f"UPDATE jobs SET boot_id = {1 << 40} {JOB}", "boot", id="boot-too-big"),
    pytest.param("UPDATE moves SET face = 'Q' WHERE idx = 2", "move 3", id="face-Q"),
    pytest.param("UPDATE moves SET turns = 99 WHERE idx = 2", "move 3", id="turns-99"),
    pytest.param("UPDATE moves SET motor = -5 WHERE idx = 2", "move 3", id="motor-negative"),
    pytest.param("UPDATE moves SET depth = 0 WHERE idx = 2", "move 3", id="depth-0"),
    pytest.param("UPDATE moves SET face = 'x;;;;' WHERE idx = 2", "move 3", id="bad-action"),
    pytest.param("UPDATE moves SET idx = 7 WHERE idx = 2", "index", id="index-gap"),
]


@pytest.mark.parametrize(("damage", "words"), UNUSABLE)
def test_an_unfinished_job_the_daemon_cannot_use_is_untrusted(
    tmp_path: Path, damage: str, words: str
) -> None:
    path = tmp_path / "journal.sqlite"
    _journal_with_unfinished_job(path)
    _sql(path, damage)
    _assert_untrusted(path, words)


def _assert_untrusted(path: Path, words: str) -> None:
    """Opening the journal sets it aside for a reason with ``words``, and starts afresh."""
    journal, problem = open_journal(path)
    try:
        assert problem is not None, "the damage went unnoticed"
        assert words in problem.reason, problem.reason
        assert journal.unfinished_job() is None
    finally:
        journal.close()


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param("UPDATE jobs SET finished_at = 'soon'", id="finished-text"),
        pytest.param("UPDATE jobs SET created_at = 'nan'", id="created-nan"),
        pytest.param("UPDATE jobs SET created_at = 1e300", id="created-far-future"),
    ],
)
def test_a_finished_job_whose_times_are_no_times_is_untrusted(tmp_path: Path, damage: str) -> None:
    """The web page's history computes with them (a TypeError or OverflowError: HTTP 500)."""
    path = tmp_path / "journal.sqlite"
    journal, _ = open_journal(path)
    journal.create_job("start", 3)
    journal.close()
    _sql(path, damage)
    journal, problem = open_journal(path)
    try:
        assert problem is not None, "the row went unnoticed"
        assert "cannot be read" in problem.reason
    finally:
        journal.close()


def test_a_sound_unfinished_job_of_each_kind_of_row_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    _journal_with_unfinished_job(path)
    journal, problem = open_journal(path)
    journal.close()
    assert problem is None


def test_the_daemon_starts_on_a_journal_with_a_text_first_index(fast_tmp: Path) -> None:
    """It used to stop at start: ``TypeError: unsupported operand type(s) for -``."""
    path = fast_tmp / "journal.sqlite"
    _journal_with_unfinished_job(path)
    _sql(path, "UPDATE jobs SET first_index = 'abc'")
    start = Cube.solved(3).apply("R U F").apply("F' U'")
    firmware = FakeFirmware(start, boot_id=0x1234, last_received=2, started_upto=2, last_executed=2)

    async def scenario() -> None:
        async with running(path, start, firmware=firmware) as rig:
            status = rig.daemon.status()
            journal = status["journal"]
            assert journal is not None and "first_index" in journal["problem"]
            reply = await rig.daemon.submit("resume", b"{}")
            assert reply["error"]["code"] == ErrorCode.NOT_RESUMABLE

    run(scenario(), 60)


@pytest.mark.parametrize("reply", ["{bad", "\x00", "[1, 2]"], ids=["not-json", "nul", "array"])
def test_a_repeated_command_whose_journaled_reply_is_garbage_is_a_duplicate(
    fast_tmp: Path, reply: str
) -> None:
    """The commands table is not read at start; a reply row that is no JSON object ended a
    repeated command as ``internal error in intake`` with a traceback."""
    path = fast_tmp / "journal.sqlite"
    journal, _ = open_journal(path)
    journal.close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO commands VALUES ('c1', 'home', 0, ?)", (reply,))
    db.commit()
    db.close()

    async def scenario() -> None:
        async with running(path) as rig:
            answer = await rig.daemon.submit("home", b'{"id": "c1"}')
            assert answer["duplicate"] is True and answer["id"] == "c1", answer

    run(scenario(), 60)


def test_a_journal_damaged_while_the_daemon_runs_is_a_journal_error_on_read(
    tmp_path: Path,
) -> None:
    """The reads (the history, a resume's moves and looks) raised the layer below's exception
    (sqlite3.OperationalError, ValueError from a row): the web page's history was a 500 with a
    traceback. Each is a JournalError naming the journal."""
    path = tmp_path / "journal.sqlite"
    journal, _ = open_journal(path)
    try:
        job = journal.create_job("start", 3)
        _sql(path, "UPDATE jobs SET created_at = 'soon'")  # another hand, while it runs
        with pytest.raises(JournalError, match="a row the daemon cannot use") as caught:
            journal.jobs()
        assert str(path) in str(caught.value)
        with pytest.raises(JournalError):
            journal.job(job)
        _sql(path, "DROP TABLE moves")
        with pytest.raises(JournalError, match="no such table"):
            journal.moves(job)
    finally:
        journal.close()


@pytest.mark.parametrize(
    "samples",
    [
        pytest.param("[[1, 2]]", id="a-pair"),
        pytest.param("{bad", id="no-json"),
        pytest.param('{"a": 1}', id="no-list"),
        pytest.param('[[1, 2, "x"]]', id="a-text"),
        pytest.param("[[1, 2, 1e999]]", id="infinite"),
    ],
)
def test_an_unfinished_job_whose_scan_looks_are_no_samples_is_untrusted(
    tmp_path: Path, samples: str
) -> None:
    """A one-camera resume reads the job's looks: a look that is no list of L*a*b* triples
    failed there (IndexError, JSONDecodeError) instead of at start."""
    path = tmp_path / "journal.sqlite"
    job = _journal_with_unfinished_job(path)
    db = sqlite3.connect(path)
    db.execute(
        "INSERT INTO scan_looks (job_id, seq, after, orientation, face, turn, samples, taken_at) "
        "VALUES (?, 0, 0, 0, 'U', 0, ?, 1.0)",
        (job, samples),
    )
    db.commit()
    db.close()
    _assert_untrusted(path, "looks cannot be read")


def test_an_unfinished_job_with_sound_looks_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    job = _journal_with_unfinished_job(path)
    journal, problem = open_journal(path)
    journal.record_look(job, 0, 0, "U", 0, [(50.0, 1.5, -2.0)] * 9)
    journal.close()
    journal, problem = open_journal(path)
    try:
        assert problem is None
        assert journal.looks(job)[0].samples == ((50.0, 1.5, -2.0),) * 9
    finally:
        journal.close()
