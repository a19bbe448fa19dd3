"""The two-phase engine's search sessions: searches restarted from new states until absolute
deadlines with the options, tables and threads prepared once, and a bound that only a faster
solution passes (what anytime solving refines with)."""

from __future__ import annotations

import os
import random
import time

import pytest

from solver.cost import CostModel
from solver.cube.cubie import CubieCube
from solver.cube.geometry import Face
from solver.engines.twophase.engine import TwoPhaseSolver, get_solver
from solver.errors import OptionError

COST = CostModel(quarter_turn_s=0.0975, half_turn_s=0.1575, pair_extra_s=0.0, settle_s=0.005)
#: how much later than its deadline a search may return on a loaded 2-core machine
SLACK_S = 0.5


@pytest.fixture(scope="module")
def engine() -> TwoPhaseSolver:
    return get_solver()


def _cubes(count: int, seed: int) -> list[CubieCube]:
    rng = random.Random(seed)
    return [CubieCube.random(rng) for _ in range(count)]


def test_a_session_solves_one_state_after_another_by_each_deadline(engine: TwoPhaseSolver) -> None:
    session = engine.session(cost_model=COST, threads=2)
    for cube in _cubes(4, 3):
        deadline = time.monotonic() + 0.03
        solution = session.search(cube, deadline)
        assert time.monotonic() < deadline + SLACK_S
        assert solution is not None and cube.apply(solution.moves).is_solved()
        assert solution.robot_time_s == pytest.approx(COST.estimate(solution.moves))
        assert solution.stats["objective"] == "robot_time" and solution.stats["threads"] == 2
    assert session.searches == session.found == 4


def test_only_a_solution_faster_than_the_bound_is_returned(engine: TwoPhaseSolver) -> None:
    session = engine.session(cost_model=COST, threads=2)
    faster = 0
    for cube in _cubes(4, 5):
        first = session.search(cube, time.monotonic() + 0.02)
        assert first is not None and first.robot_time_s is not None
        bound = first.robot_time_s
        again = session.search(cube, time.monotonic() + 0.1, bound_s=bound)
        if again is not None:  # a longer search may find a faster one, never an equal one
            assert again.robot_time_s is not None and again.robot_time_s < bound
            assert cube.apply(again.moves).is_solved()
            faster += 1
        loose = session.search(cube, time.monotonic() + 0.02, bound_s=bound + 1.0)
        assert loose is not None and loose.robot_time_s is not None
        assert loose.robot_time_s < bound + 1.0 and loose.stats["bound_s"] == bound + 1.0
    assert session.found == 8 + faster
    assert session.search(_cubes(1, 9)[0], time.monotonic() + 0.01, bound_s=0.0) is None


def test_a_solved_cube_needs_no_search_and_the_faces_and_length_are_kept(
    engine: TwoPhaseSolver,
) -> None:
    session = engine.session(cost_model=COST, faces=[f for f in Face if f is not Face.B])
    solved = session.search(CubieCube(), time.monotonic() + 0.01)
    assert solved is not None and solved.moves == ()
    for cube in _cubes(2, 7):
        found = session.search(cube, time.monotonic() + 0.05)
        assert found is not None and cube.apply(found.moves).is_solved()
        assert all(m.face is not Face.B for m in found.moves)
    short = session.search(_cubes(1, 8)[0], time.monotonic() + 0.01, max_length=3)
    assert short is None  # a random state needs more than 3 turns
    with pytest.raises(OptionError, match="max_length"):
        session.search(_cubes(1, 8)[0], time.monotonic() + 0.01, max_length=99)


def test_a_session_of_lower_priority_threads_solves_the_same(engine: TwoPhaseSolver) -> None:
    session = engine.session(cost_model=COST, threads=2, nice=5)
    for cube in _cubes(2, 11):
        found = session.search(cube, time.monotonic() + 0.03)
        assert found is not None and cube.apply(found.moves).is_solved()
    # lowered from the process's priority (a daemon started under ``nice`` keeps the gap)
    pool = session._pool
    assert pool is not None
    base = os.getpriority(os.PRIO_PROCESS, 0)
    assert pool.submit(os.getpriority, os.PRIO_PROCESS, 0).result() == min(19, base + 5)
    with pytest.raises(OptionError, match="nice"):
        engine.session(cost_model=COST, nice=40)


def test_submit_hands_back_the_search_by_its_absolute_deadline(engine: TwoPhaseSolver) -> None:
    session = engine.session(cost_model=COST, threads=2)
    for cube in _cubes(3, 13):
        deadline = time.monotonic() + 0.02
        solution = session.submit(cube, deadline).result(timeout=10)
        assert time.monotonic() < deadline + SLACK_S
        assert solution is not None and cube.apply(solution.moves).is_solved()
        assert solution.stats["threads"] == 2 and 0 <= solution.stats["start_lag_s"] < SLACK_S
    # started, the caller picking the best once every thread has ended
    cube = _cubes(1, 16)[0]
    pending = session.start(cube, time.monotonic() + 0.02)
    pending.done.result(timeout=10)
    found = pending.result()
    assert found is not None and cube.apply(found.moves).is_solved()
    # a deadline already past: each thread gets its least search, none runs on
    began = time.monotonic()
    session.submit(_cubes(1, 14)[0], began - 1.0).result(timeout=10)
    assert time.monotonic() < began + SLACK_S
    # no search needed: answered at once
    assert session.submit(CubieCube(), time.monotonic()).result(timeout=0).moves == ()
    assert session.submit(_cubes(1, 15)[0], time.monotonic() + 1, bound_s=0.0).done()


def test_a_search_holding_nothing_at_its_deadline_goes_on_until_its_first_solution(
    engine: TwoPhaseSolver,
) -> None:
    session = engine.session(cost_model=COST, threads=2)
    for cube in _cubes(4, 17):
        began = time.monotonic()
        # the deadline already past (threads that started late): the first solution all the same
        found = session.submit(cube, began - 1.0, timeout_at=began + 5.0).result(timeout=10)
        assert found is not None and cube.apply(found.moves).is_solved()
        assert time.monotonic() < began + SLACK_S
        assert found.stats["budget_s"] < 0  # (its deadline was before the call)


def test_held_threads_start_on_release_and_the_search_ends_after_them(
    engine: TwoPhaseSolver,
) -> None:
    session = engine.session(cost_model=COST, threads=2)
    cube = _cubes(1, 18)[0]
    deadline = time.monotonic() + 0.01
    pending = session.start(cube, deadline, held=1)
    time.sleep(0.1)  # far past the deadline: the thread that started has ended
    assert not pending.done.done(), "the search ended without its held thread"
    pending.release()
    pending.done.result(timeout=10)
    found = pending.result()
    assert found is not None and cube.apply(found.moves).is_solved()
    assert found.stats["threads"] == 2 and found.stats["start_lag_s"] >= 0.09
    pending.release()  # again: nothing
    # never more held than all threads but one: one always starts at once
    alone = engine.session(cost_model=COST, threads=1).start(cube, deadline, held=1)
    alone.done.result(timeout=10)
    assert alone.result() is not None


def test_a_running_search_is_read_without_ending_it(engine: TwoPhaseSolver) -> None:
    """What anytime solving reads after the first part of a window: the best solution the
    threads hold so far, each one read solving the cube and none slower than one read before;
    at the end what the search returns is no slower than the last one read."""
    session = engine.session(cost_model=COST, threads=2)
    for cube in _cubes(3, 21):
        pending = session.start(cube, time.monotonic() + 0.25)
        read: list[float] = []
        while not pending.done.done():
            held = pending.peek()
            if held is not None:
                assert cube.apply(held.moves).is_solved() and held.stats["peeked"]
                assert held.robot_time_s == pytest.approx(COST.estimate(held.moves))
                assert held.robot_time_s is not None
                assert not read or held.robot_time_s <= read[-1] + 1e-9
                read.append(held.robot_time_s)
            time.sleep(0.01)
        assert pending.done.result(timeout=SLACK_S) is None
        result, last = pending.result(), pending.peek()
        assert read and result is not None and last is not None
        assert result.robot_time_s is not None and last.robot_time_s is not None
        assert result.robot_time_s <= read[-1] + 1e-9
        assert last.robot_time_s == pytest.approx(result.robot_time_s)
    # read answers are not counted as the searches' answers
    assert session.searches == session.found == 3


def test_a_read_holds_nothing_slower_than_the_bound_and_a_stopped_search_ends(
    engine: TwoPhaseSolver,
) -> None:
    session = engine.session(cost_model=COST, threads=2)
    cube = _cubes(1, 23)[0]
    # nothing takes less than 0.2 s: nothing to read, ever
    bounded = session.start(cube, time.monotonic() + 0.05, bound_s=0.2)
    assert bounded.peek() is None
    bounded.done.result(timeout=0.05 + SLACK_S)
    assert bounded.peek() is None and bounded.result() is None
    # a search of ten seconds, stopped once it holds a solution, ends long before
    began = time.monotonic()
    long = session.start(cube, began + 10.0)
    while long.peek() is None:
        time.sleep(0.002)
    long.stop()
    long.done.result(timeout=2.0)
    assert time.monotonic() - began < 2.0
    held = long.peek()
    assert held is not None and cube.apply(held.moves).is_solved()


def test_a_published_solution_that_does_not_solve_the_cube_is_not_read(
    engine: TwoPhaseSolver, caplog: pytest.LogCaptureFixture
) -> None:
    """What the threads publish is checked on the searched cube before it is handed out: a
    damaged buffer gives ``None`` and a warning, never a wrong plan or a traceback."""
    session = engine.session(cost_model=COST, threads=2)
    pending = session.start(_cubes(1, 25)[0], time.monotonic() + 0.05)
    pending.done.result(timeout=0.05 + SLACK_S)
    assert pending.peek() is not None
    search = pending._search
    assert search is not None
    shared = search.shared
    moves = 16 + 24  # (the kernel's layout: sequence, chunk, direction, length, time, moves)
    shared[moves] = (shared[moves] + 1) % 18  # another first move
    with caplog.at_level("WARNING"):
        assert pending.peek() is None
    assert "does not solve its cube" in caplog.text
    shared[16 + 4 : 16 + 8] = (7).to_bytes(4, "little")  # a chunk the search does not have
    assert pending.peek() is None and "names no direction" in caplog.text
