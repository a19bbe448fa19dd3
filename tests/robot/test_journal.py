"""The job journal: what is recorded survives a reopen, in order, with nothing twice."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from robot.daemon.events import JobState
from robot.errors import JournalError
from robot.journal import AUTOCHECKPOINT_PAGES, SCHEMA_VERSION, Journal
from robot.journal_async import AsyncJournal

SOLVED = "U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9
MOVES = [("R", 1, 1, False), ("U", 1, 0, True), ("D", -1, 3, False)]


def test_job_lifecycle_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    journal = Journal(path)
    job = journal.create_job("start", 3, command_id="c1")
    journal.set_state(job, JobState.SCANNING)
    journal.record_scan(job, SOLVED, {"low_confidence": []})
    journal.record_stage_time(job, "scan", 0.25)
    journal.record_plan(job, "R U D'", {"htm": 3}, "R U+D'", MOVES)
    journal.set_state(job, JobState.EXECUTING)
    journal.record_dispatch(job, boot_id=77, first_index=5, offset=0)
    journal.record_executed(job, 0, "after-R", fw_index=5)
    journal.close()

    again = Journal(path)
    record = again.unfinished_job()
    assert record is not None and record.id == job
    assert record.state == "EXECUTING"
    assert (record.executed, record.total_moves, record.remaining) == (1, 3, 2)
    assert record.physical == "after-R"
    assert record.scanned == SOLVED
    assert record.boot_id == 77 and record.first_index == 5 and record.dispatch_offset == 0
    assert record.stage_times == {"scan": 0.25}
    moves = again.moves(job)
    assert [m.executed_at is not None for m in moves] == [True, False, False]
    assert moves[1].simultaneous and moves[0].fw_index == 5
    again.record_executed(job, 1, "after-U")
    again.record_executed(job, 2, "after-D'")
    again.finish(job, JobState.DONE)
    assert again.unfinished_job() is None
    assert again.last_physical() == "after-D'"
    again.close()


def test_moves_are_recorded_once_and_in_order(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    job = journal.create_job("solve", 3)
    journal.record_plan(job, "R U D'", {}, "", MOVES)
    with pytest.raises(JournalError, match="in order"):
        journal.record_executed(job, 1, "x")
    journal.record_executed(job, 0, "x")
    with pytest.raises(JournalError, match="already recorded"):
        journal.record_executed(job, 0, "x")
    with pytest.raises(JournalError, match="not planned"):
        journal.record_executed(job, 9, "x")
    record = journal.job(job)
    assert record is not None and record.executed == 1


def test_replanning_keeps_executed_moves(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    job = journal.create_job("start", 3)
    journal.record_plan(job, "R U D'", {}, "", MOVES)
    journal.record_executed(job, 0, "x")
    journal.record_plan(job, "F", {}, "F", [("F", 1, 2, False)])
    moves = journal.moves(job)
    assert [(m.idx, m.face) for m in moves] == [(0, "R"), (1, "F")]
    record = journal.job(job)
    assert record is not None and record.total_moves == 2


def test_duplicate_commands(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    assert journal.record_command("abc", "start")
    assert not journal.record_command("abc", "start")
    assert journal.seen_command("abc") == {}
    journal.record_reply("abc", {"ok": True})
    assert journal.seen_command("abc") == {"ok": True}
    assert journal.seen_command("zzz") is None


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(JournalError, match="newer"):
        Journal(path)


def test_unwritable_location(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises((JournalError, OSError)):
        Journal(blocker / "j.sqlite")


def test_a_path_with_a_nul_is_a_journal_error(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="NUL character"):
        Journal(tmp_path / "a\x00b.sqlite")


def test_finish_rejects_unfinished_state(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    job = journal.create_job("start", 3)
    with pytest.raises(ValueError, match="finish"):
        journal.finish(job, JobState.EXECUTING)


def test_async_journal_runs_calls_in_order(tmp_path: Path) -> None:
    async def main() -> list[int]:
        journal = AsyncJournal.open(tmp_path / "j.sqlite")
        job = await journal.call(journal.sync.create_job, "start", 3)
        await journal.call(journal.sync.record_plan, job, "", {}, "", MOVES)
        for k in range(3):
            await journal.call(journal.sync.record_executed, job, k, f"s{k}")
        record = await journal.call(journal.sync.job, job)
        await journal.close()
        assert record is not None
        return [record.executed, record.total_moves]

    assert asyncio.run(main()) == [3, 3]


def test_schema_1_file_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    journal = Journal(path)
    job = journal.create_job("solve", 3)
    journal.record_plan(job, "R", {}, "R", [("R", 1, 1, False), ("U", 1, 0, False)])
    journal.close()
    # what schema 1 was: no jobs.reported (nor moves.depth, schema 3)
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE jobs DROP COLUMN reported")
    db.execute("ALTER TABLE moves DROP COLUMN depth")
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()
    journal = Journal(path)
    record = journal.job(job)
    assert record is not None and record.reported == 0 and record.total_moves == 2
    journal.record_executed(job, 0, "x" * 54, None, 0)
    journal.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    db.close()


def test_schema_2_file_is_migrated_and_moves_keep_their_depth(tmp_path: Path) -> None:
    """A schema-2 journal (no moves.depth) opens with depth 1 for its moves; a new plan keeps
    each move's depth (the layers its gripper turns), so a resume replays the right ones."""
    path = tmp_path / "old.sqlite"
    journal = Journal(path)
    old = journal.create_job("solve", 3)
    journal.record_plan(old, "R U", {}, "R U", [("R", 1, 1, False), ("U", -1, 0, False)])
    journal.close()
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE moves DROP COLUMN depth")
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()
    journal = Journal(path)
    assert [(m.face, m.turns, m.depth) for m in journal.moves(old)] == [("R", 1, 1), ("U", -1, 1)]
    big = journal.create_job("solve", 5)
    journal.record_plan(
        big, "Rw 3Lw'", {}, "Rw+3Lw'", [("R", 1, 1, True, 2), ("L", -1, 4, False, 3)]
    )
    journal.close()
    journal = Journal(path)
    moves = journal.moves(big)
    assert [(m.face, m.turns, m.motor, m.simultaneous, m.depth) for m in moves] == [
        ("R", 1, 1, True, 2),
        ("L", -1, 4, False, 3),
    ]
    journal.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


def test_schema_3_file_is_migrated_and_keeps_a_scans_looks(tmp_path: Path) -> None:
    """A schema-3 journal (no scan_looks) opens with no looks for its jobs; the frames a
    one-camera scan takes are kept in order, with their samples, across a reopen."""
    path = tmp_path / "old.sqlite"
    journal = Journal(path)
    old = journal.create_job("start", 3)
    journal.close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE scan_looks")
    db.execute("PRAGMA user_version=3")
    db.commit()
    db.close()
    journal = Journal(path)
    assert journal.looks(old) == []
    samples = [[50.0 + i, -3.25, 12.5] for i in range(9)]
    assert journal.record_look(old, 0, 0, "U", 0, samples) == 0
    assert journal.record_look(old, 2, 7, "F", 3, samples[::-1]) == 1
    journal.close()
    journal = Journal(path)
    looks = journal.looks(old)
    journal.close()
    assert [(lk.seq, lk.after, lk.orientation, lk.face, lk.turn) for lk in looks] == [
        (0, 0, 0, "U", 0),
        (1, 2, 7, "F", 3),
    ]
    assert [list(c) for c in looks[0].samples] == samples
    assert [list(c) for c in looks[1].samples] == samples[::-1]
    journal = Journal(path)
    other = journal.create_job("start", 3)
    journal.record_look(other, 0, 0, "U", 0, samples)
    journal.forget_looks(old)  # a fresh scan of the job: its earlier looks go
    assert journal.looks(old) == [] and len(journal.looks(other)) == 1
    assert journal.record_look(old, 5, 3, "R", 1, samples) == 0
    journal.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    db.close()


def test_reported_mark_follows_the_acknowledgements(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    job = journal.create_job("solve", 3)
    plan = [("R", 1, 1, False)] * 4
    journal.record_plan(job, "R R R R", {}, "", plan)
    journal.record_executed(job, 0, "a" * 54, None, 0)
    journal.record_executed(job, 1, "b" * 54, None, 1)
    journal.record_executed(job, 2, "c" * 54)  # no news: the mark stays
    record = journal.job(job)
    assert record is not None and (record.executed, record.reported) == (3, 1)
    # never beyond the moves executed, never backwards
    journal.record_executed(job, 3, "d" * 54, None, 9)
    record = journal.job(job)
    assert record is not None and record.reported == 4
    journal.close()


def test_withdrawn_moves_go_back_to_not_executed(tmp_path: Path) -> None:
    """Moves whose report was denied go back to not executed; the job keeps the cube after
    the moves it keeps, and the broker's mark goes no further; they can execute again."""
    journal = Journal(tmp_path / "j.sqlite")
    job = journal.create_job("solve", 3)
    journal.record_plan(job, "R R R R", {}, "", [("R", 1, 1, False)] * 4)
    for idx, letter in enumerate("abc"):
        journal.record_executed(job, idx, letter * 54, 10 + idx, idx + 1)
    with pytest.raises(JournalError, match="cannot keep 4 executed moves of 3"):
        journal.retract_executed(job, 4, None)
    with pytest.raises(JournalError, match="not in the journal"):
        journal.retract_executed("nope", 0, None)
    assert journal.retract_executed(job, 1, "a" * 54) == [1, 2]
    record = journal.job(job)
    assert record is not None
    assert (record.executed, record.reported, record.physical) == (1, 1, "a" * 54)
    assert [m.executed_at is not None for m in journal.moves(job)] == [True, False, False, False]
    assert [m.fw_index for m in journal.moves(job)] == [10, None, None, None]
    journal.record_executed(job, 1, "e" * 54)  # the same move, executed for real this time
    assert journal.retract_executed(job, 2, "e" * 54) == []  # nothing past the kept moves
    journal.close()


def test_the_wal_is_copied_into_the_file_when_a_job_ends_not_inside_a_commit(
    tmp_path: Path,
) -> None:
    """A checkpoint inside a commit during the motion held an anytime refinement's write for
    73 ms (a gap); the journal raises SQLite's threshold and copies the WAL at each job's end."""
    path = tmp_path / "j.db"
    journal = Journal(path)
    assert journal._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == AUTOCHECKPOINT_PAGES
    job = journal.create_job("solve", 3)
    journal.record_plan(job, "R U", {}, "R U", [("R", 1, 1, False), ("U", 1, 0, False)])
    for index in range(2):
        journal.record_executed(job, index, "U" * 54)
    before = path.stat().st_size  # (every page so far in the WAL)
    journal.finish(job, JobState.DONE)
    assert path.stat().st_size > before
    journal.close()
    reopened = Journal(path)
    finished = reopened.job(job)
    assert finished is not None and finished.state is JobState.DONE and finished.executed == 2
    reopened.close()
