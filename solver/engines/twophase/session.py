"""Search sessions of the two-phase engine: one state after another with the same options,
tables and worker threads (:meth:`~solver.engines.twophase.engine.TwoPhaseSolver.session`).

What a restart must not pay again is prepared once: the options are checked, the robot-metric
tables loaded and the worker threads kept (a session of lower priority gets threads of its
own). Each :meth:`SearchSession.search` restarts from a new state until an absolute deadline;
with ``bound_s`` the kernel prunes with that robot time from its first node, so only a strictly
faster solution comes back (anytime solving, :mod:`robot.daemon.anytime`). A robot search's
best solution so far can be read while its threads run (:meth:`Pending.peek`), so a caller
that must act before the deadline takes what the search holds without ending it.
"""

from __future__ import annotations

import functools
import logging
import os
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from solver.cost import DEFAULT_COST_MODEL
from solver.cube.cubie import CubieCube
from solver.cube.facelets import Cube
from solver.cube.notation import Move
from solver.engines.twophase._twophase import peek as _c_peek
from solver.engines.twophase._twophase import search as _c_search
from solver.engines.twophase._twophase import stop as _c_stop
from solver.engines.twophase.engine import (
    _AXES,
    _MIN_SEARCH_S,
    PHASE2_SLACK_ALL,
    Direction,
    Found,
    TwoPhaseSolver,
    _cost_tuple,
    _merge_stats,
    _plan,
)
from solver.engines.twophase.settings import MAX_LENGTH_LIMIT, TwoPhaseSettings
from solver.errors import OptionError
from solver.options import SolveOptions
from solver.solution import Solution

__all__ = ["Pending", "SearchSession"]

log = logging.getLogger(__name__)

#: The buffer a search's threads share (the kernel's header): the found flag, the least
#: robot time, and the best solution so far for :meth:`Pending.peek` (16 + 24 + 32 bytes).
_SHARED_BYTES = 72


class SearchSession:
    """Searches from one state after another with the same options, tables and worker threads
    (see the module docstring); thread-safe as the solver is, one search at a time per call."""

    def __init__(
        self,
        solver: TwoPhaseSolver,
        options: SolveOptions,
        settings: TwoPhaseSettings,
        *,
        nice: int = 0,
    ) -> None:
        if not isinstance(nice, int) or not 0 <= nice <= 19:
            raise OptionError("nice", f"nice must be 0..19, got {nice!r}")
        if settings.score is not None:
            raise OptionError("score", "a search session does not score candidates")
        self.solver = solver
        self.options = options
        self.settings = settings
        self.plan = _plan(options, settings)
        self.cost = _cost_tuple(options.cost_model)
        self.model = options.cost_model or DEFAULT_COST_MODEL
        # what a restart must not pay again: the robot-metric tables and the worker threads
        self._axial = (
            solver.axial_tables(settings.progress).search_arrays() if self.plan.groups else None
        )
        self.nice = nice
        self._pool: ThreadPoolExecutor | None = None
        if nice:  # threads of its own, at the lower priority
            self._pool = ThreadPoolExecutor(
                settings.threads, "twophase-session", initializer=_lower_priority, initargs=(nice,)
            )
        elif settings.threads > 1:
            self._pool = solver._workers()
        #: searches run, and how many returned a solution
        self.searches = 0
        self.found = 0

    def search(
        self,
        cube: CubieCube | Cube,
        deadline: float,
        *,
        bound_s: float | None = None,
        max_length: int | None = None,
        timeout_at: float | None = None,
    ) -> Solution | None:
        """Search from ``cube`` until ``deadline`` (:func:`time.monotonic`) for the best
        solution (at most ``max_length`` moves, default the session's); with ``bound_s`` only
        one the cost model says takes less than that (with a cost model). ``None`` when there
        is none by the deadline (or, with a bound, none faster); a search that covers every
        solution within the length returns sooner. With ``timeout_at`` (later than
        ``deadline``) a search that holds no solution at the deadline goes on until its first
        one, or until ``timeout_at``. The calling thread waits (a session of one thread at
        normal priority searches in it)."""
        search = self._start(cube, deadline, bound_s, max_length, timeout_at)
        if not isinstance(search, _Search):
            return search
        workers = len(search.chunks)
        if self._pool is None or (workers == 1 and not self.nice):
            return search.finish([search.run(i) for i in range(workers)])
        return search.finish(list(self._pool.map(search.run, range(workers))))

    def submit(
        self,
        cube: CubieCube | Cube,
        deadline: float,
        *,
        bound_s: float | None = None,
        max_length: int | None = None,
        timeout_at: float | None = None,
    ) -> Future[Solution | None]:
        """:meth:`search` on the session's worker threads, the calling thread free: the
        future's result is :meth:`search`'s, picked by the last thread to end (see
        :meth:`start`; a caller that must not have a thread of lower priority do that, the
        GIL held, calls :meth:`start` and :meth:`Pending.result` itself)."""
        future: Future[Solution | None] = Future()
        pending = self.start(
            cube, deadline, bound_s=bound_s, max_length=max_length, timeout_at=timeout_at
        )

        def finished(done: Future[None]) -> None:
            try:
                done.result()
                future.set_result(pending.result())
            except BaseException as exc:  # the search failed: so does the future
                future.set_exception(exc)

        pending.done.add_done_callback(finished)
        return future

    def start(
        self,
        cube: CubieCube | Cube,
        deadline: float,
        *,
        bound_s: float | None = None,
        max_length: int | None = None,
        timeout_at: float | None = None,
        held: int = 0,
    ) -> Pending:
        """Start :meth:`search` on the session's worker threads, the calling thread free.
        Every thread searches until the same absolute ``deadline``, one that starts late too;
        :attr:`Pending.done` resolves when the last has ended (so a waiting event loop is
        woken once: ``asyncio.wrap_future``), then :meth:`Pending.result` is the search's.
        With ``held`` (fewer than the session's threads) the parts of that many threads wait
        for :meth:`Pending.release` (the others start now), to leave the caller cores for a
        while; they search until the same deadline."""
        pending = self.prepare(
            cube, deadline, bound_s=bound_s, max_length=max_length, timeout_at=timeout_at
        )
        workers = pending.held
        pending.release(workers - max(0, min(int(held), workers - 1)))
        return pending

    def prepare(
        self,
        cube: CubieCube | Cube,
        deadline: float,
        *,
        bound_s: float | None = None,
        max_length: int | None = None,
        timeout_at: float | None = None,
    ) -> Pending:
        """:meth:`start` with every thread's part held: the search is prepared (its state's
        coordinates and directions, the Python work) and nothing runs until
        :meth:`Pending.release`, so a caller can prepare it while it waits for something else
        (anytime solving: while the plan's journal write syncs) and start it the moment it
        wants the cores. The threads search until ``deadline`` whenever they start."""
        search = self._start(cube, deadline, bound_s, max_length, timeout_at)
        if not isinstance(search, _Search):
            return Pending(search)
        pending = Pending(None, search)
        pool = self._pool if self._pool is not None else self.solver._workers()
        workers = len(search.chunks)
        lock = threading.Lock()
        left = [workers]

        def ended(number: int, part: Future[Found]) -> None:
            try:
                pending._results[number] = part.result()
            except BaseException as exc:
                with lock:
                    if not pending.done.done():
                        pending.done.set_exception(exc)
                return
            with lock:
                left[0] -= 1
                if left[0] or pending.done.done():
                    return
            pending.done.set_result(None)

        def submit(number: int) -> None:
            pool.submit(search.run, number).add_done_callback(functools.partial(ended, number))

        pending._held = [functools.partial(submit, n) for n in range(workers)]
        return pending

    def _start(
        self,
        cube: CubieCube | Cube,
        deadline: float,
        bound_s: float | None,
        max_length: int | None,
        timeout_at: float | None = None,
    ) -> _Search | Solution | None:
        """One search prepared (its directions shared out over the threads), or its answer
        when no search is needed."""
        called = time.monotonic()
        self.searches += 1
        cubie = cube if isinstance(cube, CubieCube) else CubieCube.from_cube(cube)
        length = self.plan.length if max_length is None else int(max_length)
        if not 0 <= length <= MAX_LENGTH_LIMIT:
            raise OptionError(
                "max_length", f"max_length must be 0..{MAX_LENGTH_LIMIT}, got {length}"
            )
        if cubie.is_solved():
            solved = Solution((), "twophase", 3, 0.0, (), {"objective": "robot_time"})
            return None if bound_s is not None and not bound_s > 0 else solved
        shared = bytearray(_SHARED_BYTES)
        if bound_s is not None and self.cost is not None:
            if not bound_s > 0:
                return None  # nothing takes less than no time
            shared[8:16] = struct.pack("=d", bound_s)
        dirs = self.solver._directions(cubie, self.plan.faces, self.settings.directions)
        workers = max(1, min(self.settings.threads, len(dirs)))
        chunks = [dirs[i::workers] for i in range(workers)]
        search = _Search(self, chunks, length, deadline, shared, called, bound_s, cubie)
        if timeout_at is not None:
            search.timeout_at = max(deadline, timeout_at)
        return search


class Pending:
    """A search started on a session's threads (:meth:`SearchSession.start`)."""

    def __init__(self, answer: Solution | None, search: _Search | None = None) -> None:
        #: resolves (to ``None``) when every thread has ended
        self.done: Future[None] = Future()
        self._answer = answer
        self._search = search
        self._results: list[Found | None] = [None] * (0 if search is None else len(search.chunks))
        #: the held threads' parts, each started by :meth:`release`
        self._held: list[Callable[[], None]] = []
        self._release_lock = threading.Lock()
        if search is None:  # nothing to search
            self.done.set_result(None)

    @property
    def held(self) -> int:
        """Threads whose parts wait for :meth:`release`."""
        return len(self._held)

    def release(self, threads: int | None = None) -> None:
        """Start the held threads' parts (:meth:`SearchSession.start`), or only ``threads`` of
        them (the rest wait for the next call); with none held: nothing."""
        with self._release_lock:
            count = len(self._held) if threads is None else max(0, min(threads, len(self._held)))
            now, self._held = self._held[:count], self._held[count:]
        for submit in now:
            submit()

    def peek(self) -> Solution | None:
        """The best solution the search holds so far, while its threads may still run (a robot
        search; ``None``: none yet, or none faster than its bound). Once :attr:`done`, the
        result's time or a slower one (:meth:`result` picks among the threads' own bests)."""
        if self._search is None:
            return self._answer
        return self._search.peek()

    def stop(self) -> None:
        """End a robot search's threads soon (within a few thousand nodes), finding nothing
        more; a thread not started yet ends as it starts."""
        if self._search is not None and self._search.session.cost is not None:
            _c_stop(self._search.shared)

    def result(self) -> Solution | None:
        """The search's answer, as :meth:`SearchSession.search` gives it (once :attr:`done`)."""
        self.done.result(timeout=0)
        if self._search is None:
            return self._answer
        return self._search.finish([r for r in self._results if r is not None])


class _Search:
    """One search of a session: its directions by thread, the deadline and the shared bound."""

    def __init__(
        self,
        session: SearchSession,
        chunks: list[list[Direction]],
        length: int,
        deadline: float,
        shared: bytearray,
        called: float,
        bound_s: float | None,
        cubie: CubieCube | None = None,
    ) -> None:
        self.session = session
        #: the state searched from (a solution read while the threads run is checked on it)
        self.cubie = cubie
        self.chunks = chunks
        self.length = length
        self.deadline = deadline
        self.shared = shared
        self.called = called
        self.bound_s = bound_s
        #: how long after the call the last thread started searching (seconds)
        self.start_lag_s = 0.0
        #: until when a thread goes on that holds no solution at the deadline (none found by
        #: any thread: the first one found ends them all)
        self.timeout_at = deadline

    def run(self, number: int) -> Found:
        """Thread ``number``'s part, until the deadline (counted from now: a thread that
        starts late does not end late)."""
        session = self.session
        now = time.monotonic()
        self.start_lag_s = max(self.start_lag_s, now - self.called)
        budget = max(self.deadline - now, _MIN_SEARCH_S)
        timeout = max(self.timeout_at - now, budget)
        found: Found = _c_search(
            session.solver._arrays,
            [d[2] for d in self.chunks[number]],
            self.length,
            float(budget),
            float(timeout),
            int(session.plan.phase2_max),
            session.cost,
            PHASE2_SLACK_ALL,
            session._axial,
            self.shared,
            None,
            number,
        )
        return found

    def finish(self, results: list[Found]) -> Solution | None:
        """The best of the threads' results as a solution (``None``: none, or none faster
        than the bound)."""
        session = self.session
        best = session.solver._best(self.chunks, results, session.options.cost_model)
        stats = _merge_stats([r[2] for r in results])
        if best is None:
            return None
        return self._solution(*best, stats)

    def peek(self) -> Solution | None:
        """The best solution the threads have published so far (a robot search), or
        ``None``."""
        if self.session.cost is None:
            return None
        held = _c_peek(self.shared)
        if held is None:
            return None
        chunk, index, raw, robot_s = held
        if not (0 <= chunk < len(self.chunks) and 0 <= index < len(self.chunks[chunk])):
            log.warning("a search's published solution names no direction of it; not read")
            return None
        direction = self.chunks[chunk][index]
        moves = self.session.solver._map_back(direction, raw)
        if self.cubie is not None and not self.cubie.apply(moves).is_solved():
            # (the kernel's sequence lock keeps a read whole: this is a bug, not a race)
            log.warning("a search's published solution does not solve its cube; not read")
            return None
        stats = {"peeked": True, "robot_time_s": robot_s}
        return self._solution(moves, direction[0], direction[1], len(moves), stats, peeked=True)

    def _solution(
        self,
        moves: tuple[Move, ...],
        rot: int,
        inv: bool,
        first_length: int,
        stats: dict[str, Any],
        *,
        peeked: bool = False,
    ) -> Solution | None:
        """A found solution as the search's answer (``None``: not faster than its bound;
        ``peeked``: read while the search runs, not counted as a search's answer)."""
        session = self.session
        estimate = session.model.estimate(moves)
        bound_s = self.bound_s
        if bound_s is not None and session.cost is not None and not estimate < bound_s:
            return None  # (the kernel keeps only faster ones; its rounding may differ)
        session.found += not peeked
        info: dict[str, Any] = dict(stats)
        info.update(
            {
                "first_length": first_length,
                "objective": "robot_time" if session.cost is not None else "length",
                "metric": "groups" if session.plan.groups else "moves",
                "directions": sum(len(c) for c in self.chunks),
                "threads": len(self.chunks),
                "direction": {"axis": _AXES[rot], "inverse": inv},
                "budget_s": self.deadline - self.called,
                "bound_s": bound_s,
                "start_lag_s": self.start_lag_s,
                "solve_s": time.monotonic() - self.called,
            }
        )
        return Solution(moves, "twophase", 3, estimate, (), info)


def _lower_priority(nice: int) -> None:
    """Lower the calling thread's scheduling priority by ``nice`` from the process's (Linux:
    per thread; a process started under ``nice`` keeps its searches below its event loop)."""
    try:
        base = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(19, base + nice))
    except (AttributeError, OSError) as exc:  # not on this platform: the same priority
        log.debug("search worker priority unchanged: %s", exc)
