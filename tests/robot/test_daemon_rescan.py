"""Active re-scan and the check after a solve, on the fast fakes under ambiguous light: a strong
warm lamp over twelve sticker positions (:data:`vision.spotlight.AMBIGUOUS`) makes a single read
refused, or wrong with full confidence; face turns that show the doubtful stickers elsewhere,
and the read after execution combined with the first, end every job solved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from robot.daemon.events import ErrorCode, EventName, JobState
from robot.daemon.rescan import choose_turn
from robot.journal import Journal
from solver.cube.facelets import Cube, move_permutation
from solver.cube.geometry import Face
from solver.cube.notation import Move
from solver.scramble import random_moves
from tests.robot.daemon_fakes import FakeFirmware, Fault, Rig, running
from tests.robot.helpers import run
from vision.spotlight import AMBIGUOUS

pytestmark = pytest.mark.usefixtures("solver_tables")

#: scrambles (random_moves(3, 25, seed)) whose first read under AMBIGUOUS is refused, also on
#: a second look at the same view (10), and accepted but wrong (13), on the fakes' cameras
#: (measured; the tests check it). Re-measured after the camera-aware colour model of
#: vision/references.py: under the previous model 13 was the refused one and 9 the fooled one.
REFUSED_FIRST, WRONG_FIRST = 10, 13


def _cube(seed: int) -> Cube:
    return Cube.solved(3).apply(random_moves(3, 25, seed))


def _job(path: Path, start: Cube, **kwargs: Any) -> Rig:
    async def body() -> Rig:
        async with running(path, start, spotlight=AMBIGUOUS, **kwargs) as rig:
            await rig.job("start")
            return rig

    return run(body(), 120)


# --- choosing the turn ----------------------------------------------------------------------


def test_choose_turn_moves_doubtful_stickers_to_new_places() -> None:
    n = 3
    seen = [{i} for i in range(54)]
    doubt = [24, 25, 26]  # F's row next to U (LTR layout: row 2): U and F move all three
    turn = choose_turn(doubt, seen, set(), Face, [], n, set())
    assert turn is not None and turn.face in (Face.U, Face.F)
    after = move_permutation(turn, n)
    assert all(int(after.tolist().index(s)) != s for s in doubt)  # every one moved


def test_choose_turn_prefers_sure_places_and_skips_tried_turns() -> None:
    seen = [{i} for i in range(54)]
    doubt = [24]  # F[2,0], next to U: U carries it to L (index 42), U' to R (index 15)
    u = Move.outer(Face.U, 1)
    assert choose_turn(doubt, seen, set(), [Face.U], [], 3, set()) == u
    assert choose_turn(doubt, seen, {42}, [Face.U], [], 3, set()) == u.inverse()
    seen[24] = {24, 15}  # already read where U' takes it
    assert choose_turn(doubt, seen, {42}, [Face.U], [], 3, set()) == u
    assert choose_turn(doubt, seen, set(), [Face.U], [], 3, {u, u.inverse()}) is None
    assert choose_turn(doubt, seen, set(), [Face.D, Face.B], [], 3, set()) is None


def test_choose_turn_follows_stickers_moved_since_the_reference() -> None:
    seen = [{i} for i in range(54)]
    since = [Move.outer(Face.F, 2)]  # F[2,0] (24, next to U) now sits at F[0,2] (20, by D)
    turn = choose_turn([24], seen, set(), [Face.U, Face.D], since, 3, set())
    assert turn is not None and turn.face is Face.D


# --- jobs under ambiguous light ---------------------------------------------------------------


def test_a_refused_read_is_rescanned_and_solved(fast_tmp: Path) -> None:
    start = _cube(REFUSED_FIRST)
    rig = _job(fast_tmp / "j.sqlite", start)
    assert rig.state() is JobState.DONE and rig.firmware.cube.is_solved()
    rescans = rig.sink.of(EventName.RESCAN)
    assert rescans and all(r["stage"] == "scan" for r in rescans)
    assert [r["attempt"] for r in rescans] == list(range(1, len(rescans) + 1))
    assert rescans[-1]["verdict"] == "accepted" and rescans[-1]["reads"] >= 2
    scanned = rig.sink.of(EventName.SCAN_COMPLETE)
    assert len(scanned) == 1 and scanned[0]["facelets"] == start.to_facelets("scheme")
    names = rig.sink.names()
    assert names.index(EventName.RESCAN) < names.index(EventName.SCAN_COMPLETE)
    done = rig.sink.of(EventName.DONE)[0]
    assert done["rescans"] == len(rescans) and done["verified"] is True
    assert done["corrections"] == 0
    assert rig.sink.statuses[-1]["vision"] == {
        "rescans": len(rescans),
        "corrections": 0,
        "verified": True,
    }
    # the turns went through the firmware and the journal: each turn, then its undo, first
    journal = Journal(fast_tmp / "j.sqlite")
    record = journal.job(done["job_id"])
    moves = journal.moves(done["job_id"])
    journal.close()
    assert record is not None and record.executed == record.total_moves == len(moves)
    assert all(m.executed_at is not None for m in moves)
    for k, rescan in enumerate(rescans):
        turn, undo = moves[2 * k], moves[2 * k + 1]
        assert turn.face == undo.face == rescan["turn"][0] and turn.turns == -undo.turns
    assert record.solution == rig.sink.of(EventName.SOLUTION)[0]["moves"]


def test_a_wrong_read_is_caught_after_execution_and_corrected(fast_tmp: Path) -> None:
    start = _cube(WRONG_FIRST)
    rig = _job(fast_tmp / "j.sqlite", start)
    scanned = rig.sink.of(EventName.SCAN_COMPLETE)[0]
    assert scanned["verdict"] == "accepted"
    assert scanned["facelets"] != start.to_facelets("scheme")  # the trap: sure, and wrong
    assert rig.state() is JobState.DONE and rig.firmware.cube.is_solved()
    verify = rig.sink.of(EventName.VERIFY)
    assert len(verify) == 1 and verify[0]["solved"] is False
    scanned_cube = Cube.from_facelets(scanned["facelets"], 3).stickers.reshape(-1)
    wrong = {i for i in range(54) if scanned_cube[i] != start.stickers.reshape(-1)[i]}
    named = {_flat(s) for s in verify[0]["misread"]}
    assert named == wrong  # the misread found is exactly what the first read got wrong
    assert len(rig.sink.of(EventName.SOLUTION)) == 2  # solved again from the state seen
    done = rig.sink.of(EventName.DONE)[0]
    assert done["corrections"] == 1 and done["verified"] is True and done["solved"] is True


def _flat(sticker: str) -> int:
    face, rest = sticker[0], sticker[2:-1]
    row, col = (int(v) for v in rest.split(","))
    return int(Face[face]) * 9 + row * 3 + col


def test_without_the_check_a_wrong_read_is_not_solved(fast_tmp: Path) -> None:
    """With ``[scan] verify = false`` the job trusts its tracked state: the cube ends unsolved
    and the job says done (the failure the check exists to catch)."""
    from tests.robot.daemon_fakes import fast_config

    base = fast_config()
    config = base.model_copy(update={"scan": base.scan.model_copy(update={"verify": False})})
    rig = _job(fast_tmp / "j.sqlite", _cube(WRONG_FIRST), config=config)
    done = rig.sink.of(EventName.DONE)[0]
    assert done["verified"] is None and not rig.firmware.cube.is_solved()


def test_a_daemon_dying_mid_rescan_leaves_the_undo_in_the_journal(fast_tmp: Path) -> None:
    """The daemon stops after a rescan turn executed, before its undo: the journal has the
    undo as the job's remaining move; resume executes it, then the check after execution
    sees the cube unsolved and solves it from the state it sees."""
    path = fast_tmp / "j.sqlite"
    start = _cube(REFUSED_FIRST)
    fw = FakeFirmware(start, pause_after=1)  # the undo waits at the firmware

    async def crash() -> str:
        async with running(path, firmware=fw, spotlight=AMBIGUOUS) as rig:
            reply = await rig.daemon.submit("start", {})
            await fw.paused.wait()
            job_id: str = reply["job_id"]
            return job_id

    job_id = run(crash(), 60)
    journal = Journal(path)
    record = journal.job(job_id)
    moves = journal.moves(job_id)
    journal.close()
    assert record is not None and not record.finished
    assert (record.executed, record.total_moves) == (1, 2)
    turn, undo = moves
    assert turn.executed_at is not None and undo.executed_at is None
    assert turn.face == undo.face and turn.turns == -undo.turns
    assert fw.cube == start.apply([Move.outer(Face[turn.face], turn.turns)])

    async def restart() -> Rig:
        async with running(path, firmware=fw, spotlight=AMBIGUOUS) as rig:
            await rig.sink.wait(lambda: bool(rig.sink.of(EventName.RECOVERED)))
            await rig.job("resume", {})
            return rig

    rig = run(restart(), 120)
    recovered = rig.sink.of(EventName.RECOVERED)[0]
    assert recovered["resumable"] is True and recovered["moves_done"] == 1
    assert fw.executed[1].motor == fw.executed[0].motor  # the undo ran first
    assert rig.state() is JobState.DONE and fw.cube.is_solved()
    assert rig.sink.of(EventName.VERIFY) and rig.sink.of(EventName.DONE)[0]["verified"] is True


#: scrambles (random_moves(3, 25, seed)) whose cube, after the first three moves of its
#: solution, reads refused under AMBIGUOUS (measured; the test checks it)
RESUMED_REFUSED = 0


def test_a_resume_with_rescan_turns_faces_after_the_moves_that_ran(fast_tmp: Path) -> None:
    """The link drops after three moves; resume with rescan reads the cube under ambiguous
    light, is refused and turns a face to look again. The resumed job keeps no executed
    moves in memory: the turn landed past the end of them (IndexError, an internal error,
    the turn run and never journaled: the chaos campaign on the five-motor robot, seed
    14451). Now the turns are journaled after the three moves and the job ends solved."""
    path = fast_tmp / "j.sqlite"
    fw = FakeFirmware(_cube(RESUMED_REFUSED), faults=[Fault("link_lost", 3)])

    async def body() -> Rig:
        async with running(path, firmware=fw) as rig:
            await rig.job("start")
            assert rig.sink.of(EventName.ERROR)[-1]["code"] == ErrorCode.LINK_LOST
            rig.cameras.spotlight = AMBIGUOUS
            await rig.job("resume", {"rescan": True})
            return rig

    rig = run(body(), 120)
    assert [e["code"] for e in rig.sink.of(EventName.ERROR)] == [ErrorCode.LINK_LOST]
    rescans = rig.sink.of(EventName.RESCAN)
    assert rescans and all(r["stage"] == "scan" for r in rescans)  # the path under test ran
    assert rig.state() is JobState.DONE and fw.cube.is_solved()
    done = rig.sink.of(EventName.DONE)[-1]
    journal = Journal(path)
    record = journal.job(done["job_id"])
    moves = journal.moves(done["job_id"])
    journal.close()
    assert record is not None and record.executed == record.total_moves == len(moves)
    assert len(moves) == len(fw.executed)  # every move the firmware ran is journaled
    for k, rescan in enumerate(rescans):  # each turn, then its undo, after the three moves
        turn, undo = moves[3 + 2 * k], moves[4 + 2 * k]
        assert turn.face == undo.face == rescan["turn"][0] and turn.turns == -undo.turns
